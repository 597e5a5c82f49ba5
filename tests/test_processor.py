"""``AuditSpanProcessor`` on a real agent instrumented with OpenInference, and under stress.

The reference for the live audit is the same spans written as an OTLP JSON file (the Collector's
file-exporter layout) and audited with ``auditor.audit``: the two must be identical.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from auditor_otel import AuditSpanProcessor
from openinference.instrumentation.langchain import LangChainInstrumentor
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from auditor.run import audit
from tests.support import gen_traces, live_agent


class Instrumented:
    def __init__(self, processor: AuditSpanProcessor) -> None:
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider()
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.provider.add_span_processor(processor)
        self.processor = processor
        self.instrumentor = LangChainInstrumentor()
        self.instrumentor.instrument(tracer_provider=self.provider)

    def run(self, name: str) -> Any:
        agent, sc = live_agent.scenario_agent(name)
        return agent.invoke(live_agent.question(sc), live_agent.config(sc))

    def close(self) -> None:
        self.instrumentor.uninstrument()
        self.provider.shutdown()


@pytest.fixture
def make() -> Iterator[Any]:
    made: list[Instrumented] = []

    def factory(processor: AuditSpanProcessor) -> Instrumented:
        made.append(Instrumented(processor))
        return made[-1]

    yield factory
    for item in made:
        item.close()


@pytest.mark.parametrize("name", ["changed_figure", "parallel_tools", "single_retrieval", "refusal"])
def test_live_audit_equals_the_exported_file(make: Any, name: str, tmp_path: Path) -> None:
    app = make(AuditSpanProcessor())
    out = app.run(name)
    assert out["messages"][-1].content == live_agent.scenario(name).turns[0].answer
    assert app.processor.force_flush(10_000)
    path = tmp_path / "spans.otlp.jsonl"
    path.write_text(
        "\n".join(gen_traces.spans_to_otlp_lines(app.exporter.get_finished_spans())) + "\n", encoding="utf-8"
    )
    assert list(app.processor.audits) == audit([path]).answers
    assert app.processor.stats.traces_audited == 1 and app.processor.stats.dropped == 0


def test_verdicts_are_emitted_as_genai_evaluation_events(make: Any) -> None:
    logs = InMemoryLogRecordExporter()
    logger_provider = LoggerProvider()
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    app = make(AuditSpanProcessor(logger_provider=logger_provider))
    app.run("changed_figure")
    assert app.processor.force_flush(10_000)
    answer = app.processor.audits[0]
    records = [r.log_record for r in logs.get_finished_logs()]
    assert {r.event_name for r in records} == {"gen_ai.evaluation.result"}
    by_name = {r.attributes["gen_ai.evaluation.name"]: r for r in records if r.attributes}
    top = by_name["groundedness"]
    assert top.attributes is not None
    assert top.attributes["gen_ai.evaluation.score.label"] == "ungrounded"
    assert top.attributes["gen_ai.evaluation.score.value"] == 0.0
    assert "contradicted: Order 10042 was refunded $95.00" in str(
        top.attributes["gen_ai.evaluation.explanation"]
    )
    claims = [
        r for r in records if r.attributes and r.attributes["gen_ai.evaluation.name"] == "groundedness.claim"
    ]
    assert sorted(str(r.attributes["gen_ai.evaluation.score.label"]) for r in claims if r.attributes) == [
        "contradicted"
    ]
    for record in records:  # parented to the answer's LLM span
        assert format(record.trace_id or 0, "032x") == answer.trace_id
        assert format(record.span_id or 0, "016x") == answer.span_id
    logger_provider.shutdown()


def test_audits_are_stored(make: Any, tmp_path: Path) -> None:
    from auditor.store import Store

    url = f"sqlite:///{tmp_path / 'otel.db'}"
    app = make(AuditSpanProcessor(db_url=url))
    app.run("multi_hop")
    app.run("fabricated_figure")
    app.processor.shutdown()
    with Store(url) as store:
        (run,) = store.list_runs()
        result = store.load_run(run.id)
    assert [a.answer_id for a in result.answers] == [a.answer_id for a in app.processor.audits]
    assert result.summary["answers"] == 2


# -- stress: plain spans from a tracer, no LLM needed --------------------------------------------


def _traces(provider: TracerProvider, count: int) -> None:
    tracer = provider.get_tracer("app")
    for i in range(count):
        with tracer.start_as_current_span(f"request {i}"), tracer.start_as_current_span("work"):
            pass


def test_full_queue_drops_with_a_counted_warning(caplog: pytest.LogCaptureFixture) -> None:
    processor = AuditSpanProcessor(max_queue=2)
    release = threading.Event()
    started = threading.Event()
    real = processor._audit

    def slow(*args: Any) -> None:
        started.set()
        release.wait(10)
        real(*args)

    processor._audit = slow  # type: ignore[method-assign]
    provider = TracerProvider()
    provider.add_span_processor(processor)
    with caplog.at_level(logging.WARNING, logger="auditor_otel.processor"):
        _traces(provider, 1)
        assert started.wait(5)  # the worker holds one trace
        _traces(provider, 5)  # two fit in the queue, three are dropped; none of this blocks
    assert processor.stats.dropped == 3
    assert "the audit queue is full (3 trace(s) dropped so far)" in caplog.text
    release.set()
    assert processor.force_flush(10_000)
    assert processor.stats.traces_audited == 3 and processor.stats.failed == 0
    provider.shutdown()


def test_an_exception_inside_auditing_is_recorded_not_raised(
    make: Any, caplog: pytest.LogCaptureFixture
) -> None:
    processor = AuditSpanProcessor()
    real = processor._audit
    calls = {"n": 0}

    def flaky(*args: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("judge exploded")
        real(*args)

    processor._audit = flaky  # type: ignore[method-assign]
    app = make(processor)
    with caplog.at_level(logging.ERROR, logger="auditor_otel.processor"):
        first = app.run("multi_hop")
        second = app.run("changed_figure")
        assert processor.force_flush(10_000)
    assert first["messages"][-1].content == live_agent.scenario("multi_hop").turns[0].answer
    assert second["messages"][-1].content == live_agent.scenario("changed_figure").turns[0].answer
    assert processor.stats.failed == 1 and "judge exploded" in processor.failures[0].error
    assert "could not audit trace" in caplog.text
    assert len(processor.audits) == 1 and processor.audits[0].contradicted == 1  # the worker carried on


def test_on_end_never_raises() -> None:
    processor = AuditSpanProcessor()
    processor.on_end(object())  # type: ignore[arg-type]
    assert processor.stats.on_end_errors == 1
    processor.shutdown()


def test_shutdown_drains_the_queue_and_open_traces_are_bounded(caplog: pytest.LogCaptureFixture) -> None:
    processor = AuditSpanProcessor(max_open_traces=2)
    provider = TracerProvider()
    provider.add_span_processor(processor)
    _traces(provider, 4)
    tracer = provider.get_tracer("app")
    with caplog.at_level(logging.WARNING, logger="auditor_otel.processor"):
        roots = [tracer.start_span(f"open {i}") for i in range(3)]  # roots still running
    assert processor.stats.dropped == 1 and "too many traces open" in caplog.text
    roots[0].end()  # its trace was evicted: ignored, not audited
    provider.shutdown()  # shuts the processor down: the queued traces are audited first
    assert processor.stats.traces_audited == 4
    assert processor.force_flush(100)


def test_a_live_trace_with_model_calls_and_no_answer_is_counted_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    processor = AuditSpanProcessor()
    provider = TracerProvider()
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("app")
    with caplog.at_level(logging.WARNING, logger="auditor_otel.processor"):
        # the model's output was not captured: nothing to audit, and that must be said
        agent = {"gen_ai.operation.name": "invoke_agent"}
        with (
            tracer.start_as_current_span("invoke_agent weather", attributes=agent),
            tracer.start_as_current_span("chat gpt-4o", attributes={"gen_ai.operation.name": "chat"}),
        ):
            pass
        assert processor.force_flush(10_000)
    assert processor.stats.unanswered == 1 and processor.stats.answers_audited == 0
    assert "no answer read from its 1 model call(s)" in caplog.text and "'chat gpt-4o'" in caplog.text
    provider.shutdown()


# -- sampling and filters -------------------------------------------------------------------------


def test_a_sampled_share_is_chosen_by_trace_id_and_the_rest_is_counted() -> None:
    import hashlib

    from auditor.trace import parse_sampling

    processor = AuditSpanProcessor(sampling=parse_sampling("10%", None))
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    provider.add_span_processor(processor)
    _traces(provider, 1000)
    assert processor.force_flush(30_000)
    ids = {format(s.context.trace_id, "032x") for s in exporter.get_finished_spans() if s.context}
    # The rule as documented: the first 8 bytes of SHA-256 of the hex id, over 2**64, below the share.
    chosen = {t for t in ids if int(hashlib.sha256(t.encode()).hexdigest()[:16], 16) < 0.1 * 2**64}
    assert len(ids) == 1000 and 50 <= len(chosen) <= 150
    assert processor.stats.traces_queued == len(chosen)
    assert processor.stats.not_sampled == 1000 - len(chosen)
    provider.shutdown()


def test_a_filter_keeps_only_the_matching_service_and_agent() -> None:
    from opentelemetry.sdk.resources import Resource

    from auditor.trace import parse_sampling

    processor = AuditSpanProcessor(sampling=parse_sampling(None, "service=checkout, agent=refund-bot"))
    for service in ("checkout", "billing"):
        provider = TracerProvider(resource=Resource.create({"service.name": service}))
        provider.add_span_processor(processor)
        tracer = provider.get_tracer("app")
        for agent in ("refund-bot", "other-bot"):
            with tracer.start_as_current_span("request"), tracer.start_as_current_span("agent") as span:
                span.set_attribute("gen_ai.agent.name", agent)
    assert processor.force_flush(10_000)
    assert processor.stats.traces_queued == 1 and processor.stats.filtered_out == 3
    processor.shutdown()


def test_the_stored_run_records_the_sample_and_filter(make: Any, tmp_path: Path) -> None:
    from auditor.store import Store
    from auditor.trace import parse_sampling

    url = f"sqlite:///{tmp_path / 'otel.db'}"
    sampling = parse_sampling(None, "attribute:openinference.span.kind=LLM")
    app = make(AuditSpanProcessor(db_url=url, sampling=sampling))
    app.run("single_retrieval")
    app.processor.shutdown()
    with Store(url) as store:
        (run,) = store.list_runs()
    assert run.answers_saved == 1
    assert run.sampling == {"share": 1.0, "filter": "attribute:openinference.span.kind=LLM"}
