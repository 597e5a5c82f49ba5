"""The answers as the page's one JSON block: built from the view model, rendered on demand by the script.

A report of a thousand answers must stay small and open fast, so answers are not rendered as
markup: each is a compact record the page's script turns into DOM nodes (text only, never
markup) when it is shown. Evidence is stored once: an item that several answers could draw on
(the system prompt, earlier turns of the conversation) is one entry of ``evidence``, referenced
by every answer that had it, with the quote marks of each answer kept on that answer's reference.
Answers come problems first (:func:`rank`), so the first screen is what needs a look.
"""

from __future__ import annotations

import json
from typing import Any

from auditor.report._context import AnswerView, ClaimView, EvidenceView
from auditor.report._quotes import CitationView

# The order answers are shown in: the worst thing an answer has decides its place.
_RANK = ("contradicted", "unjudged", "misattributed", "conflict", "absent")


def rank(answer: AnswerView) -> int:
    """Where an answer goes: contradicted, unjudged, misattributed, conflict, absent (0-4), other
    answers that do not pass (5), refusals (6), grounded answers last (7)."""
    for n, tag in enumerate(_RANK):
        if tag in answer.tags:
            return n
    if answer.status in ("not grounded", "no judged claims"):
        return len(_RANK)
    return len(_RANK) + (1 if answer.status == "refusal" else 2)


def page_data(answers: list[AnswerView], conversations: dict[str, str | None]) -> dict[str, Any]:
    """The JSON the page's script reads: shared evidence once, answers problems first.

    ``conversations`` maps an answer's anchor to its conversation id (None when it has none), so
    shared evidence is grouped by conversation, or by trace without one.
    """
    table: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    users: dict[int, set[str]] = {}
    groups: dict[int, set[str]] = {}
    out: list[dict[str, Any]] = []
    for answer in sorted(answers, key=lambda a: (rank(a), int(a.anchor[1:]))):
        refs = []
        for ev in answer.evidence:
            item = _evidence(ev)  # keyed without its id: each trace's copy of a system prompt has its own
            key = json.dumps(item, sort_keys=True, ensure_ascii=False)
            index = seen.setdefault(key, len(table))
            if index == len(table):
                table.append(item)
            users.setdefault(index, set()).add(answer.anchor)
            groups.setdefault(index, set()).add(conversations.get(answer.anchor) or answer.trace_id)
            refs.append(_reference(index, ev))
        out.append(_answer(answer, refs, conversations.get(answer.anchor)))
    for index, anchors in users.items():
        table[index]["shared"] = len(anchors)
        table[index]["groups"] = len(groups[index])  # conversations (or traces without one) it is in
    return {"evidence": table, "answers": out}


def _answer(a: AnswerView, refs: list[dict[str, Any]], conversation: str | None) -> dict[str, Any]:
    local = {ev.anchor: k for k, ev in enumerate(a.evidence)}
    in_pieces = {p.key: p.text for p in a.pieces if p.key}
    return {
        "anchor": a.anchor,
        "id": a.answer_id,
        "trace": a.trace_id,
        "conv": conversation,
        "q": a.question,
        "qt": a.question_type,
        "status": a.status,
        "why": a.why,
        "tags": a.tags,
        "counts": {k: n for k, n in a.counts.items() if n},
        "g": a.groundedness,
        # [text] plain, [text, key, verdict] a claim, [text, key, null, reason] a screened sentence
        "pieces": [
            [p.text]
            if not p.key
            else [p.text, p.key, p.verdict]
            if p.verdict
            else [p.text, p.key, None, p.screen_reason]
            for p in a.pieces
        ],
        "claims": [_claim(c, local, in_pieces) for c in a.claims],
        # screened sentences the answer map could not show (they overlap a claim)
        "screened": [[p.text, p.screen_reason] for p in a.screened if p.key not in in_pieces],
        "ev": refs,
    }


def _evidence(ev: EvidenceView) -> dict[str, Any]:
    """What an item shows, without its quote marks (those belong to the answer that cites it)."""
    return {
        "kind": ev.kind,
        "label": ev.kind_label,
        "callout": ev.callout,
        "name": ev.name,
        "url": ev.url,
        "hops": ev.hop_path,
        "cls": ev.source_class,
        "adm": ev.admitted,
        "reason": ev.reason,
        "err": ev.error,
        "text": "".join(p.text for p in ev.pieces),
        "meta": ev.metadata,
    }


def _reference(index: int, ev: EvidenceView) -> dict[str, Any]:
    """An answer's use of a table item: its id there and where its claims' quotes sit in it."""
    marks: list[list[Any]] = []
    pos = 0
    for piece in ev.pieces:
        if piece.marks:
            marks.append([pos, pos + len(piece.text), list(piece.marks)])
        pos += len(piece.text)
    reference: dict[str, Any] = {"ref": index, "id": ev.evidence_id}
    if marks:
        reference["marks"] = marks
    return reference


def _cite(c: CitationView, local: dict[str, int], keyed: bool = True) -> dict[str, Any]:
    ev = local.get(c.evidence_anchor) if c.evidence_anchor else None
    cite: dict[str, Any] = {"ev": ev, "quote": c.quote}
    if keyed:  # a citation's key is its claim's and its position ("a3c1q0"): the page rebuilds it
        cite["key"] = c.key
    if not c.found:
        cite["found"] = False
    if ev is None:  # otherwise the page names it by its evidence item's callout
        cite["label"] = c.evidence_label
    return cite


def _claim(c: ClaimView, local: dict[str, int], in_pieces: dict[str, str]) -> dict[str, Any]:
    claim: dict[str, Any] = {"key": c.key, "v": c.verdict}
    if in_pieces.get(c.key) != c.text:  # otherwise the page reads it from the answer's pieces
        claim["text"] = c.text
    optional: dict[str, Any] = {
        "why": c.rationale,
        "cites": [_cite(q, local, keyed=False) for q in c.citations],
        "excluded": [
            {"ev": local.get(x.anchor) if x.anchor else None, "label": x.label, "reason": x.reason}
            for x in c.excluded_support
        ],
        "only_excluded": c.rests_only_on_excluded,
        "unjudged": c.unjudged_reason,
        "uj": c.unjudged_text,
        "errors": c.judge_errors,
        "ck": c.common_knowledge,
        "markers": [
            {
                "marker": m.marker,
                "items": [
                    {"ev": local.get(i.anchor) if i.anchor else None, "label": i.label, "adm": i.admitted}
                    for i in m.items
                ],
                "by": m.resolved_by,
                "sup": m.supports,
                "outcome": m.outcome,
                "reason": m.reason,
            }
            for m in c.markers
        ],
        "mis": c.misattributed,
        "conflict": {
            "res": c.conflict.resolution,
            "note": c.conflict.note,
            "supports": [_cite(q, local) for q in c.conflict.supports],
            "contradicts": [_cite(q, local) for q in c.conflict.contradicts],
        }
        if c.conflict
        else None,
    }
    claim.update({k: v for k, v in optional.items() if v})  # left out when empty: most claims are plain
    return claim
