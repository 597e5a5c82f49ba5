"""The pytest plugin (entry point ``pytest11``): the ``grounding`` fixture and the ``golden_set`` marker.

Loaded into every pytest session where trace-auditor is installed, so importing it loads nothing
of the auditor: each hook imports what it needs when a test asks for it.

- ``grounding``: a :class:`Grounding` whose ``assert_grounded`` uses the session's judge and policy.
- ``@pytest.mark.golden_set("golden.jsonl", ...)``: the test runs once per answer of the files
  (records or traces; paths relative to the test file, directories and globs welcome), its
  ``golden_answer`` argument a :class:`GoldenAnswer`; the set is audited once per session, on
  first use. A row or line the reader skipped is a failing case of its own, naming file and line.
- Options: ``--auditor-judge`` / ini ``auditor_judge`` (default ``AUDITOR_JUDGE``, else offline),
  ``--auditor-policy`` / ``auditor_policy``, ``--auditor-base-url`` / ``auditor_base_url``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from auditor.policy import Policy
    from auditor.results import AnswerOut, AuditResult
    from auditor.testing._check import CheckConfig, EvidenceOrTrace, PolicyLike

MARKER = "golden_set"
FIXTURE = "golden_answer"
_OPTIONS = (
    ("judge", "SPEC", "Judge for assert_grounded and golden sets: offline (default) or openai:MODEL."),
    (
        "policy",
        "FILE|NAME",
        "Admissible-source policy for assert_grounded and golden sets (default: default).",
    ),
    ("base_url", "URL", "OpenAI-compatible endpoint for an openai: judge."),
)
_CONFIG = pytest.StashKey["CheckConfig"]()
_AUDITS = pytest.StashKey[dict[tuple[Any, ...], "AuditResult"]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("auditor", "groundedness checks (trace-auditor)")
    for name, metavar, text in _OPTIONS:
        flag = "--auditor-" + name.replace("_", "-")
        group.addoption(flag, dest=f"auditor_{name}", metavar=metavar, default=None, help=text)
        parser.addini(f"auditor_{name}", text, default=None)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(*paths, policy=None, judge=None, format=None): run the test once per answer of a "
        f"golden set (records or trace files), passed as the `{FIXTURE}` argument (trace-auditor).",
    )


def _config(config: pytest.Config) -> CheckConfig:
    """The session's judge, policy and endpoint: command line > ``AUDITOR_*`` > ini > default."""
    from auditor.settings import SETTINGS
    from auditor.testing._check import CheckConfig

    if _CONFIG in config.stash:
        return config.stash[_CONFIG]
    values: dict[str, str | None] = {}
    for name, _, _ in _OPTIONS:
        ini = config.getini(f"auditor_{name}") or None
        values[name] = config.getoption(f"auditor_{name}") or os.environ.get(SETTINGS[name][0]) or ini
    policy: str | Path | None = values["policy"]
    if policy and config.inipath is not None and (config.inipath.parent / policy).is_file():
        policy = config.inipath.parent / policy  # a path in the ini file is relative to it
    made = CheckConfig(judge=values["judge"], policy=policy, base_url=values["base_url"])
    config.stash[_CONFIG] = made
    return made


@dataclass
class Grounding:
    """``assert_grounded`` with the session's judge and policy (the ``grounding`` fixture)."""

    config: CheckConfig

    def assert_grounded(
        self,
        answer: str | None,
        evidence_or_trace: EvidenceOrTrace,
        policy: PolicyLike = None,
        *,
        question: str | None = None,
        judge: str | None = None,
    ) -> list[AnswerOut]:
        """See :func:`auditor.testing.assert_grounded`."""
        __tracebackhide__ = True
        from auditor.testing._check import assert_grounded

        return assert_grounded(
            answer, evidence_or_trace, policy, question=question, judge=judge, config=self.config
        )


@pytest.fixture
def grounding(request: pytest.FixtureRequest) -> Grounding:
    """Check answers for groundedness with the session's judge and policy."""
    return Grounding(_config(request.config))


@dataclass
class GoldenAnswer:
    """One answer of a golden set, audited (the ``golden_answer`` argument)."""

    answer: AnswerOut
    result: AuditResult
    policy: Policy = field(repr=False)
    judge: str

    def __repr__(self) -> str:  # shown by pytest beside a failure: the answer, not the whole run
        return f"GoldenAnswer({self.answer.trace_id}: {self.answer.text[:60]!r})"

    @property
    def question(self) -> str | None:
        return self.answer.question

    @property
    def text(self) -> str:
        return self.answer.text

    def assert_grounded(self) -> AnswerOut:
        """Fail unless the answer is grounded, listing its unsupported claims and their reasons."""
        __tracebackhide__ = True
        from auditor.testing._check import check_answers

        check_answers([self.answer], self.policy, self.judge)
        return self.answer


