"""The HTML report in a real headless browser (Debian's Chromium driven by Playwright).

Skips locally without Chromium or Playwright; fails instead when ``CI=true`` (tests/support/browser.py).
``python -m tests.test_report_browser`` regenerates the screenshots in ``docs/``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from auditor.report import write_report
from auditor.results import AuditResult
from auditor.run import audit
from tests.conftest import ROOT
from tests.support.browser import keep_screenshot, launched, require_browser
from tests.test_citations import cited_result
from tests.test_report import HOSTILE_IMG, HOSTILE_SCRIPT, fixture_result, policy_rationale

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page


@dataclass
class Loaded:
    page: Page
    url: str
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def result() -> AuditResult:
    return fixture_result()


@pytest.fixture(scope="module")
def report_url(result: AuditResult, tmp_path_factory: pytest.TempPathFactory) -> str:
    path = write_report(
        result, tmp_path_factory.mktemp("report") / "audit.html", policy_rationale=policy_rationale()
    )
    return path.resolve().as_uri()


@pytest.fixture(scope="module")
def cited_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A report of answers whose citation markers resolve, support, misattribute or name nothing."""
    directory = tmp_path_factory.mktemp("cited")
    return write_report(cited_result(directory), directory / "cited.html").resolve().as_uri()


@pytest.fixture(scope="module")
def demo_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The bundled demo's report: two admitted warranty pages disagree on the X200's warranty."""
    directory = tmp_path_factory.mktemp("demo")
    result = audit(sorted((ROOT / "examples" / "traces").iterdir()), store=False)
    return write_report(result, directory / "demo.html").resolve().as_uri()


@pytest.fixture(scope="module")
def browser(report_url: str, cited_url: str, demo_url: str) -> Iterator[Browser]:
    # after the reports: the audit runs its own event loop, which cannot start inside Playwright's
    executable = require_browser()
    with launched(executable) as b:
        yield b


def load(browser: Browser, url: str) -> Loaded:
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    loaded = Loaded(page, url)
    page.on("request", lambda r: loaded.requests.append(r.url))
    page.on("console", lambda m: loaded.errors.append(m.text) if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: loaded.errors.append(str(e)))

    def dismiss(dialog: Any) -> None:
        loaded.dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", dismiss)
    page.goto(url)
    page.wait_for_load_state("load")
    return loaded


@pytest.fixture
def loaded(browser: Browser, report_url: str) -> Iterator[Loaded]:
    view = load(browser, report_url)
    yield view
    view.page.close()


def visible_answers(page: Page) -> int:
    return page.locator("article.answer:visible").count()


def answer_index(result: AuditResult, answer_id: str) -> int:
    return next(i for i, a in enumerate(result.answers) if a.answer_id == answer_id)


def test_renders_without_console_errors_or_network_requests(loaded: Loaded, result: AuditResult) -> None:
    page = loaded.page
    assert page.locator("h1").inner_text().startswith("Audit of")
    assert visible_answers(page) == len(result.answers)
    page.locator("article.answer span.claim").first.click()
    page.locator('button.filter[data-filter="absent"]').click()
    assert loaded.errors == []
    assert loaded.requests == [loaded.url]


def test_filtering_changes_the_visible_answers(loaded: Loaded, result: AuditResult) -> None:
    page = loaded.page
    expected = {
        "refusal": sum(bool(a.refusal) for a in result.answers),
        "grounded": sum(bool(a.grounded) for a in result.answers),
        "contradicted": sum(any(c.verdict == "contradicted" for c in a.claims or []) for a in result.answers),
        "absent": sum(any(c.verdict == "absent" for c in a.claims or []) for a in result.answers),
    }
    assert all(expected.values()) and expected["refusal"] < len(result.answers)
    for key, count in expected.items():
        button = page.locator(f'button.filter[data-filter="{key}"]')
        button.click()
        assert button.get_attribute("aria-pressed") == "true"
        assert visible_answers(page) == count, key
        assert re.search(
            rf"Showing {count} of {len(result.answers)}", page.locator("#filter-status").inner_text()
        )
    page.locator("button.filter", has_text="Refusals").click()
    assert "refusal" in (page.locator("article.answer:visible").first.get_attribute("data-tags") or "")
    page.locator('button.filter[data-filter="all"]').click()
    assert visible_answers(page) == len(result.answers)


def test_choosing_a_claim_highlights_its_quote_in_the_right_evidence(
    loaded: Loaded, result: AuditResult
) -> None:
    page = loaded.page
    i = answer_index(result, "ans_hostile")
    article = page.locator(f"#a{i}")
    assert article.locator("mark.quote-hit").count() == 0
    claim = article.locator("span.claim", has_text="Your refund was $80.00")
    claim.click()
    assert claim.get_attribute("aria-pressed") == "true"
    hits = page.locator("mark.quote-hit")
    assert hits.count() == 1
    assert " ".join(hits.first.inner_text().split()).lower() == "refund amount: $80.00"
    # it sits inside the cited evidence item (the first one), which is outlined; nothing else is lit
    assert article.locator(f"#a{i}e0 mark.quote-hit").count() == 1
    assert "is-cited" in (article.locator(f"#a{i}e0").get_attribute("class") or "")
    assert article.locator(f"#a{i}e1.is-cited").count() == 0
    claim.click()  # choosing it again clears the selection
    assert page.locator("mark.quote-hit").count() == 0 and claim.get_attribute("aria-pressed") == "false"


def test_claims_can_be_chosen_with_the_keyboard(loaded: Loaded, result: AuditResult) -> None:
    page = loaded.page
    answer = next(
        a for a in result.answers if any(c.verdict == "contradicted" and c.citations for c in a.claims or [])
    )
    i = answer_index(result, answer.answer_id)
    claim = page.locator(f"#a{i} span.claim.contradicted").first
    claim.focus()
    page.keyboard.press("Enter")
    assert claim.get_attribute("aria-pressed") == "true"
    hit = page.locator(f"#a{i} mark.quote-hit").first
    assert hit.is_visible()
    quotes = {c.quote for c in answer.claims or [] for c in c.citations}
    assert " ".join(hit.inner_text().split()) in {" ".join(q.split()) for q in quotes}


def test_excluded_support_is_outlined_when_its_claim_is_chosen(loaded: Loaded, result: AuditResult) -> None:
    page = loaded.page
    i = answer_index(result, "ans_hostile")
    page.locator(f"#a{i} span.claim.absent").click()
    assert page.locator(f"#a{i}e1").get_attribute("class") is not None
    assert "is-excluded-support" in (page.locator(f"#a{i}e1").get_attribute("class") or "")
    assert (
        page.locator(f"#a{i} .callout")
        .inner_text()
        .startswith("Rests only on excluded evidence: the user's own message")
    )


def test_hostile_evidence_is_shown_as_text(loaded: Loaded, result: AuditResult) -> None:
    page = loaded.page
    i = answer_index(result, "ans_hostile")
    evidence = page.locator(f"#a{i}e0 pre.ev-text")
    assert HOSTILE_SCRIPT in evidence.inner_text() and HOSTILE_IMG in evidence.inner_text()
    assert evidence.is_visible()
    assert page.locator(f"#a{i}-q").inner_text() == f"Was I refunded? {HOSTILE_IMG}"
    assert page.locator("#index .idx-q", has_text="Was I refunded?").text_content() == (
        f"Was I refunded? {HOSTILE_IMG}"
    )
    assert page.locator("img").count() == 0
    assert page.locator("script").count() == 2
    page.locator(f"#a{i} span.claim").first.click()
    assert loaded.dialogs == [] and loaded.errors == []


def test_each_marker_shows_the_item_it_cites_and_whether_it_supports(
    browser: Browser, cited_url: str
) -> None:
    view = load(browser, cited_url)
    page = view.page
    article = page.locator("article.answer", has=page.locator(".callout.misattributed"))
    assert article.count() == 1
    marker = article.locator("li.marker")
    assert marker.is_visible()
    assert " ".join(marker.inner_text().split()).startswith("[2] cites retrieved document sources")
    assert marker.locator(".marker-outcome").inner_text() == "does not support"
    # the cited item is a link to its evidence card, which is the second document of the answer
    link = marker.locator("a")
    target = link.get_attribute("href") or ""
    assert target.endswith("e1")
    link.click()
    assert page.locator(target).is_visible()
    assert "KB-102" in page.locator(target).inner_text()
    page.locator('button.filter[data-filter="misattributed"]').click()
    assert visible_answers(page) == 1
    # every outcome shows across the answers (those of supported claims once their fold is opened)
    page.locator('button.filter[data-filter="all"]').click()
    for fold in page.locator("details.supported-claims > summary").all():
        fold.click()
    outcomes = {o.inner_text() for o in page.locator(".marker-outcome").all()}
    assert outcomes == {"supports", "does not support", "unresolved"}
    assert page.locator("#misattribution").is_visible()
    assert view.errors == [] and view.requests == [view.url]
    page.close()


def test_a_conflict_shows_both_quotes_side_by_side(browser: Browser, demo_url: str) -> None:
    view = load(browser, demo_url)
    page = view.page
    article = page.locator("article.answer", has=page.locator(".conflict"))
    assert article.count() == 1
    supports, contradicts = (
        article.locator(".conflict-side.supports"),
        article.locator(".conflict-side.contradicts"),
    )
    assert (
        "12-month limited warranty" in supports.inner_text()
        and "24-month warranty" in contradicts.inner_text()
    )
    left, right = supports.bounding_box(), contradicts.bounding_box()
    assert left and right and left["x"] + left["width"] <= right["x"] and abs(left["y"] - right["y"]) < 2
    assert "on_conflict: flag" in article.locator(".conflict-head").inner_text()
    # choosing the claim lights both quotes, each in its own evidence card
    article.locator("span.claim").first.click()
    hits = article.locator("mark.quote-hit")
    assert hits.count() == 2
    assert {" ".join(h.inner_text().split())[:30] for h in hits.all()} == {
        "Warranty policy (2024 edition)",
        "Warranty policy (2026 edition)",
    }
    assert article.locator(".ev.is-cited").count() == 2
    page.locator('button.filter[data-filter="conflict"]').click()
    assert visible_answers(page) == 1
    assert page.locator("#conflicts").is_visible() and "1 / 6" in page.locator("#conflicts").inner_text()
    segment = page.locator("table.seg").first.locator("tr", has_text="retrieved-documents")
    assert "1/2 claims" in segment.locator(".seg-conflicts").inner_text()
    assert "refusals 0" in segment.locator(".seg-answer-rate").inner_text()
    assert view.errors == [] and view.requests == [view.url]
    page.close()


def take_screenshots(browser: Browser, url: str, out: Path, answer: int) -> tuple[Path, Path]:
    """The summary, and one answer's attribution map with a claim chosen, for docs/."""
    view = load(browser, url)
    page = view.page
    summary = out / "report-summary.png"
    page.screenshot(path=str(summary))
    page.add_style_tag(content=".tools { position: static; }")  # the sticky bar would cover the card
    article = page.locator(f"#a{answer}")
    article.scroll_into_view_if_needed()
    article.locator("span.claim").first.click()
    shot = out / "report-answer.png"
    article.screenshot(path=str(shot))
    page.close()
    return summary, shot


