"""Rollups (per hour and day counts kept as answers are written) against the answers themselves,
on SQLite and PostgreSQL.

The rows the writes keep must equal the rows a rebuild computes from the stored answers, also after
a re-audit and after answers are replaced; the summary and trend read from them must equal
:func:`auditor.metrics.summarise` of the answers each filter selects, read as raw rows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from itertools import groupby
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine, select, text, update

from auditor.cli import cli
from auditor.metrics import (
    Headline,
    add_counts,
    answer_counts,
    headline_from_counts,
    sum_counts,
    summarise,
    summary_from_counts,
)
from auditor.policy import Thresholds, load_policy
from auditor.run import reaudit
from auditor.serve._figures import floor, points, summary_of, trend, window
from auditor.store import (
    AnswerFilter,
    Store,
    iter_answers,
    live_record,
    note_live,
    rebuild_rollups,
    rollup_grain,
    sample_json,
    samples_of,
    summed_counts,
    summed_counts_by,
)
from auditor.store import _rollups as rollups
from auditor.store._live import counted
from auditor.store._schema import AnswerRecord, RollupRecord
from tests.support.serve_data import Stored, store_audits
from tests.test_store import pg_schema, pg_url  # noqa: F401  (the session's PostgreSQL server)

OUTCOMES = ("excluded", "all_admitted", "inadmissible_support")
VERDICTS = ("grounded", "ungrounded", "contradicted", "refusal", "undecided")
THRESHOLDS = [None, Thresholds(claim_support=0.5, contradictions_allowed=1, conflicts_allowed=True)]


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path_factory.mktemp('rollups') / 'store.db'}"
        return
    with pg_schema(request.getfixturevalue("pg_url")) as url:
        yield url


@pytest.fixture(scope="module")
def stored(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Stored:
    return store_audits(backend, tmp_path_factory.mktemp("traces"))


def rollup_rows(url: str, *, services: bool = True) -> dict[tuple[Any, ...], dict[str, int]]:
    """Every rollup row by its dimensions (``services=False``: only the rows of every service)."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(select(RollupRecord.__table__)).mappings().all()
    finally:
        engine.dispose()
    out = {}
    for row in rows:
        if not services and row["service"] != "*":
            continue
        key = tuple(row[c] for c in ("bucket", "start", "policy_name", "policy_sha256", "judge_kind"))
        key += tuple(row[c] for c in ("judge_model", "service", "source_class", "question_type"))
        key += (row["outcome"], row["verdict"], row["sample"], row["cap"])
        assert row["answer_count"] == row["counts"]["answers"]
        out[key] = row["counts"]
    return out


def answer_ids(store: Store, runs: list[str], **wanted: Any) -> set[tuple[str, str]]:
    """``(run id, answer id)`` of the stored answers of ``runs`` that ``wanted``'s filter selects."""
    return {(r, a.answer_id) for r in runs for a in iter_answers(store, AnswerFilter(run_id=r, **wanted))}


def run_ids(stored: Stored) -> list[str]:
    """The ids of the runs ``stored`` holds answers of, sorted."""
    return sorted({r for r, _ in stored.answers})


def upgraded_rows(url: str) -> dict[tuple[Any, ...], dict[str, int]]:
    """The rollup rows after the store at ``url`` is upgraded to the newest migration (after a downgrade)."""
    with Store(url, upgrade=True):
        pass
    return rollup_rows(url)


def downgraded_rows(url: str, revision: str, new: tuple[str, ...]) -> dict[tuple[Any, ...], dict[str, int]]:
    """The rollup rows after a downgrade to ``revision``, by the key columns the model had without ``new``."""
    from alembic import command

    from auditor.store.migrations import alembic_config

    old_columns = [c for c in RollupRecord.__table__.c if c.name not in new]
    with Store(url) as store, store.engine.begin() as conn:
        config = alembic_config(store.url)
        config.attributes["connection"] = conn
        command.downgrade(config, revision)
        rows = conn.execute(select(*old_columns)).mappings().all()
    return {
        tuple(row[c.name] for c in old_columns if c.name not in ("answer_count", "counts")): row["counts"]
        for row in rows
    }


