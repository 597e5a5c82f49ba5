"""The splitter's nesting depths, read only at the nesting characters, equal a walk over every
character (the rule it replaced), on lines made of the characters that change the depth."""

from __future__ import annotations

import random

from auditor.claims._split import _depths


def _walk(text: str, start: int, end: int) -> list[int]:
    """The depth after each character, one character at a time (the original rule)."""
    out: list[int] = []
    depth = 0
    in_quote = False
    balanced_quotes = text.count('"', start, end) % 2 == 0
    for i in range(start, end):
        ch = text[i]
        if ch in "([\u201c":
            depth += 1
        elif ch in ")]\u201d" and depth > 0:
            depth -= 1
        elif ch == '"' and balanced_quotes:
            in_quote = not in_quote
            depth += 1 if in_quote else -1
        out.append(max(depth, 0))
    return out


def test_depths_equal_the_walk_over_every_character() -> None:
    rng = random.Random(7)
    alphabet = 'ab .,()[]"\u201c\u201d'
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        start = rng.randint(0, len(text))
        end = rng.randint(start, len(text))
        depth = _depths(text, start, end)
        assert [depth[i] for i in range(start, end)] == _walk(text, start, end), (text, start, end)


def test_a_close_quote_after_a_stray_bracket_stays_at_zero() -> None:
    text = '"a)b" (c'
    depth = _depths(text, 0, len(text))
    assert [depth[i] for i in range(len(text))] == [1, 1, 0, 0, 0, 0, 0, 0]
