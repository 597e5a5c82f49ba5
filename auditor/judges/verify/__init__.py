"""The checks every judge's verdict passes, whichever judge gave it.

:func:`verify_quotes`: each quote is in the item it cites, the quotes carry the claim (``_carry``)
and agree with it (``_agree``: no negation, rival figure or rival name). :func:`verify_conflicts`
and :func:`settle_conflict`: both sides of a conflict verified, the policy's ``on_conflict``
applied. :func:`check_citations`: each citation marker judged against the items it cites. This
package reads text with :mod:`auditor.judges.reading` and never imports a judge
(``.importlinter``: it checks any judge alike).
"""

from __future__ import annotations

from auditor.judges.verify._agree import QUOTE_DISAGREES, about, keyed_rival
from auditor.judges.verify._attribution import Attribution, MarkerCheck, check_citations
from auditor.judges.verify._carry import cached_claim_cues, clear_quote_caches
from auditor.judges.verify._conflicts import (
    OnConflict,
    settle_conflict,
    verify_conflicts,
    with_conflict,
    with_state_conflict,
)
from auditor.judges.verify._quotes import verify_quotes

__all__ = [
    "QUOTE_DISAGREES",
    "Attribution",
    "MarkerCheck",
    "OnConflict",
    "about",
    "cached_claim_cues",
    "check_citations",
    "clear_quote_caches",
    "keyed_rival",
    "settle_conflict",
    "verify_conflicts",
    "verify_quotes",
    "with_conflict",
    "with_state_conflict",
]
