"""The offline judge's support score: the cues behind it, the undecided path, the learned combiner
and the script that trains it (same data, same coefficients)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import math
import sys
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from auditor.gate import run_gate
from auditor.judges import Label, OfflineJudge, UnjudgedReason
from auditor.judges.offline._combiner import WEIGHTS_FILE, Combiner, fit, from_json, neutral, shipped
from auditor.judges.offline._features import FEATURES
from auditor.policy import parse_policy
from tests.test_offline_judge import REFUND, assert_quotes_verified, claim, evidence

ROOT = Path(__file__).resolve().parents[1]
DOC = evidence("d", "The guided tour of the castle lasts two hours and starts at the north gate.")
STATED = "The guided tour of the castle starts at the north gate."
LOOSE = "Visitors of the castle meet their guide near the gate."


def test_each_claim_gets_a_score_in_0_1_with_its_named_cues() -> None:
    stated, loose = OfflineJudge().scores([claim(STATED, "c1"), claim(LOOSE, "c2")], [DOC])
    assert 0.0 <= loose.score < stated.score <= 1.0
    assert [c.name for c in stated.cues] == list(FEATURES)
    cues = {c.name: c.value for c in stated.cues}
    assert cues["coverage_best"] == 1.0 and cues["rule_supported"] == 1.0
    assert stated.rule == "supported" and stated.label is Label.SUPPORTED


def test_a_score_between_the_thresholds_is_undecided() -> None:
    strict = replace(shipped(), supported=0.999, unsupported=0.001)
    [verdict] = OfflineJudge(strict).judge_sync([claim(STATED)], [DOC])
    assert verdict.label is Label.UNJUDGED
    assert verdict.unjudged_reason is UnjudgedReason.OFFLINE_UNDECIDED
    assert verdict.rationale is not None and verdict.rationale.startswith("undecided: the rules read it as")
    assert verdict.citations == ()
    # the same claim with the shipped thresholds is decided
    [decided] = OfflineJudge().judge_sync([claim(STATED)], [DOC])
    assert decided.label is Label.SUPPORTED


def test_figures_names_and_polarity_decide_whatever_the_score() -> None:
    strict = replace(shipped(), supported=0.999, unsupported=0.001)
    changed, unknown = OfflineJudge(strict).judge_sync(
        [claim("Order 10042 was refunded $95.00.", "c1"), claim("The refund was approved by Globex.", "c2")],
        [REFUND],
    )
    assert changed.label is Label.CONTRADICTED
    assert unknown.label is Label.ABSENT


def test_an_undecided_claim_fails_the_gate_closed(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    row = {
        "id": "r1",
        "question": "The tour?",
        "sources": [{"id": "KB-1", "text": DOC.text}],
        "answer": LOOSE,
    }
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    policy = parse_policy(
        'name = "undecided"\n[[sources]]\nname = "kb"\nadmit = true\nkinds = ["retrieved_document"]\n'
        "[thresholds]\nrelease_pass_rate = 0.0\n",
        "undecided.toml",
    )
    gated = run_gate([path], policy, format="records")
    [answer] = gated.result.answers
    [judged] = [c for c in answer.claims or [] if not c.screened]
    assert judged.verdict == "unjudged" and judged.unjudged_reason == "offline_undecided"
    assert answer.grounded is not True
    assert not gated.decision.passed


def test_settle_is_certain_by_its_own_test_not_the_score() -> None:
    # settle() (auditor/judges/offline/_settle.py, tests/test_settle.py) does not read the combiner
    judge = OfflineJudge()
    settled = judge.settle(claim(STATED), [DOC])
    assert settled is not None and settled.label is Label.SUPPORTED
    strict = replace(shipped(), supported=1.0, answer_supported=1.0, answer_partial=None)
    assert OfflineJudge(strict).settle(claim(STATED), [DOC]) == settled
    # absence stays uncertain whatever the score
    assert judge.settle(claim("The castle tour costs $30."), [DOC]) is None


ROWS = [[0.1, 1.0, 0.0], [0.9, 0.0, 1.0], [0.8, 0.0, 1.0], [0.2, 1.0, 1.0], [0.7, 1.0, 0.0], [0.3, 0.0, 0.0]]
LABELS = [0, 1, 1, 0, 1, 0]


def test_the_fit_is_deterministic_and_learns_the_sign() -> None:
    first = fit(ROWS, LABELS)
    assert fit(ROWS, LABELS) == first
    _, _, coef, _ = first
    assert coef[0] > 0  # the first column separates the labels
    assert fit(ROWS, [1 - y for y in LABELS])[2][0] < 0


def test_the_shipped_combiner_matches_the_features_and_a_stale_one_is_refused() -> None:
    combiner = shipped()
    assert combiner.features == FEATURES
    assert 0.0 <= combiner.unsupported < combiner.supported <= 1.0
    assert "settle" not in json.loads(combiner.to_json())  # nothing reads it: settle() has its own test
    assert from_json(combiner.to_json()) == combiner
    stale = json.loads(combiner.to_json())
    stale["features"] = stale["features"][:-1]
    with pytest.raises(ValueError, match="retrain with scripts/train-offline-judge"):
        from_json(json.dumps(stale))
    assert neutral().score([0.0] * len(FEATURES)) == 0.5
    assert (ROOT / "auditor" / "judges" / "offline" / WEIGHTS_FILE).is_file()


def _script() -> ModuleType:
    name = "train_offline_judge"
    loader = importlib.machinery.SourceFileLoader(name, str(ROOT / "scripts" / "train-offline-judge"))
    spec = importlib.util.spec_from_loader(name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module


def _labelled(path: Path) -> Path:
    source = "The X200 blender has a 1,200 W motor. Its warranty lasts 24 months. Shipping takes 3 days."
    rows = []
    facts = [
        ("The X200 blender has a 1,200 W motor.", "supported"),
        ("Its warranty lasts 24 months.", "supported"),
        ("Shipping takes 3 days.", "supported"),
        ("The X200 blender has a 900 W motor.", "contradicted"),
        ("Its warranty lasts 36 months.", "contradicted"),
        ("Shipping takes 9 days.", "contradicted"),
        ("The blender is sold by Globex.", "absent"),
        ("The X200 blender is red and quiet.", "absent"),
    ]
    for i, (text, verdict) in enumerate(facts * 2):
        rows.append(
            {
                "id": f"r{i}",
                "dataset": "toy",
                "task_type": "claims",
                "unit": "claim",
                "sources": [{"id": "KB-1", "text": source}],
                "answer": text,
                "verdict": verdict,
            }
        )
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.slow
def test_the_training_script_is_reproducible(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = _script()
    data = _labelled(tmp_path / "toy.jsonl")
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    assert script.main(["--train", str(data), "--dev", str(data), "--out", str(one)]) == 0
    assert script.main(["--train", str(data), "--dev", str(data), "--out", str(two)]) == 0
    assert one.read_bytes() == two.read_bytes()
    trained = from_json(one.read_text("utf-8"))
    assert trained.features == FEATURES and trained.trained_on.startswith("toy.jsonl")
    assert any(c != 0.0 for c in trained.coef)
    assert script.main(["--train", str(data), "--dev", str(data), "--out", str(one), "--check"]) == 0
    one.write_text(one.read_text("utf-8").replace('"supported"', '"supported" ', 1), "utf-8")
    assert script.main(["--train", str(data), "--dev", str(data), "--out", str(one), "--check"]) == 1
    missing = tmp_path / "missing.jsonl"
    assert script.main(["--train", str(missing), "--out", str(one)]) == 2
    assert "no such labelled file" in capsys.readouterr().err


def test_a_combiner_of_the_shipped_shape_scores_like_the_formula() -> None:
    n = len(FEATURES)
    combiner = Combiner(FEATURES, (0.0,) * n, (1.0,) * n, (1.0,) + (0.0,) * (n - 1), 0.0, 0.6, 0.4)
    assert combiner.score([0.0] * n) == 0.5
    assert combiner.score([2.0] + [0.0] * (n - 1)) == pytest.approx(1 / (1 + 2.718281828459045**-2))


def test_a_long_answer_is_decided_with_its_own_thresholds() -> None:
    # the claim-level pair leaves every claim undecided; the long-answer pair decides them
    combiner = replace(shipped(), supported=0.999, unsupported=0.001, answer_supported=0.0)
    judge = OfflineJudge(combiner)
    parts = [
        "The guided tour of the castle starts at the north gate.",
        "The guided tour of the castle lasts two hours.",
        "The castle tour starts at the north gate.",
    ]
    claims = [claim(t, f"c{i}") for i, t in enumerate(parts)]
    assert [v.label for v in judge.judge_sync(claims, [DOC])] == [Label.SUPPORTED] * 3
    assert [v.label for v in judge.judge_sync(claims[:2], [DOC])] == [Label.UNJUDGED] * 2
    # screened claims do not count towards the answer's size
    screened = [*claims[:2], claim("Happy to help!", "c9", screened=True)]
    assert [v.label for v in judge.judge_sync(screened, [DOC])] == [Label.UNJUDGED] * 2
    assert combiner.thresholds(combiner.answer_claims) == (0.0, combiner.answer_unsupported)
    assert combiner.thresholds(1) == (0.999, 0.001)
    # without a long-answer pair (an older file), every answer uses the claim-level pair
    older = json.loads(combiner.to_json())
    for key in ("answer_supported", "answer_unsupported", "answer_claims"):
        del older[key]
    assert from_json(json.dumps(older)).thresholds(10) == (0.999, 0.001)


def _cues(text: str, *docs: str) -> dict[str, float]:
    [score] = OfflineJudge().scores([claim(text)], [evidence(f"d{i}", d) for i, d in enumerate(docs)])
    return {c.name: c.value for c in score.cues} | {"score": score.score}


def test_shared_words_count_less_in_a_long_window() -> None:
    # the same words of the claim, in a short sentence and in a long one: chance explains more of
    # the long one's overlap, so the score is lower (every other cue is the same)
    text = "The castle tour starts at the north gate."
    short = _cues(text, "Castle tours start at the north gate.")
    long = _cues(
        text,
        "Castle tours, which visitors from many countries book months ahead for the medieval "
        "armoury, tapestries, chapel frescoes and rooftop views, start at the north gate.",
    )
    assert long["window_stems"] > short["window_stems"] > 0
    same = [n for n in FEATURES if n != "window_stems"]
    assert [long[n] for n in same] == [short[n] for n in same]
    assert long["score"] < short["score"]


def test_the_number_of_admitted_items_is_a_cue() -> None:
    text = "The castle tour starts at the north gate."
    one = _cues(text, "The castle tour starts at the north gate.")
    three = _cues(text, "The castle tour starts at the north gate.", "Parking is free.", "Dogs are welcome.")
    assert one["items"] < three["items"]
    assert one["score"] != three["score"]


def test_short_and_long_answers_get_their_own_thresholds_from_dev() -> None:
    # score = sigmoid(first cue); short answers' claims are supported above a score of 0.7, long
    # answers' above 0.3: the chooser finds a pair for each group that decides them all rightly
    script = _script()
    n = len(FEATURES)
    combiner = Combiner(FEATURES, (0.0,) * n, (1.0,) * n, (1.0,) + (0.0,) * (n - 1), 0.0, 1.0, 0.0)

    def row(record: str, p: float, supported: bool, claims: int) -> object:
        logit = math.log(p / (1 - p))
        return script.Row(
            record, "toy/t", (logit,) + (0.0,) * (n - 1), int(supported), True, False, False, claims
        )

    dev = [row(f"s{i}", p, p > 0.7, 1) for i, p in enumerate((0.2, 0.5, 0.65, 0.75, 0.8, 0.9))]
    dev += [row(f"l{i // 3}", p, p > 0.3, 3) for i, p in enumerate((0.1, 0.2, 0.4, 0.5, 0.6, 0.8))]
    chosen = script.choose_thresholds(combiner, dev)
    assert 0.65 < chosen.supported <= 0.75
    assert chosen.answer_supported is not None and 0.2 < chosen.answer_supported <= 0.4
    # one group only (every dev answer short): the long answers take the claim-level pair
    alone = script.choose_thresholds(combiner, dev[:6])
    assert alone.answer_supported is None and alone.thresholds(5) == alone.thresholds(1)


def test_a_long_answers_paraphrase_is_supported_from_a_partly_covering_window() -> None:
    # "visitors", "meet" and "guide" are not in the sentence: 3 of 6 content stems are
    doc = evidence("d", "The castle tour starts at the north gate at 10 am.")
    para = claim("Visitors meet their castle guide at the north gate.", "c0")
    others = [claim(STATED, "c1"), claim("The guided tour starts at the north gate.", "c2")]
    lenient = replace(shipped(), answer_partial=0.0, answer_supported=0.0, unsupported=0.0)
    judge = OfflineJudge(lenient)
    first, *_ = judge.judge_sync([para, *others], [doc])
    assert first.label is Label.SUPPORTED and first.rationale is not None
    assert first.rationale.startswith("mostly stated in") and first.citations[0].quote == doc.text
    # alone (a short answer), or without the long-answer score, it is not supported
    [alone] = judge.judge_sync([para], [doc])
    assert alone.label is not Label.SUPPORTED
    [never] = OfflineJudge(replace(lenient, answer_partial=None)).judge_sync([para, *others], [doc])[:1]
    assert never.label is not Label.SUPPORTED
    # a figure the window does not state is never supported this way
    late = claim("Visitors meet their castle guide at the north gate at 11 am.", "c0")
    [figure, *_] = judge.judge_sync([late, *others], [doc])
    assert figure.label is not Label.SUPPORTED


def test_a_long_answers_claim_is_supported_by_two_sentences_of_one_item_together() -> None:
    # a summary merging two sentences: no one window holds half of the claim, the two together do
    doc = evidence(
        "d",
        "Burns was a founding member of Lynyrd Skynyrd. The group toured widely in the South. "
        "Its fans packed every hall. It recorded the anthem Sweet Home Alabama in 1973.",
    )
    merged = claim("Burns, a founding member of the band, recorded the hit Sweet Home Alabama in 1973.", "c0")
    others = [
        claim("Burns was a founding member of Lynyrd Skynyrd.", "c1"),
        claim("The group toured widely.", "c2"),
    ]
    lenient = replace(shipped(), answer_partial=0.0, answer_supported=0.0, unsupported=0.0)
    first, *_ = OfflineJudge(lenient).judge_sync([merged, *others], [doc])
    assert first.label is Label.SUPPORTED and first.rationale is not None
    assert first.rationale.startswith("mostly stated in 2 sentences of")
    assert [c.quote for c in first.citations] == [
        "Burns was a founding member of Lynyrd Skynyrd.",
        "It recorded the anthem Sweet Home Alabama in 1973.",
    ]
    assert_quotes_verified(first, [doc], merged.text)  # the quotes carry it, as every judge's must
    # a figure neither sentence states, or a short answer: not supported this way
    late = claim("Burns, a founding member of the band, recorded the hit Sweet Home Alabama in 1975.", "c0")
    assert OfflineJudge(lenient).judge_sync([late, *others], [doc])[0].label is not Label.SUPPORTED
    [alone] = OfflineJudge(lenient).judge_sync([merged], [doc])
    assert alone.label is not Label.SUPPORTED


def test_two_sentences_stitched_may_bring_a_figure_but_not_join_two_names() -> None:
    lenient = replace(shipped(), answer_partial=0.0, answer_supported=0.0, unsupported=0.0)
    others = [claim("The band toured for years.", "c1"), claim("Its fans packed every hall.", "c2")]
    # the words in one sentence, the year in another (not adjacent): stitched
    doc = evidence(
        "d",
        "Burns was a founding member of the band and toured with it for years. "
        "Its fans packed every hall. The band was formed in 1965.",
    )
    year = claim("Burns, a founding member, toured with the band from 1965.", "c0")
    first, *_ = OfflineJudge(lenient).judge_sync([year, *others], [doc])
    assert first.label is Label.SUPPORTED
    assert [c.quote for c in first.citations][-1] == "The band was formed in 1965."
    # a relation between two names needs a sentence naming both: not stitched from one about each
    towns = evidence(
        "t",
        "Lake Providence is a port town in Louisiana. Cotton was grown nearby. "
        "The University of Mississippi enrols 20,000 students.",
    )
    joined = claim(
        "The University of Mississippi, located in the port town of Lake Providence, enrols 20,000 students.",
        "c0",
    )
    first, *_ = OfflineJudge(lenient).judge_sync([joined, *others], [towns])
    assert first.label is not Label.SUPPORTED


def test_a_missing_count_in_words_is_never_decided_absent_in_a_long_answer() -> None:
    # the source names the sisters rather than counting them
    doc = evidence("d", "Iman and Siham Hashi fled Somalia and recorded an album in Los Angeles.")
    count = claim("Two sisters recorded an album in Los Angeles.", "c0")
    others = [claim("Iman Hashi fled Somalia.", "c1"), claim("Siham Hashi recorded an album.", "c2")]
    eager = replace(shipped(), unsupported=1.0, answer_unsupported=1.0, answer_partial=None)
    first, *_ = OfflineJudge(eager).judge_sync([count, *others], [doc])
    assert first.label is Label.UNJUDGED and first.unjudged_reason is UnjudgedReason.OFFLINE_UNDECIDED
    assert first.rationale is not None and "two sisters found nowhere" in first.rationale.casefold()
    # alone (a short answer) the score still decides it
    [alone] = OfflineJudge(eager).judge_sync([count], [doc])
    assert alone.label is Label.ABSENT


def test_three_sentences_of_one_item_may_state_a_long_answers_claim_together() -> None:
    # any two of the three sentences hold less than half of the claim's words, the three together more
    doc = evidence(
        "d",
        "Burns was a founding member of the band. Rain fell all week. He played slide guitar on every "
        "track. Fans packed every hall. Their debut record topped the charts.",
    )
    merged = claim(
        "Burns, a founding member, played slide guitar on the debut record, which topped the charts "
        "in southern towns for many weeks during the summer tour.",
        "c0",
    )
    others = [claim("Rain fell all week.", "c1"), claim("Fans packed every hall.", "c2")]
    lenient = replace(shipped(), answer_partial=0.0, answer_supported=0.0, unsupported=0.0)
    first, *_ = OfflineJudge(lenient).judge_sync([merged, *others], [doc])
    assert first.label is Label.SUPPORTED and first.rationale is not None
    assert first.rationale.startswith("mostly stated in 3 sentences of")
    assert [c.quote for c in first.citations] == [
        "Burns was a founding member of the band.",
        "He played slide guitar on every track.",
        "Their debut record topped the charts.",
    ]
    assert_quotes_verified(first, [doc], merged.text)


def test_short_answers_thresholds_come_from_the_train_claims() -> None:
    """A low score decides a short answer's claim absent only up to the score where the train
    claims it decides agree with the annotators at least LOW_AGREEMENT of the time; ``supported`` is
    then the score giving the train datasets the best mean balanced accuracy."""
    script = _script()
    n = len(FEATURES)
    # the score is the first feature through the identity: score(x) = sigmoid(logit(p)) = p
    combiner = Combiner(FEATURES, (0.0,) * n, (1.0,) * n, (1.0,) + (0.0,) * (n - 1), 0.0, 1.0, 0.0)

    def row(
        i: int, p: float, supported: int, rule_supported: bool, dataset: str = "a", claims: int = 1
    ) -> Any:
        x = (math.log(p / (1 - p)),) + (0.0,) * (n - 1)
        return script.Row(
            f"r{i}", f"{dataset}/t", x, supported, rule_supported, not rule_supported, False, claims
        )

    rows = [
        # low scores: at 0.05, 19 in 20 are unsupported; at 0.31 only half
        *(row(i, 0.05, 0, False) for i in range(9)),
        row(9, 0.05, 1, False),
        *(row(10 + i, 0.31, i % 2, False) for i in range(20)),
        # the rules support these: right from 0.6, a coin toss below
        *(row(40 + i, 0.7, 1, True, "b") for i in range(10)),
        *(row(50 + i, 0.5, i % 2, True, "b") for i in range(10)),
        *(row(60 + i, 0.05, 0, False, "b") for i in range(10)),
    ]
    hi, lo = script.short_pair(combiner, rows)
    assert 0.05 <= lo < 0.31  # the coin-toss low scores are left undecided
    assert 0.5 < hi <= 0.7  # so are the coin-toss supported ones
    # a long answer's claims are not counted
    long = [row(100 + i, 0.31, 0, False, "a", claims=5) for i in range(50)]  # would lift the ceiling
    assert script.short_pair(combiner, [*rows, *long]) == (hi, lo)


def test_the_long_answers_pair_is_refined_between_two_steps_of_the_grid() -> None:
    """Dev scores crowding between two steps of the 0.01 grid: the finer search decides the ones
    it can while the agreement holds (the coarse grid stops at 0.15)."""
    script = _script()
    n = len(FEATURES)
    combiner = Combiner(FEATURES, (0.0,) * n, (1.0,) * n, (1.0,) + (0.0,) * (n - 1), 0.0, 1.0, 0.0)

    def row(i: int, p: float, supported: int, rule_supported: bool) -> Any:
        x = (math.log(p / (1 - p)),) + (0.0,) * (n - 1)
        return script.Row(f"r{i}", "d/t", x, supported, rule_supported, not rule_supported, False, 5)

    dev = [
        *(row(i, 0.1495, 0, False) for i in range(10)),
        *(row(10 + i, 0.1525, 0, False) for i in range(5)),  # right, between 0.15 and 0.16
        *(row(20 + i, 0.1585, 1, False) for i in range(3)),  # wrong: 24 of 27 is under 90%
        *(row(30 + i, 0.5, 1, True) for i in range(9)),
    ]
    chosen = script.choose_thresholds(combiner, dev)
    assert chosen.answer_unsupported is not None and 0.1525 <= chosen.answer_unsupported < 0.1585
    assert chosen.answer_supported == 0.5
