"""Read timeouts on the HTTP connection: a slow client cannot hold a connection (and its memory).

uvicorn closes a connection idle *between* requests (keep-alive), but waits forever for the request
line and headers of a request, and for its body: a client that opens connections and sends a byte a
minute (slowloris) holds every one of them. This is uvicorn's own h11 protocol with two deadlines:

- **headers**: from the connection's start (or the end of the previous response) until the last
  header line, ``AUDITOR_SERVE_HEADER_TIMEOUT`` seconds (default 10);
- **body**: from the last header line until the whole body has arrived,
  ``AUDITOR_SERVE_BODY_TIMEOUT`` seconds (default 60; an OTLP exporter gives up on a request after
  10 by default).

A request that misses either gets ``408 Request Timeout`` (unless its answer has begun) and the
connection is closed; a connection that never sent a byte is closed without an answer. The body
deadline covers the whole body, not the gap between two chunks, since a trickle of small chunks is
the attack. The h11 protocol is chosen explicitly (not ``httptools``, when installed), so these
deadlines always apply.

A request h11 cannot read (a request line or headers over its 16 KiB, a malformed line) gets
uvicorn's ``400``, but uvicorn then closes the socket with the client's bytes still unread, and the
kernel answers them with a reset that can destroy the 400 before the client reads it. Here the
write side is closed after the 400 and what still arrives is read and dropped for up to
:data:`LINGER` seconds (a "lingering close", as nginx and Apache do), so the client gets its answer.
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

_WAITING = (h11.IDLE, h11.SEND_BODY)  # the client's h11 states in which we wait on its bytes
#: Seconds a connection refused with a 400 keeps reading (and dropping) the client's bytes.
LINGER = 2.0


def timed_protocol(header_timeout: float, body_timeout: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol class with these read deadlines, for ``uvicorn.run(http=...)``."""

    class TimedH11Protocol(H11Protocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._deadline: asyncio.TimerHandle | None = None
            self._waiting_for: object = None  # the h11 state the deadline is for
            self._any_bytes = False
            self._lingering = False

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)  # type: ignore[arg-type]
            self._watch()

        def connection_lost(self, exc: Exception | None) -> None:
            self._cancel()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self._lingering:
                return  # the 400 is sent: what the client still sends is read only to be dropped
            self._any_bytes = True
            super().data_received(data)
            self._watch()

        def send_400_response(self, msg: str) -> None:
            """uvicorn's 400, then a lingering close instead of an immediate one (module docstring)."""
            self._cancel()
            headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"connection", b"close")]
            for event in (
                h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
                h11.Data(data=msg.encode("ascii")),
                h11.EndOfMessage(),
            ):
                self.transport.write(self.conn.send(event) or b"")
            self._lingering = True
            if self.transport.can_write_eof():
                self.transport.write_eof()
            self.loop.call_later(LINGER, self.transport.close)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._cancel()  # uvicorn's keep-alive timer covers the idle time before the next request
            self._any_bytes = False

        def _cancel(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
            self._deadline, self._waiting_for = None, None

        def _watch(self) -> None:
            """Arm the deadline for the part of the request being read; none once it is all in."""
            state = self.conn.their_state
            if state is self._waiting_for:
                return
            self._cancel()
            if state not in _WAITING or (state is h11.IDLE and self.timeout_keep_alive_task is not None):
                return
            seconds = header_timeout if state is h11.IDLE else body_timeout
            self._waiting_for = state
            self._deadline = self.loop.call_later(seconds, self._expired, state, seconds)

        def _expired(self, state: object, seconds: float) -> None:
            self._deadline, self._waiting_for = None, None
            if self.transport.is_closing() or self.conn.their_state is not state:
                return
            part = "headers" if state is h11.IDLE else "body"
            answered = self.cycle is not None and self.cycle.response_started and state is h11.SEND_BODY
            if self._any_bytes and not answered:
                detail = f"the request {part} did not arrive within {seconds:g} seconds\n".encode()
                self.transport.write(
                    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
                    b"connection: close\r\ncontent-length: "
                    + str(len(detail)).encode()
                    + b"\r\n\r\n"
                    + detail
                )
            if self.cycle is not None and state is h11.SEND_BODY:
                self.cycle.disconnected = True  # the application sees the client gone, writes nothing
                self.cycle.message_event.set()
            self.transport.close()

    return TimedH11Protocol
