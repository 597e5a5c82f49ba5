"""Policy regular expressions, compiled with RE2 so that matching cannot hang on trace content.

A policy's ``regex`` conditions run on metadata values from the trace, which are untrusted: with a
backtracking engine, ``(a+)+$`` against a long run of ``a`` takes exponential time. RE2 (the
``google-re2`` package) matches in time linear in the value and leaves out what would break that,
lookaround and backreferences; a pattern that uses them fails to compile, which the policy's
validation turns into an error naming the file and key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import re2

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # a bad pattern becomes the policy error, not lines on stderr
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class Regex:
    """A policy regular expression compiled with RE2 (see :func:`compile_regex`)."""

    pattern: str
    compiled: Any  # re2._Regexp: google-re2 ships no types

    def search(self, text: str) -> bool:
        """Whether the pattern occurs anywhere in ``text``.

        A lone surrogate (JSON allows ``"\\ud800"``) cannot be encoded for RE2 and reads as U+FFFD.
        """
        try:
            return self.compiled.search(text) is not None
        except UnicodeEncodeError:
            return self.compiled.search(_SURROGATE.sub("\ufffd", text)) is not None


@lru_cache(maxsize=256)
def compile_regex(pattern: str) -> Regex:
    """``pattern`` compiled with RE2 (linear-time matching: no lookaround, no backreferences).

    Raises:
        ValueError: RE2 cannot compile it; the message says why and what to write instead.
    """
    try:
        return Regex(pattern, re2.compile(pattern, _RE2_OPTIONS))
    except re2.error as err:
        reason = (
            err.args[0].decode("utf-8", "replace") if err.args and isinstance(err.args[0], bytes) else err
        )
        hint = " (RE2 writes the end of the text as \\z)" if "\\Z" in pattern else ""
        raise ValueError(
            f"not a valid regular expression for RE2 ({reason}){hint}; expected Python regex syntax "
            "without lookaround or backreferences, which RE2 leaves out so that matching cannot hang"
        ) from None
