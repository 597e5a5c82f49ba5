"""The HTML report without a browser: strict templates, escaping, the judge banner, figures."""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import pytest
from jinja2 import Environment, UndefinedError
from scipy.stats import binomtest

from auditor.metrics import Interval, Rate, Summary
from auditor.metrics._model import Segment
from auditor.policy import load_policy
from auditor.report import ReportError, render_report, write_report
from auditor.report._pieces import find_quote, marked_pieces
from auditor.report._templates import template
from auditor.results import AnswerOut, AuditResult, CitationOut, ClaimOut, EvidenceOut, JudgeRef
from auditor.run import audit
from tests.conftest import FIXTURES

HOSTILE_SCRIPT = "<script>alert(1)</script>"
HOSTILE_IMG = '"><img src=x onerror=alert(2)>'
HOSTILE_QUOTE = "refund amount: $80.00"


# --- building realistic results -------------------------------------------------------------------


def rate(k: int, n: int, intervals: bool = True) -> Rate:
    if not n:
        return Rate(numerator=k, denominator=n, value=None)
    if not intervals:
        return Rate(numerator=k, denominator=n, value=k / n)
    test = binomtest(k, n)
    w = test.proportion_ci(confidence_level=0.95, method="wilson")
    cp = test.proportion_ci(confidence_level=0.95, method="exact")
    return Rate(
        numerator=k,
        denominator=n,
        value=k / n,
        wilson=Interval(method="wilson", low=w.low, high=w.high),
        clopper_pearson=Interval(method="clopper-pearson", low=cp.low, high=cp.high),
    )


def _judged(a: AnswerOut) -> list[ClaimOut]:
    return [
        c for c in a.claims or [] if not c.screened and c.verdict in ("supported", "contradicted", "absent")
    ]


def _segment(name: str, answers: list[AnswerOut], claims: list[ClaimOut]) -> Segment:
    with_claims = [a for a in answers if _judged(a)]
    return Segment(
        name=name,
        answers=len(answers),
        judged_claims=len(claims),
        groundedness_rate=rate(sum(c.verdict == "supported" for c in claims), len(claims), intervals=False),
        answers_with_unsupported_claim=rate(
            sum(any(c.verdict != "supported" for c in _judged(a)) for a in with_claims), len(with_claims)
        ),
        answer_pass_rate=rate(sum(bool(a.grounded) for a in answers), len(answers)),
    )


def hand_summary(answers: Sequence[AnswerOut]) -> Summary:
    """A metrics Summary computed here, for as long as ``auditor.metrics`` is not there to do it."""
    answered = [a for a in answers if not a.refusal]
    claims = [c for a in answers for c in a.claims or []]
    judged = [c for a in answered for c in _judged(a)]
    count = {v: sum(c.verdict == v for c in judged) for v in ("supported", "contradicted", "absent")}
    unjudged = sum(c.verdict == "unjudged" for a in answered for c in a.claims or [] if not c.screened)
    with_claims = [a for a in answered if any(not c.screened for c in a.claims or [])]
    screened: dict[str, int] = {}
    for c in claims:
        if c.screened:
            screened[c.screen_reason or "unknown"] = screened.get(c.screen_reason or "unknown", 0) + 1
    by_class: dict[str, tuple[set[str], list[ClaimOut]]] = {}
    for a in answered:
        classes = {e.evidence_id: e.source_class or "unknown" for e in a.evidence}
        for c in _judged(a):
            name = classes.get(c.citations[0].evidence_id, "unknown") if c.citations else "none"
            ids, cl = by_class.setdefault(name, (set(), []))
            ids.add(a.answer_id)
            cl.append(c)
    by_type: dict[str, list[AnswerOut]] = {}
    for a in answered:
        by_type.setdefault(a.question_type or "unlabelled", []).append(a)
    return Summary(
        answers=len(answers),
        refusals=len(answers) - len(answered),
        answer_rate=rate(len(answered), len(answers)),
        claims=len(claims),
        screened=sum(screened.values()),
        screened_by_reason=screened,
        judged_claims=len(judged),
        supported=count["supported"],
        contradicted=count["contradicted"],
        absent=count["absent"],
        unjudged=unjudged,
        common_knowledge=0,
        groundedness_rate=rate(count["supported"], len(judged), intervals=False),
        contradiction_rate=rate(count["contradicted"], len(judged), intervals=False),
        answers_with_unsupported_claim=rate(
            sum(any(c.verdict != "supported" for c in a.claims or [] if not c.screened) for a in with_claims),
            len(with_claims),
        ),
        answer_pass_rate=rate(sum(bool(a.grounded) for a in answered), len(answered)),
        by_source_class=[
            _segment(k, [a for a in answered if a.answer_id in ids], cl)
            for k, (ids, cl) in sorted(by_class.items())
        ],
        by_question_type=[
            _segment(k, v, [c for a in v for c in _judged(a)]) for k, v in sorted(by_type.items())
        ],
    )


