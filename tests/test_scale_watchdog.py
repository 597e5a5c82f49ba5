"""The Ray watchdog ends a marked process that is nobody's descendant any more.

When a driver is killed, the raylet dies with it and a worker it started within the watchdog's
last tick is reparented to init before anyone listed it (seen in CI: one python worker outlived a
SIGKILL). Here a real watchdog is given one root, and two orphans are made by a parent that exits
at once, one started inside :func:`marking` and one outside: the marked one must be ended with
the root, the other left alone.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from auditor.scale._watchdog import GRACE, MARK, marking, new_mark, start_watchdog

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

SLEEP = [sys.executable, "-c", "import time; time.sleep(60)"]
#: Starts a sleeper (its output not the pipes this test reads) and exits, printing its pid.
ORPHAN = f"import subprocess; print(subprocess.Popen({SLEEP!r}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).pid)"


def running(pid: int) -> bool:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return text[text.rfind(")") + 2] not in "ZX"


def orphan() -> int:
    """A sleeping process whose parent has exited: it is no listed process's descendant."""
    made = subprocess.run([sys.executable, "-c", ORPHAN], capture_output=True, text=True, check=True)
    return int(made.stdout)


def test_a_marked_orphan_is_ended_and_an_unmarked_one_left_alone() -> None:
    mark = new_mark()
    root = subprocess.Popen(SLEEP)
    unmarked = orphan()
    with marking(mark):
        marked = orphan()
    assert os.environ.get(MARK) is None  # the mark does not outlive the block
    try:
        watchdog = start_watchdog([root.pid], mark)
        assert watchdog is not None and watchdog.stdin is not None
        time.sleep(0.5)  # its first listing
        watchdog.stdin.close()  # what the driver's end does
        watchdog.wait(4 * GRACE + 10)
        root.wait(5)
        assert not running(marked)
        assert running(unmarked)
    finally:
        for pid in (marked, unmarked):
            if running(pid):
                os.kill(pid, signal.SIGKILL)
        if root.poll() is None:
            root.kill()
