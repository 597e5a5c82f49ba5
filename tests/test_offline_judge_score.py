"""The offline judge's support score: the cues behind it, the undecided path, the learned combiner
and the script that trains it (same data, same coefficients)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import sys
from dataclasses import replace
from pathlib import Path
from types import ModuleType

import pytest

from auditor.gate import run_gate
from auditor.judges import Label, OfflineJudge, UnjudgedReason
from auditor.judges._combiner import WEIGHTS_FILE, Combiner, fit, from_json, neutral, shipped
from auditor.judges._features import FEATURES
from auditor.policy import parse_policy
from tests.test_offline_judge import REFUND, claim, evidence

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
    assert verdict.rationale is not None and verdict.rationale.startswith("undecided: support score")
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


def test_settle_uses_the_score_only_above_its_threshold() -> None:
    judge = OfflineJudge()
    settled = judge.settle(claim(STATED), [DOC])
    assert settled is not None and settled.label is Label.SUPPORTED
    never = OfflineJudge(replace(shipped(), settle=1.01))
    assert never.settle(claim(STATED), [DOC]) is None
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
    assert 0.0 <= combiner.unsupported < combiner.supported <= combiner.settle <= 1.0
    assert from_json(combiner.to_json()) == combiner
    stale = json.loads(combiner.to_json())
    stale["features"] = stale["features"][:-1]
    with pytest.raises(ValueError, match="retrain with scripts/train-offline-judge"):
        from_json(json.dumps(stale))
    assert neutral().score([0.0] * len(FEATURES)) == 0.5
    assert (ROOT / "auditor" / "judges" / WEIGHTS_FILE).is_file()


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
    one.write_text(one.read_text("utf-8").replace('"settle"', '"settle" ', 1), "utf-8")
    assert script.main(["--train", str(data), "--dev", str(data), "--out", str(one), "--check"]) == 1
    missing = tmp_path / "missing.jsonl"
    assert script.main(["--train", str(missing), "--out", str(one)]) == 2
    assert "no such labelled file" in capsys.readouterr().err


def test_a_combiner_of_the_shipped_shape_scores_like_the_formula() -> None:
    n = len(FEATURES)
    combiner = Combiner(FEATURES, (0.0,) * n, (1.0,) * n, (1.0,) + (0.0,) * (n - 1), 0.0, 0.6, 0.4, 0.9)
    assert combiner.score([0.0] * n) == 0.5
    assert combiner.score([2.0] + [0.0] * (n - 1)) == pytest.approx(1 / (1 + 2.718281828459045**-2))