def test_counts_add_up_to_the_summary_of_the_same_answers(stored: Stored) -> None:
    answers = [a for _, a in stored.answers]
    subsets = [answers, answers[:1], answers[1::2], [a for a in answers if a.refusal], []]
    for subset in subsets:
        total = sum_counts(answer_counts(a) for a in subset)
        for limits in THRESHOLDS:
            assert summary_from_counts(total, limits) == summarise(subset, thresholds=limits)
        # What a trend point shows, without the segments: the same fields as the summary's.
        assert headline_from_counts(total) == Headline.of(summarise(subset)), len(subset)


def test_writes_keep_the_rows_a_rebuild_computes(backend: str, stored: Stored) -> None:
    # The audits were written before their traces were received over OTLP: the service rows come
    # with a rebuild (a trace's services are read when its answers are written).
    kept = rollup_rows(backend, services=False)
    assert kept and {k[0] for k in kept} == {"hour", "day"}
    with Store(backend) as store:
        written = rebuild_rollups(store)
    rebuilt = rollup_rows(backend)
    assert len(rebuilt) == written
    assert {k: v for k, v in rebuilt.items() if k[6] == "*"} == kept
    assert {k[6] for k in rebuilt} == {"*", *stored.received}
    # Every answer is counted once in the rows of every service, per bucket kind.
    for bucket in ("hour", "day"):
        assert sum(
            v["answers"]
            for k, v in rebuilt.items()
            if k[0] == bucket and k[6:8] == ("*", "*") and k[9:11] == ("*", "*")
        ) == len(stored.answers)


