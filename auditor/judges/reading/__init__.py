"""How the judges read a claim and an item: words and stems, figures, names, segments and windows.

Shared by the offline judge (:mod:`auditor.judges.offline`, which decides from these cues), by the
checks every judge's verdict passes (:mod:`auditor.judges.verify`, which read the quotes the same
way) and by the LLM judge's excerpts. Nothing here decides a verdict. ``numbers`` and ``entities``
are the figure and name readers, used as namespaces (``numbers.matches``, ``entities.present``).
"""

from __future__ import annotations

from auditor.judges.reading import _entities as entities
from auditor.judges.reading import _numbers as numbers
from auditor.judges.reading._cues import ClaimCues, claim_cues
from auditor.judges.reading._lexical import content_stems, denied_and_affirmed, negated, stated, stem, words
from auditor.judges.reading._segments import Segment, sentence_spans
from auditor.judges.reading._states import (
    State,
    Stated,
    claim_state,
    only_opposite,
    opposing,
    quoted_opposite,
    said,
)
from auditor.judges.reading._values import (
    claimed,
    differing,
    quoted_other,
    quoted_value,
    spoken,
    states_claimed,
)
from auditor.judges.reading._vocabulary import STOPWORDS
from auditor.judges.reading._windows import CLAIM_CHARS, ITEM_CHARS, Item, Window, prepare, read_limits

__all__ = [
    "CLAIM_CHARS",
    "ITEM_CHARS",
    "STOPWORDS",
    "ClaimCues",
    "Item",
    "Segment",
    "State",
    "Stated",
    "Window",
    "claim_cues",
    "claim_state",
    "claimed",
    "content_stems",
    "denied_and_affirmed",
    "differing",
    "entities",
    "negated",
    "numbers",
    "only_opposite",
    "opposing",
    "prepare",
    "quoted_opposite",
    "quoted_other",
    "quoted_value",
    "read_limits",
    "said",
    "sentence_spans",
    "spoken",
    "stated",
    "states_claimed",
    "stem",
    "words",
]
