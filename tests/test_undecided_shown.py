"""Undecided is shown as undecided (issue 28): no groundedness percentage for an answer whose only
doubt is an unjudged claim, and every unjudged reason in a sentence a person can read.

The answers come from the real pipeline: the LLM judge through the real ``openai`` client against
the local server, which refuses the call, so the paraphrased claim (which the cascade cannot
settle) is ``unjudged: refused`` and the stated one is supported.
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from auditor.judges import OfflineJudge, UnjudgedReason, describe_unjudged
from auditor.judges.offline._combiner import shipped
from auditor.results import AnswerOut
from auditor.serve._templates import render
from auditor.serve._views import detail
from auditor.testing import NotGroundedError, assert_grounded
from tests.support.fake_openai import FakeOpenAI
from tests.test_offline_judge_score import DOC, STATED, claim

SOURCE = "The Lisbon office opens at 9 am on weekdays. Parking is free for visitors in the north garage."
STATED_CLAIM = "The Lisbon office opens at 9 am on weekdays."
PARAPHRASE = "Guests may leave their cars without charge in the garage to the north."
REFUSED = describe_unjudged("refused")


@pytest.fixture(scope="module")
def undecided() -> tuple[AnswerOut, str]:
    """One answer: a stated claim (settled offline by the cascade) and a paraphrase the LLM refuses."""
    with FakeOpenAI() as server:
        server.enqueue("refuse")
        with pytest.raises(NotGroundedError) as failed:
            assert_grounded(
                f"{STATED_CLAIM} {PARAPHRASE}", [SOURCE], judge="openai:fake-judge", base_url=server.base_url
            )
    (answer,) = failed.value.answers
    return answer, str(failed.value)


def test_the_answer_is_undecided_not_a_percentage(undecided: tuple[AnswerOut, str]) -> None:
    answer, _ = undecided
    verdicts = sorted(c.verdict or "" for c in answer.claims or [] if not c.screened)
    assert verdicts == ["supported", "unjudged"]
    assert answer.groundedness == 1.0  # the JSON keeps the figure over judged claims ...
    assert answer.undecided and answer.grounded is False  # ... the people-facing views do not show it


def test_the_pytest_plugin_says_undecided_and_why(undecided: tuple[AnswerOut, str]) -> None:
    _, message = undecided
    assert message.startswith("answer is undecided: 1 of 1 judged claims supported and none unsupported")
    assert "\nundecided claims:\n  - unjudged: " in message
    assert f"not decided (refused): {REFUSED}" in message
    assert "1.00;" not in message  # no ratio presented as the answer's standing


def test_the_web_app_shows_undecided_and_the_reason(undecided: tuple[AnswerOut, str]) -> None:
    answer, _ = undecided
    page = render(
        "answer.html.j2", view=detail("run-1", answer), title="Answer", version="x", signed_in=False
    )
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))
    assert "undecided 1 claim the judge could not decide, none unsupported" in text
    assert "groundedness" not in text.split("Question", 1)[0]  # no percentage in the header
    assert "100.0%" not in text
    assert f"Not decided (refused): {REFUSED}" in text


def test_the_report_card_shows_undecided_without_a_percentage(undecided: tuple[AnswerOut, str]) -> None:
    from auditor.report._context import _answer_view

    answer, _ = undecided
    view = _answer_view(0, answer)
    assert view.status == "undecided" and view.groundedness is None and "undecided" in view.tags
    (unjudged,) = [c for c in view.claims if c.verdict == "unjudged"]
    assert unjudged.unjudged_text == REFUSED


@pytest.mark.parametrize("reason", list(UnjudgedReason))
def test_every_unjudged_reason_has_a_sentence(reason: UnjudgedReason) -> None:
    sentence = describe_unjudged(reason)
    assert sentence.endswith(".") and "_" not in sentence and len(sentence.split()) >= 6
    assert describe_unjudged(reason.value) == sentence  # the code as stored reads the same


def test_the_offline_judges_reason_says_what_the_score_did() -> None:
    """Not "support score 0.28 between 0.16 and 0.17": which side of which threshold, for what reading."""
    strict = replace(shipped(), supported=0.999, unsupported=0.001)
    [verdict] = OfflineJudge(strict).judge_sync([claim(STATED)], [DOC])
    why = verdict.rationale or ""
    assert why.startswith("undecided: the rules read it as supported (")
    found = re.search(
        r"but its support score (0\.\d{3}) is below 0\.999, the score that decides supported$", why
    )
    assert found is not None and float(found.group(1)) < 0.999, why
