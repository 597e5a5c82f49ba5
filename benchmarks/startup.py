"""Start-up cost of the ``auditor`` command: what ``--help``, ``--version`` and ``adapters`` import.

Each command runs in a fresh interpreter (``python -c`` calling the console script's ``main``), timed
against ``python -c pass`` in the same run, so the figure is a ratio that travels between machines.
``python -X importtime`` gives the modules imported and the heavy libraries among them. With
``checkout``, the same is measured on another source tree (``PYTHONPATH`` put in front), so an older
layout and the current one are compared in one run on one machine.
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

#: The command lines measured, as ``auditor`` arguments.
COMMANDS: dict[str, list[str]] = {
    "--help": ["--help"],
    "--version": ["--version"],
    "adapters": ["adapters"],
}
#: Libraries a start-up command should not need; their presence in the import list is reported.
HEAVY = ("sqlalchemy", "alembic", "openai", "scipy", "numpy", "jinja2", "rich.table", "httpx")

#: ``-P``: no script directory or working directory in front of ``sys.path``, so ``PYTHONPATH`` decides
#: which checkout is imported wherever the benchmark is started from.
_PYTHON = [sys.executable, "-P"]
_CALL_MAIN = "import sys; sys.argv[0] = 'auditor'; from auditor.cli import main; main()"
_IMPORT_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)$")


def _env(checkout: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    if checkout is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(checkout), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def _wall(args: list[str], env: dict[str, str], repeats: int) -> float:
    """Median wall time of a fresh interpreter running ``args``."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(args, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def imported_modules(argv: list[str], checkout: Path | None = None) -> dict[str, Any]:
    """The modules ``auditor ARGV`` imports (``-X importtime``), their total self time, the heavy ones."""
    done = subprocess.run(
        [*_PYTHON, "-X", "importtime", "-c", _CALL_MAIN, *argv],
        env=_env(checkout),
        capture_output=True,
        text=True,
        check=True,
    )
    modules: list[str] = []
    self_us = 0
    for line in done.stderr.splitlines():
        match = _IMPORT_LINE.match(line)
        if match:
            self_us += int(match.group(1))
            modules.append(match.group(4))
    heavy = sorted({h for h in HEAVY for m in modules if m == h or m.startswith(h + ".")})
    return {"modules": len(modules), "import_seconds": self_us / 1e6, "heavy": heavy}


def measure(checkout: Path | None = None, repeats: int = 7) -> dict[str, Any]:
    """Wall time of each start-up command as a ratio to ``python -c pass``, and what it imports."""
    env = _env(checkout)
    baseline = _wall([*_PYTHON, "-c", "pass"], env, repeats)
    commands = {}
    for name, argv in COMMANDS.items():
        seconds = _wall([*_PYTHON, "-c", _CALL_MAIN, *argv], env, repeats)
        commands[name] = {
            "seconds": seconds,
            "ratio_to_python": seconds / baseline,
            **imported_modules(argv, checkout),
        }
    return {
        "checkout": str(checkout) if checkout else None,
        "python_seconds": baseline,
        "repeats": repeats,
        "commands": commands,
    }


def compare(before: Path, repeats: int = 7) -> dict[str, Any]:
    """Measure ``before`` (another checkout) and the installed code in one run; speed-up per command."""
    old = measure(before, repeats)
    new = measure(None, repeats)
    speedup = {
        name: old["commands"][name]["ratio_to_python"] / new["commands"][name]["ratio_to_python"]
        for name in COMMANDS
    }
    return {"before": old, "after": new, "speedup": speedup}