def test_screenshots_can_be_taken(
    browser: Browser, report_url: str, tmp_path: Path, result: AuditResult
) -> None:
    summary, shot = take_screenshots(browser, report_url, tmp_path, 0)
    assert summary.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 5_000


if __name__ == "__main__":  # python -m tests.test_report_browser: regenerate docs/report-*.png
    import tempfile

    demo = fixture_result(hostile=False)
    chosen = next(
        i
        for i, a in enumerate(demo.answers)
        if len([c for c in a.claims or [] if c.screened]) == 0
        and any(c.verdict == "absent" and c.inadmissible_support for c in a.claims or [])
        and any(c.verdict == "supported" for c in a.claims or [])
    )
    with tempfile.TemporaryDirectory() as tmp, launched(require_browser()) as chromium:
        page_path = write_report(demo, Path(tmp) / "audit.html", policy_rationale=policy_rationale())
        print(*take_screenshots(chromium, page_path.resolve().as_uri(), ROOT / "docs", chosen))


WIDTHS = (390, 1024, 1440)  # a phone, a small laptop, a desktop


@pytest.mark.parametrize("width", WIDTHS)
def test_the_first_screen_shows_a_problem_answer_without_sideways_scroll(
    browser: Browser, demo_url: str, width: int, tmp_path: Path
) -> None:
    page = browser.new_page(viewport={"width": width, "height": 844 if width == 390 else 800})
    page.goto(demo_url)
    page.wait_for_load_state("load")
    page.screenshot(path=str(tmp_path / f"report-{width}.png"))
    keep_screenshot(tmp_path / f"report-{width}.png", f"report-{width}.png")
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"{width} px: the page scrolls sideways by {overflow} px"
    first = page.locator("article.answer").first
    assert first.locator(".status").inner_text().lower() != "grounded"  # problems first
    top = first.bounding_box()
    assert top is not None and top["y"] < page.viewport_size["height"], f"{width} px: first answer at {top}"
    assert page.locator("#more").is_hidden()  # no "Show 0 more" button when all answers are shown
    page.close()


def test_a_not_grounded_card_says_why(browser: Browser, demo_url: str) -> None:
    page = browser.new_page(viewport={"width": 1024, "height": 800})
    page.goto(demo_url)
    cards = page.locator("article.answer", has=page.locator(".status.not-grounded"))
    assert cards.count() > 0
    for n in range(cards.count()):
        why = cards.nth(n).locator(".why").inner_text()
        assert why.startswith("Not grounded: ") and len(why) > len("Not grounded: ."), why
    page.close()
