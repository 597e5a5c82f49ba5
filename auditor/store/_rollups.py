"""Rollups: each hour's and day's answer counts, kept as answers are written, so figures do not grow with the store.

A row of ``answer_rollups`` (:class:`._schema.RollupRecord`) sums :func:`auditor.metrics.answer_counts`
over the answers generated in one hour (or day) under one policy and judge, of one question type,
in one service / source class slice: ``"*"`` (every answer), or the answers whose trace was received
from that service, or that have an evidence item of that source class; and of runs under one
sample and cap (``runs.sampling`` and ``runs.cap`` as the summary's ``sample`` block groups them:
:func:`sample_key`, :func:`cap_key`), so that block is read from the same rows; and in one policy
outcome slice: ``"*"`` (every answer), or the answers the ``outcome`` filter's value selects
(:func:`outcomes_of`); or in one verdict slice, likewise (:func:`verdicts_of`). Every answer write
(:meth:`Store.write_answers`) adds its answers' counts in the same transaction, and takes back the
counts of the answers it replaces, so the rows always sum to what the answers give.

Concurrency: rows are read, added to and written back. On PostgreSQL the rows are created first
(``ON CONFLICT DO NOTHING``) and locked ``FOR UPDATE`` in key order, so two writers of the same hour
queue instead of losing an addition; on SQLite the transaction already holds the database's write
lock (the answers were inserted first). :func:`recompute` recomputes every row from the answers, under
a table lock on PostgreSQL so writers wait for it.

A run's sample and cap are recorded when it begins (``auditor serve``'s workers, the span
processor); one recorded later (:func:`rekey`, called by :func:`auditor.store.live_record`) moves
the counts of the run's stored answers to the rows of its new sample and cap.

The outcome filter's values are not exclusive: ``excluded`` and ``all_admitted`` split the
answers in two, but an answer with a claim that only excluded items would support
(``inadmissible_support``) usually has an excluded item too. So the outcome is a slice like the
service and the source class: an answer counts in the ``"*"`` rows and again in the rows of each
value it matches, computed when it is written as the filter's own condition reads the stored rows.
A filter without an outcome reads the ``"*"`` rows, as many as before the outcome was a dimension
(summing rows of exclusive outcome pairs instead would have read two or three times as many for
every unfiltered summary and trend). Both conditions are facts of the answer's own rows, which a
write replaces whole, so nothing moves an answer between outcome rows later.

The verdict filter's values overlap too (``contradicted`` and ``undecided`` answers are
``ungrounded``), so the verdict is a slice of the same kind, crossed with the outcome's: an answer
counts in the rows of each pair of its outcome values and ``"*"`` with its verdict values and
``"*"`` (:func:`slices_of`), (1 + outcomes) x (1 + verdicts) rows, about six. Taking the two apart
(about four) left a filter naming both, "the ungrounded answers whose evidence the policy cut", to
sum every matching answer: 250 to 310 ms for a 48-hour trend at a million answers (migration 0026).

Reading (:mod:`._rollup_reads`): a filter is answered from rollups only when every condition it holds is
a rollup dimension (policy, source class, question type, service, outcome or verdict) or a time
bound on a bucket's edge; otherwise the caller reads the answers (:func:`expressible`). A trace's services are those of
its received spans when the answer is written: a span that arrives later with another
``service.name`` is in the raw filter and not in the rollups until :func:`rebuild`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import fields
from datetime import datetime, timedelta
from typing import Any, Literal

from sqlalchemy import Table, delete, func, select, text, tuple_, update
from sqlalchemy.dialects import postgresql
from sqlalchemy.orm import Session, defer, subqueryload

from auditor.metrics import Counts, add_counts, answer_counts
from auditor.results import AnswerOut
from auditor.store._convert import answer_out
from auditor.store._filters import AnswerFilter, PolicyOutcome, Verdict
from auditor.store._received import ReceivedSpanRecord
from auditor.store._schema import AnswerRecord, ClaimRecord, RollupRecord, RunRecord
from auditor.store._write import insert_missing, upsert

Bucket = Literal["hour", "day"]
BUCKETS: tuple[Bucket, ...] = ("hour", "day")
#: The service / source class of the rows that hold every answer.
ALL = "*"
#: Keys per ``IN (...)``, rows per statement.
CHUNK = 500
#: Filter fields a rollup can answer; any other set field means reading the answers.
ROLLUP_FIELDS = frozenset(
    {"policy", "source_class", "question_type", "service", "outcome", "verdict", "since", "until"}
)

_SERVICE = re.compile(r'"key":"service\.name","value":\{"stringValue":("(?:[^"\\]|\\.)*")\}')
_KEY_COLUMNS = (
    "bucket",
    "start",
    "policy_name",
    "policy_sha256",
    "judge_kind",
    "judge_model",
    "service",
    "source_class",
    "question_type",
    "sample",
    "cap",
    "outcome",
    "verdict",
)

Key = tuple[str, datetime, str, str, str, str, str, str, str, str, str, str, str]
#: A run's policy name and SHA-256, judge kind and model, sample and cap (:func:`sample_key`, :func:`cap_key`).
RunDimensions = tuple[str, str, str, str, str, str]


def floor(at: datetime, bucket: Bucket) -> datetime:
    """The start of the hour or day (UTC) that holds ``at``."""
    at = at.replace(minute=0, second=0, microsecond=0)
    return at.replace(hour=0) if bucket == "day" else at


def step(bucket: Bucket) -> timedelta:
    return timedelta(hours=1) if bucket == "hour" else timedelta(days=1)


def _digest(key: Key) -> str:
    parts = [key[0], key[1].isoformat(), *key[2:]]
    return hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:40]


def table() -> Table:
    table = RollupRecord.__table__
    if not isinstance(table, Table):  # pragma: no cover - the model maps one table
        raise TypeError("RollupRecord maps no table")
    return table


def services_of(session: Session, trace_ids: Iterable[str]) -> dict[str, set[str]]:
    """Each trace's ``service.name`` values, as the server's ``service`` filter matches them."""
    wanted = sorted(set(trace_ids))
    found: dict[str, set[str]] = {}
    for start in range(0, len(wanted), CHUNK):
        query = select(
            ReceivedSpanRecord.trace_id, ReceivedSpanRecord.record, ReceivedSpanRecord.service
        ).where(ReceivedSpanRecord.trace_id.in_(wanted[start : start + CHUNK]))
        for trace_id, record, name in session.execute(query):
            if name is not None:
                found.setdefault(trace_id, set()).add(name)
            for raw in _SERVICE.findall(record):
                try:
                    name = json.loads(raw)
                except ValueError:  # pragma: no cover - the pattern takes a JSON string
                    continue
                # The filter looks for the name as json.dumps writes it: a name spelt otherwise in
                # the record (escaped differently) does not match it, so it is not counted here.
                if isinstance(name, str) and json.dumps(name, ensure_ascii=False) == raw:
                    found.setdefault(trace_id, set()).add(name)
    return found


def sample_key(sampling: dict[str, Any] | None) -> str:
    """A run's sample as a rollup key: ``""`` for a run that is not a live server's (every trace),
    else its share (1.0 when absent) and filter, as canonical JSON (:func:`sample_of` reads it back)."""
    if sampling is None:
        return ""
    share = sampling.get("share")
    chosen = {"share": float(share if share is not None else 1.0), "filter": sampling.get("filter")}
    return json.dumps(chosen, sort_keys=True, ensure_ascii=False)


def sample_of(key: str) -> dict[str, Any] | None:
    """The sample a :func:`sample_key` names (None: not a live server's run)."""
    return json.loads(key) if key else None


def cap_key(cap: dict[str, Any] | None) -> str:
    """A run's cap as a rollup key: ``""`` when the run was not judged offline by a spending cap, else
    the cap's limit and when it was hit, as canonical JSON (what the ``sample`` block shows of it)."""
    if cap is None:
        return ""
    return json.dumps(
        {"limit": cap.get("limit"), "hit_at": cap.get("hit_at")}, sort_keys=True, ensure_ascii=False
    )


def run_dimensions(session: Session, run_id: str) -> RunDimensions:
    """The policy (name, SHA-256), judge (kind, model), sample and cap of a run, ``""`` where it has none."""
    row = session.execute(
        select(
            RunRecord.policy_name,
            RunRecord.policy_sha256,
            RunRecord.judge_kind,
            RunRecord.judge_model,
            RunRecord.sampling,
            RunRecord.cap,
        ).where(RunRecord.id == run_id)
    ).one()
    return (row[0] or "", row[1] or "", row[2] or "", row[3] or "", sample_key(row[4]), cap_key(row[5]))


def outcomes_of(answer: AnswerOut) -> tuple[PolicyOutcome, ...]:
    """The values of the ``outcome`` filter that select ``answer``, as :func:`._filters.where` reads
    its stored rows: ``excluded`` when an evidence item has ``admitted`` False, else
    ``all_admitted``; and ``inadmissible_support`` when a claim's list of it is not empty (such a
    claim always has a verdict row, where the filter looks)."""
    excluded = any(item.admitted is False for item in answer.evidence)
    found: tuple[PolicyOutcome, ...] = ("excluded",) if excluded else ("all_admitted",)
    if any(claim.inadmissible_support for claim in answer.claims or ()):
        found += ("inadmissible_support",)
    return found


def verdicts_of(answer: AnswerOut) -> tuple[Verdict, ...]:
    """The values of the ``verdict`` filter that select ``answer``, as :func:`._filters.where` reads
    its stored row and claims' verdicts: ``grounded`` or ``ungrounded`` (none when the answer was not
    judged), ``contradicted``, ``refusal``, and ``undecided`` (a claim left unjudged and none decided
    contradicted or absent)."""
    found: list[Verdict] = []
    if answer.grounded is not None:
        found.append("grounded" if answer.grounded else "ungrounded")
    if (answer.contradicted or 0) > 0:
        found.append("contradicted")
    if answer.refusal is True:
        found.append("refusal")
    decided_unsupported = any(c.verdict in ("contradicted", "absent") for c in answer.claims or ())
    if (answer.unjudged or 0) > 0 and not decided_unsupported:
        found.append("undecided")
    return tuple(found)


def slices_of(outcomes: Sequence[str], verdicts: Sequence[str]) -> list[tuple[str, str]]:
    """The ``(outcome, verdict)`` slices an answer with these filter values counts in: each of its
    outcomes and ``"*"`` with each of its verdicts and ``"*"`` (module docstring)."""
    return [(o, v) for o in (ALL, *outcomes) for v in (ALL, *verdicts)]


#: What sets the rollup rows an answer of a run counts in: its hour, its services and source classes
#: (each with ``"*"``), its question type and its ``(outcome, verdict)`` slices.
Profile = tuple[datetime, tuple[str, ...], tuple[str, ...], str, tuple[tuple[str, str], ...]]


def add_profiles(
    profiles: dict[Profile, Counter[str]],
    answers: Iterable[AnswerOut],
    services: dict[str, set[str]],
    counts: Mapping[str, Counts] | None = None,
) -> None:
    """Add the counts of ``answers`` into ``profiles``, summed by :data:`Profile`; ``counts``: the
    :func:`~auditor.metrics.answer_counts` of some of them by answer id, computed already."""
    for answer in answers:
        given = counts.get(answer.answer_id) if counts is not None else None
        answer_total = answer_counts(answer) if given is None else given
        profile = (
            floor(answer.generated_at, "hour"),
            (ALL, *sorted(services.get(answer.trace_id, ()))),
            (ALL, *sorted({e.source_class for e in answer.evidence if e.source_class is not None})),
            answer.question_type or "",
            tuple(slices_of(outcomes_of(answer), verdicts_of(answer))),
        )
        total = profiles.get(profile)
        if total is None:
            profiles[profile] = Counter(answer_total)
        else:
            add_counts(total, answer_total)


def spread(run: RunDimensions, profiles: Mapping[Profile, Counter[str]]) -> dict[Key, Counter[str]]:
    """The rollup rows ``profiles`` (of a run with these dimensions) add to, with what each adds."""
    out: dict[Key, Counter[str]] = {}
    policy, judge, live = run[:2], run[2:4], run[4:]
    for (hour, served, classes, question_type, sliced), total in profiles.items():
        for bucket in BUCKETS:
            start = floor(hour, bucket)
            for service in served:
                for source_class in classes:
                    for outcome, verdict in sliced:
                        key: Key = (
                            bucket,
                            start,
                            *policy,
                            *judge,
                            service,
                            source_class,
                            question_type,
                            *live,
                            outcome,
                            verdict,
                        )
                        row = out.get(key)
                        if row is None:
                            out[key] = Counter(total)
                        else:
                            add_counts(row, total)
    return out


def deltas(
    run: RunDimensions,
    answers: Iterable[AnswerOut],
    services: dict[str, set[str]],
    counts: Mapping[str, Counts] | None = None,
) -> dict[Key, Counter[str]]:
    """The counts ``answers`` (of a run with these dimensions) add to each rollup row, by key;
    ``counts``: the :func:`~auditor.metrics.answer_counts` of some of them by answer id, computed
    already (the answer's own row holds them)."""
    # An answer counts in a row per hour and day x service x source class x (outcome, verdict)
    # slice, each "*" too (2 x 1 x 2 x 4 = 16 for an answer of one class, an unreceived trace, one
    # outcome and one verdict: slices_of). Answers alike in all of these (a batch's answers share
    # an hour and a few such profiles) are summed first and each sum is added to its rows once:
    # the additions grow with the profiles, not with answers times rows.
    profiles: dict[Profile, Counter[str]] = {}
    add_profiles(profiles, answers, services, counts)
    return spread(run, profiles)


def apply(session: Session, changes: dict[Key, Counter[str]], sign: int = 1) -> None:
    """Add ``changes`` (times ``sign``) to the rollup rows, in ``session``'s transaction."""
    changes = {k: c for k, c in changes.items() if c}
    if not changes:
        return
    rollups = table()
    keyed = sorted((_digest(k), k, c) for k, c in changes.items())
    postgres = session.get_bind().dialect.name == "postgresql"
    if postgres:
        # Create missing rows, then lock them all in key order: concurrent writers queue here.
        blank = [_row(k, Counter(), d) for d, k, _ in keyed]
        insert = postgresql.insert(rollups).on_conflict_do_nothing(index_elements=["key"])
        for start in range(0, len(blank), CHUNK):
            session.execute(insert, blank[start : start + CHUNK])
    have: dict[str, dict[str, int]] = {}
    digests = [d for d, _, _ in keyed]
    for start in range(0, len(digests), CHUNK):
        query = select(rollups.c.key, rollups.c.counts).where(
            rollups.c.key.in_(digests[start : start + CHUNK])
        )
        if postgres:
            query = query.order_by(rollups.c.key).with_for_update()
        for digest, counts in session.execute(query):
            have[digest] = counts or {}
    gone: list[str] = []
    rows: list[dict[str, Any]] = []
    for digest, key, change in keyed:
        total: Counter[str] = Counter(have.get(digest, {}))
        add_counts(total, change, sign)
        if not total:
            gone.append(digest)
            continue
        rows.append(_row(key, total, digest))
    for start in range(0, len(gone), CHUNK):
        session.execute(delete(rollups).where(rollups.c.key.in_(gone[start : start + CHUNK])))
    _write(session, rows)


def _write(session: Session, rows: Sequence[dict[str, Any]]) -> None:
    upsert(session, RollupRecord, {row["key"]: {k: v for k, v in row.items() if k != "key"} for row in rows})


def stored(session: Session, run_id: str, answer_ids: Sequence[str] | None = None) -> list[AnswerOut]:
    """The answers of ``run_id`` among ``answer_ids`` that are stored (what a write replaces); every
    stored answer of the run when ``answer_ids`` is None."""
    if answer_ids is None:
        answer_ids = list(
            session.scalars(select(AnswerRecord.answer_id).where(AnswerRecord.run_id == run_id))
        )
    out: list[AnswerOut] = []
    for start in range(0, len(answer_ids), CHUNK):
        query = (
            select(AnswerRecord)
            .options(
                subqueryload(AnswerRecord.evidence),
                subqueryload(AnswerRecord.claims).subqueryload(ClaimRecord.verdict),
            )
            .where(
                AnswerRecord.run_id == run_id, AnswerRecord.answer_id.in_(answer_ids[start : start + CHUNK])
            )
        )
        out.extend(answer_out(row) for row in session.scalars(query))
    return out


def record(
    session: Session,
    run_id: str,
    added: Sequence[AnswerOut],
    removed: Sequence[AnswerOut] = (),
    counts: Mapping[str, Counts] | None = None,
) -> None:
    """Add the counts of ``added`` and take back those of ``removed`` (answers of ``run_id``), in
    ``session``'s transaction; ``counts``: those of ``added`` by answer id, where computed already."""
    if not added and not removed:
        return
    run = run_dimensions(session, run_id)
    found = services_of(session, (a.trace_id for a in (*added, *removed)))
    change = deltas(run, added, found, counts)
    for key, taken in deltas(run, removed, found).items():
        add_counts(change.setdefault(key, Counter()), taken, -1)
    apply(session, change)


def rekey(session: Session, run_id: str, before: RunDimensions) -> None:
    """Move the counts of ``run_id``'s stored answers from the rows of ``before`` (its dimensions
    when they were written) to those of its dimensions now, in ``session``'s transaction: a sample
    or cap recorded on the run after some of its answers were written."""
    after = run_dimensions(session, run_id)
    if after == before:
        return
    answers = stored(session, run_id)
    if not answers:
        return
    found = services_of(session, (a.trace_id for a in answers))
    change = deltas(after, answers, found)
    for key, counts in deltas(before, answers, found).items():
        add_counts(change.setdefault(key, Counter()), counts, -1)
    apply(session, change)


def recompute(session: Session, batch: int = 500, on_day: Callable[[int, int], None] | None = None) -> int:
    """:func:`rebuild` in ``session``'s transaction (also what migration 0026 fills the table with);
    ``on_day(done, days)`` is called after each day of answers is written."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("LOCK TABLE answer_rollups IN SHARE ROW EXCLUSIVE MODE"))
    session.execute(delete(table()))
    first, last = session.execute(
        select(func.min(AnswerRecord.generated_at), func.max(AnswerRecord.generated_at))
    ).one()
    if first is None:
        return 0
    runs: dict[str, RunDimensions] = {}
    written = 0
    day = floor(first, "day")
    days = (floor(last, "day") - day).days + 1
    for done in range(1, days + 1):
        # A day's rows (its hours' and its own) hold only that day's answers: each day is summed
        # and inserted whole, so memory holds a day's rows, not the store's (5.9 GB at 200,000
        # answers when every row was summed first), and no row is read back to be added to.
        by_run: dict[RunDimensions, dict[Profile, Counter[str]]] = {}
        for run_id, answers in _answers_of_day(session, day, batch):
            if run_id not in runs:
                runs[run_id] = run_dimensions(session, run_id)
            found = services_of(session, (a.trace_id for a in answers))
            add_profiles(by_run.setdefault(runs[run_id], {}), answers, found)
        rows = [
            _row(key, total, _digest(key))
            for run, profiles in by_run.items()
            for key, total in spread(run, profiles).items()
        ]
        insert_missing(session, RollupRecord, rows)  # the table holds no row of this day: inserts
        written += len(rows)
        day += step("day")
        if on_day is not None:
            on_day(done, days)
    return written


def _answers_of_day(session: Session, day: datetime, batch: int) -> Iterator[tuple[str, list[AnswerOut]]]:
    """The answers generated on ``day`` (UTC), ``batch`` at a time, each batch of one run."""
    keys = session.execute(
        select(AnswerRecord.run_id, AnswerRecord.answer_id)
        .where(AnswerRecord.generated_at >= day, AnswerRecord.generated_at < day + step("day"))
        .order_by(AnswerRecord.run_id, AnswerRecord.answer_id)
    ).all()
    by_run: dict[str, list[str]] = {}
    for run_id, answer_id in keys:
        by_run.setdefault(run_id, []).append(answer_id)
    for run_id, answer_ids in by_run.items():
        for start in range(0, len(answer_ids), batch):
            query = (
                select(AnswerRecord)
                .options(
                    # Not read: what a rollup counts is computed here from the answer itself.
                    defer(AnswerRecord.counts),
                    subqueryload(AnswerRecord.evidence),
                    subqueryload(AnswerRecord.claims).subqueryload(ClaimRecord.verdict),
                )
                .where(
                    AnswerRecord.run_id == run_id,
                    AnswerRecord.answer_id.in_(answer_ids[start : start + batch]),
                )
            )
            answers = [answer_out(row) for row in session.scalars(query)]
            session.expunge_all()
            yield run_id, answers


def _row(key: Key, total: Counter[str], digest: str) -> dict[str, Any]:
    """The ``answer_rollups`` row of ``key`` (whose :func:`_digest` is ``digest``) holding ``total``."""
    return {
        **dict(zip(_KEY_COLUMNS, key, strict=True)),
        "key": digest,
        "answer_count": total.get("answers", 0),
        "counts": dict(sorted(total.items())),
    }


def fill_counts(session: Session, batch: int = 500) -> int:
    """Write :func:`auditor.metrics.answer_counts` into ``answers.counts`` where it is None (what
    migration 0015 fills the column with), ``batch`` answers at a time; the number filled."""
    filled = 0
    after = ("", "")
    while True:
        query = (
            select(AnswerRecord)
            .options(
                subqueryload(AnswerRecord.evidence),
                subqueryload(AnswerRecord.claims).subqueryload(ClaimRecord.verdict),
            )
            .where(
                AnswerRecord.counts.is_(None),
                tuple_(AnswerRecord.run_id, AnswerRecord.answer_id) > after,
            )
            .order_by(AnswerRecord.run_id, AnswerRecord.answer_id)
            .limit(batch)
        )
        rows = list(session.scalars(query))
        if not rows:
            return filled
        values = [
            {"run_id": row.run_id, "answer_id": row.answer_id, "counts": answer_counts(answer_out(row))}
            for row in rows
        ]
        after = (rows[-1].run_id, rows[-1].answer_id)
        session.expunge_all()
        session.execute(update(AnswerRecord), values)  # by primary key, one statement per batch
        filled += len(values)


def expressible(wanted: AnswerFilter) -> bool:
    """Whether rollups can answer ``wanted``: it sets only rollup dimensions and time bounds."""
    for field in fields(wanted):
        value = getattr(wanted, field.name)
        if value is None or value == "":
            continue
        if field.name not in ROLLUP_FIELDS or value == ALL:
            return False
    return True


def grain(wanted: AnswerFilter, bucket: Bucket | None = None) -> Bucket | None:
    """The coarsest rollup bucket whose edges hold ``wanted``'s time bounds (and that is no coarser
    than ``bucket``); None when a bound falls inside an hour or ``wanted`` is not :func:`expressible`."""
    if not expressible(wanted):
        return None
    bounds = [t for t in (wanted.since, wanted.until) if t is not None]
    for candidate in ("day", "hour") if bucket != "hour" else ("hour",):
        if all(floor(t, candidate) == t for t in bounds):
            return candidate
    return None
