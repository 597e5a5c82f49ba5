"""``--engine ray`` leaves no Ray process behind when its driver dies (issue 29, item 14).

A real ``auditor audit --engine ray`` in a child process starts its own local Ray; once a shard
task runs, the test lists every process under the driver (Ray's head, the raylet, its agents and
workers), stops the driver (SIGTERM, or SIGKILL, which no handler sees) and checks that
every listed process is gone (the same pid and start time, read from ``/proc``). Each test starts
a Ray of its own (seconds on two cores): keep them few.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.support.fake_openai import FakeOpenAI

EXAMPLES = ROOT / "examples" / "traces"
#: Seconds after the driver's end by which its Ray processes must be gone.
GONE_WITHIN = 15

pytestmark = [
    pytest.mark.ray,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc"),
]


def stat(pid: int) -> tuple[int, int, str] | None:
    """``(parent, start time, title)`` of a live process, None once it is gone (or a zombie)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
        title = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()
    return None if fields[0] in ("Z", "X") else (int(fields[1]), int(fields[19]), title)


def tree(root: int) -> dict[int, tuple[int, str]]:
    """Every live descendant of ``root``: its start time and title, by pid."""
    live = {int(p.name): s for p in Path("/proc").iterdir() if p.name.isdigit() and (s := stat(int(p.name)))}
    found: dict[int, tuple[int, str]] = {}
    todo = [root]
    while todo:
        parent = todo.pop()
        for pid, (ppid, start, title) in live.items():
            if ppid == parent and pid not in found:
                found[pid] = (start, title)
                todo.append(pid)
    return found


def still_running(listed: dict[int, tuple[int, str]]) -> dict[int, str]:
    return {
        pid: title for pid, (start, title) in listed.items() if (s := stat(pid)) is not None and s[1] == start
    }


# SIGINT takes the CLI's path of SIGTERM (a KeyboardInterrupt, then ray.shutdown); SIGKILL runs no
# code in the driver at all: only the watchdog is left to clean up.
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name)
def test_a_killed_driver_leaves_no_ray_process(sig: signal.Signals, tmp_path: Path) -> None:
    pytest.importorskip("ray")
    db = f"sqlite:///{tmp_path / 'ray.db'}"
    with FakeOpenAI(latency=0.5) as server:
        args = ["audit", str(EXAMPLES), "--policy", "strict", "--judge", "openai:fake-judge", "--base-url"]
        args += [
            server.base_url,
            "--no-cascade",
            "--no-cache",
            "--db",
            db,
            "--engine",
            "ray",
            "--workers",
            "1",
        ]
        env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
        env.pop("RAY_ADDRESS", None)  # its own local Ray, as a user's first run starts one
        command = "from auditor.cli import main; main()"
        with (tmp_path / "driver.err").open("wb") as err:
            driver = subprocess.Popen([sys.executable, "-c", command, *args], stderr=err, env=env)
        listed: dict[int, tuple[int, str]] = {}
        try:
            deadline = time.monotonic() + 120
            while not any(t.startswith("ray::audit_shard") for _, t in listed.values()):
                assert driver.poll() is None, (tmp_path / "driver.err").read_text()[-2000:]
                assert time.monotonic() < deadline, "no shard task started"
                time.sleep(0.2)
                listed = tree(driver.pid)
            # Wait for the raylet's agents (seconds on a loaded machine), then list everything again.
            deadline = time.monotonic() + 60
            while not any(t.startswith("ray::DashboardAgent") for _, t in listed.values()):
                assert time.monotonic() < deadline, listed
                time.sleep(0.2)
                listed = tree(driver.pid)
            time.sleep(0.5)
            listed = tree(driver.pid)
            driver.send_signal(sig)
            driver.wait(60)
            deadline = time.monotonic() + GONE_WITHIN
            while still_running(listed) and time.monotonic() < deadline:
                time.sleep(0.2)
            assert still_running(listed) == {}  # unwatched, the agents outlive a SIGKILL by a minute
        finally:
            for pid in still_running(listed):  # never leave them to the rest of the suite
                os.kill(pid, signal.SIGKILL)
            if driver.poll() is None:
                driver.kill()
                driver.wait()
