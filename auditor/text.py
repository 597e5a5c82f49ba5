"""Text helpers shared by every stage: normalisation for comparing text (dedup, hop matching,
quotes), digests and clipping for ids and labels, and the terminal-safe form of untrusted text."""

from __future__ import annotations

import hashlib
import re
import unicodedata


def normalise(text: str) -> str:
    """Case- and whitespace-insensitive form: NFKC, casefolded, runs of whitespace to one space."""
    # str.split() cuts at the same whitespace as the regex \s (both ask Py_UNICODE_ISSPACE) and
    # drops it at the ends, as strip() did; an ASCII text is its own NFKC form, and lower() is its
    # case folding. About three times faster than a regex substitution, the same result.
    if text.isascii():
        return " ".join(text.split()).lower()
    return " ".join(unicodedata.normalize("NFKC", text).split()).casefold()


def short_digest(*parts: str, length: int = 16) -> str:
    """A stable hex digest of ``parts`` (joined unambiguously), for ids."""
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()
    return digest[:length]


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis, for labels (never for evidence)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


# C0 controls (but tab; newline optional), DEL, C1 controls and the bidi embedding, override and
# isolate marks: a terminal obeys them (clear the screen, write the clipboard, reorder the line).
_UNSAFE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_UNSAFE_KEEP_NEWLINES = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # the Unicode control pictures: ESC shows as ␛, BEL as ␇
    if code == 0x7F:
        return "\u2421"  # ␡
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` safe to print on a terminal: control characters shown, never obeyed.

    Trace text is untrusted: an escape sequence in a tool result could clear the screen, write the
    clipboard (OSC 52) or rewrite the line above. C0 controls become their control pictures (ESC
    ``␛``, BEL ``␇``, CR ``␍``), C1 controls and bidi overrides a ``\\x9b`` / ``\\u202e`` escape.
    Tabs stay; newlines stay with ``keep_newlines`` (multi-line text such as an answer), where a
    CR-LF pair counts as one newline.
    """
    if keep_newlines:
        return _UNSAFE_KEEP_NEWLINES.sub(_visible, text.replace("\r\n", "\n"))
    return _UNSAFE.sub(_visible, text)


# Inside a JSON document these can only occur in strings, where ``\uXXXX`` is the same character.
_JSON_UNSAFE = re.compile(r"[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def json_printable(document: str) -> str:
    """A JSON document with DEL, C1 controls and bidi marks written as ``\\uXXXX``: same data, safe
    on a terminal (JSON encoders already escape C0 controls but pass these through)."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", document)
