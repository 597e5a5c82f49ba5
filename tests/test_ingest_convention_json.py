"""The OTel convention readers parse the JSON texts inside attributes (``gen_ai.input.messages``,
``input.value``, ...) with the fast reader first: what they read, and what they count as a parse
able to spell a surrogate, is what ``json.loads`` alone gave them."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from auditor_otel.conventions import common

TEXTS = [
    '{"a": 1, "b": [true, false, null], "c": {"d": "e"}}',
    '[{"role": "user", "content": "caf\u00e9 \u2028 \U0001f600"}]',
    '"\\ud83d\\ude00 \\u0000 \\n \\/ \\""',
    '"\\ud800"',  # a lone surrogate: json.loads reads it, the fast reader refuses it
    '"\ud800"',  # a lone surrogate in the text itself: it cannot even be encoded
    '["\\udc00", 1]',
    "[NaN, Infinity, -Infinity]",
    "[1e400]",
    '{"a": 1, "a": 2}',
    "[123456789012345678901234567890, -0, -0.0, 1E5, 5e-324]",
    '["tab\tinside"]',
    '"control \x01"',
    "[1,]",
    "[1] [2]",
    '{"a": }',
    "  [ ]  ",
    '"just a string"',
    "[" * 3000 + "]" * 3000,
    '{"a": ' * 3000 + "1" + "}" * 3000,
    "not json",
    "",
]


def _reference(value: Any) -> Any:
    """``common.loads`` as it was, with ``json.loads`` alone."""
    if isinstance(value, dict | list):
        return value
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text or text[0] not in '[{"':
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _same(a: Any, b: Any) -> bool:
    return repr(a) == repr(b) and type(a) is type(b)


@pytest.mark.parametrize("text", TEXTS)
def test_attribute_json_reads_as_json_loads_reads_it(text: str) -> None:
    before = common.escaped_parses()
    assert _same(common.loads(text), _reference(text))
    assert common.escaped_parses() - before == (
        1 if "\\u" in text.strip() and text.strip()[:1] in '[{"' else 0
    )


def test_nesting_near_the_limit_reads_as_json_loads_reads_it() -> None:
    for depth in range(850, 1100, 3):
        for text in ("[" * depth + "]" * depth, '{"a": ' * depth + "1" + "}" * depth):
            assert _same(common.loads(text), _reference(text))


def test_random_values_read_the_same() -> None:
    rng = random.Random(6)

    def value(depth: int) -> Any:
        pick = rng.randrange(8 if depth < 4 else 5)
        if pick == 0:
            return rng.uniform(-1e9, 1e9) * 10 ** rng.randint(-30, 30)
        if pick == 1:
            return rng.getrandbits(rng.randint(1, 90)) * rng.choice([1, -1])
        if pick == 2:
            return "".join(
                chr(rng.choice([rng.randint(32, 126), rng.randint(0xA0, 0x2FFF)])) for _ in range(5)
            )
        if pick == 3:
            return rng.choice([True, False, None])
        if pick == 4:
            return ""
        if pick == 5:
            return [value(depth + 1) for _ in range(rng.randint(0, 4))]
        return {f"k{rng.randint(0, 3)}": value(depth + 1) for _ in range(rng.randint(0, 4))}

    for _ in range(500):
        written = value(0)
        for text in (json.dumps(written), json.dumps(written, ensure_ascii=False), json.dumps([written])):
            assert _same(common.loads(text), _reference(text))
