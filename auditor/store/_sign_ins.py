"""Web sign-ins of ``auditor serve``: one row per browser session, so signing out ends it everywhere.

The cookie holds a random session id; the store keeps only its SHA-256 (a copy of the table signs
no one in), when it expires, when it was revoked, and an HMAC of the bearer token it was opened
under (changing the token ends every session). Kept in the store rather than in the process so
replicas on one PostgreSQL store agree: a sign-out on one is a sign-out on all. Migration 0010.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Mapped, Session, mapped_column, sessionmaker

from auditor.store._runs import now
from auditor.store._schema import Base, SafeText, UTCDateTime
from auditor.store._store import Store
from auditor.store._translate import store_errors

#: How long a sign-in lasts (then the browser signs in again).
SIGN_IN_LIFETIME = timedelta(hours=12)


class SignInRecord(Base):
    """One browser sign-in: the hash of its cookie's id, the token it was opened under, its lifetime."""

    __tablename__ = "web_sessions"

    id_sha256: Mapped[str] = mapped_column(SafeText, primary_key=True)
    token_mac: Mapped[str] = mapped_column(SafeText)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


def _digest(session_id: str) -> str:
    return hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()


class SignIns:
    """Open, check and revoke sign-ins in ``store``'s database (the store stays open by its owner)."""

    def __init__(self, store: Store) -> None:
        self.url = store.url
        self._sessions = sessionmaker(store.engine, expire_on_commit=False)

    @contextmanager
    def _session(self) -> Iterator[Session]:
        with store_errors(self.url), self._sessions() as session, session.begin():
            yield session

    def open(self, token_mac: str) -> str:
        """A new session id for a cookie (expired sign-ins are dropped on the way)."""
        session_id = secrets.token_urlsafe(32)
        at = now()
        with self._session() as session:
            session.execute(delete(SignInRecord).where(SignInRecord.expires_at < at))
            session.add(
                SignInRecord(
                    id_sha256=_digest(session_id),
                    token_mac=token_mac,
                    created_at=at,
                    expires_at=at + SIGN_IN_LIFETIME,
                    revoked_at=None,
                )
            )
        return session_id

    def valid(self, session_id: str, token_mac: str) -> bool:
        """Whether ``session_id`` is a live sign-in under the token ``token_mac`` was made from."""
        if not session_id:
            return False
        with self._session() as session:
            row = session.scalar(select(SignInRecord).where(SignInRecord.id_sha256 == _digest(session_id)))
        return (
            row is not None
            and row.revoked_at is None
            and row.expires_at > now()
            and secrets.compare_digest(row.token_mac, token_mac)
        )

    def revoke(self, session_id: str) -> None:
        """End ``session_id`` (nothing when it is unknown)."""
        if not session_id:
            return
        with self._session() as session:
            session.execute(
                update(SignInRecord)
                .where(SignInRecord.id_sha256 == _digest(session_id), SignInRecord.revoked_at.is_(None))
                .values(revoked_at=now())
            )
