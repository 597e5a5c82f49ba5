"""A store of a million answers in minutes: real audited answers copied in bulk, with their rollups.

The templates are real: the fixtures' OpenInference traces (``tests/fixtures/*/openinference.otlp.jsonl``)
audited with the offline judge under the shipped ``default``, ``permissive`` and ``strict`` policies
into a scratch SQLite store, and read back as rows (runs, answers, evidence, claims, verdicts,
traces). :func:`fill` copies them ``answers`` times into the target store (SQLite through the
driver's ``executemany``, PostgreSQL through ``COPY``), each copy with fresh ids, a question type, a
time over ``days`` days (more by day than by night) and, for most traces, a received span naming one
of :data:`SERVICES` as its ``service.name`` (what the ``service`` filter reads). A run holds
:data:`RUN_ANSWERS` answers of one policy and one of two judges, as a busy server's runs would.

The rollups are not computed answer by answer (that is what the benchmark avoids): the answers of
each hour, policy, judge, service and question type are counted per template, and the template's
own counts (:func:`auditor.metrics.answer_counts`) multiplied in (numpy). Each copy's own
``answers.counts`` is its template's counts under its question type. ``tests/test_benchmarks_bigstore.py``
checks that the rows equal :func:`auditor.store.rebuild_rollups` on a small store.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import random
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import JSON, Table, select, text
from sqlalchemy import inspect as sa_inspect
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session, selectinload

from auditor.metrics import answer_counts
from auditor.metrics._summary import UNSPECIFIED
from auditor.policy import load_policy
from auditor.results import AnswerOut
from auditor.run import audit
from auditor.store import Store, upgrade
from auditor.store._convert import answer_out
from auditor.store._received import ReceivedSpanRecord
from auditor.store._rollups import _KEY_COLUMNS, ALL, Key, _digest, outcomes_of, slices_of, verdicts_of
from auditor.store._schema import (
    AnswerRecord,
    Base,
    ClaimRecord,
    EvidenceRecord,
    RollupRecord,
    RunRecord,
    TraceRecord,
    VerdictRecord,
)
from auditor.store._write import _driver_insert

ROOT = Path(__file__).resolve().parent.parent
POLICIES = ("default", "permissive", "strict")
JUDGES = (("offline", None), ("openai", "gpt-4.1-mini"))
SERVICES = ("checkout-bot", "support-agent", "billing-bot")
QUESTION_TYPES = ("product", "billing", "account", "shipping")
RUN_ANSWERS = 20
ANSWERS_PER_TRACE = 2
CHUNK = 20_000


@dataclass
class Templates:
    """The audited answers to copy: per policy, their rows and counts, and a run row."""

    runs: dict[str, dict[str, Any]]  # policy -> run row
    answers: dict[str, list[dict[str, Any]]]  # policy -> answer rows (with children under "_children")
    outs: dict[str, list[AnswerOut]]


def _table(model: Any) -> Table:
    table = model.__table__
    assert isinstance(table, Table)
    return table


def _row(record: Any) -> dict[str, Any]:
    """A mapped object's column values by column key (``evidence.metadata`` is the attribute ``meta``)."""
    mapper = sa_inspect(type(record))
    return {attr.columns[0].key: getattr(record, attr.key) for attr in mapper.column_attrs}


def templates(work: Path) -> Templates:
    """Audit the fixtures under each policy into a scratch store and read the rows back."""
    files = sorted((ROOT / "tests" / "fixtures").glob("*/openinference.otlp.jsonl"))
    url = f"sqlite:///{work / 'templates.db'}"
    runs: dict[str, dict[str, Any]] = {}
    answers: dict[str, list[dict[str, Any]]] = {}
    outs: dict[str, list[AnswerOut]] = {}
    for name in POLICIES:
        result = audit(files, policy=load_policy(name), db_url=url)
        with Store(url) as store, Session(store.engine) as session:
            run = session.get(RunRecord, result.run.id)
            assert run is not None
            runs[name] = _row(run)
            rows = session.scalars(
                select(AnswerRecord)
                .where(AnswerRecord.run_id == result.run.id)
                .options(
                    selectinload(AnswerRecord.evidence),
                    selectinload(AnswerRecord.claims).selectinload(ClaimRecord.verdict),
                )
                .order_by(AnswerRecord.position)
            ).all()
            answers[name] = []
            outs[name] = []
            for row in rows:
                record = _row(row)
                record["_evidence"] = [_row(e) for e in row.evidence]
                record["_claims"] = [_row(c) for c in row.claims]
                record["_verdicts"] = [_row(c.verdict) for c in row.claims if c.verdict is not None]
                answers[name].append(record)
                outs[name].append(answer_out(row))
    return Templates(runs, answers, outs)


