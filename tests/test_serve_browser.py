"""The server's web app in a real headless browser, against a real ``auditor serve`` process.

The store is filled with real audits first (tests/support/serve_data.py), then ``auditor serve``
runs over it (the received traces wait: the quiet window is long, so the pages do not change under
the test). Chromium, driven by Playwright, uses the pages as a person would: the answers list, a
filter, a search, an answer's detail and its attribution view, the trend, and the sign-in.
Skips locally without Chromium or Playwright; fails instead when ``CI=true``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pytest

from tests.support.browser import keep_screenshot, launched, require_browser
from tests.support.serve import Server, running_server
from tests.support.serve_data import Stored, store_audits

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

TOKEN = "browser-token"
STILL = {"AUDITOR_SERVE_QUIET": "600"}


@dataclass
class Served:
    server: Server
    stored: Stored


@dataclass
class Tab:
    page: Page
    base: str
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def open(self, path: str) -> None:
        self.page.goto(self.base + path)
        self.page.wait_for_load_state("load")

    def rows(self) -> int:
        return self.page.locator("tr.answer-row").count()


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Stored]:
    directory = tmp_path_factory.mktemp("served")
    url = f"sqlite:///{directory / 'serve.db'}"
    return url, store_audits(url, directory / "traces")  # before the browser: audits run an event loop


@pytest.fixture(scope="module")
def served(db: tuple[str, Stored]) -> Iterator[Served]:
    with running_server(db[0], env=STILL) as server:
        yield Served(server, db[1])


@pytest.fixture(scope="module")
def browser(served: Served) -> Iterator[Browser]:
    executable = require_browser()
    with launched(executable) as b:
        yield b


def tab(browser: Browser, base: str) -> Tab:
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    opened = Tab(page, base)
    page.on("request", lambda r: opened.requests.append(r.url))
    page.on("console", lambda m: opened.errors.append(m.text) if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: opened.errors.append(str(e)))
    return opened


@pytest.fixture
def view(browser: Browser, served: Served) -> Iterator[Tab]:
    opened = tab(browser, served.server.url)
    yield opened
    assert opened.errors == [], opened.errors  # no CSP violation, no script error, on any page visited
    assert all(r.startswith(served.server.url) for r in opened.requests), opened.requests
    opened.page.close()


def test_the_answers_list_shows_every_stored_answer_newest_first(view: Tab, served: Served) -> None:
    view.open("/")
    assert view.rows() == len(served.stored.answers)
    first = view.page.locator("tr.answer-row").first.locator("td.when").inner_text()
    last = view.page.locator("tr.answer-row").last.locator("td.when").inner_text()
    assert first >= last
    assert "Answers" in view.page.title()


def test_a_verdict_filter_keeps_only_matching_answers(view: Tab, served: Served) -> None:
    view.open("/")
    view.page.select_option("select[name=verdict]", "grounded")
    view.page.click("form.filters button[type=submit]")
    view.page.wait_for_url("**/?*verdict=grounded*")
    grounded = sum(1 for _, a in served.stored.answers if a.grounded is True)
    assert 0 < view.rows() == grounded < len(served.stored.answers)
    verdicts = view.page.locator("tr.answer-row").evaluate_all("rows => rows.map(r => r.dataset.verdict)")
    assert set(verdicts) == {"grounded"}
    # The filter is kept in the form, so the next search refines it.
    assert view.page.locator("select[name=verdict]").input_value() == "grounded"


def test_a_search_finds_answers_by_their_words(view: Tab, served: Served) -> None:
    view.open("/")
    view.page.fill("input[name=q]", "warranty")
    view.page.press("input[name=q]", "Enter")
    view.page.wait_for_url("**q=warranty*")
    expected = sum(
        1 for _, a in served.stored.answers if "warranty" in (a.text + " " + (a.question or "")).lower()
    )
    assert 0 < view.rows() == expected < len(served.stored.answers)
    texts = view.page.locator("tr.answer-row").all_inner_texts()
    assert all("warranty" in t.lower() for t in texts)


def test_an_answer_detail_shows_its_claims_evidence_and_attribution(view: Tab, served: Served) -> None:
    run, answer = next(
        (r, a) for r, a in served.stored.answers if a.claims and any(c.citations for c in a.claims)
    )
    view.open(f"/?run_id={run}&q={answer.text[:20]}")
    view.page.locator("tr.answer-row a").first.click()
    view.page.wait_for_url("**/answers/**")
    assert answer.text[:20] in view.page.locator("#answer-body").inner_text()
    claim = view.page.locator("#answer-body a.claim").first
    claim.click()
    assert view.page.evaluate("location.hash").startswith("#claim-")
    target = view.page.locator(":target")
    assert target.count() == 1 and "claim-row" in (target.get_attribute("class") or "")
    assert view.page.locator("article.evidence").count() == len(answer.evidence)
    assert view.page.locator("article.evidence.excluded").count() == sum(
        1 for e in answer.evidence if e.admitted is False
    )
    view.page.click("#attribution-link")
    view.page.wait_for_url("**/attribution?*")
    assert answer.text[:20] in view.page.locator("body").inner_text()
    assert view.page.evaluate("location.hash") == "#a0"  # it lands on the answer, not the figures
    assert view.page.locator("article#a0").is_visible()


PAGES = ("/", "/trend", "/runs", "/policy")


@pytest.mark.parametrize("width", (390, 1024, 1440))
def test_every_page_fits_the_screen_without_sideways_scroll(
    browser: Browser, served: Served, width: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    shots = tmp_path_factory.mktemp(f"web-{width}")
    page = browser.new_page(viewport={"width": width, "height": 844 if width == 390 else 800})
    run, answer = served.stored.answers[0]
    for path in (*PAGES, f"/answers/{answer.answer_id}?run={run}"):
        page.goto(served.server.url + path)
        page.wait_for_load_state("load")
        name = path.strip("/").split("?")[0].replace("/", "-") or "list"
        page.screenshot(path=str(shots / f"{name}.png"))
        keep_screenshot(shots / f"{name}.png", f"web-{width}-{name.split('-ans_')[0]}.png")
        overflow = page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, f"{path} at {width} px scrolls sideways by {overflow} px"
    page.close()


def test_the_trend_page_shows_figures_per_hour_and_per_day(view: Tab, served: Served) -> None:
    view.open("/trend")
    hours = view.page.locator("tr.trend-row")
    assert hours.count() >= 3
    cell = hours.first.locator("td").nth(3).inner_text()
    assert " / " in cell and "%" in cell  # the share, its numerator / denominator and its interval
    view.page.click("a[href='/trend?bucket=day']")
    view.page.wait_for_url("**bucket=day*")
    assert view.page.locator("tr.trend-row").count() == 2  # the answers span two days
    view.page.select_option("select[name=question_type]", "billing")
    view.page.click("form.filters button[type=submit]")
    view.page.wait_for_url("**question_type=billing*")
    shown = sum(int(n) for n in view.page.locator("tr.trend-row td:nth-child(2)").all_inner_texts())
    assert shown == sum(1 for _, a in served.stored.answers if a.question_type == "billing")


def test_runs_and_policy_pages(view: Tab, served: Served) -> None:
    view.open("/runs")
    assert view.page.locator("table.runs tbody tr").count() == 2
    received = sum(len(traces) for traces in served.stored.received.values())
    assert view.page.locator("table.traces tbody tr").count() == received
    assert view.page.locator("table.traces .s-pending").count() == received  # the quiet window holds them
    sessions = {a.conversation_id for _, a in served.stored.answers if a.conversation_id}
    assert view.page.locator("table.sessions tbody tr").count() == len(sessions) > 1
    view.page.locator("table.sessions tbody tr a").first.click()
    view.page.wait_for_url("**conversation_id=*")
    assert 0 < view.rows() < len(served.stored.answers)
    view.open("/policy")
    assert len(view.page.locator("#policy-sha").inner_text()) == 64


def test_with_a_token_the_browser_signs_in_once(browser: Browser, db: tuple[str, Stored]) -> None:
    with running_server(db[0], env=STILL, token=TOKEN) as server:
        signed = tab(browser, server.url)
        try:
            signed.open("/trend")
            assert "/login" in signed.page.url
            signed.page.fill("input[name=token]", "wrong")
            signed.page.click("form.login button[type=submit]")
            assert signed.page.locator("p.error").is_visible()
            signed.page.fill("input[name=token]", TOKEN)
            signed.page.click("form.login button[type=submit]")
            signed.page.wait_for_url("**/trend")
            assert signed.page.locator("tr.trend-row").count() >= 1
            cookies = signed.page.context.cookies()
            assert [c["httpOnly"] for c in cookies if c["name"] == "auditor_session"] == [True]
        finally:
            signed.page.close()
