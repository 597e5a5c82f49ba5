"""A generated audit run of many answers, for the report's browser tests and its benchmark.

Deterministic (same ``n``, same run): conversations of a few traces each, every answer with the
conversation's system prompt and earlier turns (shared evidence), two tool results or documents of
its own, three to five claims with every verdict, conflicts, misattributed markers, ``offline_undecided``
claims, screened sentences and refusals. Built from the result models and summarised by
``auditor.metrics.summarise``, so it uses only what ``auditor.results`` has had since the report's
first version (the benchmark renders it with older code too).
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from auditor.metrics import summarise
from auditor.results import (
    AnswerOut,
    AuditResult,
    CitationMarkerOut,
    CitationOut,
    ClaimOut,
    ConflictOut,
    EvidenceOut,
    JudgeRef,
    RunInfo,
)

SYSTEM = (
    "You are Ada, Example Appliances' support agent. Answer only from tool results and the knowledge "
    "base; cite the article you used in square brackets. Never promise refunds that a tool did not "
    "approve. Escalate safety issues (smoke, sparks, burning smell) to a human at once. Keep answers "
    "short, friendly and specific to the customer's order. " * 3
)
TYPES = ("refund", "warranty", "shipping", "troubleshooting", "account")
CLASSES = ("order-tools", "kb-articles", "shipping-tools")
VERDICTS = ("supported", "supported", "supported", "absent", "contradicted", "unjudged")
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def _ev(eid: str, kind: str, text: str, trace: str, cls: str, admitted: bool, **extra: object) -> EvidenceOut:
    """One evidence item; ``extra`` sets ``name``, ``url``, ``hop_path``, ``metadata``."""
    return EvidenceOut.model_validate(
        {
            "evidence_id": eid,
            "kind": kind,
            "name": None,
            "text": text,
            "metadata": {},
            "url": None,
            "trace_id": trace,
            "span_id": f"{eid}-span",
            "available_at": None,
            "hop_path": [],
            "source_class": cls,
            "admitted": admitted,
            "reason": f"{'admitted' if admitted else 'excluded'}: {cls} (rule {cls})",
            **extra,
        }
    )


def _answer(i: int, rng: random.Random) -> AnswerOut:
    conv = f"conv-{i // 4:04d}"
    trace = f"trace-{i // 2:04d}"
    qtype = TYPES[i % len(TYPES)]
    order = 10000 + i
    amount = 20 + (i * 7) % 180
    refund = (
        f"get_refund(order_id={order}) -> refund_id RF-{order}; status approved; amount ${amount}.00; "
        f"method original card; posted {3 + i % 5} business days after approval. Notes: customer reported "
        f"a cracked lid on delivery; photo evidence attached; no return label needed."
    )
    article = (
        f"KB-{100 + i % 40}: Warranty and returns. Appliances carry a {12 + 12 * (i % 2)}-month limited "
        f"warranty from the delivery date. Cosmetic damage must be reported within 14 days. Refunds go "
        f"to the original payment method. Shipping is free on orders over $50; express costs $9.95."
    )
    evidence = [
        _ev(f"{conv}-sys", "system_prompt", SYSTEM, trace, "system_prompt", False),
        _ev(
            f"{conv}-turn",
            "user_message",
            f"Hi, order {order // 4 * 4} arrived broken.",
            trace,
            "user_message",
            False,
        ),
        _ev(
            f"{trace}-{i}-tool",
            "tool_result",
            refund,
            trace,
            CLASSES[0],
            True,
            name="get_refund",
            hop_path=[f"search_orders(q={order})", f"get_refund(order_id={order})"],
            metadata={"latency_ms": 40 + i % 60},
        ),
        _ev(
            f"{trace}-{i}-kb",
            "retrieved_document",
            article,
            trace,
            CLASSES[1 + i % 2],
            True,
            name=f"KB-{100 + i % 40}",
            url=f"https://kb.example/{100 + i % 40}",
        ),
    ]
    refusal = i % 23 == 7
    sentences = [
        (f"Your refund of ${amount}.00 was approved.", "supported", 2, f"amount ${amount}.00"),
        (
            f"It will reach your card within {3 + i % 5} business days.",
            "supported",
            2,
            "method original card",
        ),
        (
            f"Your appliance has a {12 + 12 * (i % 2)}-month warranty [KB-{100 + i % 40}].",
            "supported",
            3,
            "limited",
        ),
        ("Express shipping is free on every order.", rng.choice(VERDICTS), 3, "express costs $9.95"),
        (f"We also sent a return label for order {order}.", rng.choice(VERDICTS[3:]), None, ""),
    ][: 3 + i % 3]
    if refusal:
        sentences = []
    text = " ".join(s for s, *_ in sentences) + " Anything else I can help with?"
    if refusal:
        text = "I'm sorry, I can't help with that request."
    claims: list[ClaimOut] = []
    pos = 0
    for j, (sentence, verdict, ev_index, quote) in enumerate(sentences):
        start = text.index(sentence, pos)
        pos = start + len(sentence)
        cites = (
            [CitationOut(evidence_id=evidence[ev_index].evidence_id, quote=quote)]
            if (ev_index is not None and verdict in ("supported", "contradicted"))
            else []
        )
        extra: dict[str, object] = {}
        if verdict == "unjudged":
            extra["unjudged_reason"] = "offline_undecided" if i % 2 else "timeout"
        if verdict == "absent":
            extra["inadmissible_support"] = [evidence[1].evidence_id] if i % 3 == 0 else []
        if j == 2 and i % 11 == 3:
            extra["misattributed"] = True
            extra["citation_markers"] = [
                CitationMarkerOut(
                    marker=f"[KB-{100 + i % 40}]",
                    evidence_ids=[evidence[3].evidence_id],
                    resolved_by="id",
                    supports=False,
                    reason="the cited article does not state it",
                )
            ]
        if j == 0 and i % 17 == 5:
            extra["conflicts"] = [
                ConflictOut(
                    evidence_id=evidence[2].evidence_id, quote=f"amount ${amount}.00", stance="supports"
                ),
                ConflictOut(evidence_id=evidence[3].evidence_id, quote="Refunds go", stance="contradicts"),
            ]
            extra["conflict_resolution"] = "flag"
        claims.append(
            ClaimOut.model_validate(
                {
                    "claim_id": f"a{i}:c{j}",
                    "text": sentence,
                    "start": start,
                    "end": pos,
                    "screened": False,
                    "screen_reason": None,
                    "verdict": verdict,
                    "citations": cites,
                    "rationale": f"judged against {evidence[ev_index or 2].evidence_id}",
                    **extra,
                }
            )
        )
    closing = "Anything else I can help with?"
    if not refusal:
        claims.append(
            ClaimOut(
                claim_id=f"a{i}:c9",
                text=closing,
                start=text.index(closing),
                end=len(text),
                screened=True,
                screen_reason="offer_to_help",
                verdict=None,
            )
        )
    judged = [c for c in claims if c.verdict in ("supported", "contradicted", "absent")]
    supported = sum(c.verdict == "supported" for c in judged)
    unjudged = sum(c.verdict == "unjudged" for c in claims)
    contradicted = sum(c.verdict == "contradicted" for c in claims)
    return AnswerOut(
        answer_id=f"ans-{i:05d}",
        trace_id=trace,
        span_id=f"gen-{i}",
        conversation_id=conv,
        question=f"Where is my refund for order {order}? ({qtype})",
        question_type=qtype,
        text=text,
        generated_at=T0 + timedelta(minutes=i),
        evidence=evidence,
        claims=claims,
        refusal=refusal,
        groundedness=supported / len(judged) if judged else None,
        contradicted=contradicted,
        unjudged=unjudged,
        grounded=None if refusal else (bool(judged) and supported == len(judged) and not unjudged),
    )


def generated_result(n: int = 1000, seed: int = 15) -> AuditResult:
    """An audit result of ``n`` generated answers with a real metrics summary."""
    rng = random.Random(seed)
    answers = [_answer(i, rng) for i in range(n)]
    run = RunInfo(
        id=f"generated-{n}",
        started_at=T0,
        policy=None,
        judge=JudgeRef(kind="offline", approximate=True),
    )
    return AuditResult(run=run, answers=answers, summary=summarise(answers).model_dump(mode="json"))
