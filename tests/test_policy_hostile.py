"""A policy cannot hang or crash the audit: RE2 for every regex, finite numbers in range.

Trace metadata is untrusted input: a pattern with nested repetition, matched by a backtracking
engine against a long hostile value, would run for hours. Every regex a policy declares is compiled
with RE2 at load (linear-time matching), a pattern RE2 cannot run is rejected there, and a numeric
field that would overflow or poison a comparison (``inf``, ``nan``, ``1e308``) is rejected too.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from auditor.cli import cli
from auditor.errors import PolicyError
from auditor.evidence import Answer, Evidence, EvidenceKind
from auditor.policy import Decision, Policy, evaluate, load_policy, parse_policy
from tests.conftest import ROOT

HANG_SECONDS = 60  # a generous bound: RE2 needs milliseconds, a backtracking engine centuries

# Each pattern backtracks exponentially (or polynomially to a high degree) in Python's re on its
# hostile value; the expected decision is RE2's answer (``(a|a?)+$`` matches the empty string at
# the end, so it admits).
HOSTILE = [
    ("(a+)+$", "a" * 50_000 + "!", False),
    ("(a|a?)+$", "a" * 50_000 + "!", True),
    (r"^(\w+\s?)*$", "word " * 10_000 + "!", False),
]

_SCRIPT = """
import json, sys
from datetime import UTC, datetime
from auditor.evidence import Answer, Evidence, EvidenceKind
from auditor.policy import evaluate, parse_policy
out = []
for pattern, value in json.loads(sys.stdin.read()):
    policy = parse_policy(
        'name = "p"\\n[[sources]]\\nname = "c"\\nadmit = true\\n[sources.metadata]\\n'
        + "source = { regex = " + json.dumps(pattern) + " }\\n",
        "hostile.toml",
    )
    item = Evidence(
        evidence_id="e1", kind=EvidenceKind.RETRIEVED_DOCUMENT, name="kb", text="t", trace_id="t1",
        metadata={"source": value},
    )
    answer = Answer(
        answer_id="a1", trace_id="t1", span_id="s1", text="x",
        generated_at=datetime(2024, 6, 1, tzinfo=UTC), evidence=(item,),
    )
    (decision,) = evaluate(policy, answer)
    out.append(decision.admitted)
