"""Ends the local Ray a driver started once the driver ends, however it ends (SIGKILL too).

Ray ties the head processes ``ray.init`` starts (GCS, raylet, ...) to the driver, but the
raylet's agents (``ray::DashboardAgent``, ``ray::RuntimeEnvAgent``, about 180 MB) outlive a
driver that is killed (Ray 2.60: they keep running under init). So right after ``ray.init`` the
driver starts this watchdog, a small process in a session of its own (a Ctrl-C to the terminal
does not reach it) that:

- holds the read end of a pipe whose write end only the driver has: end of file means the driver
  is gone, whether it exited, was stopped by a signal or was killed;
- keeps the list of the Ray processes (what ``ray.init`` started, and all their descendants),
  refreshed every :data:`TICK` seconds, each with its start time (a reused pid is left alone);
- when the pipe closes, adds every process whose environment holds the mark the driver set for
  ``ray.init`` (:data:`MARK`, a token of this run): Ray hands its environment down to the workers
  the raylet starts, and a worker started within the last tick is an orphan by then (the raylet
  dies with the driver), out of reach of any list of descendants;
- gives Ray :data:`GRACE` seconds to stop by itself, then sends SIGTERM, and SIGKILL
  :data:`GRACE` seconds later, to whatever on the list still runs, and exits.

Linux only (it reads ``/proc``): elsewhere :func:`start_watchdog` starts nothing.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

#: Seconds between two refreshes of the list of Ray processes.
TICK = 1.0
#: Seconds Ray is given to stop by itself, and then to stop after SIGTERM.
GRACE = 2.0
#: The environment variable that marks the processes of a Ray the driver started.
MARK = "AUDITOR_RAY_OWNER"

_PROC = Path("/proc")


def supported() -> bool:
    return sys.platform.startswith("linux") and _PROC.is_dir()


def _stat(pid: int) -> tuple[int, int] | None:
    """``(parent pid, start time)`` of a running process, or None (gone, or a zombie)."""
    try:
        text = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()  # the name, in parentheses, may hold spaces
    if fields[0] in ("Z", "X"):
        return None
    return int(fields[1]), int(fields[19])


def _parents() -> dict[int, int]:
    """Every running process's parent, by pid."""
    found = {}
    for entry in _PROC.iterdir():
        if entry.name.isdigit() and (stat := _stat(int(entry.name))) is not None:
            found[int(entry.name)] = stat[0]
    return found


def children(pid: int) -> set[int]:
    """The running children of ``pid``."""
    return {child for child, parent in _parents().items() if parent == pid}


def _descendants(roots: Iterable[int], parents: dict[int, int]) -> set[int]:
    below: dict[int, list[int]] = {}
    for child, parent in parents.items():
        below.setdefault(parent, []).append(child)
    found, todo = set(), list(roots)
    while todo:
        for child in below.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def new_mark() -> str:
    """A token for :data:`MARK`, unique to one ``ray.init``."""
    return secrets.token_hex(16)


@contextlib.contextmanager
def marking(mark: str | None) -> Iterator[None]:
    """Set :data:`MARK` to ``mark`` in this process's environment for the block (nothing when
    None): the processes started in it, and those they start, inherit it; those started later do not."""
    if mark is None:
        yield
        return
    before = os.environ.get(MARK)
    os.environ[MARK] = mark
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(MARK, None)
        else:
            os.environ[MARK] = before


def start_watchdog(started: Iterable[int], mark: str) -> subprocess.Popen[bytes] | None:
    """Start the watchdog over ``started`` (the driver's children ``ray.init`` made, with
    :data:`MARK` set to ``mark`` in their environment); None when there is nothing to watch or the
    platform has no ``/proc``. Close its ``stdin`` (or exit) to let it clean up."""
    pids = sorted(started)
    if not pids or not supported():
        return None
    return subprocess.Popen(
        [sys.executable, "-m", "auditor.scale._watchdog", mark, *map(str, pids)],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # neither a Ctrl-C to the terminal nor a kill of the group stops it
        close_fds=True,
    )


def _alive(known: dict[int, int]) -> dict[int, int]:
    return {pid: start for pid, start in known.items() if (stat := _stat(pid)) and stat[1] == start}


def _signal(known: dict[int, int], sig: int) -> None:
    for pid in _alive(known):
        with contextlib.suppress(OSError):  # gone meanwhile
            os.kill(pid, sig)


def _wait_gone(known: dict[int, int], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while _alive(known) and time.monotonic() < deadline:
        time.sleep(0.1)


def _listed(roots: Sequence[int], known: dict[int, int]) -> None:
    """Add to ``known`` the roots and every descendant of them or of a process known already."""
    parents = _parents()
    for pid in {*roots, *_descendants(roots, parents), *_descendants(known, parents)}:
        if pid not in known and (stat := _stat(pid)) is not None:
            known[pid] = stat[1]


def _marked(mark: str, known: dict[int, int]) -> None:
    """Add to ``known`` every process (but this one) whose environment sets :data:`MARK` to ``mark``."""
    wanted = f"{MARK}={mark}".encode()
    for entry in _PROC.iterdir():
        if not entry.name.isdigit() or (pid := int(entry.name)) == os.getpid() or pid in known:
            continue
        try:
            environment = (entry / "environ").read_bytes().split(b"\0")
        except OSError:  # gone, or another user's
            continue
        if wanted in environment and (stat := _stat(pid)) is not None:
            known[pid] = stat[1]


def watch(mark: str, roots: Sequence[int]) -> None:
    """The watchdog's body: list the Ray processes until stdin closes, then end them."""
    known: dict[int, int] = {}
    while True:
        _listed(roots, known)
        readable, _, _ = select.select([sys.stdin.buffer], [], [], TICK)
        if readable and not os.read(sys.stdin.fileno(), 4096):
            break  # end of file: the driver is gone
    # Once more at once, and by the mark: a worker Ray started within the last tick is not listed
    # yet, and its parent, the raylet, dies with the driver (seen: one python worker outlived a kill).
    _listed(roots, known)
    _marked(mark, known)
    _wait_gone(known, GRACE)
    _signal(known, signal.SIGTERM)
    _wait_gone(known, GRACE)
    _signal(known, signal.SIGKILL)


if __name__ == "__main__":
    watch(sys.argv[1], [int(arg) for arg in sys.argv[2:]])