def test_a_rebuild_sums_and_inserts_one_day_at_a_time(
    backend: str, stored: Stored, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Memory holds one day's rows, not the store's (5.9 GB at 200,000 answers when every row was
    # summed before the first write): each insert holds the rows of one day, and no two inserts
    # hold the same one; together they hold the rows the writes kept (and the services' rows).
    days = {floor(a.generated_at, "day") for _, a in stored.answers}
    assert len(days) > 1  # the audits span days, so the loop is walked
    inserted: list[set[Any]] = []
    insert = rollups.insert_missing

    def recorded(session: Any, model: Any, rows: list[dict[str, Any]]) -> None:
        inserted.append({floor(r["start"], "day") for r in rows})
        insert(session, model, rows)

    monkeypatch.setattr(rollups, "insert_missing", recorded)
    kept = rollup_rows(backend, services=False)
    reported: list[tuple[int, int]] = []
    with Store(backend) as store:
        rebuild_rollups(store, on_day=lambda done, of: reported.append((done, of)))
    spanned = (max(days) - min(days)).days + 1  # days without answers between are walked too
    assert reported == [(done, spanned) for done in range(1, spanned + 1)]
    assert all(len(held) == 1 for held in inserted if held)
    assert sorted(d for held in inserted for d in held) == sorted(days)
    assert {k: v for k, v in rollup_rows(backend).items() if k[6] == "*"} == kept


def test_a_batch_adds_to_each_row_what_its_answers_add_one_by_one(stored: Stored) -> None:
    # deltas sums the answers of one hour, services, classes, type and outcomes before it adds
    # them to their rows: the rows must get what each answer alone adds.
    answers = [a for _, a in stored.answers]
    services = {trace: {name} for name, traces in stored.received.items() for trace in traces}
    run = ("policy", "sha", "offline", "", "", "")
    one_by_one: dict[Any, Counter[str]] = {}
    for answer in answers:
        alone = rollups.deltas(run, [answer], services)
        served = 1 + len(services.get(answer.trace_id, ()))
        classes = 1 + len({e.source_class for e in answer.evidence if e.source_class})
        sliced = (1 + len(rollups.outcomes_of(answer))) * (1 + len(rollups.verdicts_of(answer)))
        assert len(alone) == 2 * served * classes * sliced
        assert all(dict(c) == answer_counts(answer) for c in alone.values())
        for key, counts in alone.items():
            add_counts(one_by_one.setdefault(key, Counter()), counts)
    batched = rollups.deltas(run, answers, services)
    assert (
        len({(k[1], k[6], k[7], k[8], k[11], k[12]) for k in batched}) > 8
    )  # hours, services, classes, slices
    assert batched == one_by_one
    # The counts the answers' rows were written with, given, stand for computing them again (by
    # answer id: the answers of one run, as a write's are).
    for run_id in {r for r, _ in stored.answers}:
        of_run = [a for r, a in stored.answers if r == run_id]
        given = {a.answer_id: answer_counts(a) for a in of_run}
        assert rollups.deltas(run, of_run, services, given) == rollups.deltas(run, of_run, services)
        only_answers = rollups.deltas(run, of_run, services, {a.answer_id: {"answers": 1} for a in of_run})
        assert all(set(c) == {"answers"} for c in only_answers.values())


def filters(stored: Stored) -> list[AnswerFilter]:
    first = min(a.generated_at for _, a in stored.answers).replace(minute=0, second=0, microsecond=0)
    day = first.replace(hour=0)
    classes = sorted({e.source_class for _, a in stored.answers for e in a.evidence if e.source_class})
    assert len(classes) >= 2
    crossed = next(
        a
        for _, a in stored.answers
        if a.claims and rollups.verdicts_of(a) and any(e.source_class for e in a.evidence)
    )
    pairs = {
        (o, v) for _, a in stored.answers for o in rollups.outcomes_of(a) for v in rollups.verdicts_of(a)
    }
    return [
        AnswerFilter(),
        AnswerFilter(question_type="billing"),
        AnswerFilter(policy="permissive"),
        AnswerFilter(policy=stored.policy_sha[:10].upper()),
        *(AnswerFilter(source_class=c) for c in classes),
        *(AnswerFilter(service=s) for s in stored.received),
        AnswerFilter(service="support-agent-demo", question_type="product", policy=stored.policy_sha),
        AnswerFilter(since=first + timedelta(hours=1)),
        AnswerFilter(since=day, until=day + timedelta(days=1)),
        AnswerFilter(until=first + timedelta(hours=26), source_class=classes[0]),
        *(AnswerFilter(outcome=o) for o in OUTCOMES),
        AnswerFilter(outcome="excluded", source_class=classes[0]),
        AnswerFilter(outcome="inadmissible_support", policy=stored.policy_sha[:12], question_type="billing"),
        AnswerFilter(outcome="all_admitted", since=day, until=day + timedelta(days=1)),
        *(AnswerFilter(verdict=v) for v in VERDICTS if v != "undecided"),  # the offline judge decides all
        AnswerFilter(verdict="ungrounded", source_class=classes[0]),
        AnswerFilter(verdict="contradicted", policy=stored.policy_sha[:12], question_type="billing"),
        AnswerFilter(verdict="grounded", since=day, until=day + timedelta(days=1)),
        # The outcome crossed with the verdict (migration 0026): the pairs the answers fill.
        *(AnswerFilter(outcome=o, verdict=v) for o, v in sorted(pairs)),
        AnswerFilter(
            verdict=rollups.verdicts_of(crossed)[0],
            outcome=rollups.outcomes_of(crossed)[0],
            source_class=next(e.source_class for e in crossed.evidence if e.source_class),
            policy=stored.policy_sha[:12],
        ),
    ]


def test_figures_from_rollups_equal_figures_from_the_answers(backend: str, stored: Stored) -> None:
    with Store(backend) as store:
        rebuild_rollups(store)
        for wanted in filters(stored):
            assert rollup_grain(wanted) is not None, wanted  # read from rollups, not the answers
            raw = list(iter_answers(store, wanted))
            assert raw or wanted.service or wanted.since, wanted  # the filters select answers
            for limits in THRESHOLDS:
                assert summary_of(store, wanted, limits) == summarise(raw, thresholds=limits), wanted
            for bucket in ("hour", "day"):
                used, got = trend(store, wanted, bucket, limits)
                assert used == window(store, wanted, bucket)
                if wanted.since is None and wanted.until is None:  # the default window is on bucket edges
                    assert rollup_grain(used, bucket) == bucket
                assert got == points(iter_answers(store, used), bucket, limits), (wanted, bucket)


def test_filters_rollups_cannot_express_read_the_answers(backend: str, stored: Stored) -> None:
    first = min(a.generated_at for _, a in stored.answers)
    with Store(backend) as store:
        for wanted in [
            AnswerFilter(verdict="grounded", outcome="all_admitted", q="refund"),
            AnswerFilter(q="refund"),
            AnswerFilter(since=first.replace(minute=30)),
            AnswerFilter(source_class="*"),
        ]:
            assert rollup_grain(wanted) is None
            assert summary_of(store, wanted) == summarise(list(iter_answers(store, wanted)))


def test_other_filters_sum_the_stored_counts_of_their_answers(backend: str, stored: Stored) -> None:
    # Filters the rollups cannot answer: the summary is the sum of the matching rows' counts column,
    # and must equal summarise over the same answers read with their children.
    first = min(a.generated_at for _, a in stored.answers)
    run_id, answer = next((r, a) for r, a in stored.answers if a.claims and not a.refusal)
    conversation = next(a.conversation_id for _, a in stored.answers if a.conversation_id)
    inside = first.replace(minute=30)  # a bound inside an hour: not a rollup's edge
    wanted_all = [
        *(AnswerFilter(verdict=v, outcome="all_admitted", since=inside) for v in VERDICTS),
        *(AnswerFilter(outcome=o, verdict="ungrounded", since=inside) for o in OUTCOMES),
        AnswerFilter(q="refund"),
        AnswerFilter(trace_id=answer.trace_id[:8]),
        AnswerFilter(run_id=run_id),
        AnswerFilter(conversation_id=conversation),
        AnswerFilter(since=inside),
        AnswerFilter(verdict="ungrounded", source_class="policy_doc", outcome="excluded", run_id=run_id),
        AnswerFilter(verdict="grounded", until=inside + timedelta(hours=5)),
    ]
    with Store(backend) as store:
        for wanted in wanted_all:
            assert rollup_grain(wanted) is None, wanted
            raw = list(iter_answers(store, wanted))
            counts = summed_counts(store, wanted)
            assert counts is not None, wanted
            assert counts.get("answers", 0) == len(raw), wanted
            assert counts == sum_counts(answer_counts(a) for a in raw), wanted
            for limits in THRESHOLDS:
                assert summary_of(store, wanted, limits) == summarise(raw, thresholds=limits), wanted
            # The trend of the same filter: the counts summed per hour or day in SQL.
            for bucket in ("hour", "day"):
                used, got = trend(store, wanted, bucket)
                assert used == window(store, wanted, bucket)
                in_window = list(iter_answers(store, used))
                assert got == points(in_window, bucket), (wanted, bucket)
                by_bucket = summed_counts_by(store, used, bucket)
                assert by_bucket is not None
                expected = [
                    (start, sum_counts(answer_counts(a) for a in group))
                    for start, group in groupby(in_window, key=lambda a: floor(a.generated_at, bucket))
                ]
                assert by_bucket == expected, (wanted, bucket)
        assert any(summed_counts(store, w) for w in wanted_all[:5])  # the verdicts select answers


@pytest.fixture(params=["sqlite", "postgresql"])
def fresh(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, Stored]]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'store.db'}"
        yield url, store_audits(url, tmp_path / "traces")
        return
    with pg_schema(request.getfixturevalue("pg_url")) as url:
        yield url, store_audits(url, tmp_path / "traces")