def summary_for(answers: Sequence[AnswerOut]) -> dict[str, Any]:
    """The real metrics module when it exists, else :func:`hand_summary`."""
    try:
        metrics = importlib.import_module("auditor.metrics")
    except ModuleNotFoundError:
        return hand_summary(answers).model_dump(mode="json")
    summarise: Callable[[Sequence[AnswerOut]], Any] = metrics.summarise
    made = summarise(answers)
    return Summary.model_validate(
        made if isinstance(made, dict) else made.model_dump(mode="json")
    ).model_dump(mode="json")


def hostile_answer() -> AnswerOut:
    text = f"Your refund was $80.00. {HOSTILE_SCRIPT} The lid was cracked. Happy to help!"
    ev_text = f"Order note {HOSTILE_SCRIPT} {HOSTILE_IMG}\n  Refund   Amount:\n $80.00 approved."
    evidence = [
        EvidenceOut(
            evidence_id="ev_hostile",
            kind="tool_result",
            name=f"get_refund{HOSTILE_IMG}",
            text=ev_text,
            metadata={"note": HOSTILE_SCRIPT},
            url=f"https://x.example/{HOSTILE_IMG}",
            trace_id="t-hostile",
            span_id="s1",
            available_at=None,
            hop_path=["search_orders(q=acme)", f"get_refund({HOSTILE_IMG})"],
            source_class="order-tools",
            admitted=True,
            reason="admitted: tool (rule order-tools)",
        ),
        EvidenceOut(
            evidence_id="ev_user",
            kind="user_message",
            name=None,
            text="My lid was cracked.",
            metadata={},
            trace_id="t-hostile",
            span_id="s0",
            available_at=None,
            hop_path=[],
            source_class="user_message",
            admitted=False,
            reason="excluded: the user's own message (rule evidence.user_messages)",
        ),
    ]
    first = "Your refund was $80.00"
    second = "The lid was cracked"
    s2 = text.index(second)
    closing = "Happy to help!"
    claims = [
        ClaimOut(
            claim_id="h:c0",
            text=first,
            start=0,
            end=len(first),
            screened=False,
            screen_reason=None,
            verdict="supported",
            citations=[CitationOut(evidence_id="ev_hostile", quote=HOSTILE_QUOTE)],
            rationale=f"stated in get_refund {HOSTILE_IMG}",
        ),
        ClaimOut(
            claim_id="h:c1",
            text=second,
            start=s2,
            end=s2 + len(second),
            screened=False,
            screen_reason=None,
            verdict="absent",
            inadmissible_support=["ev_user"],
            rationale="found nowhere in admitted evidence",
        ),
        ClaimOut(
            claim_id="h:c2",
            text=closing,
            start=text.index(closing),
            end=len(text),
            screened=True,
            screen_reason="offer_to_help",
            verdict=None,
        ),
    ]
    return AnswerOut(
        answer_id="ans_hostile",
        trace_id="t-hostile",
        span_id="s9",
        question=f"Was I refunded? {HOSTILE_IMG}",
        question_type="refund",
        text=text,
        generated_at=datetime(2026, 3, 1, tzinfo=UTC),
        evidence=evidence,
        claims=claims,
        refusal=False,
        groundedness=0.5,
        contradicted=0,
        unjudged=0,
        grounded=False,
    )


def fixture_result(*, judge: JudgeRef | None = None, hostile: bool = True) -> AuditResult:
    """Every instrumentation fixture audited under the strict policy, plus one hostile answer."""
    paths = sorted(FIXTURES.glob("*/openinference.otlp.jsonl"))
    result = audit(paths, policy=load_policy("strict"))
    answers = [*result.answers, hostile_answer()] if hostile else list(result.answers)
    run = result.run if judge is None else result.run.model_copy(update={"judge": judge})
    return result.model_copy(update={"answers": answers, "run": run, "summary": summary_for(answers)})


