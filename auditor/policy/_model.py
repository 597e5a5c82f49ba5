"""The policy file's schema: the pydantic models a TOML policy is validated into.

A policy declares the admissible source set: which evidence items count when a claim is judged.
The models are frozen and forbid unknown keys, so a typo in a policy file fails loudly instead of
silently widening (or narrowing) what counts. The same models produce the JSON Schema
(``auditor policy schema``) and the canonical serialisation behind :attr:`Policy.sha256`.

What a policy declares runs on untrusted trace content, so it is checked at load: every number is
finite and within its range (``max_age_days = inf`` would overflow mid-audit), and every regular
expression compiles with RE2 (:mod:`auditor.policy._regex`), which matches in linear time, so no pattern
can hang an audit on a hostile metadata value.

Set-like lists (kinds, names, hosts, statuses, ...) are sorted and de-duplicated on load, and a
bare metadata value is shorthand for ``{ equals = value }``: equivalent spellings give the same
model, hence the same hash. The order of ``[[sources]]`` is kept: the first matching class wins.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    PrivateAttr,
    field_validator,
    model_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from auditor.evidence import AnswerSelection, EvidenceKind
from auditor.policy._regex import compile_regex

# Kinds decided by the [evidence] switches, never by a source class (see Policy docstring).
SWITCH_KINDS: dict[EvidenceKind, str] = {
    EvidenceKind.USER_MESSAGE: "user_messages",
    EvidenceKind.SYSTEM_PROMPT: "system_prompt",
    EvidenceKind.MODEL_OUTPUT: "model_outputs",
}
# Source-class names used for decisions made outside the classes; a class may not take them.
RESERVED_CLASS_NAMES = frozenset(
    {"user_message", "system_prompt", "model_output", "tool_error", "unmatched", "evidence"}
)
_CLASS_NAME = r"^[A-Za-z0-9][A-Za-z0-9_-]*$"

Scalar = str | int | float | bool
MAX_AGE_DAYS = 36_500  # a hundred years: beyond it, leave max_age_days out


def _sorted_unique(values: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(sorted(set(values), key=str))


def _sorted_unique_lower(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(sorted({v.lower() for v in values}))


SetOfStr = Annotated[tuple[str, ...], AfterValidator(_sorted_unique)]
SetOfHosts = Annotated[tuple[str, ...], AfterValidator(_sorted_unique_lower)]
SetOfKinds = Annotated[tuple[EvidenceKind, ...], AfterValidator(_sorted_unique)]


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class MetadataCondition(_Strict):
    """A test on one metadata value; every operator given must hold.

    In TOML: ``status = "current"`` (shorthand for ``equals``), or a table such as
    ``collection = { one_of = ["refunds", "shipping"] }``, ``url = { regex = "^https://" }``,
    ``owner = { exists = true }``. Values compare as text; a list value matches when any element does.
    """

    equals: Scalar | None = Field(default=None, description="The value, compared as text.")
    one_of: SetOfStr | None = Field(default=None, description="Any of these values, compared as text.")
    regex: str | None = Field(
        default=None,
        description="A regular expression (RE2: Python syntax without lookaround or backreferences) "
        "searched in the value.",
    )
    exists: bool | None = Field(
        default=None, strict=True, description="true: the key is present; false: it is absent."
    )

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        if isinstance(data, str | int | float | bool):
            return {"equals": data}
        return data

    @field_validator("one_of", mode="before")
    @classmethod
    def _one_of_as_text(cls, value: Any) -> Any:
        if isinstance(value, list | tuple):
            return tuple(str(v).lower() if isinstance(v, bool) else str(v) for v in value)
        return value

    @field_validator("equals")
    @classmethod
    def _finite(cls, value: Scalar | None) -> Scalar | None:
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"got {value}; expected a finite number, or text in quotes")
        return value

    @field_validator("regex")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            compile_regex(value)
        return value

    @model_validator(mode="after")
    def _not_empty(self) -> MetadataCondition:
        if self.equals is None and self.one_of is None and self.regex is None and self.exists is None:
            raise ValueError("empty condition; expected at least one of equals, one_of, regex, exists")
        return self

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        table = handler(core_schema)
        return {"anyOf": [{"type": ["string", "number", "boolean"]}, table]}


class RejectIf(_Strict):
    """Conditions that exclude an item even though its class matched (and admits)."""

    statuses: SetOfStr = Field(
        default=(), description="Exclude when metadata[status_key] is one of these (case-insensitive)."
    )
    status_key: str = Field(default="status", description="The metadata key holding the status.")
    max_age_days: float | None = Field(
        default=None,
        ge=0,
        le=MAX_AGE_DAYS,
        strict=True,
        allow_inf_nan=False,
        description="Exclude when metadata[date_key] is older than this many days at the answer's "
        "generation time (never the wall clock).",
    )
    date_key: str = Field(default="updated_at", description="The metadata key holding an ISO date.")
    undated: Literal["exclude", "admit"] = Field(
        default="exclude",
        description="With max_age_days: what to do when the date is missing. An unparseable date "
        "is always excluded.",
    )

    @field_validator("statuses", mode="after")
    @classmethod
    def _lower(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return _sorted_unique_lower(value)


class SourceClass(_Strict):
    """A named class of evidence: match rules (all must hold), then admit or exclude."""

    name: str = Field(
        pattern=_CLASS_NAME,
        description="A unique name (letters, digits, - and _), used in rule ids and reasons.",
    )
    admit: bool = Field(
        strict=True, description="true or false: whether items of this class count as evidence."
    )
    rationale: str | None = Field(default=None, description="Why; shown in reports.")
    kinds: SetOfKinds = Field(default=(), description="Evidence kinds (any of).")
    names: SetOfStr = Field(default=(), description="Tool or retriever names, exact or shell glob (any of).")
    metadata: dict[str, MetadataCondition] = Field(
        default_factory=dict,
        description="Per metadata key (dotted for nested, e.g. 'arguments.order_id'), a condition.",
    )
    url_host: SetOfHosts = Field(default=(), description="URL hosts, exact or glob, case-insensitive.")
    url_path: SetOfStr = Field(
        default=(), description="URL paths: a glob if it has * ? [, otherwise a prefix (any of)."
    )
    document_id_prefix: SetOfStr = Field(default=(), description="Document id prefixes (any of).")
    reject_if: RejectIf | None = Field(default=None, description="Exclusions inside the class.")

    @field_validator("kinds")
    @classmethod
    def _no_switch_kinds(cls, value: tuple[EvidenceKind, ...]) -> tuple[EvidenceKind, ...]:
        for kind in value:
            if kind in SWITCH_KINDS:
                raise ValueError(
                    f"{kind.value!r} is decided by the [evidence] switch {SWITCH_KINDS[kind]!r}, "
                    "not by a source class; expected tool_result, retrieved_document or other"
                )
        return value

    @field_validator("name")
    @classmethod
    def _not_reserved(cls, value: str) -> str:
        if value in RESERVED_CLASS_NAMES:
            raise ValueError(f"{value!r} is reserved; expected another name")
        return value

    @property
    def matches_everything(self) -> bool:
        return not (
            self.kinds
            or self.names
            or self.metadata
            or self.url_host
            or self.url_path
            or self.document_id_prefix
        )


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
