"""The offline judge: deterministic cues, the certain settlements, the trained combiner.

:class:`OfflineJudge` reads each claim against the admitted items (:mod:`auditor.judges.reading`),
applies the rules (``_rules``, ``_attributes``, ``_settle``), scores the cue vector (``_features``)
with the combiner whose weights ship as ``offline_judge.json`` beside these modules, and finds the
other side of a conflict (``_rivals``). It never imports the LLM judge (``.importlinter``).
"""

from __future__ import annotations

from auditor.judges.offline._offline import OfflineJudge, SupportScore

__all__ = [
    "OfflineJudge",
    "SupportScore",
]
