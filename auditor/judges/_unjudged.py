"""Every ``unjudged`` reason in a sentence a reader understands.

A reason code (``offline_undecided``, ``quote_disagrees``) is for scripts; a person reading a
report, a console, the web app or a failing test needs to know what happened and what to do. One
table here, used by every place that shows an unjudged claim, so the words cannot drift apart.
"""

from __future__ import annotations

from auditor.judges._verdicts import UnjudgedReason

_SENTENCES: dict[UnjudgedReason, str] = {
    UnjudgedReason.TIMEOUT: "The judge did not answer in time, so this claim was not decided. Re-run the audit.",
    UnjudgedReason.PARSE_FAILURE: (
        "The judge's answer could not be read (malformed or off-format output), so this claim was not "
        "decided. Re-run the audit, or try another model."
    ),
    UnjudgedReason.TRUNCATED: (
        "The judge's answer was cut off before it reached this claim. Re-run with a larger output "
        "budget or fewer claims per call."
    ),
    UnjudgedReason.EVIDENCE_CLIPPED: (
        "The evidence was too long for the judge: it was shown the passages most likely to hold "
        "this claim, but text it was not shown shares words with the claim and may decide it. "
        "Raise the LLM judge's evidence budget to show more."
    ),
    UnjudgedReason.REFUSED: "The judge model refused to judge this claim.",
    UnjudgedReason.API_ERROR: (
        "The judge's endpoint returned an error, so this claim was not decided. Check the endpoint "
        "and key, then re-run."
    ),
    UnjudgedReason.MISSING: "The judge returned no verdict for this claim.",
    UnjudgedReason.OFFLINE_UNDECIDED: (
        "The offline judge could not tell: the evidence neither clearly states this claim nor "
        "clearly leaves it out. An LLM judge (--judge openai:MODEL) can decide it."
    ),
    UnjudgedReason.QUOTE_DISAGREES: (
        "The judge called this claim supported, but the passage it quoted may say otherwise (a "
        "negation, another figure or another name), so it is not counted as supported."
    ),
}


def describe_unjudged(reason: str | UnjudgedReason | None) -> str:
    """The sentence for an ``unjudged`` reason (a code this version does not know is shown as is).

    Returns:
        A sentence ending in a full stop; "" for no reason.
    """
    if not reason:
        return ""
    try:
        return _SENTENCES[UnjudgedReason(reason)]
    except ValueError:
        return f"The claim was not decided ({str(reason).replace('_', ' ')})."
