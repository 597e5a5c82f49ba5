"""``auditor gate``: the release gate over golden traces (exit codes, verdict, JUnit XML, decision rules)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema
from click.testing import CliRunner

from auditor.cli.gate import gate_command
from auditor.gate._gate import decide
from auditor.metrics import summarise
from auditor.policy import Thresholds
from auditor.results import AnswerOut, ClaimOut

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
SCHEMA = ROOT / "tests" / "support" / "junit-4.xsd"
PASSING = ["single_retrieval", "multi_hop", "multi_turn", "sub_agent", "combined_documents"]


def runtree(*names: str) -> list[str]:
    return [str(FIXTURES / name / "runtree.json") for name in names]


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(gate_command, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def policy_file(tmp_path: Path, pass_rate: float, extra: str = "") -> str:
    base = (ROOT / "policies" / "default.toml").read_text(encoding="utf-8")
    head, _, rest = base.partition("[thresholds]")
    body = "\n".join(
        line
        for line in rest.splitlines()
        if not line.startswith(("release_pass_rate", "refusal_accuracy", "over_refusal"))
    )
    path = tmp_path / "gate.toml"
    path.write_text(f"{head}[thresholds]\nrelease_pass_rate = {pass_rate}\n{extra}{body}\n", encoding="utf-8")
    return str(path)


def test_passing_set_exits_0_with_figures_and_denominators() -> None:
    code, out, _ = run(*runtree(*PASSING))
    assert code == 0, out
    assert "GATE PASSED" in out
    assert "(6/6 non-refusal answers; Wilson 95%" in out
    assert "contradicted claims 0" in out


def test_one_contradicted_claim_fails_whatever_the_ratio(tmp_path: Path) -> None:
    lenient = policy_file(tmp_path, 0.0)  # the pass rate alone would let anything through
    code, out, _ = run(*runtree(*PASSING, "changed_figure"), "--policy", lenient)
    assert code == 1, out
    assert "GATE FAILED" in out
    assert "contradicted claims 1 (of" in out
    assert "$95.00" in out  # the claim is listed
    code, out, _ = run(*runtree(*PASSING), "--policy", lenient)
    assert code == 0, out


def test_pass_rate_below_threshold_fails() -> None:
    code, out, _ = run(*runtree(*PASSING, "fabricated_figure"))
    assert code == 1
    assert "(6/7 non-refusal answers" in out and "required >= 98.0%" in out


@pytest.mark.parametrize("content", [b"", b"not a trace at all\n", b"\x00\x01\x02garbage"])
def test_unreadable_input_exits_2_without_traceback(tmp_path: Path, content: bytes) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    code, out, err = run(str(bad))
    assert code == 2
    assert "could not run" in err and "Traceback" not in err + out


def test_one_unreadable_file_among_good_ones_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{}", encoding="utf-8")
    code, _, err = run(*runtree("multi_hop"), str(bad))
    assert code == 2 and "partial golden set" in err


def test_missing_file_bad_policy_and_bad_labels_exit_2(tmp_path: Path) -> None:
    assert run(str(tmp_path / "nope.json"))[0] == 2
    broken = tmp_path / "p.toml"
    broken.write_text("[thresholds]\nrelease_pass_rate = 3\n", encoding="utf-8")
    code, _, err = run(*runtree("multi_hop"), "--policy", str(broken))
    assert code == 2 and "release_pass_rate" in err
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"answerable": true}\n', encoding="utf-8")
    assert run(*runtree("multi_hop"), "--labels", str(labels))[0] == 2
    assert run(*runtree("multi_hop"), "--judge", "nonsense")[0] == 2


def _labels(tmp_path: Path) -> Path:
    path = tmp_path / "golden.jsonl"
    rows = [
        {"question": "What is your CEO's home phone number?", "answerable": False},
        {"question": "Did ACME get a refund for their blender order?", "answerable": True},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_labels_check_refusal_thresholds(tmp_path: Path) -> None:
    labels = _labels(tmp_path)
    policy = policy_file(tmp_path, 0.9, "refusal_accuracy = 0.9\nover_refusal = 0.05\n")
    code, out, _ = run(*runtree("multi_hop", "refusal"), "--policy", policy, "--labels", str(labels))
    assert code == 0, out
    assert "refusal accuracy 100.0% (1/1 unanswerable questions" in out
    assert "over refusal 0.0% (0/1 answerable questions" in out
    # The refusal labelled answerable: refusal accuracy cannot be measured and over-refusal is 100%.
    labels.write_text(
        json.dumps({"question": "What is your CEO's home phone number?", "answerable": True}) + "\n",
        encoding="utf-8",
    )
    code, out, _ = run(*runtree("multi_hop", "refusal"), "--policy", policy, "--labels", str(labels))
    assert code == 1
    assert "no labelled unanswerable questions" in out and "over refusal 100.0% (1/1" in out


def test_junit_validates_against_the_jenkins_schema(tmp_path: Path) -> None:
    junit = tmp_path / "gate.xml"
    report = tmp_path / "gate.html"
    code, _, _ = run(
        *runtree(*PASSING, "changed_figure", "refusal"),
        "--junit",
        str(junit),
        "--report",
        str(report),
        "--labels",
        str(_labels(tmp_path)),
    )
    assert code == 1
    xmlschema.XMLSchema(str(SCHEMA)).validate(str(junit))
    root = ET.parse(junit).getroot()
    answers = root.find("testsuite[@name='auditor.gate.answers']")
    assert answers is not None
    cases = answers.findall("testcase")
    assert len(cases) == 8  # one per answer: 6 passing, 1 contradicted, 1 refusal
    failed = [c for c in cases if c.find("failure") is not None]
    assert len(failed) == 1
    failure = failed[0].find("failure")
    assert failure is not None and "contradicted" in (failure.get("message") or "")
    assert "contradicted: Order 10042 was refunded $95.00" in (failure.text or "")
    thresholds = root.find("testsuite[@name='auditor.gate.thresholds']")
    assert thresholds is not None
    assert {c.get("name") for c in thresholds.findall("testcase")} == {
        "answer_pass_rate",
        "contradictions",
        "undecided",
    }
    assert root.get("failures") == "3"  # the answer, the pass rate and the contradiction check
    assert report.read_text(encoding="utf-8").startswith("<!")


def test_junit_survives_control_characters_in_trace_text(tmp_path: Path) -> None:
    from auditor.gate._junit import junit_xml
    from auditor.results import AuditResult, RunInfo

    answer = _answer("a-1", [("supported", "Fine."), ("contradicted", "Bad \x07 bell & <tag>")])
    decision = decide(summarise([answer]), [answer], Thresholds())
    from datetime import UTC, datetime

    result = AuditResult(
        run=RunInfo(id="r", started_at=datetime.now(UTC), policy=None, judge=None), answers=[answer]
    )
    data = junit_xml(decision, result)
    xmlschema.XMLSchema(str(SCHEMA)).validate(ET.fromstring(data))
    assert "Bad \ufffd bell &amp; &lt;tag&gt;" in data.decode("utf-8")


def _answer(answer_id: str, claims: list[tuple[str, str]], refusal: bool = False) -> AnswerOut:
    from datetime import UTC, datetime

    outs = [
        ClaimOut(
            claim_id=f"{answer_id}-{i}",
            text=t,
            start=0,
            end=len(t),
            screened=False,
            screen_reason=None,
            verdict=v,
        )  # type: ignore[arg-type]
        for i, (v, t) in enumerate(claims)
    ]
    supported = sum(v == "supported" for v, _ in claims)
    contradicted = sum(v == "contradicted" for v, _ in claims)
    unjudged = sum(v == "unjudged" for v, _ in claims)
    judged = sum(v in ("supported", "contradicted", "absent") for v, _ in claims)
    ratio = supported / judged if judged else None
    grounded = (
        None if refusal else bool(ratio is not None and ratio >= 0.9 and not contradicted and not unjudged)
    )
    return AnswerOut(
        answer_id=answer_id,
        trace_id="t",
        span_id="s",
        question="q?",
        text="x",
        generated_at=datetime.now(UTC),
        evidence=[],
        claims=outs,
        refusal=refusal,
        groundedness=ratio,
        contradicted=contradicted,
        unjudged=unjudged,
        grounded=grounded,
    )


def test_decide_is_pure_and_fails_closed_on_unjudged() -> None:
    good = [_answer(f"g{i}", [("supported", "A.")]) for i in range(99)]
    unjudged = _answer("u", [("supported", "A."), ("unjudged", "B.")])
    decision = decide(summarise([*good, unjudged]), [*good, unjudged], Thresholds(release_pass_rate=0.98))
    # 99/100 >= 98% passes the pass rate, but the judge could not decide one answer: fail closed
    assert not decision.passed
    assert [c.name for c in decision.failed_checks] == ["undecided"]
    check = decision.failed_checks[0]
    assert check.observed is not None and (check.observed.numerator, check.observed.denominator) == (1, 100)
    assert "could not decide 1, with an unjudged claim 1 (of 100 answers with a claim" in check.detail
    assert "--judge openai:" not in check.detail  # the hint is for the offline judge's "cannot tell"
    offline = _answer("o", [("supported", "A.")])
    claims = [*(offline.claims or []), *(unjudged.claims or [])[1:]]
    claims[-1] = claims[-1].model_copy(update={"unjudged_reason": "offline_undecided"})
    offline = offline.model_copy(update={"claims": claims, "grounded": False, "unjudged": 1})
    hint = decide(summarise([*good, offline]), [*good, offline], Thresholds()).failed_checks
    assert "re-run with --judge openai:MODEL" in next(c.detail for c in hint if c.name == "undecided")
    case = decision.answers[-1]
    assert case.status == "failed" and case.unjudged == ("B.",)
    assert "cannot pass" in case.reasons[0]
    # an unjudged claim beside a decided unsupported one: the answer is decided, but the unjudged claim
    # could be a contradiction, which fails at any ratio: the gate fails closed all the same
    absent = _answer("a", [("absent", "A."), ("unjudged", "B.")])
    decision = decide(summarise([*good, absent]), [*good, absent], Thresholds(release_pass_rate=0.98))
    assert decision.summary.undecided_answers == 0
    assert [c.name for c in decision.failed_checks] == ["undecided"]
    assert "could not decide 0, with an unjudged claim 1 (of 100" in decision.failed_checks[0].detail
    one_bad = [*good, _answer("c", [*[("supported", "A.")] * 50, ("contradicted", "C.")])]
    decision = decide(
        summarise(one_bad), one_bad, Thresholds(release_pass_rate=0.0, contradictions_allowed=5)
    )
    assert not decision.passed
    assert [c.name for c in decision.failed_checks] == ["contradictions"]


def test_no_answer_to_gate_fails() -> None:
    refusal = _answer("r", [], refusal=True)
    decision = decide(summarise([refusal]), [refusal], Thresholds())
    assert not decision.passed and decision.answers[0].status == "refusal"
    assert "no non-refusal answer" in decision.checks[0].detail


def test_an_unwritable_junit_or_report_path_fails_before_the_audit(tmp_path: Path) -> None:
    db = tmp_path / "gate.db"
    for option in ("--junit", "--report"):
        target = tmp_path / "missing" / "out.xml"
        code, out, err = run(*runtree(*PASSING), "--db", f"sqlite:///{db}", option, str(target))
        assert code == 2 and out == ""
        assert f"could not run: {option} {target}: the folder {target.parent} does not exist" in err
    assert not db.exists()  # nothing audited, nothing stored


def test_labels_matching_no_answer_fail_before_the_audit(tmp_path: Path) -> None:
    labels = tmp_path / "golden.jsonl"
    labels.write_text('{"question": "A question nobody asked?", "answerable": true}\n', encoding="utf-8")
    db = tmp_path / "gate.db"
    code, out, err = run(*runtree("multi_hop", "refusal"), "--db", f"sqlite:///{db}", "--labels", str(labels))
    assert code == 2 and out == ""
    assert f"{labels}: none of its 1 label(s) matches an answer of the golden set" in err
    assert "Traceback" not in err and not db.exists()


def test_labels_partly_unmatched_are_a_warning(tmp_path: Path) -> None:
    labels = _labels(tmp_path)
    with labels.open("a", encoding="utf-8") as f:
        f.write(json.dumps({"question": "A question nobody asked?", "answerable": True}) + "\n")
    policy = policy_file(tmp_path, 0.9, "refusal_accuracy = 0.9\nover_refusal = 0.05\n")
    code, out, err = run(*runtree("multi_hop", "refusal"), "--policy", policy, "--labels", str(labels))
    assert code == 0, out
    assert "1 label(s) match no answer." in err
