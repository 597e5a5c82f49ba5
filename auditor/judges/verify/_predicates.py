"""Rival predicates: a quote that states another rank or another role than its claim.

Two near misses that share nearly every word with their claim, so that word overlap reads them as
support, and that no figure or name check sees:

- **rank**: "Alice finished second in the race" quoted for "Alice finished first in the race".
  An ordinal of the claim ("first", "3rd", "last") while the clause states another one and not the
  claim's is a rival; certain (the claim is contradicted) when the clause holds every other content
  word of the claim;
- **role**: "Yesterday is a song sung by Paul McCartney" quoted for "Yesterday was written by Paul
  McCartney". A role verb of the claim (wrote, sang, directed, produced, founded, ...) while the
  clause states a role of another group and none of the claim's is a rival; never certain (one
  person may write and sing), so the verdict is ``unjudged: quote_disagrees``, never ``supported``.

Read by :func:`auditor.judges._agree.disagreement`, for every judge alike.
"""

from __future__ import annotations

import re
from functools import lru_cache

from auditor.judges.reading import content_stems

_ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
    "eighth": 8, "ninth": 9, "tenth": 10, "last": -1,
}  # fmt: skip
_NUMBERED = re.compile(r"^(\d+)(?:st|nd|rd|th)$")
# Roles by group: a word of one group does not state a role of another.
_ROLES = {
    "wrote": "write wrote written writes writing author authored authors penned pens co-wrote co-written",
    "composed": "compose composed composes composer",
    "sang": "sing sings sang sung singer vocals performed performs performer recorded records",
    "directed": "direct directed directs director",
    "produced": "produce produced produces producer",
    "founded": "found founded founds founder co-founded cofounded",
    "painted": "paint painted paints painter",
    "invented": "invent invented invents inventor",
    "designed": "design designed designs designer",
    "won": "win wins won winner",
    "lost": "lose loses lost loser",
}
_ROLE_OF = {w: group for group, listed in _ROLES.items() for w in listed.split()}
_WORD = re.compile(r"[A-Za-z0-9]+(?:-[A-Za-z]+)?")


@lru_cache(maxsize=4096)
def _read(text: str) -> tuple[frozenset[int], frozenset[str], tuple[str, ...]]:
    """The ranks, role groups and words of a text."""
    tokens = tuple(t.casefold() for t in _WORD.findall(text))
    ranks = set()
    for t in tokens:
        if t in _ORDINALS:
            ranks.add(_ORDINALS[t])
        elif (m := _NUMBERED.match(t)) is not None:
            ranks.add(int(m.group(1)))
    # "also written as ..." spells a name; it states no role
    roles = frozenset(
        _ROLE_OF[t]
        for t, after in zip(tokens, (*tokens[1:], ""), strict=True)
        if t in _ROLE_OF and after != "as"
    )
    return frozenset(ranks), roles, tokens


def rival_predicate(claim: str, clause: str, clause_stems: frozenset[str]) -> tuple[str, bool] | None:
    """``(why, certain)`` when ``clause`` states another rank or role than ``claim`` (module
    docstring), else None. ``clause_stems``: the clause's content stems."""
    ranks, roles, tokens = _read(claim)
    their_ranks, their_roles, their_tokens = _read(clause)
    if ranks and their_ranks and not ranks & their_ranks:
        rank_words = {t for t in tokens if t in _ORDINALS or _NUMBERED.match(t)}
        rest = content_stems(" ".join(t for t in tokens if t not in rank_words))
        shown = next(t for t in their_tokens if t in _ORDINALS or _NUMBERED.match(t))
        return f"the quote says {shown!r} where the claim states another rank", rest <= clause_stems
    if roles and their_roles and not roles & their_roles:
        shown = next(t for t in their_tokens if _ROLE_OF.get(t) in their_roles)
        own = next(t for t in tokens if t in _ROLE_OF)
        return f"the quote says {shown!r} where the claim says {own!r}", False
    return None
