"""An OpenAI-compatible server that answers any structured-output request, for the peers harness.

The test suite's fake server (``tests/support/fake_openai.py``) reads the auditor's own prompts;
RAGAS and DeepEval send theirs. This one takes the JSON schema a request asks for (a
``json_schema`` ``response_format``, or the schema that ``instructor``'s JSON mode writes into the
messages, as RAGAS 0.4 does) and returns an instance of it built from the prompt's sentences:
lists of two items, the first value of an enum, ``1`` for integers. The verdicts mean nothing; the
calls, tokens and waits are what is measured. Same rules as the fake server: ``latency`` seconds
per request, a thread per connection, Nagle off, usage estimated as characters / 4.

``python -m benchmarks.peers.server --latency 0.2`` prints its port, then answers each line on
stdin with ``requests prompt_tokens completion_tokens`` so far and resets them; end of input stops it.
"""

from __future__ import annotations

import argparse
import json
import re
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_SENTENCE = re.compile(r"[A-Z][^.!?\n]{10,200}[.!?]")


def schema_of(body: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON schema the request asks for, if any."""
    rf = body.get("response_format") or {}
    if rf.get("type") == "json_schema":
        schema = (rf.get("json_schema") or {}).get("schema")
        return schema if isinstance(schema, dict) else None
    for message in body.get("messages") or []:
        text = message.get("content") if isinstance(message.get("content"), str) else ""
        at = text.find("json_schema")
        start = text.find("{", at) if at >= 0 else -1
        if start >= 0:
            try:
                found, _ = json.JSONDecoder().raw_decode(text[start:])
            except json.JSONDecodeError:
                continue
            if isinstance(found, dict):
                return found
    return None


def instance(schema: dict[str, Any], defs: dict[str, Any], sentences: list[str], depth: int = 0) -> Any:
    """A value following ``schema``, its strings taken from ``sentences`` in turn."""
    if "$ref" in schema:
        return instance(defs.get(schema["$ref"].rsplit("/", 1)[-1], {}), defs, sentences, depth)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
            return instance(options[0], defs, sentences, depth)
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        if depth > 8:
            return {}
        return {
            name: instance(sub, defs, sentences, depth + 1)
            for name, sub in (schema.get("properties") or {}).items()
        }
    if kind == "array":
        return [instance(schema.get("items") or {}, defs, sentences, depth + 1) for _ in range(2)]
    if kind == "integer":
        return 1
    if kind == "number":
        return 1.0
    if kind == "boolean":
        return True
    sentences.append(sentences.pop(0))
    return sentences[-1]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def __init__(self, latency: float) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.latency = latency
        self.lock = threading.Lock()
        self.counts = [0, 0, 0]  # requests, prompt tokens, completion tokens


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # the model list, for clients that check it
        self._send(200, {"object": "list", "data": [{"id": "bench-model", "object": "model"}]})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        sent = json.dumps(body.get("messages") or []) + json.dumps(body.get("response_format") or {})
        time.sleep(self.server.latency)
        schema = schema_of(body) or {"type": "object", "properties": {"text": {"type": "string"}}}
        sentences = _SENTENCE.findall(sent.replace("\\n", "\n")) or ["Nothing to quote."]
        content = json.dumps(
            instance(schema, schema.get("$defs") or schema.get("definitions") or {}, sentences)
        )
        prompt, completion = len(sent) // 4 + 1, len(content) // 4 + 1
        with self.server.lock:
            counts = self.server.counts
            counts[0], counts[1], counts[2] = counts[0] + 1, counts[1] + prompt, counts[2] + completion
        self._send(
            200,
            {
                "id": "chatcmpl-peer",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "bench-model"),
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": content},
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                },
            },
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--latency", type=float, default=0.2)
    args = parser.parse_args()
    server = _Server(args.latency)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(server.server_address[1], flush=True)
    for _ in sys.stdin:
        with server.lock:
            print(*server.counts, flush=True)
            server.counts = [0, 0, 0]
    server.shutdown()


if __name__ == "__main__":
    main()
