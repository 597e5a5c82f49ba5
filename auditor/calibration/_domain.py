"""Whether a calibration fits a run: the same judge, and labelled data from the run's domain.

A judge's error rates depend on what it judges: a calibration measured on summaries of news
articles says little about a support agent's refund answers. A calibration records the datasets and
task types of its labelled records; a run records the question types of its answers (the policy's
``question_type_attribute`` or the labels file's ``question_type``). When the run has question
types the calibration's labelled data does not cover, the corrected figure is still shown (the raw
one always is) but carries a warning; when the run records none, a note says the fit is unchecked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from auditor.calibration._agreement import Calibration
from auditor.metrics import Summary

#: The question-type segment of answers that have none (``auditor.metrics``' name for it).
UNSPECIFIED = "unspecified"


class _JudgeLike(Protocol):
    @property
    def kind(self) -> str: ...
    @property
    def model(self) -> str | None: ...
    @property
    def prompt_version(self) -> str | None: ...


def same_judge(a: _JudgeLike, b: _JudgeLike) -> bool:
    """Same kind, model and prompt version: the identity a calibration is stored under."""
    return (a.kind, a.model, a.prompt_version) == (b.kind, b.model, b.prompt_version)


def run_question_types(summary: Summary | Mapping[str, Any]) -> list[str]:
    """The question types of a run's answers, from its summary's segments (``unspecified`` left out)."""
    segments = (
        [s.name for s in summary.by_question_type]
        if isinstance(summary, Summary)
        else [str(s["name"]) for s in summary.get("by_question_type") or []]
    )
    return sorted(set(segments) - {UNSPECIFIED})


def domain_fit(calibration: Calibration, summary: Summary | Mapping[str, Any]) -> tuple[bool | None, str]:
    """``(fits, note)``: does ``calibration``'s labelled data cover the run's question types?

    ``fits`` is False when the run has a question type that is none of the calibration's task types
    (compared case-insensitively), True when all are covered, None when either side records none.
    """
    datasets, task_types = calibration.domain
    measured = f"task types {', '.join(task_types) or 'not recorded'}; datasets {', '.join(datasets) or 'not recorded'}"
    run_types = run_question_types(summary)
    if not task_types:
        return (
            None,
            f"{calibration.display_name} records no task types ({measured}): its fit to this run is unchecked",
        )
    if not run_types:
        return None, (
            f"{calibration.display_name} was measured on {measured}; this run records no question types, "
            "so its fit is unchecked"
        )
    known = {t.casefold() for t in task_types}
    outside = [t for t in run_types if t.casefold() not in known]
    if not outside:
        return True, f"{calibration.display_name} covers this run's question types ({', '.join(run_types)})"
    return False, (
        f"{calibration.display_name} was measured on {measured}, not on this run's question types "
        f"{', '.join(outside)}: the corrected figure may not apply (choose one with --calibration ID, "
        "or --calibration none)"
    )


__all__ = ["domain_fit", "run_question_types", "same_judge"]
