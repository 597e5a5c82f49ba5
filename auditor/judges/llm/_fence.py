"""Fencing untrusted trace text in a prompt, so that no text can leave its block.

Every piece of trace text (an evidence item, the question, the answer, a claim) goes into a
:class:`Block`; :func:`fenced` gives all the blocks of one message one fence token and puts it in
every marker (``<<<EVIDENCE-3f9a... id="ev1" ...>>>`` ... ``<<<END EVIDENCE-3f9a... id="ev1">>>``).
The token is chosen so that none of the fenced text contains it (:func:`fence_token`), which is
what makes the markers unforgeable: a tool result may write any marker it likes, but never one
that carries the token, so a reader (the model, or a strict parser) that honours only marked-up
markers finds every block where the auditor put it. Runs of ``<`` and ``>`` inside the text are
also broken up (:func:`neutralise`), so nothing inside a block even looks like a marker.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from auditor.text import normalise, short_digest

OPEN, CLOSE = "<<<", ">>>"
FENCE_LINE = "Fence token of this message: {token}"
# Drawn once per process: the prompts of one run share their evidence prefix (provider prompt
# caching), and trace text, written before the audit began, cannot know the token.
_FENCE_SECRET = secrets.token_hex(16)
_RUN = re.compile(r"<{3,}|>{3,}")


def neutralise(text: str) -> str:
    """Break up every run of three or more ``<`` or ``>`` in untrusted text (``<<<<<`` becomes
    ``< < < < <``), so no trace text looks like a block marker."""
    return _RUN.sub(lambda m: " ".join(m.group()), text)


def attr(value: str) -> str:
    """Untrusted text as a marker attribute value: neutralised, on one line, without ``"``."""
    return neutralise(value).replace('"', "'").replace("\n", " ")


def fence_token(fenced: Sequence[str]) -> str:
    """The fence token for one prompt: 16 hex digits that none of the ``fenced`` texts contains.

    The token is derived from a per-process secret; in the rare prompt whose text holds it
    (compared after NFKC and case folding, so full-width or upper-case look-alikes count too) the
    next one is derived, until none does.
    """
    seen = normalise("\n".join(fenced))  # an ASCII text takes normalise()'s own short path
    salt = 0
    while True:
        token = short_digest(_FENCE_SECRET, str(salt))
        if token not in seen:
            return token
        salt += 1


@dataclass(frozen=True)
class Block:
    """One piece of trace text to fence; ``body`` and the attributes are already neutralised."""

    kind: str  # EVIDENCE, QUESTION, ANSWER, CLAIM
    body: str
    attrs: str = ""
    end_attrs: str = ""
    inline: bool = False  # on one line (claims)

    def render(self, token: str) -> str:
        head = f"{OPEN}{self.kind}-{token}" + (f" {self.attrs}" if self.attrs else "") + CLOSE
        tail = f"{OPEN}END {self.kind}-{token}" + (f" {self.end_attrs}" if self.end_attrs else "") + CLOSE
        sep = " " if self.inline else "\n"
        return f"{head}{sep}{self.body}{sep}{tail}"


# A part of a user message: the auditor's own text, one block, or a run of blocks (one per line).
Part = str | Block | list[Block]


def fenced(parts: Sequence[Part]) -> str:
    """A user message: the fence line, then ``parts`` joined by blank lines, every block fenced."""
    blocks = [b for p in parts if not isinstance(p, str) for b in (p if isinstance(p, list) else [p])]
    token = fence_token([t for b in blocks for t in (b.attrs, b.body, b.end_attrs)])

    def text(part: Part) -> str:
        if isinstance(part, str):
            return part
        if isinstance(part, Block):
            return part.render(token)
        return "\n".join(b.render(token) for b in part)

    return "\n\n".join([FENCE_LINE.format(token=token), *(text(p) for p in parts)])
