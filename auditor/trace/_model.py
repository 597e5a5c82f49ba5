"""The normalised trace model every adapter produces.

Adapters translate a wire format (OTLP JSON, OTLP protobuf, a LangChain run tree) and a
convention (OpenTelemetry GenAI, OpenInference, OpenLLMetry) into these types, so evidence
reconstruction never looks at a format-specific attribute. A span keeps its raw attributes too,
for readers who want to see what the trace said, but the fields below are the contract.

Guarantees: times are timezone-aware UTC; ids are lower-case strings; a span's ``kind`` says
what it did (an LLM call, a tool call, a retrieval), not how its format spelled it.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field


class SpanKind(StrEnum):
    """What a span did, whatever its format called it."""

    LLM = "llm"
    TOOL = "tool"
    RETRIEVER = "retriever"
    AGENT = "agent"
    CHAIN = "chain"
    EMBEDDING = "embedding"
    OTHER = "other"


class SpanStatus(StrEnum):
    UNSET = "unset"
    OK = "ok"
    ERROR = "error"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    @classmethod
    def trusted(cls, given: dict[str, Any] | None = None, /, **fields: Any) -> Self:
        """The model from values that already have the exact types validation would give them.

        For an adapter's hot path, where the values are its own (pydantic's ``model_construct``
        is slower than validating): nothing is checked or converted, so a tuple field must get a
        tuple, an enum field its member, a datetime field an aware datetime, a model field a model.
        The result is the very object validation would have built (same fields, same fields set);
        a field name the model does not have, or a required one left out, is still a ``TypeError``.

        The fields come as keywords, or as one dict the caller hands over (a dict display written
        for the call: the model may keep it as its own, and it is built faster than keywords are
        collected when there are many).
        """
        if given is not None:
            fields = given
        defaults, factories, required, order, every_field = _BLUEPRINTS.get(cls) or _blueprint(cls)
        if tuple(fields) == order:
            # Every field, in field order (as the adapters pass them): the order validation gives,
            # nothing missing, nothing unknown. ``fields`` is this call's own dict: kept as it is.
            values = fields
            # One set of every field's name, shared by such models of the class (a set per model
            # was about 2% of reading a run tree): pydantic changes the fields set of a model it
            # may assign to, never a frozen one's, and model_copy gives the copy a set of its own.
            fields_set = every_field
        else:
            values = {**defaults, **fields}  # the field order validation gives
            if len(values) != len(defaults) or not fields.keys() >= required:  # faster than required <= keys
                raise TypeError(
                    f"{cls.__name__}.trusted: unknown fields {sorted(values.keys() - defaults.keys())}, "
                    f"missing fields {sorted(set(required) - fields.keys())}"
                )
            for name, factory in factories:
                if name not in fields:
                    values[name] = factory()
            fields_set = set(fields)
        model = _new(cls)
        # What model_construct sets, for a model with no extra fields and no private attributes.
        _set_dict(model, values)
        _set_fields_set(model, fields_set)
        _set_extra(model, None)
        _set_private(model, None)
        return model


_new = object.__new__  # what BaseModel's own __new__ is
# BaseModel's slots, set through their descriptors: what object.__setattr__ finds and calls for
# them (the models define no slots of their own), at about half its cost.
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__
_Blueprint = tuple[dict[str, Any], tuple[tuple[str, Any], ...], frozenset[str], tuple[str, ...], set[str]]
_BLUEPRINTS: dict[type[BaseModel], _Blueprint] = {}


def _blueprint(cls: type[BaseModel]) -> _Blueprint:
    """The defaults (every field, in field order), the default factories, the required fields,
    the field names in order, and the set of them (the fields set of a model given every field)."""
    found = _BLUEPRINTS.get(cls)
    if found is None:
        defaults: dict[str, Any] = {}
        factories: list[tuple[str, Any]] = []
        required: list[str] = []
        for name, info in cls.model_fields.items():
            defaults[name] = None if info.is_required() or info.default_factory else info.default
            if info.default_factory is not None:
                factories.append((name, info.default_factory))
            elif info.is_required():
                required.append(name)
        found = _BLUEPRINTS[cls] = (
            defaults,
            tuple(factories),
            frozenset(required),
            tuple(defaults),
            set(defaults),
        )
    return found


class ToolCall(_Frozen):
    """A tool call a model asked for (on an assistant message)."""

    id: str | None = None
    name: str
    arguments: dict[str, Any] | str | None = None


class Message(_Frozen):
    """One chat message, as it appeared in a model's input or output.

    ``role`` is normalised to ``system``, ``user``, ``assistant`` or ``tool`` where the source
    allows it; other roles are kept as written.
    """

    role: str
    content: str = ""
    name: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None


class Document(_Frozen):
    """One retrieved document."""

    id: str | None = None
    text: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    score: float | None = None


class ToolInvocation(_Frozen):
    """What a tool span was called with and what it returned."""

    name: str
    call_id: str | None = None
    arguments: dict[str, Any] | str | None = None
    result: str | None = None


class SpanEvent(_Frozen):
    name: str
    time: datetime | None = None
    attributes: dict[str, Any] = Field(default_factory=dict)


class SourceRef(_Frozen):
    """Where in an input file a span came from, for error messages and reports."""

    file: str
    line: int | None = None


class Span(_Frozen):
    """One unit of work in an agent run.

    Inputs and outputs are typed by kind: an LLM span carries messages, a tool span a
    :class:`ToolInvocation`, a retriever span its query and documents. ``input_text`` and
    ``output_text`` hold a plain rendering for any span (a chain's input, say) when the
    source had one. ``entity_name`` is the retriever, tool or agent name without the decoration
    a convention adds to span names (``vector_db_retrieve kb_retriever`` is ``kb_retriever``).
    """

    trace_id: str
    span_id: str
    parent_id: str | None = None
    name: str
    kind: SpanKind = SpanKind.OTHER
    start: datetime
    end: datetime
    status: SpanStatus = SpanStatus.UNSET
    status_message: str | None = None
    input_messages: tuple[Message, ...] = ()
    output_messages: tuple[Message, ...] = ()
    tool: ToolInvocation | None = None
    query: str | None = None
    documents: tuple[Document, ...] = ()
    input_text: str | None = None
    output_text: str | None = None
    conversation_id: str | None = None
    model: str | None = None
    entity_name: str | None = None
    attributes: dict[str, Any] = Field(default_factory=dict)
    events: tuple[SpanEvent, ...] = ()
    source: SourceRef | None = None


class Trace(_Frozen):
    """The spans of one trace, in start order. Parent links are checked by :func:`build_trace`."""

    trace_id: str
    spans: tuple[Span, ...]
    conversation_id: str | None = None
    source_format: str = ""
    convention: str = ""
    #: span id -> the parent id it named, for each span made a root because its parent was not in
    #: the trace when it was assembled (a file that holds part of the trace); merging the parts
    #: restores the link (:func:`~auditor.trace.merge_split_traces`). Read-time bookkeeping: left
    #: out of dumps, so a trace's JSON and its digest in the store are what they were without it.
    detached_parents: dict[str, str] = Field(default_factory=dict, exclude=True)

    def children(self, span_id: str) -> list[Span]:
        return [s for s in self.spans if s.parent_id == span_id]

    def by_id(self) -> dict[str, Span]:
        return {s.span_id: s for s in self.spans}

    def ancestors(self, span: Span) -> list[Span]:
        """The chain of parents of ``span``, nearest first."""
        index = self.by_id()
        chain: list[Span] = []
        seen = {span.span_id}
        parent = span.parent_id
        while parent is not None and parent in index and parent not in seen:
            seen.add(parent)
            chain.append(index[parent])
            parent = index[parent].parent_id
        return chain
