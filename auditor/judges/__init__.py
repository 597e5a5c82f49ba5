"""Judges: decide, per claim, whether admitted evidence supports, contradicts or does not address it.

:class:`~auditor.judges.offline.OfflineJudge` is the embedded default: deterministic, no network,
approximate (its identity says so). The :class:`auditor.verdicts.Judge` protocol is the interface
every judge implements.
"""

from auditor.judges.offline import OfflineJudge

__all__ = ["OfflineJudge"]
