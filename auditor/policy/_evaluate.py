"""Applying a policy: every evidence item admitted or excluded, with the rule and the reason.

Order of decision for one item (documented in ``docs/policy.md``, "How an item is decided"):

1. The ``[evidence]`` switches decide user messages, the system prompt and model outputs
   outright (rule ``evidence.user_messages`` etc.), and exclude items from failed tool calls
   (rule ``evidence.tool_errors``) unless that switch is ``"admit"``.
2. The ``[[sources]]`` classes in file order; the first whose match rules all hold decides. A
   class that admits can still exclude through ``reject_if`` (rule ``<class>.reject_if.statuses``
   or ``<class>.reject_if.max_age_days``). A rejected item does not fall through to later classes.
3. ``unmatched`` (rule ``unmatched``).

Freshness is measured against the answer's own ``generated_at``, never the wall clock, so an
audit of last year's trace gives the same decisions today as it would have then.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from fnmatch import fnmatchcase
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict

from auditor.evidence import Answer, Evidence, EvidenceKind
from auditor.policy._model import Policy
from auditor.policy._regex import compile_regex
from auditor.policy._sources import MetadataCondition, RejectIf, SourceClass

_GLOB_CHARS = frozenset("*?[")


class Decision(BaseModel):
    """The policy's decision on one evidence item.

    Attributes:
        evidence_id: the item decided on.
        source_class: the class that matched, or one of ``user_message``, ``system_prompt``,
            ``model_output``, ``tool_error``, ``unmatched`` for decisions made outside the classes.
        admitted: whether the item counts as evidence.
        rule: the dotted id of the deciding rule, e.g. ``policy-docs.reject_if.statuses``.
        reason: the decision in words, e.g. ``excluded: status 'superseded' (rule ...)``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    evidence_id: str
    source_class: str
    admitted: bool
    rule: str
    reason: str


def evaluate(policy: Policy, answer: Answer) -> list[Decision]:
    """Decide on each of an answer's evidence items, in the answer's order.

    Args:
        policy: the admissible-source policy.
        answer: the answer; its ``generated_at`` is the reference time for freshness.

    Returns:
        One decision per item of ``answer.evidence``, in the same order.
    """
    return [decide(policy, item, answer.generated_at) for item in answer.evidence]


def decide(policy: Policy, item: Evidence, at: datetime) -> Decision:
    """Decide on one item; ``at`` (the answer's generation time) is the reference for freshness."""
    switched = _by_switch(policy, item)
    if switched is not None:
        return switched
    for source in policy.sources:
        if _matches(source, item):
            return _by_class(source, item, at)
    what = _describe(item)
    verdict = "admitted" if policy.unmatched == "admit" else "excluded"
    return _decision(
        item,
        "unmatched",
        policy.unmatched == "admit",
        "unmatched",
        f"{verdict}: {what} matches no source class",
    )


def _decision(item: Evidence, source_class: str, admitted: bool, rule: str, words: str) -> Decision:
    return Decision(
        evidence_id=item.evidence_id,
        source_class=source_class,
        admitted=admitted,
        rule=rule,
        reason=f"{words} (rule {rule})",
    )


def _by_switch(policy: Policy, item: Evidence) -> Decision | None:
    switches = policy.evidence
    if item.kind is EvidenceKind.USER_MESSAGE:
        rule = "evidence.user_messages"
        if switches.user_messages == "admit":
            return _decision(item, "user_message", True, rule, "admitted: the user's own message")
        if switches.user_messages == "current_question" and item.current_question:
            return _decision(item, "user_message", True, rule, "admitted: the user's current question")
        if switches.user_messages == "current_question":
            words = "excluded: an earlier user message (only the current question is admitted)"
            return _decision(item, "user_message", False, rule, words)
        return _decision(item, "user_message", False, rule, "excluded: the user's own message")
    if item.kind is EvidenceKind.SYSTEM_PROMPT:
        admitted = switches.system_prompt == "admit"
        words = f"{'admitted' if admitted else 'excluded'}: the system prompt"
        return _decision(item, "system_prompt", admitted, "evidence.system_prompt", words)
    if item.kind is EvidenceKind.MODEL_OUTPUT:
        admitted = switches.model_outputs == "admit"
        words = f"{'admitted' if admitted else 'excluded'}: an intermediate model output"
        return _decision(item, "model_output", admitted, "evidence.model_outputs", words)
    if item.error and switches.tool_errors == "exclude":
        words = f"excluded: {_describe(item)} came from a tool call that ended in error"
        return _decision(item, "tool_error", False, "evidence.tool_errors", words)
    return None


def _by_class(source: SourceClass, item: Evidence, at: datetime) -> Decision:
    what = _describe(item)
    if not source.admit:
        return _decision(item, source.name, False, source.name, f"excluded: {what}")
    if source.reject_if is not None:
        rejected = _rejection(source.reject_if, item, at)
        if rejected is not None:
            rule, words = rejected
            return _decision(
                item, source.name, False, f"{source.name}.reject_if.{rule}", f"excluded: {words}"
            )
    return _decision(item, source.name, True, source.name, f"admitted: {what}")


