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


def from_text(value: object, size: int) -> tuple[str | None, bool]:
    """``(id, ok)``: ``(None, True)`` for an absent/empty id, ``(None, False)`` for a bad one."""
    if value is None:
        return None, True
    if not isinstance(value, str):
        return None, False
    text = value.strip()
    if not text:
        return None, True
    if len(text) == size * 2 and _HEX.fullmatch(text):
        hex_id = text.lower()
        return (hex_id, True) if hex_id.strip("0") else (None, False)
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
