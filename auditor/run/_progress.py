"""What an audit reports to its caller after each answer."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Progress:
    """How far an audit has got, reported after each answer."""

    traces: int
    answers_total: int
    answers_done: int
    answers_resumed: int
    claims_judged: int  # claims with a verdict (supported, contradicted, absent)
    llm_calls: int  # logical requests made so far, failed ones included
    claims_unjudged: int = 0
    llm_failed: int = 0  # requests that ended in an error after their retries
    llm_tokens: int = 0  # prompt + completion tokens so far
    run_id: str | None = None  # the stored run the answers are saved in (None: not stored)
