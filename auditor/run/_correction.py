"""Which stored calibration corrects a run's rates, and the corrected figure beside the raw one."""

from __future__ import annotations

from auditor.calibration import Calibration, corrected_share, same_judge
from auditor.errors import UsageError
from auditor.results import AuditResult, JudgeRef
from auditor.store import Store


def choose_calibration(db: Store | None, choice: str | None, judge: JudgeRef | None) -> Calibration | None:
    """The calibration a run's rates are corrected with.

    ``choice`` None: the newest calibration of the run's judge, if any; ``"none"``: no correction;
    anything else: the stored calibration with that id (a unique prefix is enough), which must be
    of the run's judge (another judge's error rates do not describe this one).

    Raises:
        UsageError: no store to read from, no or several calibrations match, or another judge's.
    """
    if choice is not None and choice.strip().lower() == "none":
        return None
    if choice is None:
        return db.latest_calibration(judge) if db is not None and judge is not None else None
    if db is None:
        raise UsageError(
            f"--calibration {choice}: calibrations are read from the store; drop --no-store "
            "(or use --calibration none)."
        )
    found = db.find_calibration(choice)
    if judge is not None and not same_judge(found.judge, judge):
        raise UsageError(
            f"--calibration {choice}: {found.label} measured judge {found.judge_name}, not this "
            f"run's {judge.kind}{':' + judge.model if judge.model else ''} "
            f"(prompt {judge.prompt_version or '-'}); choose a calibration of the same judge, "
            "or --calibration none."
        )
    return found


def with_correction(result: AuditResult, calibration: Calibration | None) -> AuditResult:
    """Add the share of unsupported answers corrected with ``calibration`` (None: unchanged).

    The raw figure stays; the corrected one sits beside it, names the calibration used and says
    whether the calibration's labelled data covers the run's question types.
    """
    if calibration is None:
        return result
    corrected = corrected_share(result.summary, calibration)
    return result.model_copy(
        update={"summary": {**result.summary, "corrected_unsupported": corrected.model_dump(mode="json")}}
    )