@dataclass(frozen=True)
class _Case:
    """One parameter of a golden-set test: an answer to audit, or a row the reader skipped."""

    key: tuple[Any, ...]  # (files, policy, judge, base_url, format): one audit per key and session
    answer_id: str | None = None
    problem: str | None = None


def _golden_key(metafunc: pytest.Metafunc, marker: pytest.Mark) -> tuple[Any, ...]:
    from auditor.errors import UsageError
    from auditor.trace import expand_inputs

    unknown = set(marker.kwargs) - {"policy", "judge", "format", "base_url"}
    if not marker.args or unknown:
        raise ValueError(
            f"@pytest.mark.{MARKER} takes one or more paths and policy=, judge=, format=, base_url= "
            f"(got {len(marker.args)} path(s){', and ' + ', '.join(sorted(unknown)) if unknown else ''})"
        )
    base = metafunc.definition.path.parent
    files = tuple(str(p) for p in expand_inputs(base / str(arg) for arg in marker.args))
    config = _config(metafunc.config)
    policy = marker.kwargs.get("policy") or config.policy
    if isinstance(policy, str) and (base / policy).is_file():
        policy = base / policy
    judge = config.judge_spec(marker.kwargs.get("judge"))
    kind, _, model = judge.partition(":")
    if judge != "offline" and (kind != "openai" or not model):  # as build_judge says, before any audit
        raise UsageError(
            f"Unknown judge {judge!r}: use 'offline' or 'openai:MODEL' (e.g. openai:gpt-4.1-mini)."
        )
    return (
        files,
        str(policy) if policy else None,
        judge,
        marker.kwargs.get("base_url") or config.base_url,
        marker.kwargs.get("format"),
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marker = metafunc.definition.get_closest_marker(MARKER)
    if marker is None:
        return
    where = metafunc.definition.nodeid
    if FIXTURE not in metafunc.fixturenames:
        pytest.fail(f"{where}: @pytest.mark.{MARKER} needs a `{FIXTURE}` argument", pytrace=False)
    from auditor.errors import AuditorError
    from auditor.pipeline import collect_evidence
    from auditor.policy import load_policy

    try:
        key = _golden_key(metafunc, marker)
        files, policy, _, _, format_ = key
        found = collect_evidence([Path(f) for f in files], format_, policy=load_policy(policy))
    except (AuditorError, ValueError) as err:
        error: str | None = f"{where}: golden set: {err}"
    else:
        error = None
    if error is not None:  # outside the except block: one line, no chained traceback
        pytest.fail(error, pytrace=False)
    answers = found.answers
    cases = [_Case(key, answer_id=a.answer_id) for a in answers]
    trace_ids = [a.trace_id for a in answers]
    ids = [t if trace_ids.count(t) == 1 else a.answer_id for t, a in zip(trace_ids, answers, strict=True)]
    for problem in found.run.problems:
        if problem.severity == "error":
            at = problem.file if problem.line is None else f"{problem.file}:{problem.line}"
            cases.append(_Case(key, problem=f"{at}: {problem.reason}"))
            ids.append(f"skipped:{Path(problem.file).name}:{problem.line or '-'}")
    if not cases:
        pytest.fail(f"{where}: golden set {', '.join(files)}: no answer found", pytrace=False)
    metafunc.parametrize(FIXTURE, cases, ids=ids, indirect=True)


@pytest.fixture
def golden_answer(request: pytest.FixtureRequest) -> GoldenAnswer:
    """The answer of a golden set this test case checks (see the ``golden_set`` marker)."""
    case = getattr(request, "param", None)
    if not isinstance(case, _Case):
        pytest.fail(f"`{FIXTURE}` needs @pytest.mark.{MARKER}('file.jsonl') on the test", pytrace=False)
    if case.problem is not None:
        pytest.fail(f"golden set row skipped: {case.problem}", pytrace=False)
    from auditor.errors import AuditorError
    from auditor.policy import load_policy
    from auditor.run import audit

    files, policy_name, judge, base_url, format_ = case.key
    policy = load_policy(policy_name)
    audits = request.config.stash.setdefault(_AUDITS, {})
    if case.key not in audits:
        try:
            audits[case.key] = audit(
                [Path(f) for f in files],
                policy=policy,
                judge=judge,
                base_url=base_url,
                format=format_,
                store=False,
            )
        except AuditorError as err:  # no key, an unreachable endpoint: one line, not a traceback
            message: str | None = f"golden set: {err}"
        else:
            message = None
        if message is not None:
            pytest.fail(message, pytrace=False)
    result = audits[case.key]
    answer = next(a for a in result.answers if a.answer_id == case.answer_id)
    return GoldenAnswer(answer=answer, result=result, policy=policy, judge=judge)
