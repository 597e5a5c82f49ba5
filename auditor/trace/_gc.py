"""Fewer garbage collections while traces are read or audited.

Reading a trace file and auditing its answers both allocate many short-lived containers (decoded
JSON, spans, verdict models, rows); at CPython's default young-generation threshold (700) the
collector runs often, and now and then walks the whole heap. :func:`fewer_collections` raises
that threshold (and the oldest generation's, :data:`OLD_THRESHOLD`) for as long as any reader or
run of the process is on, and restores the previous thresholds when the last one ends. Only the
frequency changes: every cycle is still collected.
One counter for the whole process, so nested and concurrent users (``auditor serve`` runs several
audits, a run reads its traces) never restore a threshold another still relies on.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

#: The young generation's threshold while traces are read or audited (CPython's default is 700).
#: In the LLM benchmark, at the default the collector runs several times per answer, about 0.6 ms
#: of CPU per answer on the event loop; at this threshold about 0.2 ms. Reading a 10 MB file, it
#: spares the collections (a full one among them) that cost about 4% of the adapter's time.
GC_THRESHOLD = 10_000
#: The oldest generation's threshold meanwhile (CPython's default is 10): a full collection walks
#: the whole heap, and in a process that holds a large one (``auditor serve``, a notebook, the
#: benchmark after its accuracy tables: 1.2 M objects) one took 0.7 s inside a C = 32 run, the
#: event loop stopped. Ten times rarer while a run is on; the default again after it.
OLD_THRESHOLD = 100

_lock = threading.Lock()
_users = 0
_saved_thresholds: tuple[int, int, int] = gc.get_threshold()


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Raise the young generation's threshold for as long as any user in this process is on."""
    global _users, _saved_thresholds
    with _lock:
        if _users == 0:
            _saved_thresholds = gc.get_threshold()
            young, middle, old = _saved_thresholds
            gc.set_threshold(max(young, GC_THRESHOLD), middle, max(old, OLD_THRESHOLD))
        _users += 1
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if _users == 0:
                gc.set_threshold(*_saved_thresholds)
