"""Online sampling, filters and the LLM spending cap of ``auditor serve``'s workers, in-process.

Two replicas (two stores, each with its own intake and worker set, the same settings) receive the
same 1,000 traces and audit a 10% sample: the same traces on both, the ones the test's own hash of
the trace ids names, and every figure over them carries the sample. A filter audits only the
traces of one service or agent. A spending cap in tokens stops the LLM calls (counted at the
local fake OpenAI server) where the cap says, then traces wait, or are judged offline and say so.
"""

from __future__ import annotations

import hashlib
import random
import re
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

import tests.test_store
from auditor.errors import UsageError
from auditor.policy import load_policy
from auditor.run import audit
from auditor.serve import create_app, serve_config
from auditor.serve._config import ServeConfig
from auditor.serve._server import receivers
from auditor.serve._workers import AuditWorkers
from auditor.store import Intake, Store
from auditor.trace import BinaryRecords, ReceivedSpan, SpanFacts, SpanReceiver, get_adapter, parse_sampling
from tests.conftest import FIXTURES
from tests.support.fake_openai import FakeOpenAI

# SQLite and PostgreSQL stores, as the store tests make them.
pg_url, fresh_pg_url, db_url = tests.test_store.pg_url, tests.test_store.fresh_pg_url, tests.test_store.db_url
PB = (FIXTURES / "single_retrieval" / "openinference.otlp.pb").read_bytes()
SERVICE = "support-agent-demo"  # the fixture's resource service.name


def fixture_spans() -> list[ReceivedSpan]:
    """The fixture's spans with JSON records (as a JSON body's would be), which the tests edit."""
    reader = get_adapter("otlp-proto")
    assert isinstance(reader, SpanReceiver) and isinstance(reader, BinaryRecords)
    return [
        ReceivedSpan(s.trace_id, s.span_id, s.parent_id, s.end_ns, reader.record_json(bytes(s.record)))
        for s in reader.receive(PB).spans
    ]


def copy_trace(
    spans: Sequence[ReceivedSpan], trace_id: str, edit: Callable[[str], str] = str
) -> list[ReceivedSpan]:
    """The fixture's spans under ``trace_id`` (records edited by ``edit``)."""
    original = spans[0].trace_id
    return [
        ReceivedSpan(
            trace_id, s.span_id, s.parent_id, s.end_ns, edit(str(s.record).replace(original, trace_id))
        )
        for s in spans
    ]


def trace_ids(count: int, seed: int = 32) -> list[str]:
    rng = random.Random(seed)
    return [f"{rng.getrandbits(128):032x}" for _ in range(count)]


def in_sample(trace_id: str, share: float) -> bool:
    """The rule as the docs state it: the first 8 bytes of SHA-256 of the id, over 2**64, below the share."""
    return int(hashlib.sha256(trace_id.encode()).hexdigest()[:16], 16) < share * 2**64


def drain(intake: Intake, config: ServeConfig, timeout: float = 240.0) -> None:
    """Run a worker set until no trace is pending."""
    workers = AuditWorkers(config, intake, load_policy(config.policy)).start()
    try:
        deadline = time.monotonic() + timeout
        while intake.pending():
            assert time.monotonic() < deadline, f"{intake.pending()} traces still pending"
            time.sleep(0.1)
    finally:
        workers.stop()


def summary(db: str, config: ServeConfig, **params: str) -> dict[str, Any]:
    with Store(db) as store:
        app = create_app(config, store, Intake(store), receivers())
        with TestClient(app, base_url="http://127.0.0.1:4318") as client:
            response = client.get("/api/summary", params=params)
            assert response.status_code == 200, response.text
            data: dict[str, Any] = response.json()
            return data


def page(db: str, config: ServeConfig, path: str) -> str:
    with Store(db) as store:
        app = create_app(config, store, Intake(store), receivers())
        with TestClient(app, base_url="http://127.0.0.1:4318") as client:
            response = client.get(path)
            assert response.status_code == 200, response.text
            return response.text


def text_of(html: str, element_id: str) -> str:
    """The text of the element with ``element_id`` (tags dropped, spaces collapsed)."""
    start = html.index(f'id="{element_id}"')
    body = html[html.index(">", start) + 1 : html.index("</p>", start)]
    return " ".join(re.sub(r"<[^>]+>", " ", body).split())


