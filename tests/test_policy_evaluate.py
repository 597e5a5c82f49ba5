"""Policy evaluation: each match operator, first-match order, every switch, freshness."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from auditor.evidence import Answer, Evidence, EvidenceKind
from auditor.policy import Decision, Policy, evaluate, explain, parse_policy
from auditor.policy import diff as policy_diff

GENERATED = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)


def item(
    kind: EvidenceKind = EvidenceKind.TOOL_RESULT, name: str | None = "get_order", **fields: Any
) -> Evidence:
    fields.setdefault("evidence_id", "e1")
    return Evidence(kind=kind, name=name, text="text", trace_id="t1", **fields)


def doc(**fields: Any) -> Evidence:
    fields.setdefault("name", "kb_retriever")
    return item(EvidenceKind.RETRIEVED_DOCUMENT, **fields)


def decide(policy: Policy, evidence: Evidence, at: datetime = GENERATED) -> Decision:
    answer = Answer(
        answer_id="a1", trace_id="t1", span_id="s1", text="x", generated_at=at, evidence=(evidence,)
    )
    (decision,) = evaluate(policy, answer)
    return decision


def one_class(rules: str, extra: str = "") -> Policy:
    return parse_policy(f'name = "p"\n{extra}\n[[sources]]\nname = "c"\nadmit = true\n{rules}\n', "test.toml")


# --- match operators: each case is (rules, an item that matches, an item that does not) ----------

MATCH_CASES = [
    ('kinds = ["retrieved_document"]', doc(), item()),
    ('names = ["get_order"]', item(name="get_order"), item(name="get_orders")),
    ('names = ["get_*"]', item(name="get_refund"), item(name="search_orders")),
    ('names = ["get_?rder"]', item(name="get_order"), item(name=None)),
    ('document_id_prefix = ["kb-"]', doc(document_id="kb-12"), doc(document_id="web-12")),
    ('document_id_prefix = ["kb-"]', doc(document_id="kb-12"), doc(document_id=None)),
    (
        'url_host = ["help.example.com"]',
        doc(url="https://HELP.example.com/a"),
        doc(url="https://example.com/a"),
    ),
    ('url_host = ["*.example.com"]', doc(url="https://help.example.com/a"), doc(url=None)),
    (
        'url_path = ["/policies/"]',
        doc(url="https://x.com/policies/refunds"),
        doc(url="https://x.com/blog/policies/"),
    ),
    (
        'url_path = ["/policies/*.html"]',
        doc(url="https://x.com/policies/r.html"),
        doc(url="https://x.com/policies/r.pdf"),
    ),
    (
        'metadata = { collection = "faq" }',
        doc(metadata={"collection": "faq"}),
        doc(metadata={"collection": "faq2"}),
    ),
    ('metadata = { collection = { equals = "faq" } }', doc(metadata={"collection": "faq"}), doc(metadata={})),
    ("metadata = { rank = 1 }", doc(metadata={"rank": "1"}), doc(metadata={"rank": 2})),
    ("metadata = { public = true }", doc(metadata={"public": True}), doc(metadata={"public": "false"})),
    (
        'metadata = { tags = "refunds" }',
        doc(metadata={"tags": ["a", "refunds"]}),
        doc(metadata={"tags": ["a"]}),
    ),
    (
        'metadata = { collection = { one_of = ["faq", "policies"] } }',
        doc(metadata={"collection": "policies"}),
        doc(metadata={"collection": "blog"}),
    ),
    (
        'metadata = { source = { regex = "^https://kb\\\\." } }',
        doc(metadata={"source": "https://kb.example.com/1"}),
        doc(metadata={"source": "http://kb.example.com/1"}),
    ),
    ("metadata = { owner = { exists = true } }", doc(metadata={"owner": None}), doc(metadata={"other": 1})),
    ("metadata = { draft = { exists = false } }", doc(metadata={}), doc(metadata={"draft": "yes"})),
    (
        'metadata = { "arguments.order_id" = { regex = "^100" } }',
        item(metadata={"arguments": {"order_id": "10042"}}),
        item(metadata={"arguments": {"order_id": "20042"}}),
    ),
    (
        'kinds = ["tool_result"]\nnames = ["get_order"]',
        item(name="get_order"),
        doc(name="get_order"),
    ),
]


@pytest.mark.parametrize(("rules", "hit", "miss"), MATCH_CASES)
def test_match_operators(rules: str, hit: Evidence, miss: Evidence) -> None:
    policy = one_class(rules)
    matched = decide(policy, hit)
    assert (matched.source_class, matched.admitted, matched.rule) == ("c", True, "c")
    missed = decide(policy, miss)
    assert (missed.source_class, missed.admitted, missed.rule) == ("unmatched", False, "unmatched")
    assert "matches no source class (rule unmatched)" in missed.reason


def test_reasons_name_the_item_and_rule() -> None:
    policy = one_class('names = ["get_order"]')
    assert decide(policy, item()).reason == "admitted: tool 'get_order' (rule c)"
    excluding = parse_policy('name = "p"\n[[sources]]\nname = "dbg"\nadmit = false\nnames = ["get_*"]\n')
    assert decide(excluding, item()).reason == "excluded: tool 'get_order' (rule dbg)"


def test_first_matching_class_wins_in_file_order() -> None:
    text = """
