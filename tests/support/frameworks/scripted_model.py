"""A local model server that replays the shared agent scenarios, for the framework fixtures.

Agent frameworks talk to a model over HTTP; this server speaks the three wire protocols they use,
so a real framework runs its real agent loop (and its real instrumentation) against a scripted
model on loopback:

- OpenAI Chat Completions: ``POST .../chat/completions``, plain or streamed (``stream: true``: one
  chunk per word, tool calls as deltas, the usage chunk when ``stream_options.include_usage``);
- OpenAI Responses: ``POST .../responses``, plain or streamed (the event sequence of the API);
- Anthropic Messages: ``POST .../messages``, plain or streamed;
- ``POST .../embeddings`` (a deterministic bag-of-words vector) and ``GET .../models``.

Which scenario and which step: the scenario is the one whose question occurs in the last user
message (any message, failing that); the step is the number of assistant turns after that message.
So the server keeps no state between requests, and a framework that retries or forks gets the same
answer for the same conversation. A question no scenario knows is a 400 naming it.

``final_tool`` turns every final text into a call of that tool (``final_answer(answer=...)``,
``final_result(response=...)``), for frameworks that deliver answers through a tool; ``override``
lets a generator answer a request itself (a framework's extra planning or title calls).

Standard library only. Run it for a Node generator with
``python -m tests.support.frameworks.scripted_model --port 8765``.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.support.frameworks.scenarios import MODEL, Scenario, scenarios

#: A request's step as the server decided it: (scenario, step index, the step).
Decided = tuple[Scenario, int, dict[str, Any]]
#: ``override(protocol, body, decided)`` -> a step to send instead (``{"text": ...}`` or
#: ``{"tool_calls": [...]}``), or None to send the scripted one. ``decided`` is None when no
#: scenario matched (the override may still answer).
Override = Callable[[str, dict[str, Any], Decided | None], dict[str, Any] | None]

_WORD = re.compile(r"\S+\s*")


def _text_of(content: Any) -> str:
    """Message content as text, whichever protocol shaped it."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text_of(part) for part in content)
    if isinstance(content, dict):
        for key in ("text", "content", "input_text", "output_text"):
            if key in content and not isinstance(content[key], dict):
                return _text_of(content[key])
    return ""


def _squash(text: str) -> str:
    return " ".join(text.split()).lower()


class ScriptedModel:
    """The server; use it as a context manager (``base_url`` is the OpenAI-style ``.../v1``)."""

    def __init__(
        self,
        *,
        port: int = 0,
        final_tool: tuple[str, str] | None = None,
        override: Override | None = None,
        model: str = MODEL,
    ) -> None:
        self.final_tool = final_tool
        self.override = override
        self.model = model
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", port), _handler(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> ScriptedModel:
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> ScriptedModel:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- deciding the step ---------------------------------------------------------------------

    def decide(self, turns: list[tuple[str, str]]) -> Decided | None:
        """The scenario and step for a conversation given as ``(role, text)`` turns, oldest first.

        Assistant turns count steps; consecutive assistant turns (a text then its tool calls, as
        some protocols split them) count once.
        """
        known = scenarios()
        where = None
        found: Scenario | None = None
        users = [i for i, (role, _) in enumerate(turns) if role == "user"]
        for index in [*reversed(users), *reversed(range(len(turns)))]:
            text = _squash(turns[index][1])
            found = next((s for s in known if _squash(s.question) in text), None)
            if found is not None:
                where = index
                break
        if found is None or where is None:
            return None
        step = 0
        previous = ""
        for role, _ in turns[where + 1 :]:
            if role == "assistant" and previous != "assistant":
                step += 1
            previous = role
        index = min(step, len(found.steps) - 1)
        return found, index, self._final(found.steps[index])

    def _final(self, step: dict[str, Any]) -> dict[str, Any]:
        if self.final_tool is None or "text" not in step or step.get("tool_calls"):
            return step
        tool, argument = self.final_tool
        return {"tool_calls": [{"name": tool, "arguments": {argument: step["text"]}}]}

    def step_for(self, protocol: str, body: dict[str, Any], turns: list[tuple[str, str]]) -> dict[str, Any]:
        with self._lock:
            self.requests.append((protocol, body))
        decided = self.decide(turns)
        if self.override is not None:
            chosen = self.override(protocol, body, decided)
            if chosen is not None:
                return chosen
        if decided is None:
            last = next((t for r, t in reversed(turns) if r == "user"), turns[-1][1] if turns else "")
            raise LookupError(
                f"no scripted scenario matches the conversation (last user turn: {last[:200]!r})"
            )
        return decided[2]


