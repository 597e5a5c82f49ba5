"""A tiny run of every benchmark code path (not a timed test: no figure is asserted against a clock)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from benchmarks import accuracy, ingest, judge, llm, quotes
from benchmarks.__main__ import machine, render


def write_dev(path: Path) -> None:
    text = "Refunds are accepted within 30 days of purchase. Shipping takes 5 days."
    rows = [
        {
            "id": "ds:1",
            "dataset": "ds",
            "task_type": "QA",
            "unit": "answer",
            "question": "Refunds?",
            "sources": [{"id": "p", "text": text}],
            "answer": "Refunds are accepted within 30 days of purchase.",
            "labels": [],
            "verdict": "supported",
            "answer_label": "grounded",
        },
        {
            "id": "ds:2",
            "dataset": "ds",
            "task_type": "QA",
            "unit": "answer",
            "question": "Shipping?",
            "sources": [{"id": "p", "text": text}],
            "answer": "Shipping takes 9 days.",
            "labels": [{"start": 15, "end": 21, "verdict": "contradicted"}],
            "verdict": "contradicted",
            "answer_label": "hallucinated",
        },
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_every_benchmark_path_on_small_inputs(tmp_path: Path) -> None:
    results: dict[str, object] = {"machine": machine()}
    otlp, chain = tmp_path / "o.jsonl", tmp_path / "l.jsonl"
    assert ingest.generate(otlp, "otlp-json", 0.2) >= 200_000
    ingest.generate(chain, "langchain", 0.2)
    speed = [ingest.throughput(otlp, "otlp-json"), ingest.throughput(chain, "langchain")]
    assert all(r["spans"] > 0 and r["ratio_to_json"] > 0 for r in speed)
    # each copy gets fresh ids, so no trace repeats across copies
    for fmt, template in (("otlp-json", ingest.otlp_template()), ("langchain", ingest.langchain_template())):
        first, second = (b"".join(ingest._copy(template[:3], fmt, k)) for k in (1, 2))
        assert first != second and len(first) == len(second)
    probe = ingest.peak_memory(otlp, "otlp-json")
    assert probe["spans"] == speed[0]["spans"] and probe["peak_rss_mb"] > 0
    base = ingest.peak_memory(None, "otlp-json")
    assert base["spans"] == 0
    results["ingest"] = {
        "throughput": speed,
        "memory": [
            {
                **probe,
                "format": "otlp-json",
                "megabytes": 0.2,
                "baseline_rss_mb": base["peak_rss_mb"],
                "growth_mb": probe["peak_rss_mb"] - base["peak_rss_mb"],
            }
        ],
    }

    dev = tmp_path / "dev.jsonl"
    write_dev(dev)
    offline = asyncio.run(judge.run(dev))
    assert offline["records"] == 2 and offline["claims_judged"] == 2
    results["offline_judge"] = offline

    good = accuracy.run(dev, None, llm_answers=2)
    measured = asyncio.run(good)
    assert set(measured["splits"]) == {"dev"}  # no train file given
    segments = measured["splits"]["dev"]["segments"]
    assert set(segments) == {"ds/QA", "ALL"}
    everything = segments["ALL"]
    assert everything["answers"] == 2 and everything["judge"]["tp"] == 1 and everything["judge"]["tn"] == 1
    assert everything["baseline"]["tp"] == 1  # "9" is a number the sources lack
    assert everything["settle"]["settled"] == everything["settle"]["agree"] == 1
    cascade = measured["cascade"]["llm_set"]
    assert cascade["llm_alone"]["http_requests"] == 2 and cascade["agreement"] is not None
    # the realistic mix: of two answers, both verbatim (the first two of MIX), no call needed
    mix = measured["cascade"]["mix_set"]
    assert mix["mix"]["kinds"] == {"verbatim": 2, "reordered": 0, "paraphrase": 0, "changed_figure": 0}
    assert mix["llm_alone"]["http_requests"] == 2 and mix["cascade"]["http_requests"] == 0
    assert mix["calls_saved_per_answer"] == 1.0
    results["accuracy"] = measured

    pipeline = asyncio.run(llm.run(tmp_path, answers=4, concurrency=2, latency=0.01, repeats=2))
    cascade = pipeline["modes"]["cascade (rules decomposer)"]
    assert cascade["answers"] == 4 and cascade["unjudged"] == 0
    assert cascade["server_cpu_ms_per_request"] > 0
    # the same rounds of requests at each concurrency: 4 answers at C = 8, 16 at C = 32
    assert pipeline["store_answers_by_concurrency"] == {"8": 4, "32": 16}
    for c in (8, 32):
        # the bare client posts the store-on row's own requests again, as many, and only those
        stored = pipeline["modes"][f"llm decomposer, store, C = {c}"]
        bare = pipeline["modes"][f"bare openai.AsyncOpenAI, llm decomposer's requests, C = {c}"]
        assert stored["answers"] == 4 * c // 8
        assert bare["bare"] and bare["http_requests"] == bare["answers"] == stored["http_requests"] == c
        assert len(stored["runs"]) == len(bare["runs"]) == 2
        assert stored["ratio_to_bare"] == pytest.approx(stored["ratio_to_bound"] / bare["ratio_to_bound"])
        assert pipeline["modes"][f"fused, --no-store, C = {c}"]["ratio_to_bare"] > 0
    assert pipeline["modes"]["separate (llm decomposer, no cascade)"]["calls_per_answer"] == 2.0
    assert pipeline["second_audit"]["cascade (rules decomposer)"]["second_calls"] == 0
    results["llm"] = pipeline

    carry = asyncio.run(quotes.run(dev))
    offline, lexical = carry["judges"]["offline"], carry["judges"]["fake LLM, lexical"]
    assert offline["given"] == 2 and offline["demoted"] == 0 and lexical["demoted"] == 0
    tiny, unrelated = (carry["judges"][f"always supported, {k}"] for k in ("1-char quote", "unrelated quote"))
    assert tiny["demoted"] == 2
    # the only other sentence is under 25 characters, so the "unrelated" quote of the first claim is
    # the sentence that states it: kept, and the humans agree; the changed figure is demoted
    assert unrelated["demoted"] == 1 and unrelated["kept_supported_agreed"] == 1
    assert tiny["kept_supported_disagreed"] == unrelated["kept_supported_disagreed"] == 0
    assert set(carry["sweep"]["offline"]) == {"0.3", "0.4", "0.5", "0.6", "0.7"}
    results["quotes"] = carry

    table = render(results)
    assert "Ingest throughput" in table and "ds/QA" in table and "Second audit" in table
    assert "Offline judge on dev" in table and "Cascade on llm_set" in table
    assert "Cascade on mix_set, generated: 2/5 verbatim, 1/5 reordered" in table
    assert "Quotes must carry the claim" in table and "MIN_SHARE sweep" in table