class _Writer:
    """Rows to one table at a time, in bulk: the SQLite driver's executemany, or PostgreSQL's COPY.

    Rows are encoded once (:meth:`encode`: the column types' own bind processing on SQLite, JSON
    text on PostgreSQL) and copies of an encoded row only change the few values that differ
    (:meth:`value`, :meth:`slot`): encoding each copy's JSON again cost more than storing it.
    """

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.dialect = conn.dialect
        self.postgres = self.dialect.name == "postgresql"

    def _names(self, model: Any) -> list[str]:
        if self.postgres:
            return [c.key for c in _table(model).columns]
        table = _table(model)
        compiled = table.insert().compile(dialect=self.dialect, column_keys=[c.key for c in table.columns])
        assert compiled.positiontup is not None
        return list(compiled.positiontup)  # the order _driver_insert binds them in

    def slot(self, model: Any, key: str) -> int:
        """Where ``key``'s value is in an encoded row of ``model``."""
        return self._names(model).index(key)

    def encode(self, model: Any, row: dict[str, Any]) -> list[Any]:
        """``row`` (values by column key) as the driver takes it."""
        if not self.postgres:
            plan = _driver_insert(_table(model), self.dialect)
            assert plan is not None
            return list(plan.parameters([row])[0])
        return [self.value(model, key, row[key]) for key in self._names(model)]

    def value(self, model: Any, key: str, value: Any) -> Any:
        """One column's value as the driver takes it."""
        process = self._processor(model, key)
        return process(value) if process is not None and value is not None else value

    @functools.lru_cache(maxsize=256)  # noqa: B019 - one writer per fill, a few dozen columns
    def _processor(self, model: Any, key: str) -> Any:
        column = _table(model).c[key]
        if self.postgres:
            return json.dumps if isinstance(column.type, JSON) else None
        return column.type.dialect_impl(self.dialect).bind_processor(self.dialect)

    def write(self, model: Any, rows: Sequence[Sequence[Any]]) -> None:
        """Encoded rows of ``model``."""
        if not rows:
            return
        table = _table(model)
        if not self.postgres:
            plan = _driver_insert(table, self.dialect)
            assert plan is not None
            self.conn.exec_driver_sql(plan.sql, [tuple(r) for r in rows])
            return
        names = ", ".join(f'"{c.name}"' for c in table.columns)
        raw = self.conn.connection.driver_connection
        assert raw is not None
        with raw.cursor() as cursor, cursor.copy(f"COPY {table.name} ({names}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)


def _hours(days: int, end: datetime, rng: random.Random, count: int) -> list[datetime]:
    """``count`` times over ``days`` days before ``end``, more in the day (UTC 8-20) than at night."""
    weights = []
    starts = []
    for h in range(days * 24):
        start = end - timedelta(hours=days * 24 - h)
        starts.append(start)
        weights.append(3.0 if 8 <= start.hour < 20 else 1.0)
    picked = rng.choices(range(len(starts)), weights=weights, k=count)
    picked.sort()
    return [
        starts[i] + timedelta(seconds=rng.randrange(3600), microseconds=rng.randrange(10**6)) for i in picked
    ]


def _service_record(trace_id: str, service: str) -> str:
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]}
    span = {"traceId": trace_id, "spanId": trace_id[:16], "name": "agent"}
    body = {"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": [span]}]}]}
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False)


@dataclass
class Filled:
    """What :func:`fill` wrote."""

    answers: int
    runs: int
    traces: int
    rollup_rows: int
    end: datetime
    seconds: float


