"""Build normalised traces by hand for tests of the format-independent stages."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from auditor.trace import Document, Message, Span, SpanKind, SpanStatus, ToolCall, ToolInvocation, Trace

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


class TraceBuilder:
    """Spans are added with start/end in seconds after :data:`T0`."""

    def __init__(self, trace_id: str = "t1", conversation_id: str | None = None) -> None:
        self.trace_id = trace_id
        self.conversation_id = conversation_id
        self.spans: list[Span] = []

    def _add(
        self,
        span_id: str,
        name: str,
        kind: SpanKind,
        start: float,
        end: float,
        parent: str | None,
        **fields: Any,
    ) -> str:
        self.spans.append(
            Span(
                trace_id=self.trace_id,
                span_id=span_id,
                parent_id=parent,
                name=name,
                kind=kind,
                start=at(start),
                end=at(end),
                conversation_id=self.conversation_id,
                **fields,
            )
        )
        return span_id

    def chain(
        self,
        span_id: str,
        start: float,
        end: float,
        parent: str | None = None,
        name: str = "agent",
        input_text: str | None = None,
        output_text: str | None = None,
    ) -> str:
        return self._add(
            span_id, name, SpanKind.CHAIN, start, end, parent, input_text=input_text, output_text=output_text
        )

    def llm(
        self,
        span_id: str,
        start: float,
        end: float,
        inputs: list[Message],
        output: str = "",
        calls: list[ToolCall] | None = None,
        parent: str | None = None,
        **fields: Any,
    ) -> str:
        out = Message(role="assistant", content=output, tool_calls=tuple(calls or ()))
        return self._add(
            span_id,
            "ChatModel",
            SpanKind.LLM,
            start,
            end,
            parent,
            input_messages=tuple(inputs),
            output_messages=(out,),
            **fields,
        )

    def tool(
        self,
        span_id: str,
        name: str,
        start: float,
        end: float,
        args: dict[str, Any] | str | None,
        result: str,
        call_id: str | None = None,
        parent: str | None = None,
        error: bool = False,
    ) -> str:
        return self._add(
            span_id,
            name,
            SpanKind.TOOL,
            start,
            end,
            parent,
            tool=ToolInvocation(name=name, call_id=call_id, arguments=args, result=result),
            status=SpanStatus.ERROR if error else SpanStatus.OK,
        )

    def retriever(
        self,
        span_id: str,
        name: str,
        start: float,
        end: float,
        docs: list[Document],
        parent: str | None = None,
    ) -> str:
        return self._add(span_id, name, SpanKind.RETRIEVER, start, end, parent, documents=tuple(docs))

    def build(self) -> Trace:
        return Trace(
            trace_id=self.trace_id,
            spans=tuple(sorted(self.spans, key=lambda s: s.start)),
            conversation_id=self.conversation_id,
        )


def user(text: str) -> Message:
    return Message(role="user", content=text)


def system(text: str) -> Message:
    return Message(role="system", content=text)


def assistant(text: str = "", calls: list[ToolCall] | None = None) -> Message:
    return Message(role="assistant", content=text, tool_calls=tuple(calls or ()))


def tool_msg(text: str, call_id: str, name: str | None = None) -> Message:
    return Message(role="tool", content=text, tool_call_id=call_id, name=name)
