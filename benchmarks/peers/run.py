"""Score the benchmark's records with one peer (RAGAS or DeepEval faithfulness), in the peers' venv.

``python -m benchmarks.peers.run ragas|deepeval RECORDS --base-url URL --concurrency 8`` prints one
JSON line: answers scored, failures, seconds. Imports nothing of the auditor (the peers' venv does
not have it); started by :mod:`benchmarks.peers.__main__`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

MODEL = "bench-model"


def _ragas(base_url: str) -> Callable[[dict[str, Any]], Awaitable[Any]]:
    from openai import AsyncOpenAI
    from ragas.llms import llm_factory  # type: ignore[import-not-found]
    from ragas.metrics.collections import Faithfulness  # type: ignore[import-not-found]

    metric = Faithfulness(llm=llm_factory(MODEL, client=AsyncOpenAI(base_url=base_url, api_key="bench")))

    async def score(record: dict[str, Any]) -> Any:
        contexts = [s["text"] for s in record["sources"]]
        return await metric.ascore(
            user_input=record["question"], response=record["answer"], retrieved_contexts=contexts
        )

    return score


def _deepeval(base_url: str) -> Callable[[dict[str, Any]], Awaitable[Any]]:
    os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "YES")
    from deepeval.metrics import FaithfulnessMetric  # type: ignore[import-not-found]
    from deepeval.models import DeepEvalBaseLLM  # type: ignore[import-not-found]
    from deepeval.test_case import LLMTestCase  # type: ignore[import-not-found]
    from openai import AsyncOpenAI, OpenAI

    class BenchModel(DeepEvalBaseLLM):  # type: ignore[misc]
        """DeepEval's documented way to use any OpenAI-compatible endpoint: a custom model."""

        def __init__(self) -> None:
            self.aclient = AsyncOpenAI(base_url=base_url, api_key="bench")
            self.client = OpenAI(base_url=base_url, api_key="bench")
            super().__init__(MODEL)

        def load_model(self) -> Any:
            return self.client

        @staticmethod
        def _options(schema: Any) -> dict[str, Any]:
            if schema is None:
                return {}
            json_schema = {"name": schema.__name__, "schema": schema.model_json_schema()}
            return {"response_format": {"type": "json_schema", "json_schema": json_schema}}

        def generate(self, prompt: str, schema: Any = None) -> Any:
            out = self.client.chat.completions.create(
                model=MODEL, messages=[{"role": "user", "content": prompt}], **self._options(schema)
            )
            text = out.choices[0].message.content or ""
            return schema.model_validate_json(text) if schema is not None else text

        async def a_generate(self, prompt: str, schema: Any = None) -> Any:
            out = await self.aclient.chat.completions.create(
                model=MODEL, messages=[{"role": "user", "content": prompt}], **self._options(schema)
            )
            text = out.choices[0].message.content or ""
            return schema.model_validate_json(text) if schema is not None else text

        def get_model_name(self) -> str:
            return MODEL

    model = BenchModel()

    async def score(record: dict[str, Any]) -> Any:
        metric = FaithfulnessMetric(model=model, async_mode=True)  # one per answer: it keeps state
        case = LLMTestCase(
            input=record["question"],
            actual_output=record["answer"],
            retrieval_context=[s["text"] for s in record["sources"]],
        )
        return await metric.a_measure(case, _show_indicator=False)

    return score


PEERS = {"ragas": _ragas, "deepeval": _deepeval}


async def run(peer: str, records: Path, base_url: str, concurrency: int) -> dict[str, Any]:
    rows = [json.loads(line) for line in records.read_text(encoding="utf-8").splitlines() if line.strip()]
    score = PEERS[peer](base_url)
    limiter = asyncio.Semaphore(concurrency)
    failures: list[str] = []

    async def one(record: dict[str, Any]) -> None:
        async with limiter:
            try:
                await score(record)
            except Exception as err:  # counted and shown: a peer's failure is data too
                failures.append(f"{type(err).__name__}: {err}"[:300])

    started = time.perf_counter()
    await asyncio.gather(*(one(r) for r in rows))
    seconds = time.perf_counter() - started
    return {
        "peer": peer,
        "answers": len(rows),
        "failures": len(failures),
        "first_failure": failures[:1],
        "seconds": seconds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("peer", choices=sorted(PEERS))
    parser.add_argument("records", type=Path)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args.peer, args.records, args.base_url, args.concurrency))), flush=True)


if __name__ == "__main__":
    main()
