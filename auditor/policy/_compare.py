"""Explaining a policy's decisions and comparing two policies on the same answers.

These back ``auditor policy explain`` (why each item is in or out) and ``auditor policy diff``
(which items change side between two policies, and the rule responsible on each side).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from auditor.evidence import Answer, Evidence
from auditor.policy._evaluate import Decision, evaluate
from auditor.policy._model import Policy


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ExplainedItem(_Frozen):
    """One evidence item with the policy's decision on it."""

    evidence: Evidence
    decision: Decision


class AnswerExplanation(_Frozen):
    answer_id: str
    trace_id: str
    question: str | None
    items: tuple[ExplainedItem, ...]

    @property
    def admitted(self) -> int:
        return sum(1 for item in self.items if item.decision.admitted)


class Change(_Frozen):
    """An item whose admission differs between policy ``a`` and policy ``b``."""

    evidence: Evidence
    a: Decision
    b: Decision


class AnswerDiff(_Frozen):
    answer_id: str
    trace_id: str
    question: str | None
    changes: tuple[Change, ...]


class PolicyDiff(_Frozen):
    """Per answer, the items that change side; answers without changes are counted, not listed."""

    a: str
    b: str
    a_sha256: str
    b_sha256: str
    answers_compared: int
    items_compared: int
    answers: tuple[AnswerDiff, ...]

    @property
    def items_changed(self) -> int:
        return sum(len(answer.changes) for answer in self.answers)


def explain(policy: Policy, answers: Sequence[Answer]) -> list[AnswerExplanation]:
    """Per answer, per evidence item: the class, admitted or not, and the reason.

    Args:
        policy: the policy to apply.
        answers: answers from evidence reconstruction.

    Returns:
        One explanation per answer, items in the answer's evidence order.
    """
    return [
        AnswerExplanation(
            answer_id=answer.answer_id,
            trace_id=answer.trace_id,
            question=answer.question,
            items=tuple(
                ExplainedItem(evidence=item, decision=decision)
                for item, decision in zip(answer.evidence, evaluate(policy, answer), strict=True)
            ),
        )
        for answer in answers
    ]


def diff(policy_a: Policy, policy_b: Policy, answers: Sequence[Answer]) -> PolicyDiff:
    """The evidence items whose admission changes between two policies, per answer.

    Args:
        policy_a: the first policy (the "before").
        policy_b: the second policy (the "after").
        answers: answers from evidence reconstruction.

    Returns:
        The changes, with the deciding rule under each policy; answers with none are omitted.
    """
    changed: list[AnswerDiff] = []
    items = 0
    for answer in answers:
        decisions = zip(answer.evidence, evaluate(policy_a, answer), evaluate(policy_b, answer), strict=True)
        changes = tuple(
            Change(evidence=item, a=a, b=b) for item, a, b in decisions if a.admitted != b.admitted
        )
        items += len(answer.evidence)
        if changes:
            changed.append(
                AnswerDiff(
                    answer_id=answer.answer_id,
                    trace_id=answer.trace_id,
                    question=answer.question,
                    changes=changes,
                )
            )
    return PolicyDiff(
        a=_label(policy_a),
        b=_label(policy_b),
        a_sha256=policy_a.sha256,
        b_sha256=policy_b.sha256,
        answers_compared=len(answers),
        items_compared=items,
        answers=tuple(changed),
    )


def _label(policy: Policy) -> str:
    return f"{policy.name} {policy.version}"
