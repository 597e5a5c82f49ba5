"""The labels file: which questions of a golden set are answerable, read strictly.

A labels file is JSONL, one object per line (blank lines are skipped)::

    {"answer_id": "a-17", "answerable": false}
    {"trace_id": "4bf92f...", "answerable": true, "question_type": "billing"}
    {"question": "What is the refund window?", "answerable": true}

Each object names what it labels with ``answer_id``, ``trace_id`` or ``question`` (the exact
question text); ``answerable`` (true or false) is required; ``question_type`` is optional and, when
given, overrides the answer's own. Any other key is an error, so a misspelt key cannot be ignored
silently. A bad line raises :class:`~auditor.errors.UsageError` naming the file and the line.

Matching (:func:`match_labels`) is pure: an answer takes the label with its ``answer_id``, else the
label with its ``trace_id``, else the label with its exact question text. A label that matches no
answer is counted as unmatched; a ``trace_id`` or ``question`` label applies to every answer that
carries it (label multi-answer traces by ``answer_id``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import ErrorDetails

from auditor.errors import UsageError


class Label(BaseModel):
    """One line of a labels file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    answer_id: str | None = Field(default=None, min_length=1)
    trace_id: str | None = Field(default=None, min_length=1)
    question: str | None = Field(default=None, min_length=1)
    answerable: bool = Field(strict=True)
    question_type: str | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _names_something(self) -> Label:
        if self.answer_id is None and self.trace_id is None and self.question is None:
            raise ValueError("a label needs answer_id, trace_id or question to say what it labels")
        return self

    @property
    def key(self) -> tuple[str, str]:
        """The field it matches on and its value: the most specific one given (answer_id, trace_id, question)."""
        if self.answer_id is not None:
            return "answer_id", self.answer_id
        if self.trace_id is not None:
            return "trace_id", self.trace_id
        return "question", self.question or ""


class Labels(BaseModel):
    """The labels read from one file, in file order."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str
    labels: tuple[Label, ...]


class LabelMatch(BaseModel):
    """Which label each answer took (by position in the answer list) and how many labels matched none."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    by_answer: dict[int, Label]
    unmatched_labels: int


def load_labels(path: str | Path) -> Labels:
    """Read a labels file.

    Args:
        path: a JSONL file, one label object per line.

    Returns:
        The labels in file order.

    Raises:
        UsageError: the file cannot be read, a line is not a valid label, two labels name the same
            answer id, trace id or question, or the file holds no label at all.
    """
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise UsageError(f"{source}: cannot read the labels file ({err}).") from err
    labels: list[Label] = []
    seen: dict[tuple[str, str], int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        label = _parse_line(source, number, line)
        first = seen.setdefault(label.key, number)
        if first != number:
            name, value = label.key
            raise UsageError(
                f"{source}, line {number}: a second label for {name} {value!r} (the first is on line "
                f"{first}); keep one."
            )
        labels.append(label)
    if not labels:
        raise UsageError(f"{source}: the labels file holds no label; expected one JSON object per line.")
    return Labels(source=source, labels=tuple(labels))


def _parse_line(source: str, number: int, line: str) -> Label:
    where = f"{source}, line {number}"
    try:
        data = json.loads(line)
    except json.JSONDecodeError as err:
        raise UsageError(f"{where}: not valid JSON ({err.msg}); expected one JSON object per line.") from err
    if not isinstance(data, dict):
        raise UsageError(f"{where}: expected a JSON object, got {type(data).__name__}.")
    try:
        return Label.model_validate(data)
    except ValidationError as err:
        problems = "; ".join(_describe(e) for e in err.errors())
        raise UsageError(
            f"{where}: {problems}. A label has answerable (true/false), one of answer_id, trace_id or "
            f"question, and optionally question_type."
        ) from err


def _describe(error: ErrorDetails) -> str:
    location = ".".join(str(part) for part in error["loc"])
    message = error["msg"]
    if error["type"] == "extra_forbidden":
        message = "unknown key"
    return f"{location}: {message}" if location else message


class Labelled(Protocol):
    """What a label matches on: an audited answer (:class:`~auditor.results.AnswerOut`) or one
    found before the audit (:class:`~auditor.evidence.Answer`)."""

    @property
    def answer_id(self) -> str: ...
    @property
    def trace_id(self) -> str: ...
    @property
    def question(self) -> str | None: ...


def match_labels(answers: Sequence[Labelled], labels: Labels) -> LabelMatch:
    """Give each answer its label: by answer id, else trace id, else exact question text."""
    index: dict[tuple[str, str], Label] = {label.key: label for label in labels.labels}
    used: set[tuple[str, str]] = set()
    by_answer: dict[int, Label] = {}
    for position, answer in enumerate(answers):
        candidates = [("answer_id", answer.answer_id), ("trace_id", answer.trace_id)]
        if answer.question is not None:
            candidates.append(("question", answer.question))
        for key in candidates:
            if key in index:
                by_answer[position] = index[key]
                used.add(key)
                break
    return LabelMatch(by_answer=by_answer, unmatched_labels=len(index.keys() - used))
