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

A URL (``s3://bucket/exports/*.otlp.jsonl.gz``, ``gs://...``, ``memory://...``, chained
``simplecache::s3://...``) is read through the user's installed `fsspec
<https://filesystem-spec.readthedocs.io>`_ and the filesystem's own package (``s3fs``, ``gcsfs``):
the same rules, with the filesystem's ``glob``, ``isdir`` and ``find``. fsspec is not a dependency
of the core; it is imported only when a URL is named, and its absence is one line. A URL stays a
``str`` from here on (a :class:`~pathlib.Path` would fold its ``//``); a local file is a ``Path``.
"""

from __future__ import annotations

import glob
import importlib
import os
import re
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO, overload

from auditor.errors import InputReadError, UsageError

#: An input: a local file, or (a ``str``) a URL read through fsspec.
Source = Path | str

#: File suffixes a directory is searched for (each also with ``.gz`` after it).
DATA_SUFFIXES = frozenset(
    {".jsonl", ".ndjson", ".json", ".csv", ".tsv", ".parquet", ".pb", ".binpb", ".otlp", ".multipart"}
)
_MAGIC = frozenset("*?[")
# A protocol, optionally chained (``simplecache::s3://``); two letters at least, so that a
# Windows drive (``C:``) is never taken for one.
_URL = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*::)*[A-Za-z][A-Za-z0-9+.-]+://")


def is_url(path: Source) -> bool:
    """Whether ``path`` is a URL (``protocol://...``), read through fsspec, not a local path."""
    return isinstance(path, str) and _URL.match(path) is not None


def url_filesystem(url: str) -> tuple[Any, str]:
    """The fsspec filesystem that serves ``url`` and the path within it.

    Raises:
        UsageError: fsspec is not installed, or the URL's filesystem is unknown or its package
            is missing (one line naming the URL and what to install).
    """
    try:
        core = importlib.import_module("fsspec.core")
    except ImportError:
        raise UsageError(
            f"{url}: reading URLs needs fsspec and the filesystem's package (e.g. s3fs); "
            "install them (pip install fsspec s3fs) or copy the files to a local disk."
        ) from None
    try:
        fs, path = core.url_to_fs(url)
    except (ImportError, ValueError) as err:  # "Install s3fs to access S3", "Protocol not known"
        raise UsageError(f"{url}: this URL cannot be read: {err}.") from None
    return fs, str(path)


def open_url(url: str) -> BinaryIO:
    """``url`` opened for reading its bytes as stored (decompression is the reader's)."""
    fs, path = url_filesystem(url)
    handle: BinaryIO = fs.open(path, "rb")
    return handle


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


def _hidden(path: str, below: str) -> bool:
    """Whether a component of ``path`` below the directory ``below`` is hidden."""
    rest = path[len(below) :] if path.startswith(below) else path
    return any(part.startswith(".") for part in PurePosixPath(rest).parts)


def _walk_url(fs: Any, directory: str) -> list[str]:
    """The data files under the URL filesystem's ``directory``, sorted (hidden entries left out)."""
    found = [
        f
        for f in fs.find(directory)
        if _is_data(PurePosixPath(f).name) and not _hidden(f, directory.rstrip("/") + "/")
    ]
    return sorted((fs.unstrip_protocol(f) for f in found), key=lambda f: PurePosixPath(f).parts)


def _expand_url(raw: str) -> list[Source]:
    fs, path = url_filesystem(raw)
    try:
        return _expand_on(fs, path, raw)
    except OSError as err:  # the filesystem's own failures: permissions, network
        raise InputReadError(raw, err) from err


def _expand_on(fs: Any, path: str, raw: str) -> list[Source]:
    if not is_pattern(path):
        return list(_walk_url(fs, path) if fs.isdir(path) else [raw]) or _no_data(raw)
    # glob.glob leaves hidden names out unless the pattern names them; the filesystems' glob
    # does not, so the hidden matches below the pattern's literal part are left out here.
    literal = path[: min(path.find(c) for c in _MAGIC if c in path)]
    shown = "/." in path or PurePosixPath(path).name.startswith(".")
    matches = sorted(m for m in fs.glob(path) if shown or not _hidden(m, literal.rsplit("/", 1)[0] + "/"))
    if not matches:
        raise UsageError(f"{raw}: no file matches this pattern; check it (use ** to search subdirectories).")
    files: list[Source] = []
    for match in matches:
        files.extend(_walk_url(fs, match) if fs.isdir(match) else [fs.unstrip_protocol(match)])
    return files


def _no_data(raw: Source) -> list[Source]:
    suffixes = ", ".join(sorted(DATA_SUFFIXES))
    raise UsageError(
        f"{raw}: the directory holds no data file ({suffixes}, optionally .gz); "
        "name the files, or a glob such as 'dir/**/*.txt'."
    )


def _expand_one(raw: Source) -> list[Source]:
    if is_url(raw):
        return _expand_url(str(raw))
    path = Path(raw)
    if path.is_dir():
        return [*_walk(path)] or _no_data(path)
    if path.exists() or not is_pattern(raw):
        return [path]  # a missing plain path is reported by the ingest ("no such file")
    matches = sorted(glob.glob(str(raw), recursive=True))
    if not matches:
        raise UsageError(
            f"{raw}: no file matches this pattern; check it (quote it so that the shell does not "
            "expand it, and use ** to search subdirectories)."
        )
    files: list[Source] = []
    for match in matches:
        files.extend(_walk(Path(match)) if os.path.isdir(match) else [Path(match)])
    return files


@overload
def expand_inputs(paths: Iterable[Path]) -> list[Path]: ...
@overload
def expand_inputs(paths: Iterable[Source]) -> list[Source]: ...
def expand_inputs(paths: Iterable[Source]) -> list[Path] | list[Source]:
    """The files that ``paths`` (files, directories, glob patterns, URLs) name, in order, each once.

    A local file comes back as a :class:`~pathlib.Path`, a URL's file as a URL (``str``).

    Raises:
        UsageError: a pattern matches nothing, a directory holds no data file, or a URL cannot be
            read (no fsspec, or not the filesystem's package).
    """
    seen: set[str] = set()
    out: list[Source] = []
    for raw in paths:
        for path in _expand_one(raw):
            key = path if isinstance(path, str) else os.path.realpath(path)
            if key not in seen:
                seen.add(key)
                out.append(path)
    return out
