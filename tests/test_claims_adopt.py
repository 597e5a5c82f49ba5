"""Citation markers by resolution (issue 28): a bracketed source id of the answer's own evidence
(``[doc-b]``, ``(KB-7)``, ``[Gift card FAQ]``) is a marker, whatever its shape: trimmed off the
claim's text, listed in its citations as written, and resolved to the item with that id."""

from __future__ import annotations

from datetime import UTC, datetime

from auditor.claims import decompose_answer, resolve_markers
from auditor.evidence import Answer, Evidence, EvidenceKind
from auditor.testing import NotGroundedError, assert_grounded

DOCS = (
    ("e1", "doc-b", "Returns are accepted within 30 days of delivery.", {}),
    ("e2", "KB-7", "Shipping is free on orders above $50.", {}),
    ("e3", "faq", "Gift cards cannot be returned.", {"title": "Gift card FAQ"}),
)


def answer(text: str) -> Answer:
    evidence = tuple(
        Evidence(
            evidence_id=eid,
            kind=EvidenceKind.RETRIEVED_DOCUMENT,
            name="kb",
            text=body,
            trace_id="t",
            document_id=doc,
            metadata=meta,
        )
        for eid, doc, body, meta in DOCS
    )
    return Answer(
        answer_id="a",
        trace_id="t",
        span_id="s",
        text=text,
        question=None,
        generated_at=datetime(2026, 3, 1, tzinfo=UTC),
        evidence=evidence,
    )


def test_bracketed_ids_of_the_evidence_are_markers_trimmed_and_resolved() -> None:
    text = (
        "Returns are accepted within 30 days of delivery [doc-b]. Shipping is free on orders above $50 (KB-7). "
        "Gift cards cannot be returned [Gift card FAQ]."
    )
    a = answer(text)
    claims = decompose_answer(a).judgeable
    assert [(c.text, c.citations) for c in claims] == [
        ("Returns are accepted within 30 days of delivery", ("[doc-b]",)),
        ("Shipping is free on orders above $50", ("(KB-7)",)),
        ("Gift cards cannot be returned", ("[Gift card FAQ]",)),
    ]
    assert all(text[c.start : c.end] == c.text for c in claims)
    resolved = resolve_markers(a, claims)
    assert [[r.evidence_ids for r in resolved[c.claim_id]] for c in claims] == [
        [("e1",)],
        [("e2",)],
        [("e3",)],
    ]


def test_a_marker_after_the_period_cites_the_sentence_before() -> None:
    a = answer(
        "Returns are accepted within 30 days of delivery. [doc-b, KB-7] Gift cards cannot be returned."
    )
    first, second = decompose_answer(a).judgeable
    assert first.citations == ("[doc-b, KB-7]",) and second.citations == ()
    assert second.text == "Gift cards cannot be returned"


def test_a_bracket_that_names_no_evidence_stays_prose() -> None:
    a = answer("Returns are accepted within 30 days of delivery [in most stores].")
    (claim,) = decompose_answer(a).judgeable
    assert claim.citations == () and claim.text.endswith("[in most stores]")


def test_a_misattributed_id_marker_is_found_end_to_end() -> None:
    """Through the whole pipeline: the claim is supported by KB-7 but cites [doc-b]."""
    documents = [{"id": doc, "text": body} for _, doc, body, _ in DOCS]
    try:
        (out,) = assert_grounded("Shipping is free on orders above $50 [doc-b].", documents)
    except NotGroundedError as err:
        (out,) = err.answers
    (claim,) = [c for c in out.claims or [] if not c.screened]
    assert claim.text == "Shipping is free on orders above $50"
    assert claim.verdict == "supported" and claim.misattributed
    (marker,) = claim.citation_markers
    assert marker.marker == "[doc-b]" and marker.resolved_by == "id" and marker.supports is False


def test_an_llm_decomposers_claims_get_the_adopted_markers_too() -> None:
    from auditor.claims import Claim, Decomposition, attach_markers

    text = "Shipping is free on orders above $50 [doc-b]."
    a = answer(text)
    claim = "Shipping is free on orders above $50"
    llm = Decomposition(
        answer_id="a",
        claims=(Claim(claim_id="a:c0", answer_id="a", text=claim, start=0, end=len(claim)),),
        extractor="llm",
    )
    assert attach_markers(llm, text).claims[0].citations == ()  # no listed shape: not a marker alone
    assert attach_markers(llm, text, a).claims[0].citations == ("[doc-b]",)
