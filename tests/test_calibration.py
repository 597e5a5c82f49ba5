"""Calibration: the overlap rule, confusion matrices, kappa, sensitivity and specificity (hand-computed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from auditor.calibration import LabelledRecord, Pair, load_labelled
from auditor.calibration._agreement import bootstrap_kappa, confusion, kappa_of, level_report
from auditor.calibration._labelled import (
    HumanSpan,
    JudgedClaim,
    answer_pair,
    claim_pairs,
    human_claim_verdict,
    worst,
)
from auditor.cli.calibrate import calibrate_command
from auditor.errors import UsageError
from auditor.run import calibrate
from auditor.store import Store

SPANS = (HumanSpan(start=10, end=20, verdict="absent"), HumanSpan(start=15, end=25, verdict="contradicted"))


@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [
        (0, 10, "supported"),  # touches the span's first character boundary: shares none
        (0, 11, "absent"),  # one shared character is enough
        (10, 15, "absent"),
        (19, 30, "contradicted"),  # overlaps both: contradicted wins
        (20, 25, "contradicted"),
        (25, 30, "supported"),
    ],
)
def test_overlap_rule(start: int, end: int, expected: str) -> None:
    assert human_claim_verdict(start, end, SPANS) == expected


def pairs(*items: tuple[str, str]) -> list[Pair]:
    return [Pair(record_id="r", human=h, judge=j) for h, j in items]  # type: ignore[arg-type]


def test_confusion_matrices_three_way_and_binary() -> None:
    items = pairs(
        ("supported", "supported"),
        ("supported", "absent"),
        ("absent", "contradicted"),
        ("contradicted", "contradicted"),
        ("absent", "supported"),
    )
    three = confusion(items)
    assert three.counts == ((1, 0, 1), (0, 1, 0), (1, 1, 0))
    binary = confusion(items, binary=True)
    assert binary.labels == ("unsupported", "supported")
    assert binary.counts == ((2, 1), (1, 1))
    assert binary.cell("unsupported", "unsupported") == 2


def test_kappa_hand_computed() -> None:
    # p_o = 35/50 = 0.7; p_e = (25*30 + 25*20) / 50^2 = 0.5; kappa = 0.2 / 0.5
    assert kappa_of([[20, 5], [10, 15]]) == pytest.approx(0.4)
    # p_o = 21/30 = 0.7; p_e = (15*13 + 6*8 + 9*9) / 900 = 0.36; kappa = 0.34 / 0.64
    assert kappa_of([[10, 2, 3], [1, 5, 0], [2, 1, 6]]) == pytest.approx(0.53125)
    assert kappa_of([[5, 0], [0, 0]]) is None  # chance agreement 1: undefined
    assert kappa_of([[0, 0], [0, 0]]) is None
    assert kappa_of([[0, 5], [5, 0]]) == pytest.approx(-1.0)


def test_bootstrap_interval_brackets_kappa_and_is_reproducible() -> None:
    groups = [
        confusion(
            pairs(
                *([("absent", "absent")] * (i % 3 + 1)),
                ("supported", "supported"),
                ("supported", "absent" if i % 4 == 0 else "supported"),
            )
        )
        for i in range(40)
    ]
    first, second = bootstrap_kappa(groups), bootstrap_kappa(groups)
    assert first == second
    assert first.value is not None and first.low is not None and first.high is not None
    assert first.low <= first.value <= first.high
    assert bootstrap_kappa([]).value is None


def test_sensitivity_and_specificity_with_wilson_intervals() -> None:
    items = {
        "a": pairs(*[("absent", "absent")] * 8, *[("contradicted", "supported")] * 2),
        "b": pairs(*[("supported", "supported")] * 6, *[("supported", "contradicted")] * 4),
    }
    report = level_report("claim", items, resamples=200)
    assert (report.sensitivity.numerator, report.sensitivity.denominator) == (8, 10)
    assert (report.specificity.numerator, report.specificity.denominator) == (6, 10)
    assert report.sensitivity.wilson is not None
    # Wilson 95% for 8/10: 0.4902 to 0.9433
    assert report.sensitivity.wilson.low == pytest.approx(0.4902, abs=1e-3)
    assert report.sensitivity.wilson.high == pytest.approx(0.9433, abs=1e-3)
    assert report.agreement.numerator == 14 and report.agreement_binary.numerator == 14
    assert report.items == 20 and report.records == 2


def test_empty_classes_give_no_rate_rather_than_a_number() -> None:
    report = level_report("answer", {"a": pairs(("supported", "supported"))}, resamples=50)
    assert report.sensitivity.value is None and report.sensitivity.denominator == 0
    assert report.kappa.value is None


def record(**fields: object) -> LabelledRecord:
    base: dict[str, object] = {
        "id": "r1",
        "answer": "Alpha is one. Beta is two. Gamma is three.",
        "trace_id": "r1",
    }
    base.update(fields)
    return LabelledRecord.model_validate(base)


def test_claim_pairs_for_answer_records_count_lost_spans_and_unjudged() -> None:
    rec = record(
        labels=[
            {"start": 14, "end": 18, "verdict": "contradicted"},
            {"start": 28, "end": 33, "verdict": "absent"},
        ]
    )
    claims = [
        JudgedClaim(start=0, end=13, verdict="supported"),
        JudgedClaim(start=14, end=26, verdict="absent"),
        JudgedClaim(start=40, end=42, verdict="unjudged"),
    ]
    items, dropped, lost = claim_pairs(rec, claims)
    assert [(p.human, p.judge) for p in items] == [("supported", "supported"), ("contradicted", "absent")]
    assert dropped == {"unjudged claim": 1}
    assert lost == 1  # the span at 28-33 lies in no judged claim
    assert rec.verdict == "contradicted"  # derived from the spans


def test_claim_unit_record_is_one_item_with_the_worst_verdict() -> None:
    rec = record(unit="claim", verdict="absent")
    claims = [
        JudgedClaim(start=0, end=13, verdict="supported"),
        JudgedClaim(start=14, end=26, verdict="absent"),
    ]
    items, _, _ = claim_pairs(rec, claims)
    assert [(p.human, p.judge) for p in items] == [("absent", "absent")]
    assert worst(["supported", "unjudged"]) == "absent"
    assert worst(["absent", "contradicted", "supported"]) == "contradicted"
    pair = answer_pair(rec, claims)
    assert pair is not None and pair.judge == "absent"
    assert answer_pair(rec, []) is None
    # undecided (nothing decided unsupported, something unjudged): out of the answer level, as in the summary
    unjudged = [
        JudgedClaim(start=0, end=13, verdict="supported"),
        JudgedClaim(start=14, end=26, verdict="unjudged"),
    ]
    assert answer_pair(rec, unjudged) is None
    decided = [*unjudged, JudgedClaim(start=27, end=30, verdict="absent")]
    pair = answer_pair(rec, decided)
    assert pair is not None and pair.judge == "absent"
    with pytest.raises(ValueError, match="needs a verdict"):
        record(unit="claim")


def write_labelled(tmp_path: Path) -> Path:
    text = "Refunds are accepted within 30 days of purchase."
    rows = [
        {
            "id": "good",
            "question": "Refunds?",
            "sources": [{"id": "p", "text": text}],
            "answer": "  " + text,
            "labels": [],
            "verdict": "supported",
            "answer_label": "grounded",
        },
        {
            "id": "bad",
            "question": "Refunds?",
            "sources": [{"id": "p", "text": text}],
            "answer": "Refunds are accepted within 90 days of purchase.",
            "labels": [{"start": 28, "end": 35, "text": "90 days", "verdict": "contradicted"}],
            "verdict": "contradicted",
            "answer_label": "hallucinated",
        },
        {
            "id": "claim1",
            "unit": "claim",
            "sources": [{"id": "p", "text": text}],
            "answer": "The store ships to Mars.",
            "labels": [],
            "verdict": "absent",
        },
    ]
    path = tmp_path / "labelled.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_calibrate_end_to_end_stores_it_under_the_judge(tmp_path: Path) -> None:
    path = write_labelled(tmp_path)
    db = f"sqlite:///{tmp_path / 'cal.db'}"
    calibration = calibrate(path, db_url=db)
    assert calibration.records == 3
    assert calibration.answer.items == 3
    assert calibration.answer.binary.counts == ((2, 0), (0, 1))  # leading whitespace is mapped correctly
    assert calibration.claim.items == 3
    assert calibration.judge.kind == "offline" and calibration.judge.approximate
    assert set(calibration.by_segment) == {"-/-/claim", "-/-/answer"}
    with Store(db) as store:
        assert store.latest_calibration(calibration.judge) == calibration
        other = calibration.judge.model_copy(update={"prompt_version": "other"})
        assert store.latest_calibration(other) is None


def test_calibrate_command_prints_both_levels_and_writes_json(tmp_path: Path) -> None:
    path = write_labelled(tmp_path)
    out = tmp_path / "cal.json"
    result = CliRunner().invoke(
        calibrate_command, [str(path), "--db", f"sqlite:///{tmp_path / 'c.db'}", "--json", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "claim level" in result.output and "answer level" in result.output
    assert "sensitivity for unsupported" in result.output
    assert json.loads(out.read_text())["answer"]["items"] == 3


def test_a_bad_labelled_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "a", "answer": "x"}\n{"id": "b"}\n', encoding="utf-8")
    with pytest.raises(UsageError, match="line 2"):
        load_labelled(path)