def fill(db_url: str, count: int, *, days: int = 30, seed: int = 33, end: datetime | None = None) -> Filled:
    """Fill an empty store at ``db_url`` with ``count`` answers (and their rollups)."""
    import time

    began = time.perf_counter()
    upgrade(db_url)
    end = end or datetime(2026, 12, 6, tzinfo=UTC)
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as scratch:
        found = templates(Path(scratch))
    times = _hours(days, end, rng, count)
    tally = _Tally(found, days, end)
    runs = traces = 0
    # A transaction per chunk: one of several GB would grow SQLite's write-ahead log as large.
    with Store(db_url) as store, store.engine.connect() as conn:
        if conn.dialect.name == "sqlite":
            conn.exec_driver_sql("PRAGMA synchronous=OFF")
        w = _Writer(conn)
        # Each template encoded once, with where the values each copy changes sit.
        encoded = {
            policy: [
                (
                    w.encode(AnswerRecord, {k: v for k, v in t.items() if not k.startswith("_")}),
                    [w.encode(EvidenceRecord, e) for e in t["_evidence"]],
                    [w.encode(ClaimRecord, c) for c in t["_claims"]],
                    [w.encode(VerdictRecord, v) for v in t["_verdicts"]],
                )
                for t in found.answers[policy]
            ]
            for policy in POLICIES
        }
        at = {
            model: {key: w.slot(model, key) for key in ("run_id", "answer_id")}
            for model in (EvidenceRecord, ClaimRecord, VerdictRecord)
        }
        evidence_trace = w.slot(EvidenceRecord, "trace_id")
        answer_at = {
            key: w.slot(AnswerRecord, key)
            for key in (
                "run_id",
                "answer_id",
                "position",
                "trace_key",
                "trace_id",
                "span_id",
                "conversation_id",
                "question_type",
                "generated_at",
                "saved_at",
                "counts",
            )
        }
        # Each template's own counts (answers.counts) under each question type, encoded once.
        own = {
            (policy, which, question_type): w.value(
                AnswerRecord,
                "counts",
                answer_counts(out.model_copy(update={"question_type": question_type})),
            )
            for policy in POLICIES
            for which, out in enumerate(found.outs[policy])
            for question_type in QUESTION_TYPES
        }
        buffers: dict[Any, list[list[Any]]] = {}
        for start in range(0, count, RUN_ANSWERS):
            run_no = start // RUN_ANSWERS
            policy = POLICIES[rng.choices(range(3), weights=(6, 3, 1))[0]]
            judge = JUDGES[rng.random() < 0.3]
            run = dict(found.runs[policy])
            run_id = f"run-{run_no:07d}"
            stamp = times[start]
            run.update(
                id=run_id,
                judge_kind=judge[0],
                judge_model=judge[1],
                started_at=stamp,
                finished_at=stamp + timedelta(seconds=5),
                heartbeat_at=stamp + timedelta(seconds=5),
                owner=None,
            )
            buffers.setdefault(RunRecord, []).append(w.encode(RunRecord, run))
            runs += 1
            for index in range(start, min(start + RUN_ANSWERS, count)):
                when = times[index]
                if index % ANSWERS_PER_TRACE == 0:
                    trace_id = hashlib.md5(f"t{index}".encode()).hexdigest()
                    trace_key = hashlib.sha256(trace_id.encode()).hexdigest()[:32]
                    service = (
                        SERVICES[rng.choices(range(3), weights=(5, 3, 1))[0]] if rng.random() < 0.8 else None
                    )
                    trace = {"key": trace_key, "trace_id": trace_id, "digest": trace_key, "spans": 12}
                    buffers.setdefault(TraceRecord, []).append(
                        w.encode(TraceRecord, {**trace, "first_seen_at": when})
                    )
                    if service is not None:
                        span = {
                            "trace_id": trace_id,
                            "span_id": trace_id[:16],
                            "parent_id": None,
                            "end_ns": int(when.timestamp() * 1e9),
                            "record": _service_record(trace_id, service),
                            "received_at": when,
                            # As a span of an OTLP JSON body: matched by its text (a protobuf
                            # span's `service` column is the cheaper case of the same filter).
                            "service": None,
                            "proto": None,
                        }
                        buffers.setdefault(ReceivedSpanRecord, []).append(w.encode(ReceivedSpanRecord, span))
                    traces += 1
                which = rng.randrange(len(found.answers[policy]))
                answer, evidence, claims, verdicts = encoded[policy][which]
                question_type = QUESTION_TYPES[rng.choices(range(4), weights=(4, 3, 2, 1))[0]]
                answer_id = f"ans-{index:08d}"
                row = list(answer)
                for key, value in (
                    ("run_id", run_id),
                    ("answer_id", answer_id),
                    ("position", index - start),
                    ("trace_key", trace_key),
                    ("trace_id", trace_id),
                    ("span_id", f"{index:016x}"),
                    ("conversation_id", f"conv-{index // 6:07d}"),
                    ("question_type", question_type),
                    ("generated_at", w.value(AnswerRecord, "generated_at", when)),
                    ("saved_at", w.value(AnswerRecord, "saved_at", when + timedelta(seconds=2))),
                    ("counts", own[(policy, which, question_type)]),
                ):
                    row[answer_at[key]] = value
                buffers.setdefault(AnswerRecord, []).append(row)
                for model, rows in (
                    (EvidenceRecord, evidence),
                    (ClaimRecord, claims),
                    (VerdictRecord, verdicts),
                ):
                    children = buffers.setdefault(model, [])
                    places = at[model]
                    for child in rows:
                        copy = list(child)
                        copy[places["run_id"]] = run_id
                        copy[places["answer_id"]] = answer_id
                        if model is EvidenceRecord:
                            copy[evidence_trace] = trace_id
                        children.append(copy)
                tally.add(when, policy, which, judge, service, question_type)
            if len(buffers.get(AnswerRecord, ())) >= CHUNK:
                _flush(w, buffers)
                conn.commit()
        _flush(w, buffers)
        made = 0
        page: list[list[Any]] = []
        for rollup in tally.rows():  # a few hundred thousand rows at a million answers: streamed
            page.append(w.encode(RollupRecord, rollup))
            made += 1
            if len(page) == CHUNK:
                w.write(RollupRecord, page)
                page = []
        w.write(RollupRecord, page)
        conn.commit()
        fill_intake(conn)
        conn.commit()
        if conn.dialect.name == "postgresql":
            # The store's own tables: a bare ANALYZE takes every table of the database, other
            # schemas' too, and waits behind any of them locked (another store's rollup rebuild).
            for name in Base.metadata.tables:
                conn.execute(text(f'ANALYZE "{name}"'))
            conn.commit()
    if not db_url.startswith("postgresql"):
        with Store(db_url) as store, store.engine.begin() as conn:
            conn.exec_driver_sql("ANALYZE")
    return Filled(count, runs, traces, made, end, time.perf_counter() - began)