def test_reaudits_and_replaced_answers_keep_rollups_exact(fresh: tuple[str, Stored]) -> None:
    url, stored = fresh
    run_id, answer = next((r, a) for r, a in stored.answers if a.claims and not a.refusal)
    again = reaudit(run_id, policy=load_policy("strict"), db_url=url)
    assert again.answers
    with Store(url) as store:
        # A run saving an answer again replaces it: its old counts are taken back.
        changed = answer.model_copy(update={"claims": [], "grounded": False, "refusal": True})
        store.save_answer(run_id, changed)
        kept = rollup_rows(url, services=False)
        rebuild_rollups(store)
        assert rollup_rows(url, services=False) == kept
        everything = list(iter_answers(store, AnswerFilter()))
        assert len(everything) == len(stored.answers) + len(again.answers)
        assert summary_of(store, AnswerFilter()) == summarise(everything)
        assert summary_of(store, AnswerFilter(policy="strict")) == summarise(again.answers)


def test_migration_fills_the_rollups_of_a_store_from_before(backend: str, stored: Stored) -> None:
    from alembic import command

    from auditor.store.migrations import alembic_config

    with Store(backend) as store:
        rebuild_rollups(store)
    expected = rollup_rows(backend)
    with Store(backend) as store, store.engine.begin() as conn:
        config = alembic_config(store.url)
        config.attributes["connection"] = conn
        command.downgrade(config, "0012")
    assert upgraded_rows(backend) == expected


def stored_counts(url: str) -> dict[tuple[str, str], dict[str, int] | None]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(select(AnswerRecord.run_id, AnswerRecord.answer_id, AnswerRecord.counts))
            return {(r, a): c for r, a, c in rows}
    finally:
        engine.dispose()