print(json.dumps(out))
"""


@pytest.mark.slow
def test_catastrophic_patterns_on_hostile_metadata_finish() -> None:
    stdin = json.dumps([[pattern, value] for pattern, value, _ in HOSTILE])
    try:
        done = subprocess.run(
            [sys.executable, "-c", _SCRIPT],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=HANG_SECONDS,
            cwd=ROOT,
            check=True,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"a policy regex hung the evaluation (no result within {HANG_SECONDS} s)")
    assert json.loads(done.stdout) == [admitted for _, _, admitted in HOSTILE]


def _decide(policy: Policy, metadata: dict[str, Any]) -> Decision:
    item = Evidence(
        evidence_id="e1",
        kind=EvidenceKind.RETRIEVED_DOCUMENT,
        name="kb",
        text="t",
        trace_id="t1",
        metadata=metadata,
    )
    generated = datetime(2024, 6, 1, tzinfo=UTC)
    answer = Answer(
        answer_id="a1", trace_id="t1", span_id="s1", text="x", generated_at=generated, evidence=(item,)
    )
    (decision,) = evaluate(policy, answer)
    return decision


def _regex_policy(pattern: str) -> str:
    return (
        'name = "p"\n[[sources]]\nname = "kb"\nadmit = true\n[sources.metadata]\n'
        f"source = {{ regex = {json.dumps(pattern)} }}\n"
    )


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        ("^(?=.*refund).*$", "invalid perl operator: (?="),
        ("(?<!draft-)kb", "invalid perl operator: (?<"),
        (r"(a)\1", r"invalid escape sequence: \1"),
    ],
)
def test_pattern_re2_cannot_run_is_rejected_at_load(tmp_path: Path, pattern: str, why: str) -> None:
    path = tmp_path / "lookaround.toml"
    path.write_text(_regex_policy(pattern), encoding="utf-8")
    with pytest.raises(PolicyError) as err:
        load_policy(path)
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: invalid policy: sources[0].metadata.source.regex: ")
    assert why in message and "without lookaround or backreferences" in message


def test_policy_check_rejects_a_lookahead_in_one_line_with_status_2(tmp_path: Path) -> None:
    path = tmp_path / "lookahead.toml"
    path.write_text(_regex_policy("^(?=.*refund)"), encoding="utf-8")
    result = CliRunner().invoke(cli, ["policy", "check", str(path)])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output
    assert str(path) in lines[0] and "sources[0].metadata.source.regex" in lines[0]
    assert "invalid perl operator" in lines[0]


def test_re2_syntax_hint_for_python_end_of_text() -> None:
    with pytest.raises(PolicyError, match=r"RE2 writes the end of the text as \\z"):
        parse_policy(_regex_policy(r"\.pdf\Z"), "end.toml")
    policy = parse_policy(_regex_policy(r"\.pdf\z"), "end.toml")
    assert policy.sources[0].metadata["source"].regex == r"\.pdf\z"


def test_a_lone_surrogate_in_metadata_is_matched_not_a_crash() -> None:
    policy = parse_policy(_regex_policy("^kb-"), "p.toml")
    decision = _decide(policy, {"source": json.loads('"kb-\\ud800"')})
    assert decision.admitted and decision.source_class == "kb"


# --- numbers: finite and in range ------------------------------------------------------------------

_MAX_AGE = 'name = "p"\n[[sources]]\nname = "kb"\nadmit = true\n[sources.reject_if]\nmax_age_days = {}\n'


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("inf", "got Infinity; expected a finite number"),
        ("-inf", "got -Infinity; expected a finite number"),
        ("nan", "got NaN; expected a finite number"),
        ("-1", "got -1; expected greater than or equal to 0"),
        ("1e308", "got 1e+308; expected less than or equal to 36500"),
    ],
)
def test_max_age_days_must_be_a_finite_number_in_range(tmp_path: Path, value: str, expected: str) -> None:
    path = tmp_path / "age.toml"
    path.write_text(_MAX_AGE.format(value), encoding="utf-8")
    result = CliRunner().invoke(cli, ["policy", "check", str(path)])
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"Error: {path}: invalid policy: sources[0].reject_if.max_age_days: ")
    assert expected in line


def test_the_largest_max_age_days_is_audited() -> None:
    policy = parse_policy(_MAX_AGE.format("36500"), "age.toml")
    decision = _decide(policy, {"updated_at": "1950-01-01"})
    assert decision.admitted  # no OverflowError: a 2024 answer, a 1950 date, within 100 years


@pytest.mark.parametrize("field", ["claim_support", "release_pass_rate", "refusal_accuracy", "over_refusal"])
@pytest.mark.parametrize("value", ["inf", "nan", "-1", "1e308"])
def test_thresholds_must_be_finite_shares(field: str, value: str) -> None:
    with pytest.raises(PolicyError) as err:
        parse_policy(f'name = "p"\n[thresholds]\n{field} = {value}\n', "thresholds.toml")
    message = str(err.value)
    assert message.startswith(f"thresholds.toml: invalid policy: thresholds.{field}: got ")
    assert "\n" not in message


@pytest.mark.parametrize("value", ["inf", "nan"])
def test_a_metadata_value_must_be_finite(value: str) -> None:
    text = f'name = "p"\n[[sources]]\nname = "kb"\nadmit = true\nmetadata = {{ rank = {value} }}\n'
    with pytest.raises(PolicyError, match=r"sources\[0\]\.metadata\.rank\.equals: got .*; expected a finite"):
        parse_policy(text, "rank.toml")


def test_a_deeply_nested_policy_is_one_line_not_a_recursion_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.toml"
    path.write_text("x = " + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")
    with pytest.raises(PolicyError, match="nested too deeply"):
        load_policy(str(path))
