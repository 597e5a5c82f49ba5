"""The ``[[sources]]`` schema: source classes, their metadata conditions and ``reject_if``.

A source class names a kind of evidence by match rules and admits or excludes it; ``reject_if``
still excludes stale or superseded items of an admitting class. These models run on untrusted
trace content, so they are checked at load: every number finite and in range (``max_age_days =
inf`` would overflow mid-audit), every regular expression compiled with RE2
(:mod:`auditor.policy._regex`, linear-time matching on hostile metadata values). Set-like lists
(kinds, names, hosts, statuses, ...) are sorted and de-duplicated, and a bare metadata value is
shorthand for ``{ equals = value }``, so equivalent spellings give the same model and hash. The
policy file's top level (switches, thresholds, the hash) is :mod:`auditor.policy._model`'s.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    field_validator,
    model_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from auditor.evidence import EvidenceKind
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
