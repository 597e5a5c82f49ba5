"""The run lease: a running run belongs to the process that renews it, and to no one once it stops.

A run's row names its ``owner`` (``host:pid:token``), when the owner last renewed its claim
(``heartbeat_at``) and how long a claim lasts unrenewed (``lease_seconds``). An audit renews it
from a :class:`RunLease` thread every third of the lease, and on every answer it saves. A process
killed by SIGKILL, or a machine that lost power, stops renewing; once the lease has run out the run
is abandoned, and the next audit on the same inputs, policy and judge claims it (one conditional
UPDATE) and resumes it. Liveness therefore never depends on a process exiting cleanly. On the
owner's own host there is no need to wait: an owner whose process id no longer names a live
process (:func:`owner_gone`) has abandoned its run at once. (A process id reused by a new process
looks alive: the lease still decides then.) A listing shows an abandoned run as ``interrupted``.

Times are the writers' clocks, in UTC: machines sharing a database should keep them in step to
well within a lease.
"""

from __future__ import annotations

import os
import secrets
import socket
import threading
from datetime import datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import Protocol

from auditor.errors import StoreError


class _Renews(Protocol):
    """What a :class:`RunLease` needs of the store."""

    @property
    def in_memory(self) -> bool: ...

    def heartbeat(self, run_id: str, owner: str) -> bool: ...


def new_owner() -> str:
    """A token naming this process and this audit: ``host:pid:random``."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


def owner_gone(owner: str | None) -> bool:
    """Whether ``owner`` (``host:pid:token``) names a process of this host that has exited.

    Only a process of this host can be checked, and only on POSIX (``kill(pid, 0)``); any doubt
    (another host, no such owner, a process id this user cannot signal) is "not gone".
    """
    host, _, rest = (owner or "").partition(":")
    pid_text = rest.partition(":")[0]
    if os.name != "posix" or not pid_text.isdigit() or host != socket.gethostname():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # PermissionError: alive, another user's
        return False
    try:  # a process killed but not yet reaped by its parent still answers kill(pid, 0)
        state = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace").rsplit(")", 1)[1]
    except (OSError, IndexError):
        return False
    return state.split()[:1] in (["Z"], ["X"])


def abandoned(
    status: str, heartbeat_at: datetime | None, lease_seconds: float, now: datetime, owner: str | None = None
) -> bool:
    """A ``running`` run whose owner has not renewed it for ``lease_seconds``, or whose owner's
    process on this host has exited (:func:`owner_gone`).

    A run with no heartbeat at all (written before leases existed) counts as abandoned.
    """
    if status != "running":
        return False
    return heartbeat_at is None or heartbeat_at < cutoff(lease_seconds, now) or owner_gone(owner)


def cutoff(lease_seconds: float, now: datetime) -> datetime:
    """A heartbeat older than this has run out."""
    return now - timedelta(seconds=lease_seconds)


class RunLease:
    """Renews ``owner``'s lease on a run from a daemon thread, every third of the lease, until closed.

    A renewal that finds the run taken over stops the thread; the audit learns it at its next save
    (:class:`~auditor.errors.LeaseLostError`). A failed renewal (the database briefly locked or
    unreachable) is tried again at the next beat: the lease holds three beats.

    Args:
        store: the open store.
        run_id: the run this process writes.
        owner: the token it holds the run under (:func:`new_owner`).
        lease_seconds: the lease it was given (:func:`auditor.settings.run_lease`).
    """

    def __init__(self, store: _Renews, run_id: str, owner: str, lease_seconds: float) -> None:
        self.store, self.run_id, self.owner = store, run_id, owner
        self.interval = lease_seconds / 3
        self.lost = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"run-lease-{run_id[:8]}", daemon=True)

    def _beat(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                if not self.store.heartbeat(self.run_id, self.owner):
                    self.lost = True
                    return
            except StoreError:
                continue

    def start(self) -> RunLease:
        """Start renewing (use it as a context manager, or call :meth:`stop`)."""
        # An in-memory database is private to this process (nothing can take the run over), and its
        # single connection must not be shared with a second thread.
        if not self.store.in_memory:
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop renewing; the lease then runs out unless the run is closed."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def __enter__(self) -> RunLease:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
