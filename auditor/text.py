"""Text normalisation shared by every stage that compares text (dedup, hop matching, quotes)."""

from __future__ import annotations

import hashlib
import re
import unicodedata

_SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """Case- and whitespace-insensitive form: NFKC, casefolded, runs of whitespace to one space."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text)).strip().casefold()


def short_digest(*parts: str, length: int = 16) -> str:
    """A stable hex digest of ``parts`` (joined unambiguously), for ids."""
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()
    return digest[:length]


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis, for labels (never for evidence)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
