"""Read one JSON text fast, when the fast reader is sure to give what ``json.loads`` gives.

Adapters read a JSON value per line (an OTLP request, a LangChain run), and ``json.loads`` was the
largest single cost of reading a file. ``msgspec`` (BSD-3-Clause) decodes the same bytes two to
three times faster and, for every text it accepts, to the same Python values: integers of any size,
floats correctly rounded, a repeated key's last value in its first place. It refuses some texts
``json.loads`` reads (``NaN``, ``Infinity``, lone surrogate escapes such as ``"\\ud800"``, numbers
beyond the float range, invalid UTF-8, a byte-order mark), and both give up on deep nesting at the
recursion limit, ``json.loads`` a few levels sooner since it runs a few calls deeper. So
:func:`loads_fast` raises whenever the fast reader refuses a text, and makes it give up
:data:`_MARGIN` levels sooner than ``json.loads`` would; the caller then takes its usual
``json.loads`` path, and what is read, repaired or recorded as a problem is word for word the same.

The other way, :func:`dumps_fast` writes such a value back as ``json.dumps`` would (the LangChain
adapter renders a chain's inputs and outputs as text, about as much text as the file holds). Its
writer spells every value alike but some floats (``1e16`` for ``1e+16``, ``0.00001`` for
``1e-05``), so the reader notes, as it reads each float, whether the writer would spell it
otherwise: :func:`loads_fast_writable` says whether the value may be written by :func:`dumps_fast`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

_INFINITE = (float("inf"), float("-inf"))

#: Levels of nesting added around the text before the fast read: it then gives up that many
#: levels sooner than at the same place ``json.loads`` would, which counts nesting against the same
#: recursion limit but from a few calls deeper (``loads``, ``decode``, ``raw_decode``).
_MARGIN = 16
_OPEN, _CLOSE = b"[" * _MARGIN, b"]" * _MARGIN


class _Reader:
    """The fast reader of one thread, and what its float hook found in the text being read."""

    def __init__(self) -> None:
        # Imported on first use: ``auditor --help`` and ``auditor adapters`` never read JSON.
        import msgspec

        # The text inside _MARGIN levels of one-item arrays, the levels checked by the reader itself
        # (a fixed-length tuple each), so that unwrapping them is only indexing.
        shape: Any = Any
        for _ in range(_MARGIN):
            shape = tuple[shape]
        self.plain: Callable[[bytes], Any] = msgspec.json.Decoder(shape).decode
        # With a hook per float (a call each: dear for a line of many floats, so only where asked).
        self.decode: Callable[[bytes], Any] = msgspec.json.Decoder(shape, float_hook=self._float).decode
        self.spell: Callable[[Any], bytes] = msgspec.json.Encoder().encode
        self.format: Callable[..., bytes] = msgspec.json.format
        self.odd = False
        # _MARGIN levels of lists around one slot, for dumps_fast (built once per thread).
        self.slot: list[Any] = [None]
        self.wrapped: list[Any] = self.slot
        for _ in range(_MARGIN - 1):
            self.wrapped = [self.wrapped]
        # dumps_fast's last two texts, each with the fast writer's bytes it was formatted from.
        self.recent: list[tuple[bytes, str]] = [(b"", ""), (b"", "")]

    def _float(self, text: str) -> float:
        # What the reader does itself (correctly rounded, as ``float`` is; beyond the float range
        # refused), and a note of a float the fast writer spells unlike ``json.dumps``.
        value = float(text)
        if value in _INFINITE:
            raise ValueError("number beyond the float range")
        if not self.odd and self.spell(value) != repr(value).encode():
            self.odd = True
        return value


_THREAD = threading.local()


def _reader() -> _Reader:
    """This thread's reader. A plain object found through one thread-local attribute: a
    ``threading.local`` reader paid a thread lookup for each of its attributes, a dozen per run."""
    try:
        reader: _Reader = _THREAD.reader
    except AttributeError:
        reader = _THREAD.reader = _Reader()
    return reader


def loads_fast(data: bytes) -> Any:
    """The JSON value in ``data``, exactly as ``json.loads(data.decode("utf-8"))`` would give it.

    Raises:
        ValueError: the fast reader refused the text (or it nests too deeply to be sure that
            ``json.loads`` would read it); read it with ``json.loads``, which gives the value or
            the error to report.
    """
    return _unwrap(_read(_reader().plain, data))


def _read(decode: Callable[[bytes], Any], data: bytes) -> Any:
    try:
        return decode(b"".join((_OPEN, data, _CLOSE)))
    except Exception as exc:  # any refusal (bad JSON, NaN, deep nesting): json.loads decides
        raise ValueError(f"not read by the fast reader: {exc}") from None


def _unwrap(value: Any) -> Any:
    """The value inside the :data:`_MARGIN` (16) added levels.

    Each added level held one item (the reader checked it), so ``data`` was one JSON value
    ("1, 2" or "1], [2" is not: the reader refuses it). Sixteen indexings written out: a loop
    over them cost about 1% of reading a run tree (``tests/test_langchain_runtree_speed_json.py`` pins the
    count to :data:`_MARGIN`).
    """
    return value[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]


def loads_fast_writable(data: bytes) -> tuple[Any, bool]:
    """:func:`loads_fast`'s value, and whether :func:`dumps_fast` writes it (and each part of it)
    as ``json.dumps`` would: false when it holds a float the fast writer spells otherwise.

    Raises:
        ValueError: as :func:`loads_fast`.
    """
    reader = _reader()
    reader.odd = False
    return _unwrap(_read(reader.decode, data)), not reader.odd


def dumps_fast(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False)``, for a value :func:`loads_fast_writable` read and
    said may be written so (or a part of one).

    Such a value holds only JSON's types, no ``NaN`` or infinity (which the fast writer, ``msgspec``,
    would write as ``null``) and no float the fast writer spells otherwise: the caller vouches for
    that. The text is then the same character for character (the same separators, escapes and
    integers), several times faster for a long value. Like :func:`loads_fast`, it gives up
    :data:`_MARGIN` levels of nesting sooner than ``json.dumps`` would.

    Raises:
        ValueError: the fast writer could not write it (a lone surrogate, deep nesting, a type it
            does not write); write it with ``json.dumps``, which gives the text or the error.
    """
    reader = _reader()
    reader.slot[0] = value
    try:
        data = reader.spell(reader.wrapped)
    except Exception as exc:  # a lone surrogate, a type it does not write, deep nesting
        raise ValueError(f"not written by the fast writer: {exc}") from None
    finally:
        reader.slot[0] = None
    return _formatted(reader, data)


def _formatted(reader: _Reader, data: bytes) -> str:
    """The text of the fast writer's ``data``, spaced as ``json.dumps`` spaces it.

    The same bytes give the same text, so the last two are kept: a LangGraph chain run and the
    run nested in it often carry the very same inputs and outputs (the graph's state), and the
    formatting costs more than the writing. Comparing bytes costs next to nothing beside it.
    """
    older, newer = reader.recent
    if data == newer[0]:
        return newer[1]
    if data == older[0]:
        return older[1]
    text = reader.format(data[_MARGIN:-_MARGIN], indent=0).decode()
    reader.recent = [newer, (data, text)]
    return text
