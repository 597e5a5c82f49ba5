"""The cascade against the LLM judge alone on the LLM benchmark's set (part of ``--only accuracy``).

The records of :func:`benchmarks.llm.write_records` (``llm_set``: one copied sentence, one
paraphrase, one changed figure per answer, so no answer can be settled whole and the cascade saves
no call there by construction), a realistic mix of generated answers (``mix_set``,
:func:`write_mix_records`: of every five answers, two restate their tool results verbatim, one
restates them reordered, one paraphrases one sentence and one changes one figure, :data:`MIX`),
the labelled dev set and 60 of its answers (``dev_60``, evenly spaced through the
file: realistic answers beside the synthetic set) are audited twice against the fake OpenAI server in its own process
(:class:`benchmarks.server.ServerProcess`): by the LLM judge alone (``--no-cascade``) and through the
cascade, each in a fresh app directory with the verdict cache off, the HTTP requests counted at the
server. The fake server's verdicts come from the offline judge: ``agreement`` is the share of claims
on which the cascade's verdict equals the LLM-alone verdict, i.e. whether the certain stage ever
overrides what the stand-in LLM says. It is not an accuracy figure. Beside the calls: the claims
sent to the LLM and the prompt tokens per answer, which the cascade cuts even where every answer
keeps one claim it cannot settle (a paraphrase, a changed figure) and so still makes its call.

:func:`settle_speed` is the micro benchmark of ``OfflineJudge.settle`` itself (issue 14): per claim
of the dev set, with the evidence already prepared (as the cascade finds it), against
:func:`settle_before`, the score-only settle() it replaced, kept here verbatim as the baseline of the
ratio, measured in the same run.
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from auditor.claims import Claim
from auditor.evidence import Evidence
from auditor.judges import Label, OfflineJudge
from auditor.judges.offline import _settle as settle_module
from auditor.judges.offline._rivals import contradicting_items
from auditor.judges.reading._cues import AGGREGATE, claim_cues
from auditor.judges.reading._lexical import negated
from auditor.judges.reading._windows import prepare, read_limits
from auditor.judges.verify import _carry as carry
from auditor.run import audit_async
from auditor.trace import FORMAT
from benchmarks.llm import _CITIES, _fresh_home, write_records
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
    usage = result.run.usage or {}
    llm = usage.get("llm") or {}
    cascade_stats = usage.get("cascade") or {}
    sent = cascade_stats.get("settled_llm", len(verdicts)) if cascade else len(verdicts)
    return verdicts, {
        "answers": answers,
        "http_requests": requests,
        "calls_per_answer": requests / answers if answers else None,
        "claims_sent_per_answer": sent / answers if answers else None,
        "prompt_tokens_per_answer": llm.get("prompt_tokens", 0) / answers if answers else None,
        "cascade": usage.get("cascade"),
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
        "claims_sent_saved_share": (
            1 - rc["claims_sent_per_answer"] / ra["claims_sent_per_answer"]
            if ra["claims_sent_per_answer"]
            else None
        ),
        "agreement": same / len(va) if va else None,
        "disagreements": len(va) - same,
    }


# The realistic mix: the kind of each answer of ``mix_set``, in turn. "verbatim" and "reordered"
# answers restate their tool results (extractive answers: the cascade may settle every claim);
# "paraphrase" and "changed_figure" keep one claim only the LLM can judge.
MIX = ("verbatim", "verbatim", "reordered", "paraphrase", "changed_figure")


def mix_label(mix: Sequence[str] = MIX) -> str:
    """The mix in words, for the table: "2/5 verbatim, 1/5 reordered, ..."."""
    return ", ".join(f"{n}/{len(mix)} {kind.replace('_', ' ')}" for kind, n in Counter(mix).items())


def write_mix_records(path: Path, answers: int, mix: Sequence[str] = MIX) -> dict[str, int]:
    """``answers`` records of a support agent's answers over two tool results (a JSON order record
    and a prose policy page), the ``i``-th of kind ``mix[i % len(mix)]``; returns the count per kind.

    - ``verbatim``: every sentence copied from the policy page;
    - ``reordered``: the same facts with clauses and a list in another order ("Within 12 days of
      delivery, store 2 in Turin accepts returns"; "mugs, toasters and kettles") and the order's
      carrier and status from the record;
    - ``paraphrase``: as ``verbatim`` but one sentence in other words ("paid back to the card used
      for the purchase" for "go to the original card");
    - ``changed_figure``: as ``verbatim`` but the restocking fee $3 higher.
    """
    counts = dict.fromkeys(mix, 0)
    with path.open("w", encoding="utf-8") as out:
        for i in range(answers):
            kind = mix[i % len(mix)]
            counts[kind] += 1
            city = _CITIES[i % len(_CITIES)]
            days, fee = 10 + i, 5 + i % 7
            policy = (
                f"Store {i} in {city} accepts returns within {days} days of delivery. "
                f"A restocking fee of ${fee}.00 applies to opened items. Refunds go to the original card. "
                f"Store {i} sells kettles, toasters and mugs."
            )
            order = json.dumps(
                {"order_id": f"A-{1000 + i}", "status": "shipped", "carrier": "DHL", "store": f"Store {i}"}
            )
            sentences = [
                f"Store {i} in {city} accepts returns within {days} days of delivery.",
                f"A restocking fee of ${fee}.00 applies to opened items.",
                "Refunds go to the original card.",
            ]
            if kind == "reordered":
                sentences = [
                    f"Within {days} days of delivery, store {i} in {city} accepts returns.",
                    f"Store {i} sells mugs, toasters and kettles.",
                    f"Order A-{1000 + i} was shipped by DHL.",
                ]
            elif kind == "paraphrase":
                sentences[2] = "Refunds are paid back to the card used for the purchase."
            elif kind == "changed_figure":
                sentences[1] = f"A restocking fee of ${fee + 3}.00 applies to opened items."
            record = {
                "id": f"mix-{i}",
                "question": f"Can I return my order A-{1000 + i} to store {i}?",
                "sources": [
                    {"id": "get_order", "text": order},
                    {"id": "return_policy", "text": policy},
                ],
                "answer": " ".join(sentences),
            }
            out.write(json.dumps(record) + "\n")
    return counts


SAMPLE = 60  # answers of each further records file in its sampled row (``dev_60``)


def sample_records(source: Path, target: Path, n: int = SAMPLE) -> int:
    """``n`` records of ``source`` evenly spaced through the file (every dataset of the dev set
    is in it, in file order), written to ``target``; returns how many were written."""
    lines = [raw for raw in source.read_text(encoding="utf-8").splitlines() if raw.strip()]
    picked = [lines[i * len(lines) // n] for i in range(n)] if len(lines) > n else lines
    target.write_text("\n".join(picked) + "\n", encoding="utf-8")
    return len(picked)


async def llm_set(answers: int, also: dict[str, Path] | None = None) -> dict[str, Any]:
    """Calls per answer with and without the cascade, calls saved per answer, and agreement.

    Args:
        answers: how many records of the LLM benchmark's set to generate.
        also: more records files to compare the same way (e.g. the labelled dev set), by name;
            each also gives a row ``<name>_60`` on :data:`SAMPLE` of its records
            (:func:`sample_records`), realistic answers beside the synthetic set.
    """
    with tempfile.TemporaryDirectory(prefix="bench-cascade-") as tmp:
        path = Path(tmp) / "llm-set.jsonl"
        write_records(path, answers)
        mix = Path(tmp) / "mix-set.jsonl"
        kinds = write_mix_records(mix, answers)
        sets = {"llm_set": path, "mix_set": mix}
        for name, records in (also or {}).items():
            sets[name] = records
            sample = Path(tmp) / f"{name}-{SAMPLE}.jsonl"
            sample_records(records, sample)
            sets[f"{name}_{SAMPLE}"] = sample
        out: dict[str, Any] = {}
        with ServerProcess(0.0) as server:
            for name, records in sets.items():
                alone = await _verdicts(records, server, cascade=False)
                out[name] = _compare(alone, await _verdicts(records, server, cascade=True))
        out["mix_set"]["mix"] = {"kinds": kinds, "label": mix_label()}
    return out


# The combiner's ``settle`` threshold when the score-only settle() read it (the shipped
# offline_judge.json of 2026-12-01; the combiner no longer has one): the baseline's own constant.
SETTLE_BEFORE = 0.57


def settle_before(judge: OfflineJudge, claim: Claim, admitted: Sequence[Evidence]) -> object:
    """The score-only settle() before issue 13/14 (a regular expression compiled per claim, the
    full assessment of every claim, the cues computed again): the baseline of :func:`settle_speed`."""
    if claim.screened:
        return None
    core = claim.text.strip().rstrip(".!;:,").strip()
    tokens = core.split()
    limits = read_limits([e.text for e in admitted])
    verbatim = None
    if len(tokens) >= 4 and not AGGREGATE.search(core):
        pattern = re.compile(
            r"(?<!\w)" + r"\s+".join(re.escape(t) for t in tokens) + r"(?!\w)", re.IGNORECASE
        )
        for e, limit in zip(admitted, limits, strict=True):
            m = pattern.search(e.text, 0, limit)
            if m is None:
                continue
            item = prepare(e.evidence_id, e.text, limit)
            if m.end() > len(item.text):
                continue
            sentence = next(
                (
                    e.text[s:t]
                    for seg in item.singles
                    for s, t in seg.seg.spans
                    if s <= m.start() and m.end() <= t
                ),
                m.group(),
            )
            if negated(sentence) and not negated(claim.text):
                continue
            others = [
                prepare(x.evidence_id, x.text, n) for x, n in zip(admitted, limits, strict=True) if x is not e
            ]
            verbatim = None if contradicting_items(claim_cues(claim.text), {e.evidence_id}, others) else m
            break
    if (
        not admitted
        or verbatim is not None
        or any(len(e.text) > n for e, n in zip(admitted, limits, strict=True))
    ):
        return verbatim
    items = [prepare(e.evidence_id, e.text, n) for e, n in zip(admitted, limits, strict=True)]
    names = {e.evidence_id: e.document_id or e.name or e.kind.value for e in admitted}
    verdict, score = judge._assess(claim, items, names)
    if verdict.label is not Label.SUPPORTED or score.score < SETTLE_BEFORE:
        return None
    cited = {c.evidence_id for c in verdict.citations}
    return None if contradicting_items(claim_cues(claim.text), cited, items) else verdict


def _clear_claim_caches() -> None:
    """The per-claim caches settle() reads (not the evidence's: the cascade finds it prepared)."""
    carry._cues.cache_clear()  # settle() reads the claim's cues from the quote check's cache
    settle_module._claim_words.cache_clear()


async def settle_speed(dev: Path, repeats: int = 3) -> dict[str, Any]:
    """``settle()`` per claim of ``dev`` now and before (:func:`settle_before`), evidence prepared.

    Each claim is settled once per repeat, the per-claim caches :mod:`auditor.judges.offline._settle` reads
    cleared before each repeat (a claim is new to the cascade; the prepared evidence is kept, as the
    pipeline has it); the figure is the best of ``repeats``.
    """
    _, audits = await audit_async([dev], judge="offline", format=FORMAT, store=False)
    cases = [
        (c, [e for e, d in zip(a.answer.evidence, a.decisions, strict=True) if d.admitted])
        for a in audits
        for c in a.decomposition.judgeable
    ]
    for _, admitted in cases:  # the evidence as the judge prepared it
        for e, n in zip(admitted, read_limits([e.text for e in admitted]), strict=True):
            prepare(e.evidence_id, e.text, n)
    judge = OfflineJudge()
    now, before = [], []
    settled_now = settled_before = 0
    for _ in range(repeats):
        started = time.perf_counter()
        settled_before = sum(settle_before(judge, c, ev) is not None for c, ev in cases)
        before.append(time.perf_counter() - started)
        _clear_claim_caches()
        started = time.perf_counter()
        settled_now = sum(judge.settle(c, ev) is not None for c, ev in cases)
        now.append(time.perf_counter() - started)
    n = len(cases)
    return {
        "claims": n,
        "ms_per_claim_before": min(before) * 1000 / n if n else None,
        "ms_per_claim": min(now) * 1000 / n if n else None,
        "speedup": min(before) / min(now) if n and min(now) else None,
        "settled_before": settled_before,
        "settled": settled_now,
    }