def test_each_answer_keeps_its_counts_and_the_migration_fills_them(backend: str, stored: Stored) -> None:
    from alembic import command

    from auditor.store.migrations import alembic_config

    expected = {(r, a.answer_id): answer_counts(a) for r, a in stored.answers}
    assert stored_counts(backend) == expected  # written with each answer
    with Store(backend) as store, store.engine.begin() as conn:
        config = alembic_config(store.url)
        config.attributes["connection"] = conn
        command.downgrade(config, "0014")
    with Store(backend, upgrade=True):
        pass
    assert stored_counts(backend) == expected  # filled from the answers by migration 0015


def test_answers_without_counts_are_summed_from_the_answers(fresh: tuple[str, Stored]) -> None:
    url, stored = fresh
    run_id, answer = next((r, a) for r, a in stored.answers if a.claims and not a.refusal)
    engine = create_engine(url)
    try:
        with engine.begin() as conn:  # as a row written before migration 0015 (not filled)
            conn.execute(
                update(AnswerRecord)
                .where(AnswerRecord.run_id == run_id, AnswerRecord.answer_id == answer.answer_id)
                .values(counts=None)
            )
    finally:
        engine.dispose()
    wanted = AnswerFilter(verdict="grounded" if answer.grounded else "ungrounded", run_id=run_id)
    with Store(url) as store:
        assert summed_counts(store, wanted) is None
        raw = list(iter_answers(store, wanted))
        assert answer.answer_id in {a.answer_id for a in raw}
        assert summary_of(store, wanted) == summarise(raw)
        assert summed_counts_by(store, wanted, "day") is None
        used, got = trend(store, wanted, "day")
        assert got == points(iter_answers(store, used), "day")


def test_cli_rebuilds_the_rollups(backend: str, stored: Stored) -> None:
    result = CliRunner().invoke(cli, ["db", "rollups", "--rebuild", "--db", backend])
    assert result.exit_code == 0, result.output
    assert result.output == f"Rollups rebuilt from the stored answers: {len(rollup_rows(backend))} rows.\n"
    if backend.startswith("postgresql"):  # every row was replaced: vacuumed and analysed after
        stats = "SELECT last_vacuum, last_analyze FROM pg_stat_user_tables WHERE relid = 'answer_rollups'::regclass"
        engine = create_engine(backend)
        try:
            with engine.connect() as conn:
                assert None not in conn.execute(text(stats)).one()
        finally:
            engine.dispose()
    result = CliRunner().invoke(cli, ["db", "rollups", "--db", backend])
    assert result.exit_code == 2 and "pass --rebuild" in result.output


CAP = {
    "limit": "1000 tokens a day",
    "then": "offline",
    "spent": 1200.0,
    "hit_at": "2026-11-20T12:00:00+00:00",
}


def old_shaped(
    rows: dict[tuple[Any, ...], dict[str, int]], keep: int = 0
) -> dict[tuple[Any, ...], dict[str, int]]:
    """The rows as migration 0013 keyed them: those of every outcome and verdict (``"*"``), every
    sample and cap merged (``keep=2``: the sample and cap kept, as migration 0019 keyed them)."""
    out: dict[tuple[Any, ...], dict[str, int]] = {}
    for key, counts in rows.items():
        if key[9:11] != ("*", "*"):
            continue
        total = out.setdefault(key[:9] + key[len(key) - keep :], {})
        for name, n in counts.items():
            total[name] = total.get(name, 0) + n
    return out