def call_id(name: str, arguments: dict[str, Any]) -> str:
    """A deterministic tool-call id: the same call gets the same id in every run."""
    digest = hashlib.sha256(f"{name}:{json.dumps(arguments, sort_keys=True)}".encode()).hexdigest()
    return f"call_{digest[:20]}"


def _usage(body: dict[str, Any], text: str) -> tuple[int, int]:
    return max(1, len(json.dumps(body)) // 4), max(1, len(text) // 4)


# ---- OpenAI Chat Completions --------------------------------------------------------------------


def _chat_turns(body: dict[str, Any]) -> list[tuple[str, str]]:
    turns = []
    for message in body.get("messages") or []:
        if isinstance(message, dict):
            turns.append((str(message.get("role", "")), _text_of(message.get("content"))))
    return turns


def _chat_calls(step: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "id": call_id(c["name"], c["arguments"]),
            "type": "function",
            "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
        }
        for c in step.get("tool_calls", [])
    ]


def chat_completion(model: ScriptedModel, body: dict[str, Any]) -> dict[str, Any]:
    step = model.step_for("chat", body, _chat_turns(body))
    calls = _chat_calls(step)
    text = step.get("text")
    prompt, completion = _usage(body, text or json.dumps(calls))
    message: dict[str, Any] = {"role": "assistant", "content": text if text is not None else None}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model") or model.model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if calls else "stop",
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


def chat_stream(model: ScriptedModel, body: dict[str, Any]) -> Iterator[dict[str, Any]]:
    step = model.step_for("chat", body, _chat_turns(body))
    name = body.get("model") or model.model
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-scripted",
            "object": "chat.completion.chunk",
            "created": created,
            "model": name,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
        }

    yield chunk({"role": "assistant", "content": ""})
    text = step.get("text")
    if text:
        for word in _WORD.findall(text):
            yield chunk({"content": word})
    calls = _chat_calls(step)
    for index, call in enumerate(calls):
        arguments = call["function"]["arguments"]
        half = len(arguments) // 2
        yield chunk(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": call["id"],
                        "type": "function",
                        "function": {"name": call["function"]["name"], "arguments": arguments[:half]},
                    }
                ]
            }
        )
        yield chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments[half:]}}]})
    yield chunk({}, "tool_calls" if calls else "stop")
    if (body.get("stream_options") or {}).get("include_usage"):
        prompt, completion = _usage(body, text or json.dumps(calls))
        yield {
            "id": "chatcmpl-scripted",
            "object": "chat.completion.chunk",
            "created": created,
            "model": name,
            "choices": [],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }


# ---- OpenAI Responses ---------------------------------------------------------------------------


def _responses_turns(body: dict[str, Any]) -> list[tuple[str, str]]:
    given = body.get("input")
    if isinstance(given, str):
        return [("user", given)]
    turns = []
    for item in given or []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        if kind == "message" or "role" in item:
            turns.append((str(item.get("role", "")), _text_of(item.get("content"))))
        elif kind in ("function_call", "item_reference"):
            # A stored output item sent back by id is an assistant turn like the item itself
            # (@ai-sdk/openai's Responses provider, with `store` on, sends an earlier assistant
            # text or reasoning item so; its function calls it sends in full).
            turns.append(("assistant", ""))
        elif kind == "function_call_output":
            turns.append(("tool", _text_of(item.get("output"))))
    instructions = body.get("instructions")
    return [("system", instructions), *turns] if isinstance(instructions, str) else turns


