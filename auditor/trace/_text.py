"""What counts as valid text in a trace: a ``str`` that can be written as UTF-8.

Python strings may hold lone UTF-16 surrogates (JSON's ``"\\ud800"``, a CESU-8 file decoded as
JSON does); they fail only when written, far from where they came in. The trace model and its
problems repair them here, once, so every later stage sees valid text.
"""

from __future__ import annotations

import re
import reprlib

#: Any UTF-16 surrogate code point: in a Python ``str`` it can only be a lone one.
SURROGATE = re.compile("[\ud800-\udfff]")


def repair_text(text: str) -> str:
    """``text`` with surrogate pairs joined and lone surrogates replaced by U+FFFD.

    Returns the very same object when there is nothing to repair, so callers can tell.
    """
    if text.isascii() or SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxstring, _SHORT.maxother = 2, 60, 60
_SHORT.maxlist = _SHORT.maxtuple = _SHORT.maxdict = 4


def quote_value(value: object) -> str:
    """A short ``repr`` of a trace value for a problem message: bounded in length and depth, so a
    huge or deeply nested value cannot swamp the message (or recurse without bound)."""
    return repair_text(_SHORT.repr(value))
