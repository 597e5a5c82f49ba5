"""Which stored answers to read: the filters of the server's API and pages, each one SQL condition.

Portable SQL only (the same conditions on SQLite and PostgreSQL): the ``run_id`` prefix is a
range an index answers (:func:`prefix`); the ``trace_id`` prefix and free text are ``LIKE``
patterns with the user's text escaped, so ``%`` and ``_`` match themselves; per-item
conditions (source class, policy outcome, service) are ``EXISTS`` subqueries, so an answer is
listed once however many of its items match. Filter text holding a NUL is refused: SQLite's
``LIKE`` stops reading a pattern at one (``q=%00`` would match everything) and PostgreSQL text cannot
hold one (it would match nothing), so no answer could mean the same on both.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import Boolean, Select, String, and_, cast, exists, literal, or_
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import InstrumentedAttribute
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.visitors import InternalTraversal

from auditor.errors import UsageError
from auditor.store._received import ReceivedSpanRecord
from auditor.store._schema import AnswerRecord, EvidenceRecord, RunRecord, VerdictRecord

#: ``grounded``: every claim supported; ``ungrounded``: not; ``contradicted``: a claim
#: contradicted; ``refusal``: the answer declined; ``undecided``: no claim decided unsupported and
#: one or more unjudged (``AnswerOut.undecided``; these answers are ``ungrounded`` too, failing closed).
Verdict = Literal["grounded", "ungrounded", "contradicted", "refusal", "undecided"]
VERDICTS: tuple[Verdict, ...] = ("grounded", "ungrounded", "contradicted", "refusal", "undecided")

#: What the policy did to an answer's evidence: ``excluded``, at least one item excluded;
#: ``all_admitted``, none; ``inadmissible_support``, a claim that only excluded items would support.
PolicyOutcome = Literal["excluded", "all_admitted", "inadmissible_support"]
POLICY_OUTCOMES: tuple[PolicyOutcome, ...] = ("excluded", "all_admitted", "inadmissible_support")


@dataclass(frozen=True)
class AnswerFilter:
    """Which stored answers to list (every field optional; all given ones must hold).

    ``trace_id`` and ``run_id`` match a prefix (``run_id``'s case-sensitive on both stores, an
    index range: :func:`prefix`); ``q`` is a case-insensitive substring of the
    question or the answer; ``policy`` is a policy name or a prefix of its SHA-256; ``service``
    is the ``service.name`` resource attribute of a trace received by ``auditor serve``;
    ``conversation_id`` is a session (exact).
    """

    trace_id: str | None = None
    run_id: str | None = None
    verdict: Verdict | None = None
    since: datetime | None = None
    until: datetime | None = None
    q: str | None = None
    policy: str | None = None
    source_class: str | None = None
    question_type: str | None = None
    outcome: PolicyOutcome | None = None
    service: str | None = None
    conversation_id: str | None = None


def _after(text: str) -> str | None:
    """The least string above every string that starts with ``text`` (code point order), None when there is none."""
    while text:
        point = ord(text[-1]) + 1
        if 0xD800 <= point <= 0xDFFF:  # surrogates are not text: the next character is U+E000
            point = 0xE000
        if point <= 0x10FFFF:
            return text[:-1] + chr(point)
        text = text[:-1]
    return None


def prefix(column: ColumnElement[str] | InstrumentedAttribute[str], text: str) -> ColumnElement[bool]:
    """``column`` starts with ``text``, as a range an index answers: ``text <= column < _after(text)``.

    A ``LIKE 'text%'`` is read row by row on both stores (SQLite's is case-insensitive and escaped;
    PostgreSQL's needs a C collation), a range on the index is a seek. Strings compare by code point
    on SQLite (UTF-8 bytes) and through PostgreSQL's ``~>=~`` / ``~<~`` (bytes, whatever the
    database's collation; the ``text_pattern_ops`` index of migration 0022 answers them), so the
    range holds exactly the strings with that prefix, case-sensitive on both.
    """
    target = column.expression if isinstance(column, InstrumentedAttribute) else column
    low = _Bytewise(target, ">=", literal(text, target.type))
    upper = _after(text)
    return low if upper is None else and_(low, _Bytewise(target, "<", literal(upper, target.type)))


class _Bytewise(ColumnElement[bool]):
    """``left op right`` comparing strings by their bytes (code points): :func:`prefix`'s range."""

    inherit_cache = True
    type = Boolean()
    _is_implicitly_boolean = True  # a comparison: no ``= 1`` after it on SQLite

    def __init__(self, left: ColumnElement[str], sign: Literal[">=", "<"], right: ColumnElement[str]) -> None:
        self.left, self.sign, self.right = left, sign, right

    _traverse_internals = [  # noqa: RUF012  (SQLAlchemy's own declaration: what a cache key holds)
        ("left", InternalTraversal.dp_clauseelement),
        ("sign", InternalTraversal.dp_string),
        ("right", InternalTraversal.dp_clauseelement),
    ]


@compiles(_Bytewise)
def _bytewise(element: _Bytewise, compiler: Any, **kw: Any) -> str:
    return f"{compiler.process(element.left, **kw)} {element.sign} {compiler.process(element.right, **kw)}"


@compiles(_Bytewise, "postgresql")
def _bytewise_pg(element: _Bytewise, compiler: Any, **kw: Any) -> str:
    # The pattern operators: byte order whatever the collation (the index of migration 0022).
    return f"{compiler.process(element.left, **kw)} ~{element.sign}~ {compiler.process(element.right, **kw)}"


def _same_answer() -> list[ColumnElement[bool]]:
    return [EvidenceRecord.run_id == AnswerRecord.run_id, EvidenceRecord.answer_id == AnswerRecord.answer_id]


def _excluded_item() -> ColumnElement[bool]:
    return exists().where(*_same_answer(), EvidenceRecord.admitted.is_(False))


def _decided_unsupported() -> ColumnElement[bool]:
    """A claim of the answer the judge decided unsupported (contradicted or absent)."""
    return exists().where(
        VerdictRecord.run_id == AnswerRecord.run_id,
        VerdictRecord.answer_id == AnswerRecord.answer_id,
        VerdictRecord.label.in_(("contradicted", "absent")),
    )


def _service(name: str) -> ColumnElement[bool]:
    # A span received as protobuf carries its resource's service.name; one received as JSON is a
    # compact OTLP JSON record (auditor_otel.receive), its resource beside it, matched by its text.
    attribute = '"key":"service.name","value":{"stringValue":' + json.dumps(name, ensure_ascii=False) + "}"
    return exists().where(
        ReceivedSpanRecord.trace_id == AnswerRecord.trace_id,
        or_(
            ReceivedSpanRecord.service == name,
            ReceivedSpanRecord.record.contains(attribute, autoescape=True),
        ),
    )


def check_text(wanted: AnswerFilter) -> None:
    """Refuse a filter whose text holds a NUL (module docstring): every read path calls this first."""
    for field in fields(wanted):
        value = getattr(wanted, field.name)
        if isinstance(value, str) and "\x00" in value:
            raise UsageError(
                f"{field.name} holds a NUL character (U+0000, %00), which no filter can match the same "
                "way on every store: remove it."
            )


def where(query: Select[AnswerRecord], wanted: AnswerFilter) -> Select[AnswerRecord]:
    """``query`` (over :class:`AnswerRecord`) restricted to the answers ``wanted`` names.

    Raises:
        UsageError: a text field of ``wanted`` holds a NUL character (module docstring).
    """
    check_text(wanted)
    if wanted.trace_id:
        query = query.where(AnswerRecord.trace_id.startswith(wanted.trace_id, autoescape=True))
    if wanted.run_id:
        query = query.where(prefix(AnswerRecord.run_id, wanted.run_id))
    if wanted.since is not None:
        query = query.where(AnswerRecord.generated_at >= wanted.since)
    if wanted.until is not None:
        query = query.where(AnswerRecord.generated_at < wanted.until)
    if wanted.verdict == "grounded":
        query = query.where(AnswerRecord.grounded.is_(True))
    elif wanted.verdict == "ungrounded":
        query = query.where(AnswerRecord.grounded.is_(False))
    elif wanted.verdict == "contradicted":
        query = query.where(AnswerRecord.contradicted > 0)
    elif wanted.verdict == "refusal":
        query = query.where(AnswerRecord.refusal.is_(True))
    elif wanted.verdict == "undecided":
        query = query.where(AnswerRecord.unjudged > 0, ~_decided_unsupported())
    if wanted.q:
        query = query.where(
            or_(
                AnswerRecord.text.icontains(wanted.q, autoescape=True),
                AnswerRecord.question.icontains(wanted.q, autoescape=True),
            )
        )
    if wanted.policy:
        query = query.where(
            exists().where(
                RunRecord.id == AnswerRecord.run_id,
                or_(
                    RunRecord.policy_name == wanted.policy,
                    RunRecord.policy_sha256.startswith(wanted.policy.lower(), autoescape=True),
                ),
            )
        )
    if wanted.source_class:
        query = query.where(
            exists().where(*_same_answer(), EvidenceRecord.source_class == wanted.source_class)
        )
    if wanted.question_type:
        query = query.where(AnswerRecord.question_type == wanted.question_type)
    if wanted.outcome == "excluded":
        query = query.where(_excluded_item())
    elif wanted.outcome == "all_admitted":
        query = query.where(~_excluded_item())
    elif wanted.outcome == "inadmissible_support":
        query = query.where(
            exists().where(
                VerdictRecord.run_id == AnswerRecord.run_id,
                VerdictRecord.answer_id == AnswerRecord.answer_id,
                cast(VerdictRecord.inadmissible_support, String) != "[]",
            )
        )
    if wanted.service:
        query = query.where(_service(wanted.service))
    if wanted.conversation_id:
        query = query.where(AnswerRecord.conversation_id == wanted.conversation_id)
    return query
