"""Citation markers: every form is recognised and trimmed with exact offsets, and resolves to evidence."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from auditor.claims import (
    Claim,
    Decomposition,
    MarkerResolver,
    attach_markers,
    decompose_text,
    normalise_url,
    resolve_markers,
)
from auditor.evidence import Answer, Evidence, EvidenceKind
from tests.test_claims import _check_invariants

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "claim", "marker"),
    [
        ("The X200 has a 24-month warranty [1].", "The X200 has a 24-month warranty", "[1]"),
        ("The X200 has a 24-month warranty [1, 2].", "The X200 has a 24-month warranty", "[1, 2]"),
        (
            "The X200 has a 24-month warranty\u30103\u3011.",
            "The X200 has a 24-month warranty",
            "\u30103\u3011",
        ),
        (
            "The X200 has a 24-month warranty.\u30104:0\u2020warranty.pdf\u3011",
            "The X200 has a 24-month warranty",
            "\u30104:0\u2020warranty.pdf\u3011",
        ),
        ("The X200 has a 24-month warranty[^2].", "The X200 has a 24-month warranty", "[^2]"),
        ("The X200 has a 24-month warranty [^terms].", "The X200 has a 24-month warranty", "[^terms]"),
        ("The X200 has a 24-month warranty [doc:abc].", "The X200 has a 24-month warranty", "[doc:abc]"),
        ("The X200 has a 24-month warranty [KB-101].", "The X200 has a 24-month warranty", "[KB-101]"),
        (
            "The X200 has a 24-month warranty [source](https://help.acme.com/x200).",
            "The X200 has a 24-month warranty",
            "[source](https://help.acme.com/x200)",
        ),
        (
            "The X200 has a 24-month warranty ([1](https://help.acme.com/x200)).",
            "The X200 has a 24-month warranty",
            "([1](https://help.acme.com/x200))",
        ),
        # a prose link and a bare URL are part of the sentence: kept in the claim, listed as markers
        (
            "The [warranty page](https://help.acme.com/x200) gives 24 months.",
            "The [warranty page](https://help.acme.com/x200) gives 24 months",
            "[warranty page](https://help.acme.com/x200)",
        ),
        (
            "The policy at https://help.acme.com/x200 gives 24 months.",
            "The policy at https://help.acme.com/x200 gives 24 months",
            "https://help.acme.com/x200",
        ),
    ],
)
def test_each_marker_form_is_recognised_and_trimmed(text: str, claim: str, marker: str) -> None:
    d = decompose_text("a", text)
    _check_invariants(text, d)
    assert [(c.text, c.citations) for c in d.judgeable] == [(claim, (marker,))]


def test_a_marker_right_after_the_full_stop_stays_with_its_sentence() -> None:
    text = "The fee is $5.\u30101\u3011 Shipping is free.[2] Returns take 30 days."
    d = decompose_text("a", text)
    _check_invariants(text, d)
    assert [(c.text, c.citations) for c in d.claims] == [
        ("The fee is $5", ("\u30101\u3011",)),
        ("Shipping is free", ("[2]",)),
        ("Returns take 30 days", ()),
    ]


def test_a_url_inside_a_marker_is_not_a_second_marker() -> None:
    d = decompose_text("a", "Shipping is free (source: https://help.acme.com/shipping).")
    assert [c.citations for c in d.claims] == [("(source: https://help.acme.com/shipping)",)]


def test_footnote_and_reference_definitions_are_not_claims() -> None:
    text = (
        "The X200 has a 24-month warranty[^1]. Shipping is free [2].\n\n"
        "[^1]: https://help.acme.com/x200, the warranty page\n"
        "[2] https://help.acme.com/shipping\n"
        "[3] Returns are accepted within 30 days."
    )
    d = decompose_text("a", text)
    _check_invariants(text, d)
    # "[3] text" without a colon or a URL is a line that starts with a marker, still a claim
    assert [c.text for c in d.claims] == [
        "The X200 has a 24-month warranty",
        "Shipping is free",
        "[3] Returns are accepted within 30 days",
    ]


# -- resolution ------------------------------------------------------------------------------------


def doc(eid: str, span: str, at: int, **fields: object) -> Evidence:
    return Evidence(
        evidence_id=eid,
        kind=EvidenceKind.RETRIEVED_DOCUMENT,
        text=f"text of {eid}",
        trace_id="t",
        span_id=span,
        available_at=T0 + timedelta(seconds=at),
        **fields,  # type: ignore[arg-type]
    )


EVIDENCE = (
    # an earlier retrieval: never counted by position
    doc("e_old1", "r1", 1, document_id="KB-100"),
    doc("e_old2", "r1", 1, document_id="KB-099"),
    Evidence(
        evidence_id="e_tool",
        kind=EvidenceKind.TOOL_RESULT,
        text="order 10042",
        trace_id="t",
        available_at=T0 + timedelta(seconds=3),
        metadata={"id": "orders-10042"},
    ),
    # the last retrieval before the answer, in the order it returned them
    doc("e1", "r2", 2, document_id="KB-101", url="https://Help.Acme.com/x200/warranty/"),
    doc("e2", "r2", 2, document_id="abc", metadata={"title": "Shipping"}),
    doc("e3", "r2", 2, document_id="doc-7", metadata={"source": "http://help.acme.com/returns#policy"}),
)


def resolve(marker: str, text: str = "") -> tuple[tuple[str, ...], str | None, str]:
    answer = Answer(
        answer_id="a", trace_id="t", span_id="s", text=text or marker, generated_at=T0, evidence=EVIDENCE
    )
    r = MarkerResolver(answer).resolve(marker)
    return r.evidence_ids, r.resolved_by, r.reason


@pytest.mark.parametrize(
    ("marker", "ids", "by"),
    [
        ("[1]", ("e1",), "position"),
        ("[1, 3]", ("e1", "e3"), "position"),
        ("[2-3]", ("e2", "e3"), "position"),
        ("\u30102\u3011", ("e2",), "position"),
        ("[^3]", ("e3",), "position"),  # a footnote with no definition counts as a position
        ("(Passage 2)", ("e2",), "position"),
        ("[doc-2]", ("e2",), "position"),  # no item has the id doc-2: the generic prefix is a position
        ("[doc-7]", ("e3",), "id"),  # an item has the id doc-7: the id wins
        ("[KB-101]", ("e1",), "id"),
        ("[kb-100]", ("e_old1",), "id"),  # ids reach every item, not only the last retrieval
        ("[doc:abc]", ("e2",), "id"),
        ("(source: orders-10042)", ("e_tool",), "id"),  # a metadata id
        ("[e3]", ("e3",), "id"),  # an evidence id
        ("https://help.acme.com/x200/warranty", ("e1",), "url"),  # host case, trailing slash
        ("http://HELP.acme.com/x200/warranty/#terms", ("e1",), "url"),  # scheme, fragment
        ("[source](https://help.acme.com/returns)", ("e3",), "url"),  # a metadata URL
        ("\u30101:0\u2020KB-099\u3011", ("e_old2",), "id"),
    ],
)
def test_each_marker_form_resolves(marker: str, ids: tuple[str, ...], by: str) -> None:
    assert resolve(marker)[:2] == (ids, by)


def test_a_footnote_resolves_through_its_definition() -> None:
    text = "Shipping is free[^ship]. Returns take 30 days [1].\n\n[^ship]: [doc:abc]\n[1]: https://help.acme.com/x200/warranty"
    assert resolve("[^ship]", text)[:2] == (("e2",), "definition")
    assert resolve("[1]", text)[:2] == (("e1",), "definition")  # the definition wins over position 1


@pytest.mark.parametrize(
    ("marker", "text", "reason"),
    [
        ("[7]", "", "the last retrieval before the answer returned 3 document(s); 7 names the 7th"),
        ("[KB-999]", "", "no evidence item of the answer has the id, document id or URL kb-999"),
        (
            "https://elsewhere.example/x",
            "",
            "no evidence item of the answer has the URL https://elsewhere.example/x",
        ),
        ("[^note]", "", "footnote [^note] has no definition in the answer"),
        (
            "[^1]",
            "A [^1].\n[^1]: The user manual",
            "[^1] is defined as 'The user manual', which names no evidence item",
        ),
    ],
)
def test_an_unresolved_marker_says_why(marker: str, text: str, reason: str) -> None:
    assert resolve(marker, text) == ((), None, reason)


def positional(marker: str, *evidence: Evidence) -> tuple[tuple[str, ...], str]:
    answer = Answer(
        answer_id="a", trace_id="t", span_id="s", text=f"x {marker}", generated_at=T0, evidence=evidence
    )
    claim = Claim(claim_id="a:c0", answer_id="a", text="x", start=0, end=1, citations=(marker,))
    (resolution,) = resolve_markers(answer, [claim])["a:c0"]
    return resolution.evidence_ids, resolution.reason


def test_position_needs_a_retrieval_or_a_tool_result() -> None:
    assert positional("[2]") == (
        (),
        "no item has the id 2, and no retrieval or tool result before the answer to count 2 in",
    )


def test_without_a_retrieval_a_position_counts_the_tool_results() -> None:
    assert positional("[1]", EVIDENCE[2]) == (("e_tool",), "")
    assert positional("[2]", EVIDENCE[2]) == (
        (),
        "the answer saw no retrieved document and 1 tool result(s) in its turn; 2 names the 2nd",
    )


@pytest.mark.parametrize(
    ("url", "normal"),
    [
        ("https://Help.Acme.COM/a/b/", "help.acme.com/a/b"),
        ("http://help.acme.com:80/a?x=1#frag", "help.acme.com/a?x=1"),
        ("https://help.acme.com:8443/a", "help.acme.com:8443/a"),
        ("www.acme.com/a.", "www.acme.com/a"),
        ("ftp://acme.com/a", None),
        ("KB-101", None),
    ],
)
def test_url_normalisation(url: str, normal: str | None) -> None:
    assert normalise_url(url) == normal


def test_claims_of_another_extractor_get_the_markers_the_rules_attach() -> None:
    text = "The X200 has a 24-month warranty [KB-101]. Shipping is free."
    llm = Decomposition(
        answer_id="a",
        extractor="llm:fake",
        claims=(
            Claim(claim_id="a:c0", answer_id="a", text="The X200 has a 24-month warranty", start=0, end=32),
            Claim(claim_id="a:c1", answer_id="a", text="Shipping is free", start=43, end=59),
        ),
    )
    assert text[43:59] == "Shipping is free"
    assert [c.citations for c in attach_markers(llm, text).claims] == [("[KB-101]",), ()]
    rules = decompose_text("a", text)
    assert attach_markers(rules, text) is rules


def test_the_quick_pass_over_texts_without_a_marker_finds_and_strips_what_the_patterns_do() -> None:
    # find_markers and strip_markers skip a text holding no bracket, parenthesis, "://" or "www.":
    # on every text, they must give what the three patterns give when run in full.
    import random

    from auditor.claims import _markers as m

    def found_in_full(text: str, start: int, stop: int) -> list[tuple[int, int]]:
        found = list(m.MARKER.finditer(text, start, stop))
        found += [x for x in m.LINK.finditer(text, start, stop) if not m._inside(x, found)]
        found += [x for x in m.URL.finditer(text, start, stop) if not m._inside(x, found)]
        return sorted((x.start(), x.end()) for x in found)

    def stripped_in_full(text: str) -> str:
        return m.URL.sub(" ", m.LINK.sub(lambda x: f" {x.group('label')} ", m.MARKER.sub(" ", text)))

    pieces = [
        *"ab [](){}:/.wWhHtTpPsS1234^-,\u3010\u3011 ",
        "http://",
        "HTTPS://x.y",
        "www.",
        "WWW.",
        "[1]",
        "(source: a)",
        "(Passage 2)",
        "[doc-3]",
        "\u30103\u3011",
        "[x](http://a.b)",
        "see the [page](https://a.example/b) now",
    ]
    rnd = random.Random(7)
    texts = ["".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 24))) for _ in range(4000)]
    for text in texts:
        start, stop = min(2, len(text)), max(len(text) - 2, min(2, len(text)))
        assert [(x.start(), x.end()) for x in m.find_markers(text)] == found_in_full(text, 0, len(text))
        assert [(x.start(), x.end()) for x in m.find_markers(text, start, stop)] == found_in_full(
            text, start, stop
        )
        assert m.strip_markers(text) == stripped_in_full(text)
