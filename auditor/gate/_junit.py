"""JUnit XML for the release gate, so any CI system shows which answers failed and why.

The layout follows the schema CI servers read (Jenkins' ``junit-4.xsd``, a copy of which the tests
validate against): ``<testsuites>`` holding two ``<testsuite>`` elements,

- ``answers``: one ``<testcase>`` per audited answer; a failed answer carries a ``<failure>`` whose
  message names what failed and whose text lists the contradicted, unsupported and unjudged claims;
  a refusal passes and says so in ``<system-out>``;
- ``gate``: one ``<testcase>`` per threshold the gate applied (pass rate, contradictions, refusal
  figures), with the figure, its denominator and intervals.

Claim and question text is trace content: ElementTree escapes it, and characters XML 1.0 cannot
carry (control characters) are replaced, so the file always parses.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import UTC
from pathlib import Path
from typing import cast

from auditor.gate._gate import AnswerCase, GateDecision
from auditor.results import AuditResult

_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_NAME_LIMIT = 120


def _clean(text: str) -> str:
    return _INVALID_XML.sub("\ufffd", text)


def _short(text: str, limit: int = _NAME_LIMIT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _case_name(case: AnswerCase) -> str:
    question = _short(case.question) if case.question else "(no question found)"
    return _clean(f"{case.answer_id}: {question}")


def _failure_text(case: AnswerCase) -> str:
    lines = [f"answer {case.answer_id} (trace {case.trace_id})", f"question: {case.question or '-'}"]
    for title, claims in (
        ("contradicted", case.contradicted),
        ("unsupported (absent)", case.unsupported),
        ("unjudged", case.unjudged),
        ("conflicting sources", case.conflicted),
    ):
        for claim in claims:
            lines.append(f"{title}: {claim}")
    return _clean("\n".join(lines))


def _answers_suite(decision: GateDecision, timestamp: str) -> ET.Element:
    cases = decision.answers
    failures = sum(c.status == "failed" for c in cases)
    suite = ET.Element(
        "testsuite",
        {
            "name": "auditor.gate.answers",
            "tests": str(len(cases)),
            "failures": str(failures),
            "errors": "0",
            "skipped": "0",
            "time": "0",
            "timestamp": timestamp,
        },
    )
    for case in cases:
        element = ET.SubElement(
            suite, "testcase", {"name": _case_name(case), "classname": "auditor.gate.answers", "time": "0"}
        )
        if case.status == "failed":
            failure = ET.SubElement(
                element, "failure", {"message": _clean("; ".join(case.reasons)), "type": "ungrounded"}
            )
            failure.text = _failure_text(case)
        elif case.status == "refusal":
            ET.SubElement(element, "system-out").text = "refusal: the answer makes no claim to judge"
    return suite


def _checks_suite(decision: GateDecision, result: AuditResult, timestamp: str) -> ET.Element:
    checks = decision.checks
    suite = ET.Element(
        "testsuite",
        {
            "name": "auditor.gate.thresholds",
            "tests": str(len(checks)),
            "failures": str(sum(not c.passed for c in checks)),
            "errors": "0",
            "skipped": "0",
            "time": "0",
            "timestamp": timestamp,
        },
    )
    properties = ET.SubElement(suite, "properties")
    run = result.run
    values = {
        "auditor_version": result.auditor_version,
        "run_id": run.id,
        "policy": run.policy.name if run.policy else "-",
        "policy_sha256": run.policy.sha256 if run.policy else "-",
        "judge": (run.judge.kind + (f":{run.judge.model}" if run.judge.model else "")) if run.judge else "-",
        "judge_approximate": str(bool(run.judge and run.judge.approximate)).lower(),
    }
    for name, value in values.items():
        ET.SubElement(properties, "property", {"name": name, "value": value})
    for check in checks:
        element = ET.SubElement(
            suite, "testcase", {"name": check.name, "classname": "auditor.gate.thresholds", "time": "0"}
        )
        if not check.passed:
            ET.SubElement(
                element, "failure", {"message": _clean(check.detail), "type": "threshold"}
            ).text = _clean(check.detail)
        else:
            ET.SubElement(element, "system-out").text = _clean(check.detail)
    return suite


def junit_xml(decision: GateDecision, result: AuditResult) -> bytes:
    """The JUnit XML document for a gate decision (UTF-8, with an XML declaration)."""
    timestamp = result.run.started_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S")
    answers = _answers_suite(decision, timestamp)
    checks = _checks_suite(decision, result, timestamp)
    tests = len(decision.answers) + len(decision.checks)
    failures = int(answers.get("failures", "0")) + int(checks.get("failures", "0"))
    root = ET.Element(
        "testsuites",
        {"name": "auditor gate", "tests": str(tests), "failures": str(failures), "errors": "0", "time": "0"},
    )
    root.extend([answers, checks])
    ET.indent(root)
    return cast(bytes, ET.tostring(root, encoding="utf-8", xml_declaration=True))


def write_junit(decision: GateDecision, result: AuditResult, path: str | Path) -> Path:
    """Write :func:`junit_xml` to ``path`` and return it."""
    target = Path(path)
    target.write_bytes(junit_xml(decision, result))
    return target