def policy_rationale() -> str | None:
    return load_policy("strict").rationale


@pytest.fixture(scope="module")
def result() -> AuditResult:
    return fixture_result()


@pytest.fixture(scope="module")
def html(result: AuditResult) -> str:
    return render_report(result, policy_rationale=policy_rationale())


# --- tests ----------------------------------------------------------------------------------------


def page_data(html: str) -> dict[str, Any]:
    """The page's one JSON block, parsed."""
    block = html.split('<script type="application/json" id="report-data">', 1)[1].split("</script>", 1)[0]
    data: dict[str, Any] = json.loads(block)
    return data


def test_hostile_trace_text_is_escaped_everywhere(html: str) -> None:
    assert HOSTILE_SCRIPT not in html
    assert "<img" not in html
    # the answers travel in the JSON block, with <, > and & escaped; the page only ever sets text
    assert "\\u003cscript\\u003ealert(1)\\u003c/script\\u003e" in html
    assert '\\"\\u003e\\u003cimg src=x onerror=alert(2)\\u003e' in html
    assert "innerHTML" not in html and "insertAdjacentHTML" not in html and "document.write" not in html
    texts = [e["text"] for e in page_data(html)["evidence"]]
    assert any(HOSTILE_SCRIPT in t and HOSTILE_IMG in t for t in texts)
    # exactly two script elements: the JSON data block and the page's own script
    assert len(re.findall(r"<script\b", html)) == 2


def test_json_data_block_cannot_close_its_script_element(result: AuditResult) -> None:
    answer = hostile_answer()
    evil = answer.model_copy(update={"answer_id": "</script><script>alert(3)</script>"})
    page = render_report(result.model_copy(update={"answers": [evil]}))
    data = page.split('<script type="application/json" id="report-data">', 1)[1].split("</script>", 1)[0]
    assert "<" not in data
    assert "alert(3)</script>" not in page


def test_the_page_fetches_nothing(html: str) -> None:
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:|//)""", html)
    assert "@import" not in html and "url(" not in html
    assert "default-src 'none'" in html


def test_strict_undefined_fails_on_a_missing_key() -> None:
    with pytest.raises(UndefinedError):
        template().render()
    with pytest.raises(UndefinedError):
        template().environment.from_string("{{ report.nothing_here }}").render(report=object())


def test_offline_banner_appears_only_for_the_offline_judge(result: AuditResult) -> None:
    offline = render_report(result)
    assert 'id="approximate-banner"' in offline and "Approximate judge." in offline
    llm = render_report(
        result.model_copy(
            update={
                "run": result.run.model_copy(
                    update={
                        "judge": JudgeRef(
                            kind="openai", model="gpt-4.1-mini", prompt_version="judge-3", approximate=False
                        )
                    }
                )
            }
        )
    )
    assert 'id="approximate-banner"' not in llm and "Approximate judge." not in llm
    assert "gpt-4.1-mini" in llm and "judge-3" in llm


def test_headline_figures_and_denominators_appear(result: AuditResult, html: str) -> None:
    s = Summary.model_validate(result.summary)
    g, u, p = s.groundedness_rate, s.answers_with_unsupported_claim, s.answer_pass_rate
    assert g.value is not None and u.value is not None and u.wilson and u.clopper_pearson
    assert f"{g.value * 100:.1f}%" in html
    assert f"{g.numerator} supported / {g.denominator} judged claims" in html
    assert f"{u.numerator} / {u.denominator} decided answers with claims" in html
    assert f"The judge could not decide <strong>{s.undecided_answers}</strong> answer" in html
    assert f"{u.wilson.low * 100:.1f}\N{EN DASH}{u.wilson.high * 100:.1f}%" in html
    assert f"{u.clopper_pearson.low * 100:.1f}\N{EN DASH}{u.clopper_pearson.high * 100:.1f}%" in html
    assert f"{p.numerator} grounded / {p.denominator} answers" in html
    assert f"screened out {s.screened}" in html and f"unjudged {s.unjudged}" in html
    assert "offer to help" in html  # screened reasons
    for seg in s.by_source_class:
        assert f'<th scope="row">{seg.name}</th>' in html


def test_policy_identity_rationale_inputs_and_version(result: AuditResult, html: str) -> None:
    assert result.run.policy is not None
    assert result.run.policy.sha256 in html
    rationale = policy_rationale()
    assert rationale and rationale.strip().split("\n")[0][:40] in html
    for item in result.run.inputs:
        assert item.sha256 in html and item.path in html
    assert f"trace-auditor {result.auditor_version}" in html