def test_samples_and_caps_are_rollup_dimensions(fresh: tuple[str, Stored]) -> None:
    url, stored = fresh
    runs = run_ids(stored)
    assert len(runs) == 2
    run_id, answer = next((r, a) for r, a in stored.answers if a.claims and not a.refusal)
    with Store(url) as store:
        rebuild_rollups(store)  # the service rows too (the traces were received after the audits)
        # Recorded after the answers were written: their counts move to the new rows.
        note_live(store, runs[0], {"share": 0.5, "filter": None})
        note_live(store, runs[1], {"share": 0.25, "filter": "service=support-agent-demo"}, CAP)
        info = store.load_run(run_id).run
        store.begin_run(info.model_copy(update={"id": "run-late"}))
        for _, again in stored.answers[:3]:
            store.save_answer("run-late", again)
        later = {**CAP, "hit_at": "2026-11-21T08:00:00+00:00"}
        note_live(store, "run-late", {"share": 1.0, "filter": None}, later)
        # Recorded when the run begins, as auditor serve's workers do: its answers are keyed by them.
        store.begin_run(info.model_copy(update={"id": "run-live"}), also=live_record({"share": 0.1}, CAP))
        store.save_answer("run-live", answer)
        kept = rollup_rows(url)
        assert {k[-2] for k in kept} == {
            '{"filter": null, "share": 0.5}',
            '{"filter": "service=support-agent-demo", "share": 0.25}',
            '{"filter": null, "share": 1.0}',
            '{"filter": null, "share": 0.1}',
        }
        assert len({k[-1] for k in kept}) == 3  # none, and two hits of the cap
        with pytest.raises(StopIteration):  # every run has a sample now
            next(k for k in kept if k[-2] == "")
        rebuild_rollups(store)
        assert rollup_rows(url) == kept  # rebuild gives what the writes (and the moves) kept
        wanted_all = [
            *filters(stored),
            AnswerFilter(verdict="grounded"),
            AnswerFilter(run_id=runs[1]),
            AnswerFilter(since=min(a.generated_at for _, a in stored.answers).replace(minute=30)),
        ]
        for wanted in wanted_all:
            raw = list(iter_answers(store, wanted))
            summary = summary_of(store, wanted)
            assert summary == summarise(raw), wanted
            expected = counted(store, wanted)  # from the answers joined to their runs
            assert samples_of(store, wanted, summary.answers) == expected, wanted
            assert sum(s.answers for s in expected[0]) == len(raw), wanted
            used, points_ = trend(store, wanted, "day")
            answers = sum(p.summary.answers for p in points_)
            assert samples_of(store, used, answers) == counted(store, used), wanted
        block = sample_json(*samples_of(store, AnswerFilter(), len(stored.answers) + 1))
        assert len(block["samples"]) == 4
        capped = block["judged_offline_by_cap"]
        assert capped["answers"] > 1
        assert (
            capped["first_hit_at"] == CAP["hit_at"] and capped["last_hit_at"] == "2026-11-21T08:00:00+00:00"
        )
        assert capped["caps"] == [CAP["limit"]]
        # Back to every trace: the rows return to the unsampled ones.
        note_live(store, "run-live", {"share": 1.0, "filter": None})
        moved = rollup_rows(url)
        rebuild_rollups(store)
        assert rollup_rows(url) == moved