name = "p"
[[sources]]
name = "no-debug"
admit = false
names = ["get_*"]
[[sources]]
name = "orders"
admit = true
names = ["get_order"]
"""
    assert decide(parse_policy(text), item()).rule == "no-debug"
    first, second = text.split("[[sources]]")[1:]
    swapped = parse_policy('name = "p"\n[[sources]]' + second + "[[sources]]" + first)
    decision = decide(swapped, item())
    assert (decision.rule, decision.admitted) == ("orders", True)


def test_unmatched_admit() -> None:
    decision = decide(parse_policy('name = "p"\nunmatched = "admit"\n'), item())
    assert decision.admitted
    assert decision.reason == "admitted: tool 'get_order' matches no source class (rule unmatched)"


# --- switches -----------------------------------------------------------------------------------

ADMIT_ALL_CLASS = '[[sources]]\nname = "all"\nadmit = true\n'


def with_switch(switch: str) -> Policy:
    return parse_policy(f'name = "p"\n[evidence]\n{switch}\n{ADMIT_ALL_CLASS}')


def user(current: bool) -> Evidence:
    return item(EvidenceKind.USER_MESSAGE, name=None, current_question=current)


def test_user_messages_excluded_by_default_even_the_current_question() -> None:
    policy = with_switch("")
    for message in (user(True), user(False)):
        decision = decide(policy, message)
        assert (decision.admitted, decision.rule) == (False, "evidence.user_messages")
        assert decision.reason == "excluded: the user's own message (rule evidence.user_messages)"


def test_user_messages_current_question() -> None:
    policy = with_switch('user_messages = "current_question"')
    assert decide(policy, user(True)).admitted
    earlier = decide(policy, user(False))
    assert not earlier.admitted
    assert "earlier user message" in earlier.reason


def test_user_messages_admit() -> None:
    assert decide(with_switch('user_messages = "admit"'), user(False)).admitted


@pytest.mark.parametrize(
    ("switch", "kind", "source_class"),
    [
        ("system_prompt", EvidenceKind.SYSTEM_PROMPT, "system_prompt"),
        ("model_outputs", EvidenceKind.MODEL_OUTPUT, "model_output"),
    ],
)
def test_system_prompt_and_model_output_switches(switch: str, kind: EvidenceKind, source_class: str) -> None:
    evidence = item(kind, name=None)
    excluded = decide(with_switch(""), evidence)  # the admit-all class never sees these kinds
    assert (excluded.admitted, excluded.source_class, excluded.rule) == (
        False,
        source_class,
        f"evidence.{switch}",
    )
    assert decide(with_switch(f'{switch} = "admit"'), evidence).admitted


def test_tool_errors_switch() -> None:
    failed = item(error=True)
    excluded = decide(with_switch(""), failed)
    assert (excluded.admitted, excluded.rule) == (False, "evidence.tool_errors")
    assert "ended in error" in excluded.reason
    # "admit" lets the item reach the classes; it does not admit it by itself.
    assert decide(with_switch('tool_errors = "admit"'), failed).rule == "all"
    unmatched = parse_policy('name = "p"\n[evidence]\ntool_errors = "admit"\n')
    assert not decide(unmatched, failed).admitted


def test_common_knowledge_switch_is_recorded() -> None:
    assert parse_policy('name = "p"').evidence.common_knowledge == "deny"
    assert with_switch('common_knowledge = "allow"').evidence.common_knowledge == "allow"


# --- reject_if ------------------------------------------------------------------------------------

DOCS = 'kinds = ["retrieved_document"]\n'


def test_status_rejection() -> None:
    policy = one_class(DOCS + '[sources.reject_if]\nstatuses = ["Superseded", "draft"]\n')
    decision = decide(policy, doc(metadata={"status": "superseded"}))
    assert (decision.admitted, decision.source_class, decision.rule) == (False, "c", "c.reject_if.statuses")
    assert decision.reason == "excluded: status 'superseded' (rule c.reject_if.statuses)"
    assert decide(policy, doc(metadata={"status": "current"})).admitted
    assert decide(policy, doc(metadata={})).admitted


def test_status_key_is_configurable() -> None:
    policy = one_class(DOCS + '[sources.reject_if]\nstatuses = ["retired"]\nstatus_key = "lifecycle"\n')
    assert not decide(policy, doc(metadata={"lifecycle": "RETIRED"})).admitted
    assert decide(policy, doc(metadata={"status": "retired"})).admitted


def test_rejected_item_does_not_fall_through() -> None:
    policy = parse_policy(
        'name = "p"\nunmatched = "admit"\n[[sources]]\nname = "c"\nadmit = true\n'
        '[sources.reject_if]\nstatuses = ["draft"]\n[[sources]]\nname = "d"\nadmit = true\n'
    )
    assert decide(policy, doc(metadata={"status": "draft"})).rule == "c.reject_if.statuses"


FRESH = one_class(DOCS + "[sources.reject_if]\nmax_age_days = 30\n")


def test_freshness_is_measured_at_generation_time_not_today() -> None:
    # Ten days old when the answer was generated in 2024; years old by the wall clock today.
    updated = doc(metadata={"updated_at": "2024-05-22"})
    assert (datetime.now(UTC) - datetime(2024, 5, 22, tzinfo=UTC)).days > 30
    assert decide(FRESH, updated, at=GENERATED).admitted
    stale = decide(FRESH, updated, at=datetime(2024, 8, 1, tzinfo=UTC))
    assert (stale.admitted, stale.rule) == (False, "c.reject_if.max_age_days")
    assert "updated_at '2024-05-22' is 71 days old when the answer was generated (limit 30)" in stale.reason


@pytest.mark.parametrize(
    ("value", "admitted"),
    [
        ("2024-05-02T12:00:00Z", True),  # exactly 30 days
        ("2024-05-02T11:59:00+00:00", False),
        ("2024-05-02T13:00:00", True),  # naive: UTC
        ("2024-06-30", True),  # after generation: not stale
    ],
)
def test_freshness_datetimes(value: str, admitted: bool) -> None:
    assert decide(FRESH, doc(metadata={"updated_at": value})).admitted is admitted


def test_unparseable_date_is_stale_and_says_so() -> None:
    decision = decide(FRESH, doc(metadata={"updated_at": "last spring"}))
    assert not decision.admitted
    assert "updated_at 'last spring' is not an ISO date; treated as stale" in decision.reason


def test_undated_items() -> None:
    decision = decide(FRESH, doc(metadata={}))
    assert (decision.admitted, decision.rule) == (False, "c.reject_if.max_age_days")
    assert "no 'updated_at' date" in decision.reason
    lenient = one_class(
        DOCS + '[sources.reject_if]\nmax_age_days = 30\nundated = "admit"\ndate_key = "reviewed"\n'
    )
    assert decide(lenient, doc(metadata={})).admitted
    assert not decide(lenient, doc(metadata={"reviewed": "2020-01-01"})).admitted


# --- explain and diff ----------------------------------------------------------------------------


def test_explain_and_diff() -> None:
    evidence = (item(evidence_id="tool"), user(False).model_copy(update={"evidence_id": "msg"}))
    answer = Answer(
        answer_id="a1", trace_id="t1", span_id="s1", text="x", generated_at=GENERATED, evidence=evidence
    )
    strict = parse_policy(f'name = "a"\n{ADMIT_ALL_CLASS}')
    loose = parse_policy(f'name = "b"\n[evidence]\nuser_messages = "admit"\n{ADMIT_ALL_CLASS}')
    (explained,) = explain(strict, [answer])
    assert [(i.evidence.evidence_id, i.decision.admitted) for i in explained.items] == [
        ("tool", True),
        ("msg", False),
    ]
    result = policy_diff(strict, loose, [answer, answer.model_copy(update={"evidence": evidence[:1]})])
    assert (result.answers_compared, result.items_compared, result.items_changed) == (2, 3, 1)
    (change,) = result.answers[0].changes
    assert change.evidence.evidence_id == "msg"
    assert (change.a.admitted, change.b.admitted) == (False, True)
    assert change.a.rule == change.b.rule == "evidence.user_messages"
