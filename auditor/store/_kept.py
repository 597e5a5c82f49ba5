"""Trace content kept in the store, so a stored run can be re-audited without its files.

Each trace row (one per ``trace_id`` and content digest) gets one ``trace_contents`` row: the
normalised :class:`~auditor.trace.Trace` as its pydantic JSON, compressed with zlib. The JSON is
what :func:`~auditor.store.trace_digest` hashes, so a kept trace read back has the digest it was
stored under and rebuilds the same answers. Content is written once: a trace already kept (by any
run) is neither compressed again nor rewritten, and a concurrent writer of the same trace is
harmless (``INSERT .. ON CONFLICT DO NOTHING``).

A run also records the order it read its traces in (``run_traces.position``): evidence
reconstruction lists conversations in input order, so a re-audit must read them in that order.
Runs stored before migration 0009 have no content; :func:`check_kept` says so in one line.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator, Sequence

from pydantic import ValidationError
from sqlalchemy import Select, func, select, update
from sqlalchemy.orm import Session

from auditor.errors import StoreError
from auditor.store._runs import FinishHook
from auditor.store._schema import RunRecord, RunTraceRecord, TraceContentRecord, TraceRecord
from auditor.store._write import CHUNK, insert_missing
from auditor.trace import Trace

#: How ``trace_contents.body`` is encoded: zlib over the UTF-8 JSON of the trace model.
ENCODING = "zlib+json"

#: zlib's level: 6 (its default) compresses trace JSON within a few per cent of 9, at half the time.
LEVEL = 6

#: Traces decoded per fetch when a run's traces are read back.
BATCH = 200


def encode(trace: Trace) -> tuple[int, bytes]:
    """The size of the trace's JSON in bytes, and the JSON compressed."""
    raw = trace.model_dump_json().encode("utf-8", "surrogatepass")
    return len(raw), zlib.compress(raw, LEVEL)


def decode(encoding: str, body: bytes, key: str = "?") -> Trace:
    """The trace kept as ``body`` (under trace key ``key``, named in errors).

    Raises:
        StoreError: an encoding this auditor does not know (written by a newer one), or a body
            that is not a kept trace (damaged).
    """
    if encoding != ENCODING:
        raise StoreError(
            f"Kept trace {key} is encoded {encoding!r}, which this auditor cannot read: upgrade trace-auditor."
        )
    try:
        return Trace.model_validate_json(zlib.decompress(body).decode("utf-8", "surrogatepass"))
    except (zlib.error, UnicodeDecodeError, ValidationError) as err:
        reason = str(err).splitlines()[0]
        raise StoreError(
            f"Kept trace {key} is damaged ({reason}): re-run `auditor audit` on the run's input files."
        ) from None


def keep(session: Session, traces: Sequence[tuple[str, Trace]]) -> None:
    """Keep the content of each (trace key, trace) not kept yet, in ``session``'s transaction."""
    wanted = {key: trace for key, trace in traces}
    keys = list(wanted)
    have: set[str] = set()
    for start in range(0, len(keys), CHUNK):
        chunk = keys[start : start + CHUNK]
        have.update(
            session.scalars(
                select(TraceContentRecord.trace_key).where(TraceContentRecord.trace_key.in_(chunk))
            )
        )
    rows = []
    for key, trace in wanted.items():
        if key in have:
            continue
        size, body = encode(trace)
        rows.append({"trace_key": key, "encoding": ENCODING, "size": size, "body": body})
    insert_missing(session, TraceContentRecord, rows)


def check_kept(session: Session, run_id: str) -> None:
    """Raise unless every trace the run read has its content kept.

    Raises:
        StoreError: the run read no recorded trace, or some lack content (stored before the
            store kept it): one line naming the run and saying to audit its files again.
    """
    linked, kept = session.execute(
        select(func.count(RunTraceRecord.trace_key), func.count(TraceContentRecord.trace_key))
        .select_from(RunTraceRecord)
        .outerjoin(TraceContentRecord, TraceContentRecord.trace_key == RunTraceRecord.trace_key)
        .where(RunTraceRecord.run_id == run_id)
    ).one()
    if linked and linked == kept:
        return
    inputs = session.scalar(select(RunRecord.inputs).where(RunRecord.id == run_id)) or []
    files = " ".join(str(i.get("path")) for i in inputs[:3]) + (" ..." if len(inputs) > 3 else "")
    missing = "no traces kept" if not kept else f"{linked - kept} of its {linked} traces not kept"
    raise StoreError(
        f"Run {run_id} has {missing} (stored before the store kept trace content, or without its traces): "
        f"re-run `auditor audit` on its input files{': ' + files if files else ''}."
    )


#: Where a trace comes in a run's read order: position (NULL last), then trace key.
Order = tuple[bool, int, str]


def _kept_traces(run_id: str, trace_ids: Sequence[str] | None) -> Select[int | None, str, str, bytes]:
    statement = (
        select(
            RunTraceRecord.position,
            RunTraceRecord.trace_key,
            TraceContentRecord.encoding,
            TraceContentRecord.body,
        )
        .join(TraceContentRecord, TraceContentRecord.trace_key == RunTraceRecord.trace_key)
        .where(RunTraceRecord.run_id == run_id)
        .order_by(RunTraceRecord.position.is_(None), RunTraceRecord.position, RunTraceRecord.trace_key)
    )
    if trace_ids is not None:
        statement = statement.join(TraceRecord, TraceRecord.key == RunTraceRecord.trace_key).where(
            TraceRecord.trace_id.in_(trace_ids)
        )
    return statement


def iter_kept(
    session: Session, run_id: str, trace_ids: Iterable[str] | None = None
) -> Iterator[tuple[Order, Trace]]:
    """The run's kept traces with their place in its read order, fetched and decoded
    :data:`BATCH` at a time, in that order.

    With ``trace_ids``, only those traces (ids the run did not read are skipped), queried
    :data:`~auditor.store._write.CHUNK` ids at a time: in read order within each group.
    """
    groups: list[list[str] | None] = [None]
    if trace_ids is not None:
        ids = sorted(set(trace_ids))
        groups = [ids[start : start + CHUNK] for start in range(0, len(ids), CHUNK)]
    for group in groups:
        rows = session.execute(_kept_traces(run_id, group).execution_options(yield_per=BATCH))
        for position, key, encoding, body in rows:
            yield (position is None, position or 0, key), decode(encoding, body, key)


def reaudit_link(source_run_id: str) -> FinishHook:
    """A finish hook recording that the run re-audited ``source_run_id`` (``runs.reaudit_of``)."""

    def link(session: Session, run_id: str) -> None:
        session.execute(update(RunRecord).where(RunRecord.id == run_id).values(reaudit_of=source_run_id))

    return link