# ---- the settings ----


def test_sampling_settings_parse_and_refuse_nonsense() -> None:
    sampling = parse_sampling("10%", "service=checkout, agent=support-bot, attribute:tenant=acme")
    assert sampling.share == pytest.approx(0.1)
    assert sampling.filter_text() == "service=checkout, agent=support-bot, attribute:tenant=acme"
    assert parse_sampling(None, None).everything
    for share in ("0", "1.5", "-10%", "ten"):
        with pytest.raises(UsageError, match="sample share"):
            parse_sampling(share, None)
    with pytest.raises(UsageError, match="filter term 'team:x'"):
        parse_sampling(None, "team:x")


def test_the_filter_needs_every_kind_and_any_value_of_one_kind() -> None:
    sampling = parse_sampling(None, "service=a, service=b, agent=bot")
    assert sampling.matches([SpanFacts("b", {}), SpanFacts("b", {"gen_ai.agent.name": "bot"})])
    assert sampling.matches([SpanFacts("a", {"agent.name": "bot"})])
    assert not sampling.matches([SpanFacts("a", {"gen_ai.agent.name": "other"})])
    assert not sampling.matches([SpanFacts("c", {"gen_ai.agent.name": "bot"})])
    pinned = parse_sampling(None, "attribute:tenant=acme")
    assert pinned.matches([SpanFacts(None, {"tenant": "acme"})])
    assert not pinned.matches([SpanFacts(None, {"tenant": "acme-2"})])


def test_the_share_is_the_hash_of_the_trace_id() -> None:
    sampling = parse_sampling("0.1", None)
    ids = trace_ids(2000, seed=7)
    assert [sampling.sampled(t) for t in ids] == [in_sample(t, 0.1) for t in ids]
    # Upper-case ids (as some tools print them) are the same trace.
    assert [sampling.sampled(t.upper()) for t in ids] == [in_sample(t, 0.1) for t in ids]


def test_a_usd_cap_needs_the_judge_models_price(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UsageError, match="no price"):
        serve_config(judge="openai:my-model", budget="5 usd/day")
    monkeypatch.setenv("AUDITOR_LLM_PRICES", "my-model=1/2")
    config = serve_config(judge="openai:my-model", budget="5 usd/day")
    assert config.cap is not None and config.cap.text() == "5 usd/day"
    for bad in ("5 apples/day", "0 tokens/hour", "tokens/hour", "5 tokens/week"):
        with pytest.raises(UsageError, match="not a spending cap"):
            serve_config(budget=bad)
    with pytest.raises(UsageError, match="wait or offline"):
        serve_config(budget_spent="later")


# ---- two replicas, one sample ----