def fill_intake(conn: Connection) -> int:
    """What a live server's intake holds beside the answers: a received trace and an audit pass per
    trace that has a received span (one generation, audited, by the run of its answers); the rows added.

    Made from the stored rows in SQL, so a store filled before this was part of :func:`fill` gets
    them too (it does nothing when the intake already has traces).
    """
    if conn.execute(text("SELECT count(*) FROM received_traces")).scalar():
        return 0
    spans = "SELECT trace_id, count(*) AS n, min(received_at) AS at FROM received_spans GROUP BY trace_id"
    runs = "SELECT trace_id, max(run_id) AS run_id FROM answers GROUP BY trace_id"
    true = "true" if conn.dialect.name == "postgresql" else "1"
    added = conn.execute(
        text(
            "INSERT INTO received_traces (trace_id, generation, audited_generation, root_ended,"
            " first_span_at, last_span_at, owner, heartbeat_at, lease_seconds, run_id, error)"
            f" SELECT s.trace_id, 1, 1, {true}, s.at, s.at, NULL, NULL, NULL, r.run_id, NULL"
            f" FROM ({spans}) s JOIN ({runs}) r ON r.trace_id = s.trace_id"
        )
    ).rowcount
    conn.execute(
        text(
            "INSERT INTO trace_audits (trace_id, generation, run_id, spans, audited_at, error)"
            " SELECT t.trace_id, 1, t.run_id, s.n, t.last_span_at, NULL FROM received_traces t"
            f" JOIN ({spans}) s ON s.trace_id = t.trace_id"
        )
    )
    return int(added) * 2


def _flush(writer: _Writer, buffers: dict[Any, list[list[Any]]]) -> None:
    # Parents first: the foreign keys are checked at each statement.
    for model in (
        RunRecord,
        TraceRecord,
        ReceivedSpanRecord,
        AnswerRecord,
        EvidenceRecord,
        ClaimRecord,
        VerdictRecord,
    ):
        writer.write(model, buffers.pop(model, []))


