"""Trace and span ids as lower-case hex, from hex (any case) or base64 text, or raw bytes.

OTLP JSON requires hex ids (``opentelemetry-proto`` ``docs/specification.md``, "JSON Protobuf
Encoding"), but ``google.protobuf.json_format`` writes base64 and such files exist, so both are
read. An all-zero id is invalid per the OTel trace spec and is treated as missing.
"""

from __future__ import annotations

import base64
import binascii
import re

_HEX = re.compile("[0-9a-fA-F]*")  # string.hexdigits


def from_bytes(raw: bytes, size: int) -> str | None:
    if len(raw) != size or not any(raw):
        return None
    return raw.hex()


#: Hex ids already read (a span's trace id, and its id again as its children's parent id), each
#: the id it reads as, or None for an all-zero one; at most :data:`_KEPT`, then started afresh.
_KNOWN: dict[str, str | None] = {}
_KEPT = 8192


def from_text(value: object, size: int) -> tuple[str | None, bool]:
    """``(id, ok)``: ``(None, True)`` for an absent/empty id, ``(None, False)`` for a bad one."""
    if type(value) is str and len(value) == size * 2 and value in _KNOWN:
        known = _KNOWN[value]
        return known, known is not None
    if value is None:
        return None, True
    if not isinstance(value, str):
        return None, False
    text = value.strip()
    if not text:
        return None, True
    if len(text) == size * 2 and _HEX.fullmatch(text):
        lowered = text.lower()
        hex_id = lowered if lowered.strip("0") else None
        if text is value:  # nothing stripped: the same text reads the same next time
            if len(_KNOWN) >= _KEPT:
                _KNOWN.clear()
            _KNOWN[text] = hex_id
        return hex_id, hex_id is not None
    try:
        raw = base64.b64decode(
            text + "=" * (-len(text) % 4),
            altchars=b"-_" if ("-" in text or "_" in text) else None,
            validate=True,
        )
    except (binascii.Error, ValueError):
        return None, False
    decoded = from_bytes(raw, size)
    return decoded, decoded is not None
