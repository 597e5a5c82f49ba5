"""``normalise``: NFKC, case folding and whitespace runs, the same as the regex it replaced."""

from __future__ import annotations

import random
import re
import unicodedata

from auditor.text import normalise


def _by_regex(text: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text)).strip().casefold()


def test_normalise_is_the_regex_form_on_any_text() -> None:
    rng = random.Random(11)
    # ASCII with every control, Latin letters, and the characters where the two forms could part:
    # Unicode spaces, the separators str.isspace counts, ligatures, full-width and Roman numerals.
    special = [0x85, 0xA0, 0x1680, 0x2000, 0x2028, 0x2029, 0x202F, 0x3000, 0xFEFF, 0x200B, 0x1C, 0x1F]
    special += [0xDF, 0x130, 0xFB01, 0xFF21, 0x2160, 0x212A]
    alphabet = [chr(c) for c in [*range(0x250), *special]]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))) for _ in range(20_000)]
    ascii = [chr(c) for c in range(128)]
    texts += ["".join(rng.choice(ascii) for _ in range(rng.randint(0, 30))) for _ in range(5_000)]
    texts += ["  Refund\tpolicy:\n 30 DAYS \x1c", "\uff32\uff45\uff46\uff55\uff4e\uff44 \u2003STRASSE \u00df"]
    assert sum(t.isascii() for t in texts) > 5_000
    assert [normalise(t) for t in texts] == [_by_regex(t) for t in texts]
