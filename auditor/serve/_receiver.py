"""What the OTLP receivers share, whatever the transport: the token, the limits, the store.

Both the OTLP/HTTP route and the OTLP/gRPC service call :meth:`Receiver.authorise`,
:meth:`Receiver.admit` and :meth:`Receiver.store` in that order, so a request means the same on
either: checked against the bearer token, the client's request rate, the backlog of stored bodies
and the audit queue; checked by the OTel adapter (the body parses, its span ids are valid: a body
that is not a request gets its 400 here, and the rejected spans are counted for the answer's
partial success); the body committed to the store in one short transaction, and only then
acknowledged. Splitting the body into spans, assembling traces and auditing them run behind the
answer (:mod:`auditor.serve._ingest`, :mod:`auditor.serve._workers`).

A refusal is a :class:`~auditor.serve._otlp.Refusal` that each transport turns into its own
status (HTTP 401/429/503 with ``Retry-After``; gRPC UNAUTHENTICATED, RESOURCE_EXHAUSTED or
UNAVAILABLE with ``RetryInfo``), as the OTLP retry contract asks. Back-pressure: once
``AUDITOR_SERVE_BACKLOG`` bodies wait to be split, requests get 429 / RESOURCE_EXHAUSTED with a
retry hint, so a client faster than the ingest waits instead of growing the backlog without bound.
Both counts are read at most every :data:`COUNTS_FOR` seconds, each body this server stores
meanwhile added at once, so the bounds cost a request nothing most of the time.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Protocol

from auditor.errors import AuditorError
from auditor.serve._auth import BEARER_HINT, bearer_matches
from auditor.serve._config import ServeConfig
from auditor.serve._otlp import INVALID_ARGUMENT, RESOURCE_EXHAUSTED, UNAUTHENTICATED, UNAVAILABLE, Refusal
from auditor.store import BodyQueue, Intake
from auditor.trace import BodyCheck, SpanReceiver

#: Seconds a client is asked to wait before retrying when the audit queue is full or the store is down.
RETRY_AFTER = 5
#: Seconds a client is asked to wait when the backlog of stored bodies is over its bound.
BACKLOG_RETRY_AFTER = 1
#: Seconds the backlog's counts are trusted before they are read again. Counting on every request
#: cost each acknowledgement a query or two, 20 ms on PostgreSQL at 400,000 received traces (its
#: planner cannot estimate ``generation > audited_generation`` and starts a parallel scan).
COUNTS_FOR = 0.25
#: Client addresses whose request rate is remembered; the least recently seen is forgotten first,
#: so a flood of spoofed or many distinct addresses costs bounded memory.
MAX_CLIENTS = 10_000


@dataclass(frozen=True)
class Throttled(Refusal):
    """A refusal the client may retry after ``retry_after`` seconds (429/503, or RetryInfo on gRPC)."""

    retry_after: float = RETRY_AFTER

    @property
    def retry_after_header(self) -> str:
        """``Retry-After`` in whole seconds (at least 1: 0 would invite an immediate retry)."""
        return str(max(1, math.ceil(self.retry_after)))


class Announcer(Protocol):
    """What the receiver sets after storing a body (a thread's or a process's event)."""

    def set(self) -> None: ...


class RateLimiter:
    """A token bucket per client: ``rate`` requests a second, bursts of up to ``rate`` (one second's worth)."""

    def __init__(self, rate: float, clients: int = MAX_CLIENTS) -> None:
        self.rate, self.capacity = rate, max(1.0, rate)
        self._clients = clients
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def wait(self, client: str, at: float | None = None) -> float:
        """Take one request from ``client``'s bucket: 0.0, or the seconds until it may send again."""
        at = time.monotonic() if at is None else at
        with self._lock:
            tokens, last = self._buckets.pop(client, (self.capacity, at))
            tokens = min(self.capacity, tokens + (at - last) * self.rate)
            if tokens >= 1.0:
                tokens -= 1.0
                wait = 0.0
            else:
                wait = (1.0 - tokens) / self.rate
            self._buckets[client] = (tokens, at)
            while len(self._buckets) > self._clients:
                self._buckets.popitem(last=False)
            return wait


class Receiver:
    """Checks a request and stores its spans; shared by the HTTP and gRPC transports."""

    def __init__(
        self, config: ServeConfig, intake: Intake, bodies: BodyQueue, stored: Announcer | None = None
    ) -> None:
        self.config, self.intake, self.bodies = config, intake, bodies
        self.limiter = RateLimiter(config.rate)
        #: Set when a body is stored, so the server's ingest worker starts on it at once.
        self.stored: Announcer = stored if stored is not None else threading.Event()
        self._counts: tuple[float, int, int] | None = None  # when read; bodies waiting, traces waiting
        self._counts_lock = threading.Lock()

    def _backlog(self) -> tuple[int, int]:
        """Bodies waiting to be read and traces waiting for an audit, read at most every
        :data:`COUNTS_FOR` seconds; a body this receiver stores meanwhile counts at once (so the
        bounds hold for this server; another replica's bodies count from the next read)."""
        at = time.monotonic()
        with self._counts_lock:
            if self._counts is not None and at - self._counts[0] < COUNTS_FOR:
                return self._counts[1], self._counts[2]
        bodies, _ = self.bodies.backlog()
        waiting = self.intake.pending()
        with self._counts_lock:
            self._counts = (at, bodies, waiting)
        return bodies, waiting

    def _count_stored(self) -> None:
        with self._counts_lock:
            if self._counts is not None:
                at, bodies, waiting = self._counts
                self._counts = (at, bodies + 1, waiting)

    def authorise(self, header: str | None) -> None:
        """Raise a 401 refusal unless ``header`` is ``Bearer <token>`` (or no token is configured)."""
        if not bearer_matches(self.config.token, header):
            raise Refusal(401, UNAUTHENTICATED, BEARER_HINT)

    def admit(self, client: str) -> None:
        """Refuse a client over its request rate (429) or any request while the queue is full (503)."""
        wait = self.limiter.wait(client)
        if wait > 0:
            raise Throttled(
                429,
                RESOURCE_EXHAUSTED,
                f"more than {self.config.rate:g} requests a second from {client}: slow down "
                "(AUDITOR_SERVE_RATE on the server)",
                wait,
            )
        try:
            bodies, waiting = self._backlog()
        except AuditorError as err:
            raise Throttled(503, UNAVAILABLE, str(err), RETRY_AFTER) from err
        if bodies >= self.config.backlog:
            raise Throttled(
                429,
                RESOURCE_EXHAUSTED,
                f"{bodies} request bodies are waiting to be read (AUDITOR_SERVE_BACKLOG): retry later",
                BACKLOG_RETRY_AFTER,
            )
        # A body not yet read holds at least one trace that will wait for an audit: counted as one,
        # so the queue's bound holds from the acknowledgement on, not only once the body is read.
        waiting += bodies
        if waiting >= self.config.queue:
            raise Throttled(
                503,
                UNAVAILABLE,
                f"{self.config.queue} traces are waiting for an audit: retry later",
                RETRY_AFTER,
            )

    def store(self, adapter: str, reader: SpanReceiver, body: bytes) -> BodyCheck:
        """Check ``body`` and commit it for ``adapter`` to split later; the check, once it is stored."""
        check = reader.check(body)
        if check.unreadable is not None:
            raise Refusal(400, INVALID_ARGUMENT, check.unreadable)
        if not check.spans:
            return check  # nothing to keep: every span (if any) is rejected in the answer
        try:
            self.bodies.put(adapter, body, check.spans)
        except AuditorError as err:  # the store is unavailable: nothing was acknowledged, retry
            raise Throttled(503, UNAVAILABLE, str(err), RETRY_AFTER) from err
        self._count_stored()
        self.stored.set()
        return check
