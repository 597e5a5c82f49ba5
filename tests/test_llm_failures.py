"""Failing honestly: ``LLMClient.check()``, the one cheap request before any work that makes a bad
endpoint, key or model fail fast with its reason (against the local fake server, a closed port and
a silent socket), and failed calls counted apart from successful ones."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from auditor.errors import LLMConnectionError, LLMError, LLMStatusError, LLMTimeoutError
from auditor.judges import LLMJudge
from auditor.llm import LLMClient
from tests.support.fake_openai import FakeOpenAI, make_answer, make_evidence


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as s:
        yield s


def judge_once(server: FakeOpenAI, **options: Any) -> LLMClient:
    """Judge one one-claim answer through a fresh client; returns the closed client."""

    async def go() -> LLMClient:
        async with LLMClient(
            "m", base_url=server.base_url, api_key="test", backoff_base=0.01, **options
        ) as client:
            answer, claims = make_answer(
                "Refunded $80.", ["Refunded $80."], (make_evidence("e", "Refunded $80."),)
            )
            await LLMJudge(client).judge(answer, claims, [], [])
            return client

    return asyncio.run(go())


def check(url: str, model: str = "m", **options: Any) -> None:
    async def go() -> None:
        async with LLMClient(model, base_url=url, **{"api_key": "test", **options}) as client:
            await client.check()

    asyncio.run(go())


def test_check_passes_on_a_served_model_with_one_request_and_no_chat(server: FakeOpenAI) -> None:
    check(server.base_url)
    assert server.model_requests == ["/v1/models/m"] and server.requests == 0


def test_check_fails_fast_on_a_closed_port_with_the_password_masked() -> None:
    with FakeOpenAI() as dead:
        port = dead.port
    with pytest.raises(LLMConnectionError) as err:
        check(f"http://user:s3cret@127.0.0.1:{port}/v1")
    message = str(err.value)
    assert message.startswith(
        f"Cannot reach the LLM server at http://user:***@127.0.0.1:{port}/v1 (Connection refused)"
    )
    assert "s3cret" not in message and "--base-url" in message


def test_check_names_a_bad_key(server: FakeOpenAI) -> None:
    server.api_key = "right"
    with pytest.raises(LLMStatusError, match=r"rejected the API key \(HTTP 401: .*OPENAI_API_KEY") as err:
        check(server.base_url, api_key="wrong")
    assert err.value.status_code == 401 and server.requests == 0  # no chat request after a 401
    check(server.base_url, api_key="right")


def test_check_names_a_missing_model_and_what_the_server_lists(server: FakeOpenAI) -> None:
    server.models = ["llama-3", "qwen-2"]
    with pytest.raises(LLMStatusError, match=r"has no model 'gpt-x' .*it lists llama-3, qwen-2") as err:
        check(server.base_url, model="gpt-x")
    assert err.value.status_code == 404
    assert server.model_requests == ["/v1/models/gpt-x", "/v1/models"]
    check(server.base_url, model="qwen-2")


def test_check_without_models_routes_asks_one_token(server: FakeOpenAI) -> None:
    server.models_route = False  # a server with no /v1/models at all
    check(server.base_url)
    assert server.requests == 1 and server.bodies[-1]["max_tokens"] == 1
    server.enqueue("500")
    with pytest.raises(LLMError, match=r"answered a test request with HTTP 500"):
        check(server.base_url)


def test_check_times_out_quickly_on_a_server_that_never_answers() -> None:
    with socket.socket() as silent:  # accepts connections (the backlog) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
        with pytest.raises(LLMTimeoutError, match=r"did not answer within 0\.3s"):
            check(url, check_timeout=0.3)


def test_failed_calls_are_counted_apart_from_successful_ones(server: FakeOpenAI) -> None:
    server.enqueue("500", retry_after="0")
    server.enqueue("500", retry_after="0")
    failing = judge_once(server, max_retries=1)
    assert (failing.usage.calls, failing.usage.failed, failing.usage.attempts) == (1, 1, 2)
    working = judge_once(server)
    assert (working.usage.calls, working.usage.failed) == (1, 0)
