"""What the LLM client reads off the wire, the loop it runs on and the collector during a run.

The client posts through the real ``openai.AsyncOpenAI`` and decodes the reply's bytes itself
(``msgspec``), so these tests serve exact bytes from a local server: a reply with fields the
client does not read, cached-token details, nulls where numbers usually are, and a 200 that holds
no chat completion (an error in words, never a traceback).
"""

from __future__ import annotations

import asyncio
import gc
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from auditor.errors import LLMStatusError
from auditor.llm import LLMClient, run_sync
from auditor.llm._client import _posted, _tls_context, event_loop_factory
from auditor.trace import GC_THRESHOLD, OLD_THRESHOLD, fewer_collections


class _Canned:
    """A server that answers every POST with ``body`` (status 200) and keeps what it was sent."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.received: list[dict[str, Any]] = []
        self.content_types: list[str | None] = []
        canned = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                canned.received.append(json.loads(self.rfile.read(length)))
                canned.content_types.append(self.headers.get("Content-Type"))
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(canned.body)))
                self.end_headers()
                self.wfile.write(canned.body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"


@pytest.fixture
def canned() -> Iterator[_Canned]:
    server = _Canned(b"")
    server.thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()


async def _ask(base_url: str) -> Any:
    async with LLMClient("gpt-4.1-mini", base_url=base_url, api_key="k", max_retries=0) as client:
        done = await client.complete(
            [{"role": "user", "content": "hi"}], schema_name="s", schema={"type": "object"}, max_tokens=50
        )
        return done, client.usage


def test_reply_fields_tokens_and_cached_tokens_are_read(canned: _Canned) -> None:
    canned.body = json.dumps(
        {
            "id": "x",
            "object": "chat.completion",
            "created": 1,
            "model": "gpt-4.1-mini",
            "system_fingerprint": "fp",  # fields the client does not read are skipped
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "length",
                    "logprobs": None,
                    "message": {
                        "role": "assistant",
                        "content": '{"a": 1}',
                        "refusal": None,
                        "tool_calls": [],
                    },
                }
            ],
            "usage": {
                "prompt_tokens": 1000,
                "completion_tokens": 20,
                "total_tokens": 1020,
                "prompt_tokens_details": {"cached_tokens": 768, "audio_tokens": 0},
            },
        }
    ).encode()
    done, usage = asyncio.run(_ask(canned.base_url))
    assert (done.content, done.finish_reason, done.truncated, done.refusal) == (
        '{"a": 1}',
        "length",
        True,
        None,
    )
    assert (done.prompt_tokens, done.completion_tokens, done.mode) == (1000, 20, "json_schema")
    assert (usage.prompt_tokens, usage.completion_tokens, usage.cached_prompt_tokens) == (1000, 20, 768)
    assert usage.cost_usd == pytest.approx((1000 * 0.40 + 20 * 1.60) / 1_000_000)
    sent = canned.received[0]
    assert canned.content_types == ["application/json"]
    assert sent["model"] == "gpt-4.1-mini" and sent["max_tokens"] == 50 and sent["temperature"] == 0.0
    assert sent["response_format"]["json_schema"] == {
        "name": "s",
        "schema": {"type": "object"},
        "strict": False,
    }


def test_nulls_and_a_missing_usage_count_as_zero(canned: _Canned) -> None:
    canned.body = (
        b'{"choices": [{"message": {"content": null, "refusal": "no"}, "finish_reason": "stop"}],'
        b' "usage": {"prompt_tokens": null, "completion_tokens": 3, "prompt_tokens_details": null}}'
    )
    done, usage = asyncio.run(_ask(canned.base_url))
    assert (done.content, done.refusal, done.prompt_tokens, done.completion_tokens) == ("", "no", 0, 3)
    assert (usage.prompt_tokens, usage.cached_prompt_tokens) == (0, 0)
    canned.body = b'{"choices": [{"message": {"content": "{}"}}]}'
    done, usage = asyncio.run(_ask(canned.base_url))
    assert (done.content, done.finish_reason, usage.prompt_tokens) == ("{}", None, 0)


@pytest.mark.parametrize(
    "body", [b"<html>gateway says hello</html>", b'{"choices": []}', b'{"error": {"message": "x"}}']
)
def test_a_200_without_a_completion_is_a_status_error_in_words(canned: _Canned, body: bytes) -> None:
    canned.body = body
    with pytest.raises(LLMStatusError, match=r"HTTP 200 from .* without a chat completion") as raised:
        asyncio.run(_ask(canned.base_url))
    assert raised.value.status_code == 200 and "Traceback" not in str(raised.value)


def test_a_body_goes_as_json_bytes_and_one_they_cannot_carry_as_it_is() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "caf\u00e9 \u2028 \x00 \U0001f600"}]}
    posted = _posted(body)
    assert set(posted) == {"content"} and json.loads(posted["content"]) == body
    lone = {"model": "m", "messages": [{"role": "user", "content": "a\ud800b"}]}
    assert _posted(lone) == {"body": lone}  # the client's own path, which says what is wrong


def test_clients_share_one_tls_context() -> None:
    first = LLMClient("m", base_url="https://example.invalid/v1", api_key="k")
    second = LLMClient("m", base_url="http://127.0.0.1:9/v1", api_key="k")
    context = _tls_context()
    assert context is not None and context is _tls_context()
    for client in (first, second):
        asyncio.run(client.aclose())


def test_run_sync_runs_on_uvloop_where_installed() -> None:
    uvloop = pytest.importorskip("uvloop")
    assert event_loop_factory() is uvloop.new_event_loop

    async def loop_type() -> type[asyncio.AbstractEventLoop]:
        return type(asyncio.get_running_loop())

    assert run_sync(loop_type) is uvloop.Loop


def test_fewer_collections_while_runs_are_on_and_the_thresholds_restored() -> None:
    saved = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        with fewer_collections():
            assert gc.get_threshold() == (GC_THRESHOLD, 10, OLD_THRESHOLD)
            with fewer_collections():  # a second run in the same process (auditor serve)
                assert gc.get_threshold()[0] == GC_THRESHOLD
            assert gc.get_threshold()[0] == GC_THRESHOLD  # the first is still on
        assert gc.get_threshold() == (700, 10, 10)
        gc.set_threshold(50_000, 5, 500)  # a caller's higher thresholds are kept, not lowered
        with fewer_collections():
            assert gc.get_threshold() == (50_000, 5, 500)
        assert gc.get_threshold() == (50_000, 5, 500)
        gc.set_threshold(50_000, 5, 5)
        with fewer_collections():
            assert gc.get_threshold() == (50_000, 5, OLD_THRESHOLD)
        assert gc.get_threshold() == (50_000, 5, 5)
        with pytest.raises(RuntimeError), fewer_collections():
            raise RuntimeError("a failed run")
        assert gc.get_threshold() == (50_000, 5, 5)
    finally:
        gc.set_threshold(*saved)