def test_a_10_percent_sample_of_1000_traces_is_the_same_on_two_replicas(tmp_path: Path) -> None:
    spans = fixture_spans()
    ids = trace_ids(1000)
    expected = {t for t in ids if in_sample(t, 0.1)}
    assert 60 <= len(expected) <= 140  # a 10% sample, as the hash spreads ids
    replicas = [f"sqlite:///{tmp_path / f'replica-{n}.db'}" for n in (1, 2)]
    configs = [serve_config(db_url=db, quiet=0.01, workers=2, sample="10%") for db in replicas]
    for db in replicas:
        with Store(db) as store:
            Intake(store).receive([s for t in ids for s in copy_trace(spans, t)])
    # Both worker sets at once, as two replicas run.
    errors: list[BaseException] = []

    def run(db: str, config: ServeConfig) -> None:
        try:
            with Store(db) as store:
                drain(Intake(store), config)
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=run, args=pair) for pair in zip(replicas, configs, strict=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors

    audited: list[set[str]] = []
    for db, config in zip(replicas, configs, strict=True):
        with Store(db) as store:
            passes = Intake(store).audits()
            assert len(passes) == 1000  # every trace has its pass: audited, or not and why
            audited.append({p.trace_id for p in passes if p.run_id is not None})
            skipped = [p for p in passes if p.run_id is None]
            assert {p.error for p in skipped} == {"not audited: outside the 0.1 sample of traces"}
            runs = store.list_runs(500)
            assert len(runs) == len(expected)
            assert {repr(r.sampling) for r in runs} == {repr({"share": 0.1, "filter": None})}
        data = summary(db, config)
        # One answer per trace in the fixture: the figures are over the sampled traces only, and say so.
        assert data["summary"]["answers"] == len(expected)
        assert data["sample"]["samples"] == [
            {"share": 0.1, "filter": None, "live": True, "answers": len(expected)}
        ]
        assert data["sample"]["judged_offline_by_cap"]["answers"] == 0
    assert audited[0] == audited[1] == expected


def test_a_filter_audits_only_the_matching_traces_and_the_figures_name_it(db_url: str) -> None:
    spans = fixture_spans()
    ids = trace_ids(12, seed=3)
    db = db_url  # the sample is read back in SQL (JSON paths) on both stores
    # Half the traces come from another service; of the rest, half carry an agent name on a span.
    other = set(ids[:6])
    agent = set(ids[6:9])

    def edit(trace_id: str) -> Callable[[str], str]:
        def change(record: str) -> str:
            if trace_id in other:
                record = record.replace(f'"stringValue":"{SERVICE}"', '"stringValue":"billing"')
            if trace_id in agent and '"attributes":[' in record:  # the span's own (the resource's come last)
                head, _, tail = record.partition('"attributes":[')
                record = (
                    head
                    + '"attributes":[{"key":"gen_ai.agent.name","value":{"stringValue":"returns-bot"}},'
                    + tail
                )
            return record

        return change

    with Store(db, upgrade=True) as store:
        intake = Intake(store)
        intake.receive([s for t in ids for s in copy_trace(spans, t, edit(t))])
        config = serve_config(db_url=db, quiet=0.01, filter=f"service={SERVICE}, agent=returns-bot")
        drain(intake, config, timeout=60)
        passes = intake.audits()
        assert {p.trace_id for p in passes if p.run_id is not None} == agent
        assert {p.error for p in passes if p.run_id is None} == {
            f"not audited: no span matches the filter service={SERVICE}, agent=returns-bot"
        }
    data = summary(db, config)
    assert data["sample"]["samples"] == [
        {"share": 1.0, "filter": f"service={SERVICE}, agent=returns-bot", "live": True, "answers": 3}
    ]
    # The pages say it too: the trend's figures with their sample, each run with its own, and the
    # traces left out as skipped (not failed).
    assert text_of(page(db, config, "/trend"), "sample") == (
        f"Sample: 100.0% of traces (by trace id), filter service={SERVICE}, agent=returns-bot: 3 answers"
    )
    runs = page(db, config, "/runs")
    assert runs.count(f"100.0% of traces · service={SERVICE}, agent=returns-bot") == 3
    # A batch audit of the same store read its whole input: its answer is counted apart.
    audit([FIXTURES / "single_retrieval" / "openinference.otlp.jsonl"], db_url=db)
    assert summary(db, config)["sample"]["samples"] == [
        {"share": 1.0, "filter": f"service={SERVICE}, agent=returns-bot", "live": True, "answers": 3},
        {"share": 1.0, "filter": None, "live": False, "answers": 1},
    ]
    assert runs.count('<span class="badge s-skipped">skipped</span>') == 9
    assert 'class="badge s-failed"' not in runs


# ---- the spending cap ----


def distinct(trace_id: str, n: int) -> Callable[[str], str]:
    """Trace ``n``'s own answer, which the offline cascade cannot settle and no cached verdict fits."""

    def change(record: str) -> str:
        return record.replace(
            "You can return an item within 30 days of delivery for a full refund.",
            f"Our support team answers every message about order {n} within one business day.",
        )

    return change


def capped_run(db: str, then: str, cap_tokens: int | None) -> tuple[FakeOpenAI, str, ServeConfig]:
    """Six distinct traces audited by the LLM judge under a token cap; the server and the store."""
    spans = fixture_spans()
    with FakeOpenAI() as judge:
        config = serve_config(
            db_url=db,
            quiet=0.01,
            workers=1,
            judge="openai:fake-judge",
            base_url=judge.base_url,
            budget=None if cap_tokens is None else f"{cap_tokens} tokens/day",
            budget_spent=then,
        )
        with Store(db, upgrade=True) as store:
            intake = Intake(store)
            for n, trace_id in enumerate(trace_ids(6, seed=11)):
                intake.receive(copy_trace(spans, trace_id, distinct(trace_id, n)))
            if then == "wait":
                workers = AuditWorkers(config, intake, load_policy()).start()
                try:
                    time.sleep(6.0)  # long enough for every trace, were it allowed
                finally:
                    workers.stop()
            else:
                drain(intake, config, timeout=120)
    return judge, db, config


def calls_within(charged: Sequence[int], cap: int) -> int:
    """How many answers a cap checked before each trace allows: up to the first that reaches it."""
    total = 0
    for n, tokens in enumerate(charged, 1):
        total += tokens
        if total >= cap:
            return n
    return len(charged)


def test_the_cap_stops_llm_calls_at_its_limit_then_traces_are_judged_offline(
    tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    uncapped, _, _ = capped_run(f"sqlite:///{tmp_path / 'free.db'}", "offline", None)
    # One judge call per trace (one answer, one claim the cascade cannot settle), each charged.
    assert uncapped.requests == 6 and len(uncapped.charged) == 6
    cap = uncapped.charged[0] + uncapped.charged[1] + 1  # reached only by the third trace's call
    assert calls_within(uncapped.charged, cap) == 3
    judge, db, config = capped_run(db_url, "offline", cap)  # the spending summed in SQL, on both stores
    assert judge.requests == 3  # counted at the server: no call once the cap was spent
    with Store(db) as store:
        runs = sorted(store.list_runs(50), key=lambda r: r.started_at)
    assert [r.judge.kind if r.judge else None for r in runs] == ["openai"] * 3 + ["offline"] * 3
    assert [r.cap is not None for r in runs] == [False] * 3 + [True] * 3
    third_finished = runs[2].finished_at
    assert third_finished is not None
    for run in runs[3:]:
        assert run.cap is not None
        assert run.cap["limit"] == f"{cap} tokens/day" and run.cap["then"] == "offline"
        assert run.cap["spent"] == sum(judge.charged)  # what the server charged, all of it
        assert run.cap["hit_at"] == third_finished.isoformat()  # the run whose call reached the cap
    data = summary(db, config)
    offline = data["sample"]["judged_offline_by_cap"]
    assert offline["answers"] == 3 and offline["caps"] == [f"{cap} tokens/day"]
    assert offline["first_hit_at"] == third_finished.isoformat()
    assert text_of(page(db, config, "/trend"), "sample") == (
        "Sample: 100.0% of traces (by trace id), no filter: 6 answers "
        f"3 answers judged offline because the LLM spending cap ({cap} tokens/day) was reached "
        f"(first at {third_finished.isoformat()})."
    )
    assert page(db, config, "/runs").count(f"judged offline: the cap {cap} tokens/day was reached") == 3


def test_with_wait_the_traces_wait_once_the_cap_is_spent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    judge, db, config = capped_run(f"sqlite:///{tmp_path / 'serve.db'}", "wait", 1)
    assert judge.requests == 1  # the first trace spent the whole (one-token) cap
    with Store(db) as store:
        intake = Intake(store)
        assert intake.pending() == 5 and len(store.list_runs(50)) == 1
        app = create_app(config, store, intake, receivers())
        with TestClient(app, base_url="http://127.0.0.1:4318") as client:
            budget = client.get("/api/budget").json()
    assert budget["cap"]["reached"] is True and budget["cap"]["limit"] == "1 tokens/day"
    assert budget["cap"]["spent"] == judge.charged[0] and budget["cap"]["then"] == "wait"


def test_the_server_says_at_start_what_it_audits_and_spends() -> None:
    from auditor.serve._server import live_settings

    assert live_settings(serve_config()) == []
    config = serve_config(
        sample="0.25",
        filter="agent=refund-bot",
        judge="openai:gpt-4.1-mini",
        budget="3 usd/day",
        budget_spent="offline",
        events_endpoint="http://127.0.0.1:4319/v1/logs",
    )
    assert live_settings(config) == [
        "auditing 0.25 of traces (by trace id) with a span matching agent=refund-bot",
        "LLM judge capped at 3 usd/day; once spent, traces are judged offline",
        "verdicts sent as gen_ai.evaluation.result events to http://127.0.0.1:4319/v1/logs",
    ]