def test_filters_carry_counts_and_answers_carry_tags(result: AuditResult, html: str) -> None:
    refusals = sum(bool(a.refusal) for a in result.answers)
    grounded = sum(bool(a.grounded) for a in result.answers)
    assert re.search(rf'data-filter="refusal"[^>]*>Refusals <span class="count">{refusals}</span>', html)
    assert re.search(rf'data-filter="grounded"[^>]*>Grounded <span class="count">{grounded}</span>', html)
    answers = page_data(html)["answers"]
    assert sorted(a["id"] for a in answers) == sorted(a.answer_id for a in result.answers)
    hostile = next(a for a in answers if a["id"] == "ans_hostile")
    assert hostile["tags"] == ["absent"] and hostile["status"] == "not grounded"


def test_claim_resting_only_on_excluded_evidence_is_called_out(html: str) -> None:
    data = page_data(html)
    hostile = next(a for a in data["answers"] if a["id"] == "ans_hostile")
    claim = next(c for c in hostile["claims"] if c["v"] == "absent")
    assert claim["only_excluded"] is True and claim["excluded"][0]["ev"] == 1
    assert data["evidence"][hostile["ev"][1]["ref"]]["callout"] == "the user's own message"
    assert "Rests only on excluded evidence:" in html  # the page's script writes the callout


def test_summary_that_is_not_a_metrics_summary_is_refused(result: AuditResult) -> None:
    with pytest.raises(ReportError, match="not a metrics Summary"):
        render_report(result.model_copy(update={"summary": {"answers": 3}}))


def test_quotes_are_found_case_and_whitespace_insensitively() -> None:
    text = "Order note\n  Refund   Amount:\n $80.00 approved."
    start, end = find_quote(text, HOSTILE_QUOTE) or (0, 0)
    assert text[start:end] == "Refund   Amount:\n $80.00"
    assert find_quote(text, "$95.00") is None
    pieces = marked_pieces(text, [(start, end, "q0"), (start, start + 6, "q1")])
    assert "".join(p.text for p in pieces) == text
    assert [p.marks for p in pieces if p.marks] == [("q0", "q1"), ("q0",)]


def test_write_report_writes_one_file(result: AuditResult, tmp_path: Any) -> None:
    path = write_report(result, tmp_path / "audit.html", policy_rationale="because")
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>") and "because" in page


def test_shared_evidence_is_stored_once_and_answers_with_problems_come_first() -> None:
    from tests.support.many_answers import generated_result

    result = generated_result(40)
    data = page_data(render_report(result))
    prompts = [e for e in data["evidence"] if e["kind"] == "system_prompt"]
    assert len(prompts) == 1 and prompts[0]["shared"] == 40 and prompts[0]["groups"] == 10
    by_id = {a.answer_id: a for a in result.answers}
    for shown in data["answers"]:
        answer = by_id[shown["id"]]
        assert [r["id"] for r in shown["ev"]] == [e.evidence_id for e in answer.evidence]
        assert [data["evidence"][r["ref"]]["text"] for r in shown["ev"]] == [e.text for e in answer.evidence]
    order = [by_id[a["id"]] for a in data["answers"]]
    worst = [any(c.verdict == "contradicted" for c in a.claims or []) for a in order]
    assert worst == sorted(worst, reverse=True) and worst[0]  # every contradicted answer first

    def problem(a: AnswerOut) -> bool:
        claims = a.claims or []
        flagged = any(c.verdict != "supported" or c.misattributed or c.conflicts for c in claims if c.verdict)
        return flagged or not (a.refusal or a.grounded)

    problems = [problem(a) for a in order]
    assert problems == sorted(problems, reverse=True) and not problems[-1]  # then grounded, refusals


def test_the_templates_are_compiled_once_per_process(
    result: AuditResult, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The server's attribution page renders a report per request: compiling the templates each
    # time cost about 0.2 s of it.
    first = render_report(result)
    compiled: list[str | None] = []
    original = Environment.compile

    def counting(self: Environment, source: Any, name: str | None = None, *args: Any, **kwargs: Any) -> Any:
        compiled.append(name)
        return original(self, source, name, *args, **kwargs)

    monkeypatch.setattr(Environment, "compile", counting)
    assert render_report(result) == first
    assert compiled == []