def _describe(item: Evidence) -> str:
    if item.kind is EvidenceKind.RETRIEVED_DOCUMENT:
        doc = f"document {item.document_id!r}" if item.document_id else "a document"
        return f"{doc} from {item.name!r}" if item.name else doc
    if item.kind is EvidenceKind.TOOL_RESULT:
        return f"tool {item.name!r}" if item.name else "a tool result"
    return f"{item.kind.value} {item.name!r}" if item.name else f"an item of kind {item.kind.value}"


# --- matching -----------------------------------------------------------------------------------


def _matches(source: SourceClass, item: Evidence) -> bool:
    if source.kinds and item.kind not in source.kinds:
        return False
    if source.names and (item.name is None or not any(fnmatchcase(item.name, p) for p in source.names)):
        return False
    if source.document_id_prefix and (
        item.document_id is None or not item.document_id.startswith(source.document_id_prefix)
    ):
        return False
    if source.url_host or source.url_path:
        host, path = _url_parts(item.url)
        if source.url_host and (host is None or not any(fnmatchcase(host, p) for p in source.url_host)):
            return False
        if source.url_path and (path is None or not any(_path_matches(path, p) for p in source.url_path)):
            return False
    return all(_condition_holds(cond, item.metadata, key) for key, cond in source.metadata.items())


def _url_parts(url: str | None) -> tuple[str | None, str | None]:
    if not url:
        return None, None
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return None, None
    return (host.lower() if host else None), (parts.path or "/")


def _path_matches(path: str, pattern: str) -> bool:
    if _GLOB_CHARS.intersection(pattern):
        return fnmatchcase(path, pattern)
    return path.startswith(pattern)


_MISSING = object()


def lookup(metadata: dict[str, Any], key: str) -> Any:
    """``metadata[key]``, else a dotted path into nested tables (``arguments.order_id``)."""
    if key in metadata:
        return metadata[key]
    current: Any = metadata
    for part in key.split("."):
        if not isinstance(current, dict) or part not in current:
            return _MISSING
        current = current[part]
    return current


def _as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _condition_holds(cond: MetadataCondition, metadata: dict[str, Any], key: str) -> bool:
    value = lookup(metadata, key)
    if cond.exists is not None and (value is not _MISSING) != cond.exists:
        return False
    if cond.equals is None and cond.one_of is None and cond.regex is None:
        return True
    if value is _MISSING or value is None:
        return False
    values = [_as_text(v) for v in value] if isinstance(value, list | tuple) else [_as_text(value)]
    if cond.equals is not None and _as_text(cond.equals) not in values:
        return False
    if cond.one_of is not None and not any(v in cond.one_of for v in values):
        return False
    return cond.regex is None or any(compile_regex(cond.regex).search(v) for v in values)


# --- reject_if ----------------------------------------------------------------------------------


def _rejection(reject: RejectIf, item: Evidence, at: datetime) -> tuple[str, str] | None:
    if reject.statuses:
        status = lookup(item.metadata, reject.status_key)
        if status is not _MISSING and status is not None and _as_text(status).lower() in reject.statuses:
            label = "status" if reject.status_key == "status" else f"{reject.status_key}"
            return "statuses", f"{label} {_as_text(status)!r}"
    if reject.max_age_days is not None:
        raw = lookup(item.metadata, reject.date_key)
        if raw is _MISSING or raw is None or raw == "":
            if reject.undated == "exclude":
                return "max_age_days", f"no {reject.date_key!r} date to check freshness against"
            return None
        when = parse_date(raw)
        if when is None:
            return "max_age_days", f"{reject.date_key} {_as_text(raw)!r} is not an ISO date; treated as stale"
        age = _aware(at) - when
        if age > timedelta(days=reject.max_age_days):
            limit = _as_text(reject.max_age_days)
            return "max_age_days", (
                f"{reject.date_key} {_as_text(raw)!r} is {age.days} days old when the answer was "
                f"generated (limit {limit})"
            )
    return None


def document_date(policy: Policy, item: Evidence, decision: Decision) -> datetime | None:
    """The item's date as the freshness rules read it, for ``on_conflict = "prefer_newest"``.

    The key is the ``reject_if.date_key`` of the source class that decided the item (``updated_at``
    when the class has no ``reject_if``, or for items decided by an ``[evidence]`` switch). None
    when the key is missing or not an ISO date.
    """
    source = next((s for s in policy.sources if s.name == decision.source_class), None)
    key = (source.reject_if or RejectIf()).date_key if source is not None else RejectIf().date_key
    raw = lookup(item.metadata, key)
    return None if raw is _MISSING else parse_date(raw)


def parse_date(value: Any) -> datetime | None:
    """An ISO 8601 date or datetime (string or object) as an aware datetime; naive means UTC.

    A bare date means midnight UTC that day. Anything else (numbers, free text) gives None.
    """
    if isinstance(value, datetime):
        return _aware(value)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if not isinstance(value, str):
        return None
    text = value.strip()
    try:
        if len(text) == 10:
            parsed = date.fromisoformat(text)
            return datetime(parsed.year, parsed.month, parsed.day, tzinfo=UTC)
        return _aware(datetime.fromisoformat(text))
    except ValueError:
        return None


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