def _response_output(step: dict[str, Any]) -> list[dict[str, Any]]:
    output: list[dict[str, Any]] = []
    if step.get("text"):
        output.append(
            {
                "type": "message",
                "id": "msg_scripted",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": step["text"], "annotations": []}],
            }
        )
    for call in step.get("tool_calls", []):
        ident = call_id(call["name"], call["arguments"])
        output.append(
            {
                "type": "function_call",
                "id": "fc_" + ident.removeprefix("call_"),
                "call_id": ident,
                "name": call["name"],
                "arguments": json.dumps(call["arguments"]),
                "status": "completed",
            }
        )
    return output


def response(model: ScriptedModel, body: dict[str, Any]) -> dict[str, Any]:
    step = model.step_for("responses", body, _responses_turns(body))
    output = _response_output(step)
    prompt, completion = _usage(body, json.dumps(output))
    return {
        "id": "resp_scripted",
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": body.get("model") or model.model,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": body.get("tools") or [],
        "usage": {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": completion,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt + completion,
        },
    }


def response_stream(model: ScriptedModel, body: dict[str, Any]) -> Iterator[dict[str, Any]]:
    done = response(model, body)
    started = {**done, "status": "in_progress", "output": []}
    number = 0

    def event(kind: str, **fields: Any) -> dict[str, Any]:
        nonlocal number
        number += 1
        return {"type": kind, "sequence_number": number, **fields}

    yield event("response.created", response=started)
    for index, item in enumerate(done["output"]):
        if item["type"] == "message":
            text = item["content"][0]["text"]
            yield event("response.output_item.added", output_index=index, item={**item, "content": []})
            part = {"type": "output_text", "text": "", "annotations": []}
            yield event(
                "response.content_part.added",
                item_id=item["id"],
                output_index=index,
                content_index=0,
                part=part,
            )
            for word in _WORD.findall(text):
                yield event(
                    "response.output_text.delta",
                    item_id=item["id"],
                    output_index=index,
                    content_index=0,
                    delta=word,
                )
            yield event(
                "response.output_text.done",
                item_id=item["id"],
                output_index=index,
                content_index=0,
                text=text,
            )
            yield event(
                "response.content_part.done",
                item_id=item["id"],
                output_index=index,
                content_index=0,
                part=item["content"][0],
            )
        else:
            yield event("response.output_item.added", output_index=index, item={**item, "arguments": ""})
            yield event(
                "response.function_call_arguments.delta",
                item_id=item["id"],
                output_index=index,
                delta=item["arguments"],
            )
            yield event(
                "response.function_call_arguments.done",
                item_id=item["id"],
                output_index=index,
                arguments=item["arguments"],
            )
        yield event("response.output_item.done", output_index=index, item=item)
    yield event("response.completed", response=done)


# ---- Anthropic Messages -------------------------------------------------------------------------


def _anthropic_turns(body: dict[str, Any]) -> list[tuple[str, str]]:
    turns = []
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        role = str(message.get("role", ""))
        content = message.get("content")
        if (
            role == "user"
            and isinstance(content, list)
            and all(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
        ):
            role = "tool"  # tool results travel as a user turn
        turns.append((role, _text_of(content)))
    return turns


def _anthropic_blocks(step: dict[str, Any]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if step.get("text"):
        blocks.append({"type": "text", "text": step["text"]})
    for call in step.get("tool_calls", []):
        ident = "toolu_" + call_id(call["name"], call["arguments"]).removeprefix("call_")
        blocks.append({"type": "tool_use", "id": ident, "name": call["name"], "input": call["arguments"]})
    return blocks


def anthropic_message(model: ScriptedModel, body: dict[str, Any]) -> dict[str, Any]:
    step = model.step_for("anthropic", body, _anthropic_turns(body))
    blocks = _anthropic_blocks(step)
    prompt, completion = _usage(body, json.dumps(blocks))
    return {
        "id": "msg_scripted",
        "type": "message",
        "role": "assistant",
        "model": body.get("model") or model.model,
        "content": blocks,
        "stop_reason": "tool_use" if step.get("tool_calls") else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": prompt, "output_tokens": completion},
    }


def anthropic_stream(model: ScriptedModel, body: dict[str, Any]) -> Iterator[dict[str, Any]]:
    done = anthropic_message(model, body)
    yield {"type": "message_start", "message": {**done, "content": [], "stop_reason": None}}
    for index, block in enumerate(done["content"]):
        if block["type"] == "text":
            yield {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "text", "text": ""},
            }
            for word in _WORD.findall(block["text"]):
                yield {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "text_delta", "text": word},
                }
        else:
            yield {"type": "content_block_start", "index": index, "content_block": {**block, "input": {}}}
            yield {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])},
            }
        yield {"type": "content_block_stop", "index": index}
    yield {
        "type": "message_delta",
        "delta": {"stop_reason": done["stop_reason"], "stop_sequence": None},
        "usage": {"output_tokens": done["usage"]["output_tokens"]},
    }
    yield {"type": "message_stop"}


