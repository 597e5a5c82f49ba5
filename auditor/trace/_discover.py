"""Inputs as people name them: files, directories and glob patterns, expanded to a list of files.

The expansion is deterministic, so a run's inputs (and the digests its resume matches on) do not
depend on the order a file system lists a directory in:

- a path that exists is taken as it is (a name holding ``*`` or ``[`` that exists is a file, not a
  pattern); a directory is walked recursively and gives, sorted by path, its regular files
  whose suffix is a data format's (:data:`DATA_SUFFIXES`, optionally followed by ``.gz``), leaving
  out hidden files and directories (``.git``, ``.cache``);
- otherwise a path holding ``*``, ``?`` or ``[`` is a glob (``**`` spans directories), and its
  matches are sorted, with a matched directory walked as above;
- a file named twice (by two patterns, or a pattern and a path) is read once, at its first place.

A pattern that matches nothing, or a directory that holds no data file, is one line naming it:
a typo must not become an audit of fewer files than meant.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable
from pathlib import Path

from auditor.errors import UsageError

#: File suffixes a directory is searched for (each also with ``.gz`` after it).
DATA_SUFFIXES = frozenset(
    {".jsonl", ".ndjson", ".json", ".csv", ".tsv", ".parquet", ".pb", ".binpb", ".otlp"}
)
_MAGIC = frozenset("*?[")


def is_pattern(path: str | Path) -> bool:
    """Whether ``path`` holds a glob character (``*``, ``?``, ``[``)."""
    return any(char in _MAGIC for char in str(path))


def _is_data(name: str) -> bool:
    stem = name.lower().removesuffix(".gz")
    return os.path.splitext(stem)[1] in DATA_SUFFIXES


def _walk(directory: Path) -> list[Path]:
    """The data files under ``directory``, sorted by their path components (hidden entries left out)."""
    found: list[Path] = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        found.extend(
            Path(root, name)
            for name in files
            if not name.startswith(".") and _is_data(name) and Path(root, name).is_file()
        )
    return sorted(found, key=lambda p: p.relative_to(directory).parts)


def _expand_one(raw: str | Path) -> list[Path]:
    path = Path(raw)
    if path.is_dir():
        found = _walk(path)
        if not found:
            suffixes = ", ".join(sorted(DATA_SUFFIXES))
            raise UsageError(
                f"{path}: the directory holds no data file ({suffixes}, optionally .gz); "
                "name the files, or a glob such as 'dir/**/*.txt'."
            )
        return found
    if path.exists() or not is_pattern(raw):
        return [path]  # a missing plain path is reported by the ingest ("no such file")
    matches = sorted(glob.glob(str(raw), recursive=True))
    if not matches:
        raise UsageError(
            f"{raw}: no file matches this pattern; check it (quote it so that the shell does not "
            "expand it, and use ** to search subdirectories)."
        )
    files: list[Path] = []
    for match in matches:
        files.extend(_walk(Path(match)) if os.path.isdir(match) else [Path(match)])
    return files


def expand_inputs(paths: Iterable[str | Path]) -> list[Path]:
    """The files that ``paths`` (files, directories, glob patterns) name, in order, each once.

    Raises:
        UsageError: a pattern matches nothing, or a directory holds no data file.
    """
    seen: set[str] = set()
    out: list[Path] = []
    for raw in paths:
        for path in _expand_one(raw):
            key = os.path.realpath(path)
            if key not in seen:
                seen.add(key)
                out.append(path)
    return out
