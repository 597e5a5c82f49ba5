"""The report of a generated 1,000-answer run in headless Chromium: search, filters, folds, index, phone.

Skips locally without Chromium or Playwright; fails instead when ``CI=true`` (tests/support/browser.py).
Expected counts are computed here from the result itself, not read back from the page's data.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from auditor.report import write_report
from auditor.results import AnswerOut, AuditResult
from tests.support.browser import launched, require_browser
from tests.support.many_answers import SYSTEM, generated_result

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

N = 1000
PAGE = 25  # answer cards drawn at first; the rest on "Show more", the index or a link

TAGS: dict[str, Callable[[AnswerOut], bool]] = {
    "contradicted": lambda a: any(c.verdict == "contradicted" for c in a.claims or []),
    "absent": lambda a: any(c.verdict == "absent" for c in a.claims or []),
    "unjudged": lambda a: any(c.verdict == "unjudged" for c in a.claims or []),
    "conflict": lambda a: any(c.conflicts for c in a.claims or []),
    "misattributed": lambda a: any(c.misattributed for c in a.claims or []),
    # the offline judge could not tell, or the answer as a whole is undecided (unjudged, none unsupported)
    "undecided": lambda a: (
        a.undecided or any(c.unjudged_reason == "offline_undecided" for c in a.claims or [])
    ),
    "grounded": lambda a: bool(a.grounded) and not a.refusal,
    "refusal": lambda a: bool(a.refusal),
}


@pytest.fixture(scope="module")
def result() -> AuditResult:
    return generated_result(N)


@pytest.fixture(scope="module")
def url(result: AuditResult, tmp_path_factory: pytest.TempPathFactory) -> str:
    return write_report(result, tmp_path_factory.mktemp("scale") / "audit.html").resolve().as_uri()


@pytest.fixture(scope="module")
def browser(url: str) -> Iterator[Browser]:
    with launched(require_browser()) as b:
        yield b


@dataclass
class Tab:
    page: Page
    problems: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def tab(browser: Browser, url: str) -> Iterator[Tab]:
    # one load for the module (a 2 MB page): each test starts from the page's own reset below
    view = Tab(browser.new_page(viewport={"width": 1366, "height": 900}))
    view.page.on(
        "console", lambda m: view.problems.append(m.text) if m.type in ("error", "warning") else None
    )
    view.page.on("pageerror", lambda e: view.problems.append(str(e)))
    view.page.on("request", lambda r: view.requests.append(r.url))
    view.page.goto(url, wait_until="load")
    yield view
    view.page.close()


@pytest.fixture
def page(tab: Tab, url: str) -> Iterator[Page]:
    page = tab.page
    if page.locator("#search").input_value():
        search(page, "")
    for facet in page.locator("select.facet").all():
        if facet.input_value() != "*":
            facet.select_option("*")
    page.locator('button.filter[data-filter="all"]').click()  # redraws the first page of cards
    page.evaluate("() => { history.replaceState(null, '', location.pathname); window.scrollTo(0, 0); }")
    page.evaluate("() => { document.getElementById('answer-index').open = false; }")
    yield page
    assert tab.problems == [] and tab.requests == [url]  # no script error, nothing fetched


def status(page: Page) -> str:
    return page.locator("#filter-status").inner_text()


def cards(page: Page) -> list[str]:
    ids: list[str] = page.locator("article.answer").evaluate_all("els => els.map(e => e.id)")
    return ids


def card_tags(page: Page) -> list[list[str]]:
    tags: list[list[str]] = page.locator("article.answer").evaluate_all(
        "els => els.map(e => e.getAttribute('data-tags').split(' '))"
    )
    return tags


def shown_ids(page: Page) -> set[str]:
    codes = page.locator("article.answer p.ids code:first-of-type")
    return set(codes.evaluate_all("els => els.map(e => e.textContent)"))


def search(page: Page, text: str) -> None:
    page.locator("#search").fill(text)
    page.wait_for_function(
        "t => document.getElementById('filter-status').textContent.indexOf(t) >= 0",
        arg=f"\N{LEFT DOUBLE QUOTATION MARK}{text}\N{RIGHT DOUBLE QUOTATION MARK}" if text else "Showing all",
    )


def test_first_screen_is_a_page_of_answers_with_problems_first(page: Page, result: AuditResult) -> None:
    assert status(page) == f"Showing all {N} answers."
    assert len(cards(page)) == PAGE and page.locator("#index li").count() == N
    assert all("contradicted" in t for t in card_tags(page))  # the worst first: 227 answers have one
    more = page.locator("#more")
    assert more.inner_text() == f"Show {PAGE} more ({N - PAGE} not shown)"
    more.click()
    assert len(cards(page)) == 2 * PAGE
    # the last in the index: grounded answers and refusals come after every answer with a problem
    last = page.locator("#index li").last.locator(".status").text_content()
    assert last in ("grounded", "refusal")


@pytest.mark.parametrize("key", list(TAGS))
def test_each_outcome_filter_shows_exactly_its_answers(page: Page, result: AuditResult, key: str) -> None:
    expected = {a.answer_id for a in result.answers if TAGS[key](a)}
    assert expected, key
    page.locator(f'button.filter[data-filter="{key}"]').click()
    assert status(page).startswith(f"Showing {len(expected)} of {N} answers: ")
    assert page.locator("#index-count").inner_text() == str(len(expected))
    assert len(cards(page)) == min(PAGE, len(expected))
    assert shown_ids(page) <= expected
    assert all(key in t for t in card_tags(page))


@pytest.mark.parametrize(
    ("facet", "value", "keep"),
    [
        ("#facet-verdict", "supported", lambda a: any(c.verdict == "supported" for c in a.claims or [])),
        (
            "#facet-class",
            "shipping-tools",
            lambda a: any(e.source_class == "shipping-tools" for e in a.evidence),
        ),
        ("#facet-type", "refund", lambda a: a.question_type == "refund"),
        ("#facet-trace", "trace-0007", lambda a: a.trace_id == "trace-0007"),
    ],
)
def test_each_facet_filters_and_combines_with_the_outcome_filter(
    page: Page, result: AuditResult, facet: str, value: str, keep: Callable[[AnswerOut], bool]
) -> None:
    expected = {a.answer_id for a in result.answers if keep(a)}
    assert 0 < len(expected) < N
    page.locator(facet).select_option(value)
    assert status(page).startswith(f"Showing {len(expected)} of {N} answers: ")
    assert shown_ids(page) <= expected and len(cards(page)) == min(PAGE, len(expected))
    both = {a.answer_id for a in result.answers if keep(a) and TAGS["absent"](a)}
    page.locator('button.filter[data-filter="absent"]').click()
    assert status(page).startswith(f"Showing {len(both)} of {N} answers: has absent, ")
    assert shown_ids(page) <= both
    page.locator(facet).select_option("*")
    page.locator('button.filter[data-filter="all"]').click()
    assert status(page) == f"Showing all {N} answers."


def test_search_covers_answer_claim_and_evidence_text(page: Page, result: AuditResult) -> None:
    # evidence only: the refund id is in one answer's tool result, nowhere in any answer text
    assert all("RF-10421" not in a.text for a in result.answers)
    search(page, "rf-10421")
    assert status(page).startswith(f"Showing 1 of {N} answers") and shown_ids(page) == {"ans-00421"}

    # two words, each anywhere in the answer, its question, its claims or its evidence
    def has(a: AnswerOut, word: str) -> bool:
        texts = [a.text, a.question or "", *(c.text for c in a.claims or []), *(e.text for e in a.evidence)]
        return any(word in t.lower() for t in texts)

    wanted = {a.answer_id for a in result.answers if has(a, "sent") and has(a, "10008")}
    search(page, "Sent 10008")
    assert shown_ids(page) == wanted and "ans-00008" in wanted and len(wanted) < 4
    search(page, "no answer says this")
    assert cards(page) == [] and page.locator("#index li").count() == 0
    search(page, "")
    assert len(cards(page)) == PAGE


def test_supported_claims_are_folded_until_chosen(page: Page) -> None:
    article = page.locator("article.answer").first
    fold = article.locator("details.supported-claims")
    assert fold.get_attribute("open") is None
    assert not fold.locator("li.claim-row").first.is_visible()
    assert article.locator("ol.claims > li.claim-row.contradicted").first.is_visible()
    claim = article.locator("span.claim.supported").first
    claim.click()  # choosing a folded claim in the answer map unfolds it
    key = claim.get_attribute("data-claim")
    assert fold.get_attribute("open") is not None
    assert page.locator(f"li#{key}").is_visible() and "is-selected" in (
        page.locator(f"li#{key}").get_attribute("class") or ""
    )


def test_choosing_a_claim_lights_its_quote_in_the_cited_evidence(page: Page, result: AuditResult) -> None:
    article = page.locator("article.answer").first
    claim = article.locator("span.claim.contradicted").first
    claim.click()
    hits = article.locator("mark.quote-hit")
    assert hits.count() == 1 and hits.first.inner_text() == "express costs $9.95"
    cited = article.locator(".ev.is-cited")
    assert cited.count() == 1 and cited.locator("mark.quote-hit").count() == 1
    assert "KB-" in cited.locator(".ev-name").inner_text()
    claim.click()
    assert article.locator("mark.quote-hit").count() == 0


def test_shared_evidence_is_stored_once_and_folded(page: Page, result: AuditResult) -> None:
    html = Path(page.url.removeprefix("file://")).read_text(encoding="utf-8")
    phrase = "Never promise refunds that a tool did not approve."
    assert html.count(phrase) == SYSTEM.count(phrase) == 3  # one copy of the prompt for 1,000 answers
    shared = page.locator("article.answer").first.locator("details.ev-shared").first
    assert shared.get_attribute("open") is None
    conversations = len({a.conversation_id for a in result.answers})
    assert f"the same text in {N} answers in {conversations} conversations" in shared.inner_text()
    shared.locator("summary").click()
    assert SYSTEM[:40] in shared.locator("pre.ev-text").inner_text()


def test_the_index_opens_any_answer(page: Page) -> None:
    page.locator("#answer-index > summary").click()
    entry = page.locator("#index li a").nth(700)
    anchor = entry.get_attribute("data-answer")
    question = entry.locator(".idx-q").inner_text()
    assert anchor and page.locator(f"#{anchor}").count() == 0  # not drawn yet
    entry.click()
    target = page.locator(f"#{anchor}")
    assert target.is_visible() and target.locator("h3").inner_text() == question
    assert page.evaluate("location.hash") == f"#{anchor}"
    box = target.bounding_box()
    assert box is not None and 0 <= box["y"] < 900  # scrolled to it
    assert len(cards(page)) == PAGE + 1


def test_a_link_to_an_answer_opens_it(browser: Browser, url: str) -> None:
    view = browser.new_page()
    view.goto(url + "#a999e2", wait_until="load")
    assert view.locator("#a999").is_visible() and view.locator("#a999e2").is_visible()
    view.close()


def test_phone_layout_never_scrolls_sideways(browser: Browser, url: str) -> None:
    phone = browser.new_page(viewport={"width": 390, "height": 844}, device_scale_factor=2)
    phone.goto(url, wait_until="load")

    def width() -> int:
        return int(phone.evaluate("document.documentElement.scrollWidth"))

    assert width() <= 390
    phone.locator("#answer-index > summary").click()
    for fold in phone.locator("article.answer details").all()[:40]:
        fold.evaluate("d => { d.open = true; }")
    phone.locator("article.answer span.claim").first.click()
    assert width() <= 390
    wide = phone.evaluate(
        "Array.from(document.querySelectorAll('main *'))"
        ".filter(e => e.getBoundingClientRect().right > 391 && !e.parentElement.closest('.filters'))"
        ".map(e => e.tagName + '.' + e.className).slice(0, 5)"
    )
    # a wide table may scroll inside its own panel, the verdict filters inside their one-row strip;
    # nothing else is wider than the phone
    assert all(w.startswith(("TABLE", "THEAD", "TBODY", "TR", "TH", "TD")) for w in wide), wide
    assert phone.locator("table.seg").first.bounding_box() is not None
    phone.close()