# ---- embeddings ---------------------------------------------------------------------------------


def embedding(text: str, size: int = 64) -> list[float]:
    """A deterministic bag-of-words vector (hashed words, unit length)."""
    vector = [0.0] * size
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % size] += 1.0
    norm = sum(v * v for v in vector) ** 0.5 or 1.0
    return [v / norm for v in vector]


def embeddings(model: ScriptedModel, body: dict[str, Any]) -> dict[str, Any]:
    given = body.get("input")
    texts = [given] if isinstance(given, str) else [str(t) for t in given or []]
    return {
        "object": "list",
        "model": body.get("model") or "scripted-embedding",
        "data": [{"object": "embedding", "index": i, "embedding": embedding(t)} for i, t in enumerate(texts)],
        "usage": {
            "prompt_tokens": sum(len(t) // 4 for t in texts),
            "total_tokens": sum(len(t) // 4 for t in texts),
        },
    }


# ---- HTTP ---------------------------------------------------------------------------------------

_ROUTES: dict[str, tuple[Callable[[ScriptedModel, dict[str, Any]], Any], Callable[..., Any], bool]] = {
    # suffix: (plain, streamed, Anthropic-style SSE event names)
    "/chat/completions": (chat_completion, chat_stream, False),
    "/responses": (response, response_stream, False),
    "/messages": (anthropic_message, anthropic_stream, True),
}


def _handler(model: ScriptedModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send_json(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0].rstrip("/")
            if path.endswith("/models"):
                self._send_json(
                    200,
                    {
                        "object": "list",
                        "data": [
                            {"id": model.model, "object": "model", "created": 0, "owned_by": "scripted"}
                        ],
                    },
                )
            else:
                self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            path = self.path.split("?", 1)[0].rstrip("/")
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                self._send_json(
                    400, {"error": {"message": "body is not JSON", "type": "invalid_request_error"}}
                )
                return
            if path.endswith("/embeddings"):
                self._send_json(200, embeddings(model, body))
                return
            route = next((r for suffix, r in _ROUTES.items() if path.endswith(suffix)), None)
            if route is None:
                self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                return
            plain, streamed, named = route
            try:
                if body.get("stream"):
                    events = list(streamed(model, body))
                else:
                    self._send_json(200, plain(model, body))
                    return
            except LookupError as exc:
                self._send_json(400, {"error": {"message": str(exc), "type": "invalid_request_error"}})
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            with contextlib.suppress(OSError):
                for event in events:
                    prefix = (
                        f"event: {event['type']}\n".encode() if named or "sequence_number" in event else b""
                    )
                    self.wfile.write(prefix + b"data: " + json.dumps(event).encode() + b"\n\n")
                if not named:
                    self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--final-tool", default=None, help="deliver final texts as a call of TOOL:ARGUMENT")
    args = parser.parse_args()
    final = tuple(args.final_tool.split(":", 1)) if args.final_tool else None
    server = ScriptedModel(port=args.port, final_tool=final)  # type: ignore[arg-type]
    print(f"scripted model on {server.base_url}", flush=True)
    server._server.serve_forever()


if __name__ == "__main__":
    main()
