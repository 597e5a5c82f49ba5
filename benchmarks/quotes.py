"""The check that a verdict's quotes carry its claim, on the labelled dev set: what it demotes, per judge.

Every ``supported`` or ``contradicted`` verdict passes :func:`auditor.judges.verify_quotes`, which
demotes to ``absent`` (judge error ``quote_does_not_support``) a verdict whose verified quotes
cannot state the claim. This benchmark audits the dev set (records adapter, default policy,
rule-based decomposer, no cascade, no cache) with five judges and compares each demotion with the
human label of the claim (the overlap rule of :mod:`auditor.calibration._labelled`):

- two correct judges, whose demotions should be ~0 among verdicts the humans agree with: the
  offline judge, and the fake LLM judge of ``tests.support.fake_openai`` through the real ``openai``
  client (its lexical rule, quoting the evidence lines that hold the claim's words; and with its
  verdicts taken from the offline judge);
- three dishonest judges that call every claim supported: quoting one character of the evidence
  (``always_supported_tiny_quote``), quoting the real sentence sharing the fewest words with the
  claim (``always_supported_unrelated_quote``), and the one sharing the most
  (``always_supported_closest_quote``: what an obeyed injection quotes; the agreement check of
  :mod:`auditor.judges.verify._agree` turns those that negate the claim, name a rival or state another
  price, event date or status of its thing). Every verdict of theirs the evidence does not bear out
  (human label not supported) must be demoted: the "kept, humans disagree" column is then 0.

With ``sweep`` (off in ``--quick``), the demotions are counted again at other values of
:data:`auditor.judges.verify._carry.MIN_SHARE`, the share of the claim's content words the quotes must
hold: the figures the threshold was chosen on. ``--quick`` audits the first 60 records.
"""

from __future__ import annotations

import re
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from auditor.calibration import load_labelled
from auditor.calibration._labelled import LabelledRecord, human_claim_verdict
from auditor.judges import QUOTE_DISAGREES
from auditor.judges.verify import _carry
from auditor.results import AuditResult, ClaimOut
from auditor.run import audit_async
from auditor.trace import FORMAT
from benchmarks.fake import FakeOpenAI

#: (name, fake server switches; None: the offline judge, no server)
JUDGES: tuple[tuple[str, dict[str, bool] | None], ...] = (
    ("offline", None),
    ("fake LLM, lexical", {}),
    ("fake LLM, offline verdicts", {"offline_judge": True}),
    ("always supported, 1-char quote", {"always_supported_tiny_quote": True}),
    ("always supported, unrelated quote", {"always_supported_unrelated_quote": True}),
    ("always supported, closest quote", {"always_supported_closest_quote": True}),
)
SWEEP = (0.3, 0.4, 0.5, 0.6, 0.7)
QUICK_RECORDS = 60
_DEMOTED = re.compile(r"^demoted from (supported|contradicted)\b")


def _given(claim: ClaimOut) -> str | None:
    """The label the judge gave, before the check (None for a claim without a verdict)."""
    if _carry.DOES_NOT_SUPPORT in claim.judge_errors:
        found = _DEMOTED.match(claim.rationale or "")
        return found.group(1) if found else "supported"
    if QUOTE_DISAGREES in claim.judge_errors:
        return "supported"  # turned by the agreement check (contradicted or unjudged)
    return claim.verdict


def tally(result: AuditResult, records: dict[str, LabelledRecord]) -> dict[str, Any]:
    """Each judged claim's verdict, before and after the check, against its human label."""
    counts: Counter[str] = Counter()
    for answer in result.answers:
        record = records.get(answer.trace_id)
        if record is None:
            continue
        shift = max(record.answer.find(answer.text), 0)
        for claim in answer.claims or []:
            given = _given(claim)
            if claim.screened or given is None:
                continue
            human = (
                record.human
                if record.unit == "claim"
                else human_claim_verdict(claim.start + shift, claim.end + shift, record.labels)
            )
            counts["claims"] += 1
            if given not in ("supported", "contradicted"):
                continue
            counts["given"] += 1
            demoted = _carry.DOES_NOT_SUPPORT in claim.judge_errors
            agreed = human == given
            turned = QUOTE_DISAGREES in claim.judge_errors
            if turned:  # the agreement check: contradicted (certain) or unjudged
                counts["disagrees"] += 1
                counts["disagrees_agreed" if agreed else "disagrees_disagreed"] += 1
                counts[f"disagrees_{claim.verdict}"] += 1
                continue
            counts["demoted" if demoted else "kept"] += 1
            if demoted:
                counts["demoted_agreed" if agreed else "demoted_disagreed"] += 1
            elif given == "supported":
                counts["kept_supported_agreed" if agreed else "kept_supported_disagreed"] += 1
    return {
        key: counts[key]
        for key in (
            "claims",
            "given",
            "demoted",
            "demoted_agreed",
            "demoted_disagreed",
            "kept",
            "kept_supported_agreed",
            "kept_supported_disagreed",
            "disagrees",
            "disagrees_agreed",
            "disagrees_disagreed",
            "disagrees_contradicted",
            "disagrees_unjudged",
        )
    }


@contextmanager
def _server(switches: dict[str, bool] | None) -> Iterator[FakeOpenAI | None]:
    if switches is None:
        yield None
        return
    with FakeOpenAI(offline_judge=switches.get("offline_judge", False)) as server:
        for name, value in switches.items():
            if name != "offline_judge":
                setattr(server, name, value)
        yield server


async def _audit(path: Path, server: FakeOpenAI | None) -> AuditResult:
    result, _ = await audit_async(
        [path],
        judge="offline" if server is None else "openai:fake-judge",
        base_url=None if server is None else server.base_url,
        cascade=False,
        cache=False,
        format=FORMAT,
        store=False,
    )
    return result


async def run(dev: Path, *, quick: bool = False, sweep: bool = True) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-quotes-") as tmp:
        path = dev
        if quick:  # a temporary subset, deleted afterwards
            path = Path(tmp) / "dev-quick.jsonl"
            lines = dev.read_text(encoding="utf-8").splitlines()[:QUICK_RECORDS]
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        records = {r.trace_id: r for r in load_labelled(path)}
        judges: dict[str, Any] = {}
        sweeps: dict[str, dict[str, dict[str, int]]] = {}
        for name, switches in JUDGES:
            with _server(switches) as server:
                judges[name] = tally(await _audit(path, server), records)
                if sweep and not quick:
                    chosen = _carry.MIN_SHARE
                    try:
                        for share in SWEEP:
                            _carry.MIN_SHARE = share
                            found = tally(await _audit(path, server), records)
                            sweeps.setdefault(name, {})[f"{share:.1f}"] = {
                                "demoted_agreed": found["demoted_agreed"],
                                "kept_supported_disagreed": found["kept_supported_disagreed"],
                            }
                    finally:
                        _carry.MIN_SHARE = chosen
    return {
        "dev_path": str(dev),
        "records": len(records),
        "min_share": _carry.MIN_SHARE,
        "min_quote_chars": _carry.MIN_QUOTE_CHARS,
        "judges": judges,
        "sweep": sweeps,
    }
