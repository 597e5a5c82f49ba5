"""The price table behind the estimated cost: the built-in one, overridden by ``AUDITOR_LLM_PRICES``.

``AUDITOR_LLM_PRICES="gpt-4.1-mini=0.40/1.60,my-model=0/0"`` sets USD per million prompt and
completion tokens per model (a local model can be priced at 0, so its cost is known rather than
unknown). A malformed entry is one :class:`~auditor.errors.UsageError` line naming it.
"""

from __future__ import annotations

import math

from auditor.errors import UsageError
from auditor.llm._client import PRICES_PER_MTOK

VARIABLE = "AUDITOR_LLM_PRICES"


def price_table(text: str | None) -> dict[str, tuple[float, float]]:
    """The built-in prices with ``text``'s entries (``MODEL=PROMPT/COMPLETION``, comma-separated) on top."""
    table = dict(PRICES_PER_MTOK)
    for entry in (text or "").split(","):
        if not entry.strip():
            continue
        model, _, price = entry.partition("=")
        prompt, _, completion = price.partition("/")
        try:
            pair = (float(prompt), float(completion))
        except ValueError:
            pair = (-1.0, -1.0)
        if not model.strip() or not all(math.isfinite(p) and p >= 0 for p in pair):
            raise UsageError(
                f"{VARIABLE}: {entry.strip()!r} is not MODEL=PROMPT/COMPLETION (USD per million tokens, "
                f"e.g. gpt-4.1-mini=0.40/1.60)."
            )
        table[model.strip()] = pair
    return table
