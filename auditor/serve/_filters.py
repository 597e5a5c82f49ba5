"""The answers' filters as they arrive in a request: query parameters in, a checked store filter out.

The pages and the API read the same parameters (``verdict``, ``since``, ``until``, ``q``, ``policy``,
``source_class``, ``question_type``, ``outcome``, ``service``, ``trace_id``, ``run_id``). An empty
form field means "any"; a value that cannot be read is one line naming the parameter and what it
takes, never a traceback.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, cast

from auditor.errors import UsageError
from auditor.store import POLICY_OUTCOMES, VERDICTS, AnswerFilter, PolicyOutcome, Verdict

#: The parameters that filter answers, in the order the pages show them.
FILTER_PARAMS = (
    "verdict",
    "source_class",
    "question_type",
    "outcome",
    "policy",
    "service",
    "since",
    "until",
    "q",
    "trace_id",
    "run_id",
    "conversation_id",
)
MAX_TEXT = 500


def utc(value: datetime) -> datetime:
    """A naive time (a browser's ``datetime-local`` field) is taken as UTC."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def utc_time(name: str, value: datetime) -> datetime:
    """:func:`utc`, or one line when the time has no UTC equivalent (``9999-12-31T23:59-23:59``)."""
    try:
        return utc(value)
    except OverflowError:
        raise UsageError(
            f"{name}={value.isoformat()!r} is out of range in UTC: give a time between the years 1 and 9999."
        ) from None


def parse_time(name: str, text: str) -> datetime:
    try:
        value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(
            f"{name}={text!r} is not a time: give an ISO 8601 time such as 2026-12-01T09:00:00Z."
        ) from None
    return utc_time(name, value)


def _choice(name: str, text: str, allowed: tuple[str, ...]) -> str:
    if text not in allowed:
        raise UsageError(f"{name}={text!r} is not one of {', '.join(allowed)}.")
    return text


def answer_filter(params: Mapping[str, str]) -> AnswerFilter:
    """The filter the query parameters ask for; unknown parameters are ignored.

    Raises:
        UsageError: a parameter's value cannot be read (the message names it and what it takes).
    """
    given = {k: params[k].strip() for k in FILTER_PARAMS if params.get(k, "").strip()}
    for name, value in given.items():
        if len(value) > MAX_TEXT:
            raise UsageError(f"{name} is {len(value)} characters long: at most {MAX_TEXT} are read.")
    fields: dict[str, Any] = {
        k: v for k, v in given.items() if k not in {"verdict", "outcome", "since", "until"}
    }
    if "verdict" in given:
        fields["verdict"] = cast(Verdict, _choice("verdict", given["verdict"], VERDICTS))
    if "outcome" in given:
        fields["outcome"] = cast(PolicyOutcome, _choice("outcome", given["outcome"], POLICY_OUTCOMES))
    for name in ("since", "until"):
        if name in given:
            fields[name] = parse_time(name, given[name])
    return AnswerFilter(**fields)


def filter_params(wanted: AnswerFilter) -> dict[str, str]:
    """``wanted`` as query parameters (the inverse of :func:`answer_filter`), for links and echoes."""
    out: dict[str, str] = {}
    for name in FILTER_PARAMS:
        value = getattr(wanted, name)
        if value is None:
            continue
        out[name] = value.strftime("%Y-%m-%dT%H:%M:%S") if isinstance(value, datetime) else str(value)
    return out