class _Tally:
    """The answers per (hour, policy, judge, service, question type, template), and the rollup rows
    they make: the templates' counts times how many copies of each."""

    def __init__(self, found: Templates, days: int, end: datetime) -> None:
        self.found = found
        self.start = end - timedelta(days=days)
        self.hours = days * 24
        self.templates = [(p, i) for p in POLICIES for i in range(len(found.outs[p]))]
        self.index = {t: n for n, t in enumerate(self.templates)}
        self.services = (None, *SERVICES)
        shape = (
            self.hours,
            len(POLICIES),
            len(JUDGES),
            len(self.services),
            len(QUESTION_TYPES),
            len(self.templates),
        )
        self.counts = np.zeros(shape, dtype=np.int64)

    def add(
        self,
        at: datetime,
        policy: str,
        which: int,
        judge: tuple[str, str | None],
        service: str | None,
        question_type: str,
    ) -> None:
        hour = int((at - self.start).total_seconds() // 3600)
        self.counts[
            hour,
            POLICIES.index(policy),
            JUDGES.index(judge),
            self.services.index(service),
            QUESTION_TYPES.index(question_type),
            self.index[(policy, which)],
        ] += 1

    def rows(self) -> Iterator[dict[str, Any]]:
        # Each template's counts as a vector over every key any template has (question type left
        # unspecified: its segment is renamed per question type below).
        per = [
            answer_counts(self.found.outs[p][i].model_copy(update={"question_type": None}))
            for p, i in self.templates
        ]
        vocabulary = sorted({k for c in per for k in c})
        at = {k: n for n, k in enumerate(vocabulary)}
        matrix = np.zeros((len(per), len(vocabulary)), dtype=np.int64)
        for t, c in enumerate(per):
            for k, v in c.items():
                matrix[t, at[k]] = v
        classes: dict[str, np.ndarray] = {ALL: np.ones(len(per), dtype=bool)}
        for t, (p, i) in enumerate(self.templates):
            for item in self.found.outs[p][i].evidence:
                if item.source_class is not None:
                    classes.setdefault(item.source_class, np.zeros(len(per), dtype=bool))[t] = True
        # The (outcome, verdict) slices, like the source classes': the templates in each (slices_of).
        in_slices: dict[tuple[str, str], np.ndarray] = {}
        for t, (p, i) in enumerate(self.templates):
            out = self.found.outs[p][i]
            for pair in slices_of(outcomes_of(out), verdicts_of(out)):
                in_slices.setdefault(pair, np.zeros(len(per), dtype=bool))[t] = True
        hourly = self.counts
        daily = hourly.reshape(self.hours // 24, 24, *hourly.shape[1:]).sum(axis=1)
        for bucket, grid, step in (("hour", hourly, timedelta(hours=1)), ("day", daily, timedelta(days=1))):
            slices = {ALL: grid.sum(axis=3)}
            for s, name in enumerate(self.services):
                if name is not None:
                    slices[name] = grid[:, :, :, s]
            for service, sliced in slices.items():
                flat = sliced.reshape(-1, len(per))  # (time, policy, judge, question type) x template
                used = np.nonzero(flat.sum(axis=1))[0]
                for (source_class, in_class), ((outcome, verdict), in_slice) in itertools.product(
                    classes.items(), in_slices.items()
                ):
                    mask = in_class & in_slice
                    if not mask.any():
                        continue
                    sums = flat[used][:, mask] @ matrix[mask]
                    rows_at, keys_at = np.nonzero(sums)
                    values = sums[rows_at, keys_at].tolist()
                    grouped: dict[int, dict[str, int]] = {}
                    for row_no, key_no, value in zip(rows_at.tolist(), keys_at.tolist(), values, strict=True):
                        grouped.setdefault(row_no, {})[vocabulary[key_no]] = value
                    for r, counts in grouped.items():
                        slot, type_no = divmod(int(used[r]), len(QUESTION_TYPES))
                        slot, judge_no = divmod(slot, len(JUDGES))
                        time_no, policy_no = divmod(slot, len(POLICIES))
                        question_type = QUESTION_TYPES[type_no]
                        named = {
                            (
                                name[: -len(UNSPECIFIED)] + question_type
                                if name.startswith("type|")
                                else name
                            ): n
                            for name, n in counts.items()
                        }
                        run = self.found.runs[POLICIES[policy_no]]
                        judge = JUDGES[judge_no]
                        key: Key = (
                            bucket,
                            self.start + step * time_no,
                            run["policy_name"] or "",
                            run["policy_sha256"] or "",
                            judge[0],
                            judge[1] or "",
                            service,
                            source_class,
                            question_type,
                            "",  # no live server's sample
                            "",  # no spending cap
                            outcome,
                            verdict,
                        )
                        yield {
                            "key": _digest(key),
                            **dict(zip(_KEY_COLUMNS, key, strict=True)),
                            "answer_count": named["answers"],
                            "counts": dict(sorted(named.items())),
                        }
