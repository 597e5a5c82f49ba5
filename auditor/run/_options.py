"""``AuditOptions``: how a run audits and stores its answers, one frozen object from caller to worker.

Options travel as this one object. The CLI builds it once from its flags and settings; the entry
points (:func:`~auditor.run.audit`, :func:`~auditor.run.audit_async`, :func:`~auditor.run.reaudit`,
:func:`~auditor.run.reaudit_async`, :func:`auditor.scale.audit_on_ray`,
:func:`auditor.scale.reaudit_on_ray`) take it and hand it on whole, down to each Ray shard task.
A new option is a field here (and its keyword in :class:`AuditArgs`) and the code that reads it:
no entry point's signature changes.

The entry points also take the fields as keywords (``audit(paths, judge="openai:gpt-4.1-mini")``),
typed by :class:`AuditArgs`, as inspect_ai's ``eval()`` takes ``**GenerateConfigArgs`` beside a
``GenerateConfig``: a one-off call stays one line, and keywords given beside an object change
those fields of it (:func:`with_changes`). What is not an option stays a parameter of its own:
``on_progress`` (a display callback, which does not travel to workers), ``finish_with`` (a hook of
``auditor serve``) and the Ray engine's ``address``, ``workers`` and ``max_retries``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, TypedDict

from auditor.errors import UsageError
from auditor.judges import Decomposer
from auditor.metrics import Labels
from auditor.policy import Policy


@dataclass(frozen=True, kw_only=True)
class AuditOptions:
    """How a run audits and stores its answers. Every field has a default; build it once, pass it on.

    Attributes:
        policy: the admissible-source policy. None: the shipped default for a new audit, the
            policy stored with the run for a re-audit.
        judge: ``offline`` (approximate, no network) or ``openai:MODEL`` (any OpenAI-compatible
            server). None: ``offline`` for a new audit, the run's own judge for a re-audit.
        base_url: the OpenAI-compatible endpoint of an ``openai:`` judge (None: the client's default).
        decomposer: how answers are split into claims: ``rules``, ``llm``, or ``fused`` (one LLM
            call per answer decomposes and judges together; no cascade; cached per answer and
            evidence). ``llm`` and ``fused`` need an ``openai:`` judge.
        cascade: settle claims the offline checks are certain about without an LLM call.
        cache: reuse cached LLM decompositions and verdicts (kept in the store).
        concurrency: answers audited at once, and LLM requests in flight (on Ray: per worker).
        rate_limit: LLM requests per second for the whole run (on Ray: one budget for the
            cluster); a 429's ``Retry-After`` pauses every request. None: no limit.
            :func:`auditor.llm.parse_rate` reads ``"3000/min"``.
        format: read the inputs with this adapter instead of detecting it (None: sniff each file).
            Not for a re-audit, which reads the run's kept traces.
        trace_id: keep only the answers of this trace (a unique prefix is enough). One process
            only: not on Ray, not for a re-audit.
        labels: a labels file's content (:func:`auditor.metrics.load_labels`): adds refusal
            accuracy and over-refusal to the summary.
        calibration: the calibration that corrects the rates: None, the judge's newest (if any);
            ``"none"``, no correction; or a stored calibration's id (a unique prefix).
        db_url: the store (None: ``AUDITOR_DB_URL``, else SQLite in the app directory).
        store: False keeps nothing (no run record, no verdict cache in the store). A re-audit
            and a run on Ray are always stored.
        resume: continue an interrupted run on the same inputs, policy and judge, skipping the
            answers it finished; also a run left ``running`` by a killed process once its lease
            (``AUDITOR_RUN_LEASE`` seconds, default 30) has run out.

    Raises:
        UsageError: ``concurrency`` below 1.
    """

    policy: Policy | None = None
    judge: str | None = None
    base_url: str | None = None
    decomposer: Decomposer = "rules"
    cascade: bool = True
    cache: bool = True
    concurrency: int = 8
    rate_limit: float | None = None
    format: str | None = None
    trace_id: str | None = None
    labels: Labels | None = None
    calibration: str | None = None
    db_url: str | None = None
    store: bool = True
    resume: bool = True

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise UsageError(f"concurrency {self.concurrency}: give 1 or more.")


class AuditArgs(TypedDict, total=False):
    """:class:`AuditOptions`' fields as keywords of the entry points (``**changes``); see its fields.

    Kept field for field equal to :class:`AuditOptions` (``tests/test_audit_options.py`` checks).
    """

    policy: Policy | None
    judge: str | None
    base_url: str | None
    decomposer: Decomposer
    cascade: bool
    cache: bool
    concurrency: int
    rate_limit: float | None
    format: str | None
    trace_id: str | None
    labels: Labels | None
    calibration: str | None
    db_url: str | None
    store: bool
    resume: bool


def with_changes(options: AuditOptions | None, changes: Mapping[str, Any], caller: str) -> AuditOptions:
    """``options`` (the defaults when None) with the fields named in ``changes`` replaced.

    Raises:
        TypeError: a name that is no field of :class:`AuditOptions`, as Python names an
            unexpected keyword argument of ``caller``, with the fields there are.
    """
    known = {f.name for f in fields(AuditOptions)}
    unknown = sorted(set(changes) - known)
    if unknown:
        raise TypeError(
            f"{caller}() got an unexpected keyword argument {unknown[0]!r}; "
            f"the options (AuditOptions) are: {', '.join(f.name for f in fields(AuditOptions))}"
        )
    chosen = options if options is not None else AuditOptions()
    return replace(chosen, **changes) if changes else chosen
