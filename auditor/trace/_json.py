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
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_decode: Callable[[bytes], Any] | None = None


def _decoder() -> Callable[[bytes], Any]:
    # Imported on first use: ``auditor --help`` and ``auditor adapters`` never read JSON.
    global _decode
    if _decode is None:
        import msgspec

        _decode = msgspec.json.Decoder().decode
    return _decode


#: Levels of nesting added around the text before the fast read: it then gives up that many
#: levels sooner than at the same place ``json.loads`` would, which counts nesting against the same
#: recursion limit but from a few calls deeper (``loads``, ``decode``, ``raw_decode``).
_MARGIN = 16
_OPEN, _CLOSE = b"[" * _MARGIN, b"]" * _MARGIN


def loads_fast(data: bytes) -> Any:
    """The JSON value in ``data``, exactly as ``json.loads(data.decode("utf-8"))`` would give it.

    Raises:
        ValueError: the fast reader refused the text (or it nests too deeply to be sure that
            ``json.loads`` would read it); read it with ``json.loads``, which gives the value or
            the error to report.
    """
    try:
        value = _decoder()(b"".join((_OPEN, data, _CLOSE)))
    except Exception as exc:  # any refusal (bad JSON, NaN, deep nesting): json.loads decides
        raise ValueError(f"not read by the fast reader: {exc}") from None
    # Each added level holds one item only if ``data`` is one JSON value ("1, 2" or "1], [2" is not).
    for _ in range(_MARGIN):
        if type(value) is not list or len(value) != 1:
            raise ValueError("not one JSON value")
        value = value[0]
    return value
