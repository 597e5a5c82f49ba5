"""Decode OTLP ``AnyValue`` and attribute lists into plain Python values.

OTLP carries attribute values as a tagged union (``opentelemetry-proto``
``common/v1/common.proto``, v1.11.0). The JSON mapping (the proto3 JSON mapping with OTLP's
deviations: int64 as decimal strings, ``bytesValue`` as base64) and the binary form decode to the
same Python values here, so the conventions never see the wire format:

- ``stringValue`` -> ``str``; ``boolValue`` -> ``bool``; ``intValue`` -> ``int`` (string or number);
  ``doubleValue`` -> ``float``; ``bytesValue`` -> its base64 text (so spans stay JSON-serialisable);
- ``arrayValue`` -> ``list``; ``kvlistValue`` -> ``dict`` (structured GenAI content, OTEP 4485);
- an empty ``AnyValue`` -> ``None``.

Anything else (a value of an unexpected type) is reported through ``notes`` and dropped, never
raised.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable
from typing import Any

from auditor.trace import MAX_DEPTH, quote_value

#: AnyValue levels decoded; deeper ones are dropped with a note. Well inside the core's bound on
#: nesting (``auditor.trace.MAX_DEPTH``, counted from the span), so nothing is cut, and said, twice.
_MAX_DEPTH = MAX_DEPTH - 8


def as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return None


#: The AnyValue tags whose value, of exactly this type, is the Python value as it stands: the
#: common case, read without the general loop below (which gives the same value for these).
_PLAIN = {"stringValue": str, "boolValue": bool, "intValue": int, "doubleValue": float}


def decode_json_anyvalue(value: Any, notes: list[str], key: str = "", depth: int = 0) -> Any:
    """One JSON-mapped ``AnyValue`` (a dict with one ``*Value`` key) as a Python value."""
    if depth > _MAX_DEPTH:
        notes.append(f"attribute {key!r}: value nested more than {_MAX_DEPTH} levels deep; dropped")
        return None
    if type(value) is dict and len(value) == 1:
        ((tag, item),) = value.items()
        if _PLAIN.get(tag) is type(item):
            return item
    if not isinstance(value, dict):
        # Not an AnyValue; some hand-written exporters put bare scalars here. Keep them.
        if isinstance(value, str | bool | int | float) or value is None:
            return value
        notes.append(f"attribute {key!r}: value is a {type(value).__name__}, not an AnyValue; dropped")
        return None
    if not value:
        return None
    for name, item in value.items():
        tag = name.replace("_", "").lower()
        if tag == "stringvalue":
            if isinstance(item, str):
                return item
            notes.append(f"attribute {key!r}: stringValue is not a string; converted")
            return str(item)
        if tag == "boolvalue":
            if isinstance(item, bool):
                return item
            if item in ("true", "false"):
                return item == "true"
            notes.append(f"attribute {key!r}: boolValue is not a boolean; dropped")
            return None
        if tag == "intvalue":
            number = as_int(item)
            if number is None:
                notes.append(f"attribute {key!r}: intValue {quote_value(item)} is not an integer; dropped")
            return number
        if tag == "doublevalue":
            if isinstance(item, int | float) and not isinstance(item, bool):
                return float(item)
            if isinstance(item, str):
                try:
                    return float(item)  # "NaN", "Infinity" per the proto3 JSON mapping
                except ValueError:
                    pass
            notes.append(f"attribute {key!r}: doubleValue {quote_value(item)} is not a number; dropped")
            return None
        if tag == "bytesvalue":
            if isinstance(item, str):
                try:
                    base64.b64decode(item, validate=True)
                    return item
                except (binascii.Error, ValueError):
                    pass
            notes.append(f"attribute {key!r}: bytesValue is not base64; dropped")
            return None
        if tag == "arrayvalue":
            values = item.get("values", []) if isinstance(item, dict) else None
            if not isinstance(values, list):
                notes.append(f"attribute {key!r}: arrayValue has no list of values; dropped")
                return None
            return [decode_json_anyvalue(v, notes, key, depth + 1) for v in values]
        if tag == "kvlistvalue":
            values = item.get("values", []) if isinstance(item, dict) else None
            if not isinstance(values, list):
                notes.append(f"attribute {key!r}: kvlistValue has no list of values; dropped")
                return None
            return decode_json_attributes(values, notes, depth + 1, prefix=f"{key}.")
    # Only unknown fields: ignore them, as the OTLP JSON mapping requires.
    return None


def decode_json_attributes(items: Any, notes: list[str], depth: int = 0, prefix: str = "") -> dict[str, Any]:
    """A JSON-mapped ``[{"key": k, "value": AnyValue}]`` list as a dict (later keys win)."""
    out: dict[str, Any] = {}
    if items is None:
        return out
    if not isinstance(items, list):
        notes.append(f"attributes {prefix or ''}are a {type(items).__name__}, not a list; dropped")
        return out
    plain = depth <= _MAX_DEPTH
    for entry in items:
        if type(entry) is dict:
            key = entry.get("key")
            if type(key) is str:
                value = entry.get("value")
                if (
                    plain and type(value) is dict and len(value) == 1
                ):  # decode_json_anyvalue's fast path, inline (a string value first: most are)
                    item = value.get("stringValue")
                    if type(item) is str:
                        out[key] = item
                        continue
                    ((tag, item),) = value.items()
                    if _PLAIN.get(tag) is type(item):
                        out[key] = item
                        continue
                out[key] = decode_json_anyvalue(value, notes, prefix + key, depth)
                continue
        if not isinstance(entry, dict) or not isinstance(entry.get("key"), str):
            notes.append("attribute without a string key; dropped")
            continue
        key = entry["key"]
        out[key] = decode_json_anyvalue(entry.get("value"), notes, prefix + key, depth)
    return out


def decode_proto_anyvalue(value: Any, depth: int = 0) -> Any:
    """One protobuf ``AnyValue`` message as a Python value."""
    if depth > _MAX_DEPTH:
        return None
    which = value.WhichOneof("value")
    if which is None:
        return None
    if which == "string_value":
        return str(value.string_value)
    if which == "bool_value":
        return bool(value.bool_value)
    if which == "int_value":
        return int(value.int_value)
    if which == "double_value":
        return float(value.double_value)
    if which == "bytes_value":
        return base64.b64encode(bytes(value.bytes_value)).decode("ascii")
    if which == "array_value":
        return [decode_proto_anyvalue(v, depth + 1) for v in value.array_value.values]
    if which == "kvlist_value":
        return decode_proto_attributes(value.kvlist_value.values, depth + 1)
    return None


def decode_proto_attributes(items: Iterable[Any], depth: int = 0) -> dict[str, Any]:
    """A protobuf ``repeated KeyValue`` as a dict (later keys win)."""
    return {str(kv.key): decode_proto_anyvalue(kv.value, depth) for kv in items}
