"""The calibration stage: a judge measured against human labels, and rates corrected for it.

Agreement statistics (confusion matrix, Cohen's kappa with a bootstrap interval, sensitivity,
specificity), the mapping of labelled records onto audited answers, and the Rogan-Gladen
correction of the share of unsupported answers. The audit that feeds a calibration is run by
:func:`auditor.run.calibrate`.
"""

from __future__ import annotations

from auditor.calibration._agreement import Calibration, LevelReport, Pair, Unmapped
from auditor.calibration._build import calibration_from
from auditor.calibration._correction import corrected_share, describe
from auditor.calibration._domain import domain_fit, run_question_types, same_judge
from auditor.calibration._labelled import LabelledRecord, load_labelled

__all__ = [
    "Calibration",
    "LabelledRecord",
    "LevelReport",
    "Pair",
    "Unmapped",
    "calibration_from",
    "corrected_share",
    "describe",
    "domain_fit",
    "load_labelled",
    "run_question_types",
    "same_judge",
]
