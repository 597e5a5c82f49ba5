"""Record a LangChain run live, as LangSmith's tracer would export it, and read it as a trace.

:class:`RunRecorder` is a ``BaseTracer``: LangChain's own tracer machinery keeps the run tree
(nested runs, parallel tool calls, chains, tools, retrievers, chat models through
``on_chat_model_start``), exactly as ``LangChainTracer`` does, including its chat-model input form and
usage metadata. When a top-level run ends, the recorder serialises the runs of that trace the way
LangSmith posts them (flat, ``dotted_order``, langsmith's own JSON serialiser) and hands them to
:func:`runs_to_trace`, which reads them through the same run-tree adapter as an exported file. So the
trace the guard audits is the trace ``auditor audit`` would read from the exported run: one mapping,
not two.

Needs ``langchain-core`` (the ``live`` extra); importing :mod:`auditor_langchain` does not.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from langchain_core.load import dumpd
from langchain_core.messages import BaseMessage
from langchain_core.tracers.base import BaseTracer
from langchain_core.tracers.schemas import Run

from auditor.trace import Problem, Trace
from auditor_langchain.runtree import RunTreeAdapter

#: The run fields LangSmith posts (``child_runs`` is replaced by ``parent_run_id`` + ``dotted_order``).
RUN_KEYS = (
    "id",
    "name",
    "run_type",
    "start_time",
    "end_time",
    "inputs",
    "outputs",
    "error",
    "extra",
    "parent_run_id",
    "trace_id",
    "dotted_order",
    "tags",
    "events",
    "session_name",
)

#: The ``file`` of problems and source references for live traces.
LIVE_SOURCE = "<live langchain run>"


def _dumps(value: Any) -> bytes:
    try:  # langsmith (a langchain-core dependency) serialises runs for LangSmith with this
        from langsmith._internal._serde import dumps_json
    except ImportError:  # pragma: no cover - a langsmith without the private serialiser
        return json.dumps(value, default=str, ensure_ascii=False).encode("utf-8")
    data: bytes = dumps_json(value)
    return data


def flatten(root: Run) -> list[Run]:
    """The root run and all its descendants, in ``dotted_order`` (start order within each parent)."""
    out: list[Run] = []
    stack = [root]
    while stack:
        run = stack.pop()
        out.append(run)
        stack.extend(run.child_runs)
    return sorted(out, key=lambda r: r.dotted_order or "")


def export_runs(root: Run) -> list[dict[str, Any]]:
    """The runs of one trace as JSON objects, as LangSmith's tracer posts them."""
    return [json.loads(_dumps({k: getattr(run, k, None) for k in RUN_KEYS})) for run in flatten(root)]


def runs_to_trace(runs: list[dict[str, Any]], source: str = LIVE_SOURCE) -> tuple[list[Trace], list[Problem]]:
    """Read exported runs through the run-tree adapter (the same code as for a file)."""
    traces: list[Trace] = []
    problems: list[Problem] = []
    for item in RunTreeAdapter().parse(io.BytesIO(_dumps(runs)), source):
        (traces if isinstance(item, Trace) else problems).append(item)  # type: ignore[arg-type]
    return traces, problems


class LangSmithChatRuns(BaseTracer):
    """A ``BaseTracer`` that records chat models as LangSmith's ``LangChainTracer`` does.

    ``BaseTracer`` itself falls back to ``on_llm_start`` with flattened prompt strings; LangSmith's
    tracer keeps the messages (``inputs={"messages": [[dumpd(msg), ...]]}``, run type ``llm``) and
    puts token usage in ``extra.metadata``. Every run recorder here (and the fixture generator in
    the tests) subclasses this, so there is one copy of that behaviour.
    """

    # As LangChainTracer.on_chat_model_start: run_type "llm", messages serialised with dumpd.
    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        tags: list[str] | None = None,
        parent_run_id: UUID | None = None,
        metadata: dict[str, Any] | None = None,
        name: str | None = None,
        **kwargs: Any,
    ) -> Run:
        start_time = datetime.now(UTC)
        if metadata:
            kwargs.update({"metadata": metadata})
        run = Run(
            id=run_id,
            parent_run_id=parent_run_id,
            serialized=serialized,
            inputs={"messages": [[dumpd(msg) for msg in batch] for batch in messages]},
            extra=kwargs,
            events=[{"name": "start", "time": start_time}],
            start_time=start_time,
            run_type="llm",
            tags=tags,
            name=name,  # type: ignore[arg-type]
        )
        self._start_trace(run)
        self._on_chat_model_start(run)
        return run

    # As LangChainTracer._on_llm_end: token usage goes into extra.metadata.
    def _on_llm_end(self, run: Run) -> None:
        if run.outputs and "generations" in run.outputs:
            usage = _usage(run.outputs["generations"])
            if usage is not None:
                run.extra.setdefault("metadata", {})["usage_metadata"] = usage


class RunRecorder(LangSmithChatRuns):
    """Keeps the run tree like ``LangChainTracer`` and calls ``on_trace(runs)`` when a top-level run ends.

    ``on_trace`` receives the trace's runs as exported JSON (see :func:`export_runs`); it runs in the
    thread that delivered the top-level run's end event, and what it raises propagates to LangChain
    (which re-raises only for handlers with ``raise_error``).
    """

    name: str = "auditor_run_recorder"

    def __init__(self, on_trace: Callable[[Run, list[dict[str, Any]]], None], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._on_trace = on_trace

    def _persist_run(self, run: Run) -> None:
        self._on_trace(run, export_runs(run))


def _usage(generations: Any) -> Any:
    try:
        from langchain_core.tracers.langchain import _get_usage_metadata_from_generations
    except ImportError:  # pragma: no cover - older langchain-core
        return None
    return _get_usage_metadata_from_generations(generations)
