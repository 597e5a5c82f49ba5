"""The policy file's schema: the pydantic models a TOML policy is validated into.

A policy declares the admissible source set: which evidence items count when a claim is judged.
The models are frozen and forbid unknown keys, so a typo in a policy file fails loudly instead of
silently widening (or narrowing) what counts. The same models produce the JSON Schema
(``auditor policy schema``) and the canonical serialisation behind :attr:`Policy.sha256`.

This module holds the file's top level: the ``[evidence]`` switches, ``[thresholds]``,
``[answers]`` and :class:`Policy` with its hash; the ``[[sources]]`` classes are
:mod:`auditor.policy._sources`'s. Every number is finite and within its range, so nothing a policy
declares can overflow mid-audit. The order of ``[[sources]]`` is kept: the first matching class wins.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from auditor.evidence import AnswerSelection
from auditor.policy._sources import SetOfStr, SourceClass


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class EvidenceSwitches(_Strict):
    """Decisions on kinds the seeds single out; applied before any source class."""

    user_messages: Literal["exclude", "current_question", "admit"] = Field(
        default="exclude",
        description="The user's own messages. 'current_question' admits only the message the answer "
        "responds to; earlier messages stay excluded.",
    )
    system_prompt: Literal["exclude", "admit"] = Field(default="exclude", description="The system prompt.")
    model_outputs: Literal["exclude", "admit"] = Field(
        default="exclude", description="Intermediate model outputs (the model's own earlier text)."
    )
    tool_errors: Literal["exclude", "admit"] = Field(
        default="exclude",
        description="Items from tool calls that ended in error. 'admit' lets them reach the source "
        "classes; it does not admit them by itself.",
    )
    common_knowledge: Literal["deny", "allow"] = Field(
        default="deny",
        description="Whether judges may mark claims as common knowledge (counted separately).",
    )
    on_conflict: Literal["flag", "contradicted", "prefer_newest"] = Field(
        default="flag",
        description="When one admitted item supports a claim and another contradicts it: 'flag' "
        "keeps the judge's verdict and shows the conflict (the answer cannot pass unless "
        "[thresholds] conflicts_allowed), 'contradicted' makes the claim contradicted, "
        "'prefer_newest' follows the newer item by its freshness date key (else 'flag').",
    )


class Thresholds(_Strict):
    claim_support: float = Field(
        default=0.9,
        ge=0,
        le=1,
        strict=True,
        allow_inf_nan=False,
        description="Supported / judged claims for a grounded answer.",
    )
    contradictions_allowed: int = Field(
        default=0, ge=0, strict=True, description="Contradicted claims tolerated."
    )
    conflicts_allowed: bool = Field(
        default=False,
        strict=True,
        description="Whether an answer with a flagged conflict between admitted sources may pass.",
    )
    release_pass_rate: float = Field(
        default=0.98,
        ge=0,
        le=1,
        strict=True,
        allow_inf_nan=False,
        description="Share of grounded answers the release gate requires.",
    )
    refusal_accuracy: float | None = Field(
        default=None,
        ge=0,
        le=1,
        strict=True,
        allow_inf_nan=False,
        description="Gate: minimum refusal rate on unanswerable questions.",
    )
    over_refusal: float | None = Field(
        default=None,
        ge=0,
        le=1,
        strict=True,
        allow_inf_nan=False,
        description="Gate: maximum refusal rate on answerable questions.",
    )
    min_citation_support: float | None = Field(
        default=None,
        ge=0,
        le=1,
        strict=True,
        allow_inf_nan=False,
        description="Gate: minimum share of citation markers whose cited item supports the claim.",
    )


class AnswersSection(_Strict):
    span_names: SetOfStr = Field(default=(), description="LLM span names (globs) that are answers.")
    attributes: dict[str, str] = Field(
        default_factory=dict, description="Span attributes an answer span must carry (as text)."
    )
    question_type_attribute: str | None = Field(
        default=None, description="A span attribute carrying the question type."
    )


class Policy(_Strict):
    """An admissible-source policy.

    Precedence, per evidence item: (1) the ``[evidence]`` switches decide user messages, the system
    prompt and model outputs outright, and exclude items from failed tool calls unless
    ``tool_errors = "admit"``; (2) the ``[[sources]]`` classes, in file order: the first whose match
    rules all hold decides (its ``reject_if`` can still exclude); (3) ``unmatched``.
    """

    name: str = Field(min_length=1, description="A name for the policy, shown in reports with its hash.")
    version: str = Field(default="1", description="Your version label for this policy.")
    rationale: str | None = Field(default=None, description="Why this policy; shown in reports.")
    unmatched: Literal["exclude", "admit"] = Field(
        default="exclude", description="For items that reach no class."
    )
    evidence: EvidenceSwitches = Field(default_factory=EvidenceSwitches)
    sources: tuple[SourceClass, ...] = Field(default=(), description="Source classes; first match wins.")
    thresholds: Thresholds = Field(default_factory=Thresholds)
    answers: AnswersSection = Field(default_factory=AnswersSection)

    _source_text: str | None = PrivateAttr(default=None)
    _origin: str | None = PrivateAttr(default=None)

    @field_validator("version", mode="before")
    @classmethod
    def _version_as_text(cls, value: Any) -> Any:
        # `version = 2` and `version = "2"` are the same policy version.
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
        return value

    @field_validator("sources")
    @classmethod
    def _unique_names(cls, value: tuple[SourceClass, ...]) -> tuple[SourceClass, ...]:
        seen: set[str] = set()
        for source in value:
            if source.name in seen:
                raise ValueError(f"two source classes are named {source.name!r}; expected unique names")
            seen.add(source.name)
        return value

    def canonical_json(self) -> str:
        """The canonical serialisation: every field (defaults included), sorted keys, no whitespace."""
        return json.dumps(
            self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"), ensure_ascii=True
        )

    @property
    def sha256(self) -> str:
        """SHA-256 of :meth:`canonical_json`: stable under key order, whitespace and comments."""
        return hashlib.sha256(self.canonical_json().encode("ascii")).hexdigest()

    @property
    def source_text(self) -> str | None:
        """The file's text as read (for storage beside results), or None if built in code."""
        return self._source_text

    @property
    def origin(self) -> str | None:
        """Where the policy came from: a path, or ``<shipped>/strict.toml``."""
        return self._origin

    def answer_selection(self) -> AnswerSelection:
        """The ``[answers]`` section as evidence reconstruction takes it."""
        return AnswerSelection(
            span_names=self.answers.span_names,
            attributes=dict(self.answers.attributes),
            question_type_attribute=self.answers.question_type_attribute,
        )

    @property
    def warnings(self) -> list[str]:
        """Valid but probably unintended: a policy that admits nothing, classes that cannot match."""
        found: list[str] = []
        switches = self.evidence
        if (
            self.unmatched == "exclude"
            and not any(source.admit for source in self.sources)
            and switches.user_messages == "exclude"
            and switches.system_prompt == "exclude"
            and switches.model_outputs == "exclude"
        ):
            found.append(
                "this policy admits nothing: every evidence item will be excluded and every claim "
                "will be absent. Add a [[sources]] class with admit = true."
            )
        for index, source in enumerate(self.sources):
            if source.matches_everything and index < len(self.sources) - 1:
                found.append(
                    f"sources[{index}] {source.name!r} has no match rules, so it matches everything: "
                    f"the {len(self.sources) - index - 1} class(es) after it can never match."
                )
                break
        for index, source in enumerate(self.sources):
            if not source.admit and source.reject_if is not None:
                found.append(
                    f"sources[{index}] {source.name!r} excludes its items, so its reject_if has no effect."
                )
        return found
