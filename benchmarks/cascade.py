"""The cascade against the LLM judge alone on the LLM benchmark's set (part of ``--only accuracy``).

The records of :func:`benchmarks.llm.write_records` (one copied sentence, one paraphrase, one changed
figure per answer) are audited twice against the fake OpenAI server in its own process
(:class:`benchmarks.server.ServerProcess`): by the LLM judge alone (``--no-cascade``) and through the
cascade, each in a fresh app directory with the verdict cache off, the HTTP requests counted at the
server. The fake server's verdicts come from the offline judge: ``agreement`` is the share of claims
on which the cascade's verdict equals the LLM-alone verdict, i.e. whether the certain stage ever
overrides what the stand-in LLM says. It is not an accuracy figure.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from auditor.run import audit_async
from auditor.trace import FORMAT
from benchmarks.llm import _fresh_home, write_records
from benchmarks.server import ServerProcess


async def _verdicts(
    path: Path, server: ServerProcess, cascade: bool
) -> tuple[dict[str, str], dict[str, Any]]:
    before = server.requests
    with _fresh_home():
        result, _ = await audit_async(
            [path],
            judge="openai:bench-model",
            base_url=server.base_url,
            cascade=cascade,
            cache=False,
            format=FORMAT,
            store=False,
        )
    verdicts: dict[str, str] = {
        f"{a.answer_id}:{c.claim_id}": c.verdict or "unjudged"
        for a in result.answers
        for c in a.claims or []
        if not c.screened
    }
    answers = len(result.answers)
    requests = server.requests - before
    return verdicts, {
        "answers": answers,
        "http_requests": requests,
        "calls_per_answer": requests / answers if answers else None,
        "cascade": (result.run.usage or {}).get("cascade"),
    }


def _compare(
    alone: tuple[dict[str, str], dict[str, Any]], through: tuple[dict[str, str], dict[str, Any]]
) -> dict[str, Any]:
    (va, ra), (vc, rc) = alone, through
    same = sum(vc.get(k) == v for k, v in va.items())
    answers = ra["answers"]
    return {
        "answers": answers,
        "claims": len(va),
        "llm_alone": ra,
        "cascade": rc,
        "calls_saved_per_answer": (ra["http_requests"] - rc["http_requests"]) / answers if answers else None,
        "agreement": same / len(va) if va else None,
        "disagreements": len(va) - same,
    }


async def llm_set(answers: int, also: dict[str, Path] | None = None) -> dict[str, Any]:
    """Calls per answer with and without the cascade, calls saved per answer, and agreement.

    Args:
        answers: how many records of the LLM benchmark's set to generate.
        also: more records files to compare the same way (e.g. the labelled dev set), by name.
    """
    with tempfile.TemporaryDirectory(prefix="bench-cascade-") as tmp:
        path = Path(tmp) / "llm-set.jsonl"
        write_records(path, answers)
        sets = {"llm_set": path, **(also or {})}
        out: dict[str, Any] = {}
        with ServerProcess(0.0) as server:
            for name, records in sets.items():
                alone = await _verdicts(records, server, cascade=False)
                out[name] = _compare(alone, await _verdicts(records, server, cascade=True))
    return out