def test_one_sample_behind_every_answer_is_read_from_the_rollups(
    fresh: tuple[str, Stored], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A filter the rollups cannot express, on a store whose answers all share one sample and none
    # was capped: the block is the summary's count under that sample, read without the answers.
    url, stored = fresh
    runs = run_ids(stored)
    inside = min(a.generated_at for _, a in stored.answers).replace(minute=30)
    wanted_all = [
        AnswerFilter(verdict="grounded", outcome="all_admitted", since=inside),
        AnswerFilter(run_id=runs[1]),
        AnswerFilter(q="refund"),
    ]
    with Store(url) as store:

        def same_as_counted() -> None:
            expected = {w: counted(store, w) for w in wanted_all}
            with monkeypatch.context() as patched:
                patched.setattr("auditor.store._live.counted", lambda *_: pytest.fail("read the answers"))
                for wanted in wanted_all:
                    answers = summary_of(store, wanted).answers
                    assert samples_of(store, wanted, answers) == expected[wanted], wanted
                    assert sum(s.answers for s in expected[wanted][0]) == answers, wanted

        same_as_counted()  # every trace (not a live server's runs)
        for run_id in runs:
            note_live(store, run_id, {"share": 0.5, "filter": None})
        same_as_counted()  # one live sample
        # A run begun under a cap that stored no answer yet: no answer was judged offline.
        info = store.load_run(runs[0]).run
        store.begin_run(info.model_copy(update={"id": "run-empty"}), also=live_record({"share": 0.5}, CAP))
        same_as_counted()
        # Once some answer was capped, the answers are counted per sample and cap.
        store.save_answer("run-empty", stored.answers[0][1])
        wanted = AnswerFilter(verdict="grounded", outcome="all_admitted", since=inside)
        assert samples_of(store, wanted, summary_of(store, wanted).answers) == counted(store, wanted)


def test_migration_keys_rollups_by_sample_and_cap_and_back(fresh: tuple[str, Stored]) -> None:
    url, stored = fresh
    runs = run_ids(stored)
    with Store(url) as store:
        note_live(store, runs[0], {"share": 0.5, "filter": None}, CAP)
        rebuild_rollups(store)
    expected = rollup_rows(url)
    assert {k[-1] for k in expected} != {""}
    new = ("key", "sample", "cap", "outcome", "verdict")
    downgraded = downgraded_rows(url, "0018", new)
    assert downgraded == old_shaped(expected)
    assert upgraded_rows(url) == expected


def test_policy_outcomes_are_rollup_dimensions_and_the_migration_merges_them_back(
    fresh: tuple[str, Stored],
) -> None:
    url, stored = fresh
    runs = run_ids(stored)

    with Store(url) as store:
        rebuild_rollups(store)
        # The outcome values are not exclusive: some answer is both excluded and inadmissibly
        # supported, so each value is a slice of its own beside every answer's ("*").
        chosen = {o: answer_ids(store, runs, outcome=o) for o in OUTCOMES}
        everything = answer_ids(store, runs)
        assert chosen["excluded"] & chosen["inadmissible_support"]
        assert chosen["excluded"] | chosen["all_admitted"] == everything
        assert not chosen["excluded"] & chosen["all_admitted"]
        assert {k[9] for k in rollup_rows(url)} == {"*", *OUTCOMES}
        assert any(k[10] != "*" for k in rollup_rows(url) if k[9] != "*")  # crossed with the verdict
        # A replaced answer moves between the outcome rows: nothing excluded, no claim left.
        run_id, answer = next(
            (r, a) for r, a in stored.answers if (r, a.answer_id) in chosen["inadmissible_support"]
        )
        admitted = [e.model_copy(update={"admitted": True}) for e in answer.evidence]
        store.save_answer(run_id, answer.model_copy(update={"evidence": admitted, "claims": []}))
        kept = rollup_rows(url)
        rebuild_rollups(store)
        assert rollup_rows(url) == kept
        for outcome in OUTCOMES:
            wanted = AnswerFilter(outcome=outcome)
            assert rollup_grain(wanted) is not None
            raw = list(iter_answers(store, wanted))
            assert ((run_id, answer.answer_id) in answer_ids(store, runs, outcome=outcome)) == (
                outcome == "all_admitted"
            )
            assert summary_of(store, wanted) == summarise(raw), outcome
    expected = rollup_rows(url)
    # Every answer is excluded or all admitted: those two slices add up to every answer's, row by
    # row, in each verdict's slice too.
    split: dict[tuple[Any, ...], dict[str, int]] = {}
    for key, counts in expected.items():
        if key[9] in ("excluded", "all_admitted"):
            total = split.setdefault((*key[:9], "*", *key[10:]), {})
            for name, n in counts.items():
                total[name] = total.get(name, 0) + n
    assert split == {k: v for k, v in expected.items() if k[9] == "*"}
    new = ("key", "outcome", "verdict")
    downgraded = downgraded_rows(url, "0022", new)
    assert downgraded == old_shaped(expected, keep=2)
    assert upgraded_rows(url) == expected


def test_outcome_figures_and_their_samples_never_read_the_answers(
    fresh: tuple[str, Stored], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two samples and a capped run: the sample block of an outcome filter is read from the same
    # rollup rows as its figures, neither summed from the answers nor counted per run.
    url, stored = fresh
    runs = run_ids(stored)
    day = min(a.generated_at for _, a in stored.answers).replace(hour=0, minute=0, second=0, microsecond=0)
    wanted_all = [
        *(AnswerFilter(outcome=o) for o in OUTCOMES),
        AnswerFilter(outcome="excluded", since=day, until=day + timedelta(days=1)),
        AnswerFilter(outcome="inadmissible_support", question_type="billing"),
        *(AnswerFilter(verdict=v) for v in VERDICTS if v != "undecided"),
        AnswerFilter(verdict="ungrounded", since=day, until=day + timedelta(days=1)),
    ]
    with Store(url) as store:
        note_live(store, runs[0], {"share": 0.5, "filter": None})
        note_live(store, runs[1], {"share": 1.0, "filter": None}, CAP)
        expected = {w: (summarise(list(iter_answers(store, w))), counted(store, w)) for w in wanted_all}
        assert all(summary.answers for summary, _ in expected.values())
        assert len(counted(store, AnswerFilter())[0]) == 2  # two samples: no shortcut
        with monkeypatch.context() as patched:
            for name in ("auditor.store._live.counted", "auditor.serve._figures.summed_counts"):
                patched.setattr(name, lambda *_: pytest.fail("read the answers"))
            for wanted in wanted_all:
                summary = summary_of(store, wanted)
                assert summary == expected[wanted][0], wanted
                assert samples_of(store, wanted, summary.answers) == expected[wanted][1], wanted


def test_verdicts_are_rollup_dimensions_and_the_migration_merges_them_back(fresh: tuple[str, Stored]) -> None:
    url, stored = fresh
    runs = run_ids(stored)

    with Store(url) as store:
        rebuild_rollups(store)
        chosen = {v: answer_ids(store, runs, verdict=v) for v in VERDICTS}
        # The values overlap: contradicted answers are ungrounded too; the answers neither grounded
        # nor ungrounded are refusals (not judged).
        assert chosen["contradicted"] and chosen["contradicted"] <= chosen["ungrounded"]
        assert not chosen["grounded"] & chosen["ungrounded"]
        assert (
            chosen["refusal"]
            and answer_ids(store, runs) - (chosen["grounded"] | chosen["ungrounded"]) <= chosen["refusal"]
        )
        assert {k[10] for k in rollup_rows(url)} == {"*", *(v for v in VERDICTS if chosen[v])}
        for verdict in VERDICTS:
            wanted = AnswerFilter(verdict=verdict)
            assert rollup_grain(wanted) == "day"
            assert summary_of(store, wanted) == summarise(list(iter_answers(store, wanted))), verdict
        # Re-judged answers move between the verdict rows: one contradicted, one undecided (each of
        # its claims left unjudged, as a judge that failed leaves them).
        grounded = [(r, a) for r, a in stored.answers if (r, a.answer_id) in chosen["grounded"] and a.claims]
        (run_id, answer), (other_run, other) = grounded[:2]
        store.save_answer(run_id, answer.model_copy(update={"grounded": False, "contradicted": 1}))
        unjudged = [c.model_copy(update={"verdict": "unjudged", "citations": []}) for c in other.claims or ()]
        store.save_answer(
            other_run,
            other.model_copy(update={"claims": unjudged, "grounded": False, "unjudged": len(unjudged)}),
        )
        assert answer_ids(store, runs, verdict="undecided") == {(other_run, other.answer_id)}
        kept = rollup_rows(url)
        assert "undecided" in {k[10] for k in kept}
        rebuild_rollups(store)
        assert rollup_rows(url) == kept
        for verdict in VERDICTS:
            wanted = AnswerFilter(verdict=verdict)
            assert summary_of(store, wanted) == summarise(list(iter_answers(store, wanted))), verdict
    expected = rollup_rows(url)
    new = ("key", "verdict")
    downgraded = downgraded_rows(url, "0024", new)
    # Migration 0023's rows: those of verdict "*", the outcome kept (column order: outcome last).
    order = [c.name for c in RollupRecord.__table__.c if c.name not in (*new, "answer_count", "counts")]
    columns = ["bucket", "start", "policy_name", "policy_sha256", "judge_kind", "judge_model", "service"]
    columns += ["source_class", "question_type", "outcome", "verdict", "sample", "cap"]
    assert downgraded == {
        tuple(dict(zip(columns, k, strict=True))[c] for c in order): v
        for k, v in expected.items()
        if k[10] == "*"
    }
    assert upgraded_rows(url) == expected


def test_the_outcome_is_crossed_with_the_verdict_and_the_migration_takes_the_pairs_back(
    fresh: tuple[str, Stored],
) -> None:
    url, stored = fresh
    runs = run_ids(stored)
    with Store(url) as store:
        rebuild_rollups(store)
        pairs = [
            AnswerFilter(outcome=o, verdict=v)
            for o in OUTCOMES
            for v in VERDICTS
            if answer_ids(store, runs, outcome=o, verdict=v)
        ]
        assert len(pairs) >= 4  # the stored answers fill several pairs
        for wanted in pairs:
            assert rollup_grain(wanted) == "day", wanted
            raw = list(iter_answers(store, wanted))
            assert summary_of(store, wanted) == summarise(raw), wanted
            assert trend(store, wanted, "hour")[1] == points(
                iter_answers(store, window(store, wanted, "hour")), "hour"
            )
    expected = rollup_rows(url)
    crossed = {k for k in expected if k[9] != "*" and k[10] != "*"}
    assert crossed
    downgraded_rows(url, "0025", ())
    assert rollup_rows(url) == {k: v for k, v in expected.items() if k not in crossed}  # 0025's slices
    assert upgraded_rows(url) == expected
