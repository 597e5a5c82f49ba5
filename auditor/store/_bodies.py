"""Acknowledged request bodies waiting to be split into spans: the receiver's durable queue.

Guarantees:

- :meth:`BodyQueue.put` commits one body in one short transaction (one INSERT) before it returns;
  ``auditor serve`` acknowledges the request only then, so an acknowledged body survives a
  ``kill -9`` of the server at any later point.
- :meth:`BodyQueue.claim` hands the oldest waiting body to one owner under a lease (a conditional
  UPDATE, as :meth:`Intake.claim` does for traces); a holder that dies loses it once the lease
  runs out, or at once when it was a process of this host that has exited (a restart after
  ``kill -9`` reads the killed process's bodies without waiting out its lease).
- :meth:`BodyQueue.ingest` stores the body's spans (:func:`~auditor.store._intake.store_spans`)
  and deletes the body, only while its owner still holds it: a worker killed at any point leaves
  the body or its spans, never neither. Storing spans is idempotent (a re-sent span adds
  nothing), so a body ingested twice (after a lapsed lease, or a kill between the two commits
  below) adds nothing the second time.

Where the bodies wait: in the store's ``received_bodies`` table, one transaction storing the spans
and deleting the body; for a SQLite file, in a database file of its own beside the store
(:mod:`._bodies_file`: the receiver's commits then never wait for the store's writers), the spans
committed first and the body deleted after.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, func, insert, or_, select, update
from sqlalchemy.orm import Session, sessionmaker

from auditor.store._intake import TAKEOVER_AFTER, store_spans
from auditor.store._lease import owner_gone
from auditor.store._received import ReceivedBodyRecord
from auditor.store._runs import now
from auditor.store._store import Store
from auditor.store._translate import store_errors
from auditor.trace import ReceivedSpan

#: zlib level of compressed bodies: the fastest, as a body is read back within moments.
PACK_LEVEL = 1
#: Bodies waiting past which a new one is stored compressed (:meth:`BodyQueue.put`): about 75 MB
#: of typical 1.2 MB export requests. At 8, a reader a quarter of a second behind made every
#: acknowledgement compress and every read decompress, which put it further behind.
PACK_FROM = 64
#: A stored body's first byte says how it is kept. Bodies of the release before carry no mark:
#: they are all zlib streams, whose first byte is 0x78, which neither mark is.
PACKED, AS_RECEIVED = b"z", b"r"


def _unpacked(kept: bytes) -> bytes:
    """A body as :meth:`BodyQueue.put` received it."""
    mark = kept[:1]
    if mark == AS_RECEIVED:
        return kept[1:]
    return zlib.decompress(kept[1:] if mark == PACKED else kept)


@dataclass(frozen=True)
class Body:
    """A stored request body held by one ingest worker."""

    id: int
    adapter: str
    body: bytes
    spans: int


class BodyQueue:
    """The ``received_bodies`` table of ``store``'s database (the store stays open by its owner)."""

    def __init__(self, store: Store) -> None:
        self.url = store.url
        self._sessions = sessionmaker(store.bodies_engine, expire_on_commit=False)
        self._apart = store.bodies_engine is not store.engine
        self._store_sessions = sessionmaker(store.engine, expire_on_commit=False)
        self._waiting = 0  # bodies waiting at the last look (:meth:`backlog`)

    @contextmanager
    def _session(self) -> Iterator[Session]:
        with store_errors(self.url), self._sessions() as session, session.begin():
            yield session

    def put(self, adapter: str, body: bytes, spans: int) -> int:
        """Commit ``body`` (read by ``adapter``, holding ``spans`` readable spans); its id.

        The body is stored as received while few wait: it is read back within moments, and
        compressing it was the largest part of an acknowledgement (9 ms of 1.2 MB at zlib's
        fastest level on a loaded machine). Once :data:`PACK_FROM` bodies wait (as last seen by
        :meth:`backlog`, which the receiver asks before each request) it is stored
        zlib-compressed, a tenth of the disk for typical OTLP, so a long backlog stays small.
        """
        kept = PACKED + zlib.compress(body, PACK_LEVEL) if self._waiting >= PACK_FROM else AS_RECEIVED + body
        values = {"adapter": adapter, "body": kept, "spans": spans, "received_at": now()}
        with self._session() as session:
            inserted = session.connection().execute(insert(ReceivedBodyRecord).values(values))
            key = inserted.inserted_primary_key
            if key is None:  # pragma: no cover - an INSERT of one row always has its key
                raise RuntimeError("the stored body has no id")
            return int(key[0])

    def backlog(self) -> tuple[int, int]:
        """Bodies waiting to be split into spans, and the spans they hold."""
        with self._session() as session:
            count, spans = session.execute(
                select(func.count(), func.coalesce(func.sum(ReceivedBodyRecord.spans), 0))
            ).one()
            self._waiting = int(count or 0)
            return self._waiting, int(spans or 0)

    def older_than(self, cutoff: datetime) -> int:
        """Bodies received before ``cutoff`` and still waiting (retention never deletes them)."""
        with self._session() as session:
            return int(
                session.scalar(select(func.count()).where(ReceivedBodyRecord.received_at < cutoff)) or 0
            )

    def claim(self, owner: str, lease: float) -> Body | None:
        """Hold the oldest waiting body for ``owner`` for ``lease`` seconds, or None if none waits."""
        held = self.claim_many(owner, lease, 1)
        return held[0] if held else None

    def claim_many(self, owner: str, lease: float, most: int) -> list[Body]:
        """Hold up to ``most`` of the oldest waiting bodies for ``owner`` for ``lease`` seconds, in
        one short write (a reader that claims one body at a time competes with the receiver's
        commits once per body), oldest first; none if none waits."""
        at = now()
        with self._session() as session:
            # A holder that has exited (a process of this host, killed): its bodies are free at once.
            holders = session.scalars(
                select(ReceivedBodyRecord.owner).where(ReceivedBodyRecord.owner.is_not(None)).distinct()
            ).all()
        gone = [holder for holder in holders if owner_gone(holder)]
        claimable = or_(
            ReceivedBodyRecord.owner.is_(None),
            ReceivedBodyRecord.heartbeat_at < at - timedelta(seconds=lease * TAKEOVER_AFTER),
            ReceivedBodyRecord.owner.in_(gone),
        )
        with self._session() as session:
            candidates = session.scalars(
                select(ReceivedBodyRecord.id).where(claimable).order_by(ReceivedBodyRecord.id).limit(most)
            ).all()
        if not candidates:
            return []
        with self._session() as session:
            # Another worker may take some of them first: the rest are held, in one statement.
            session.connection().execute(
                update(ReceivedBodyRecord)
                .where(ReceivedBodyRecord.id.in_(candidates), claimable)
                .values(owner=owner, heartbeat_at=at)
            )
            rows = session.scalars(
                select(ReceivedBodyRecord)
                .where(ReceivedBodyRecord.id.in_(candidates), ReceivedBodyRecord.owner == owner)
                .order_by(ReceivedBodyRecord.id)
            ).all()
            return [Body(row.id, row.adapter, _unpacked(row.body), row.spans) for row in rows]

    def ingest(self, body: Body, owner: str, spans: Sequence[ReceivedSpan]) -> int | None:
        """Store ``spans`` and delete ``body``; the new spans, or None if ``owner`` no longer held
        the body (another worker took it over: nothing is written)."""
        return self.ingest_many([(body, spans)], owner)[0]

    def ingest_many(
        self, read: Sequence[tuple[Body, Sequence[ReceivedSpan]]], owner: str
    ) -> list[int | None]:
        """:meth:`ingest` of several bodies, their spans in one commit and the bodies deleted in
        one: for each body, its new spans, or None if ``owner`` no longer held it."""
        if not self._apart:
            with self._session() as session:
                return [
                    (store_spans(session, spans, now()) if spans else 0)
                    if self._delete(session, body, owner)
                    else None
                    for body, spans in read
                ]
        held = self._held(owner, [body.id for body, _ in read])
        new: dict[int, int] = {}
        with store_errors(self.url), self._store_sessions() as session, session.begin():
            for body, spans in read:
                if body.id in held:
                    new[body.id] = store_spans(session, spans, now()) if spans else 0
        with self._session() as session:
            # One lost meanwhile: its new holder reads it again and stores nothing more.
            deleted = {body.id for body, _ in read if body.id in new and self._delete(session, body, owner)}
        return [new[body.id] if body.id in deleted else None for body, _ in read]

    def _held(self, owner: str, ids: Sequence[int]) -> set[int]:
        """Which of the bodies ``ids`` ``owner`` still holds."""
        with self._session() as session:
            return set(
                session.scalars(
                    select(ReceivedBodyRecord.id).where(
                        ReceivedBodyRecord.id.in_(ids), ReceivedBodyRecord.owner == owner
                    )
                )
            )

    @staticmethod
    def _delete(session: Session, body: Body, owner: str) -> bool:
        gone = session.connection().execute(
            delete(ReceivedBodyRecord).where(
                ReceivedBodyRecord.id == body.id, ReceivedBodyRecord.owner == owner
            )
        )
        return gone.rowcount == 1
