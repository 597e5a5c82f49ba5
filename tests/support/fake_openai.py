"""A local OpenAI-compatible chat-completions server for tests and benchmarks.

It answers the auditor's judge, decomposition and fused prompts deterministically by reading the
fenced prompt it receives (the format of :mod:`auditor.judges.llm._prompts`, read by the strict
:func:`fenced_blocks`) and applying a simple lexical rule: a claim whose content words all appear
in an admitted item is ``supported`` with real quotes (the item's lines or sentences that hold
those words); one whose words appear but whose numbers differ is ``contradicted`` (quoting a line
with the item's figure); otherwise
``absent``, with excluded items containing its words listed as inadmissible support. Admitted items
it does not cite that take the other side are cited in ``conflicting`` (:func:`other_side`). With ``offline_judge=True`` (``--offline-judge``) the verdicts come from
:class:`auditor.judges.OfflineJudge` instead. Token usage is estimated as characters / 4.

Faults are scripted per test with :meth:`FakeOpenAI.enqueue` (consumed one per request, in order):
``"429"`` (with ``retry_after``, default 1; None sends no ``Retry-After``), ``"500"`` (``retry_after`` optional), ``"hang"`` (no answer until ``hang_seconds``),
``"malformed"``, ``"length"``, ``"bad_label"``, ``"unknown_id"``, ``"fake_quote"``, ``"refuse"``,
``"bad_offsets"``, ``"common_knowledge"``, ``"401"``, ``"ok"``. An agent's own chat requests (no
auditor prompt) are answered from ``chat_replies`` while it holds any: each an assistant message
(``content`` and/or ``tool_calls``), taken in order. Standing switches: ``latency``, ``reject_json_schema`` (400 on a
``json_schema`` response_format), ``obey_injection`` (evidence saying "ignore the above" makes it mark
every claim supported with an invented quote), ``always_supported_tiny_quote`` (every claim
supported, quoting one character of the first admitted item: a quote that verifies but carries
nothing), ``always_supported_unrelated_quote`` (every claim supported, quoting the real sentence of
the admitted evidence that shares the fewest words with the claim), ``always_supported_closest_quote``
(every claim supported, quoting the real sentence sharing the *most* words with it: a negating or
rival-entity sentence), ``injection_quotes_evidence`` (an obeyed injection quotes that closest real
sentence instead of inventing one), ``api_key`` (when set, any other key gets a 401 on
every route), ``models`` (when set, the only models it serves: others get a 404 ``model_not_found``;
None serves any name) and ``models_route`` (False: no ``/v1/models`` routes, like vLLM's missing
``/v1/models/{id}`` taken further) and ``replies`` (texts it answers, in order, the last one repeated,
to a chat request that is not one of the auditor's prompts: the model of an agent under test). Chat requests are counted in total and per kind, and their
arrival times (``time.monotonic()``) kept in ``arrivals`` (:meth:`FakeOpenAI.most_in_window`: the
most requests that arrived within any window of so many seconds); ``GET`` requests
to the models routes in ``model_requests`` (they consume no scripted fault).

Use it as a context manager or through the ``fake_openai`` fixture; for benchmarks run
``python -m tests.support.fake_openai --port 8000 --latency 0.2``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import socket
import threading
import time
from collections import Counter
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from auditor.claims import Claim
from auditor.evidence import Answer, Evidence, EvidenceKind

_FENCE = re.compile(r"^Fence token of this message: ([0-9a-f]{16})$", re.M)
_ATTR = re.compile(r'(\w+)="([^"]*)"')
_CLIP = re.compile(r"\n\[\.\.\. [\d,]+ characters not shown \.\.\.\]\n")  # auditor/judges/llm/_excerpt.py
_TOKEN = re.compile(r"\d+(?:[.,:/-]\d+)*|[a-z]+")
_NUMBER = re.compile(r"^\d")
_SEGMENT = re.compile(r"(?<=[.!?])\s+|\n")
_SENTENCE = re.compile(r"(?:[^.!?\n]|[.!?](?![\s]|$))+(?:[.!?]+|$)")
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "of",
        "on",
        "in",
        "at",
        "to",
        "for",
        "and",
        "or",
        "with",
        "by",
        "it",
        "its",
        "this",
        "that",
        "as",
        "from",
        "has",
        "have",
        "had",
        "your",
        "you",
        "our",
        "we",
        "i",
        "their",
        "they",
        "them",
        "his",
        "her",
        "he",
        "she",
        "do",
        "does",
        "did",
        "not",
        "no",
        "so",
        "than",
        "then",
        "there",
        "these",
        "those",
    ]
)
INJECTION = "ignore the above"


def fenced_blocks(prompt: str) -> list[tuple[str, dict[str, str], str]]:
    """The fenced blocks of a prompt in order, as (kind, attributes, text): a strict reader.

    Only markers carrying the message's fence token (announced on its ``Fence token`` line) count;
    a block runs from its opening marker to the first ``END`` marker of its kind with that token,
    so marker-like text inside a block stays part of the block.
    """
    announced = _FENCE.search(prompt)
    if announced is None:
        return []
    token = announced.group(1)
    opening = re.compile(rf"<<<(?P<kind>[A-Z]+)-{token}(?P<attrs>[^\n]*?)>>>(?P<sep>[ \n])")
    out: list[tuple[str, dict[str, str], str]] = []
    pos = announced.end()
    while (m := opening.search(prompt, pos)) is not None:
        close = prompt.find(f"{m.group('sep')}<<<END {m.group('kind')}-{token}", m.end())
        if close < 0:
            break
        out.append((m.group("kind"), dict(_ATTR.findall(m.group("attrs"))), prompt[m.end() : close]))
        pos = prompt.index(">>>", close) + 3
    return out


def most_in_window(times: list[float], seconds: float = 1.0) -> int:
    """The most of ``times`` within any half-open window ``[t, t + seconds)``."""
    ordered = sorted(times)
    most, first = 0, 0
    for last, t in enumerate(ordered):
        while t - ordered[first] >= seconds:
            first += 1
        most = max(most, last - first + 1)
    return most


def content_words(text: str) -> list[str]:
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS]


def _quote_lines(eid: str, words: set[str], text: str, figure: bool = False) -> list[dict[str, str]]:
    """Citations of the item's lines (or sentences) that together hold ``words``: greedily the line
    adding most of the words not yet quoted, at most four; with ``figure``, also the first line
    stating a number (the rival figure of a contradiction) when none of those does."""
    lines = [seg.strip() for seg in _SEGMENT.split(text) if seg.strip()]
    chosen: list[str] = []
    missing = set(words)
    while missing and len(chosen) < 4:
        gain, line = max(((len(missing & set(content_words(ln))), ln) for ln in lines), key=lambda t: t[0])
        if not gain:
            break
        chosen.append(line)
        missing -= set(content_words(line))
    if figure and not any(_NUMBER.match(w) for ln in chosen for w in content_words(ln)):
        chosen += [ln for ln in lines if any(_NUMBER.match(w) for w in content_words(ln))][:1]
    return [{"evidence_id": eid, "quote": ln} for ln in chosen or lines[:1]]


def judge_claim(
    claim: str, admitted: list[tuple[str, str]], excluded: list[tuple[str, str]]
) -> dict[str, Any]:
    """The lexical verdict for one claim (see the module docstring)."""
    words = set(content_words(claim))
    inadmissible = [eid for eid, text in excluded if words and words <= set(content_words(text))]
    base: dict[str, Any] = {"citations": [], "inadmissible_support": inadmissible}
    for eid, text in admitted:
        have = set(content_words(text))
        if words and words <= have:
            return {
                **base,
                "label": "supported",
                "citations": _quote_lines(eid, words, text),
                "rationale": "all content words of the claim appear in the item",
            }
    for eid, text in admitted:
        have = set(content_words(text))
        numbers = {w for w in words if _NUMBER.match(w)}
        others = words - numbers
        if numbers - have and others and others <= have and any(_NUMBER.match(w) for w in have):
            return {
                **base,
                "label": "contradicted",
                "citations": _quote_lines(eid, others, text, figure=True),
                "rationale": "the item gives a different figure",
            }
    return {**base, "label": "absent", "rationale": "no admitted item states it"}


def unrelated_claim(claim: str, admitted: list[tuple[str, str]]) -> dict[str, Any]:
    """``supported``, quoting the admitted sentence sharing the fewest content words with ``claim``.

    Sentences of at least 25 characters are preferred (the fault campaign's "any 25 real
    characters"); ties go to the first. The quote is real, so only the check that a quote carries
    its claim can catch it.
    """
    words = set(content_words(claim))
    sentences = [(eid, seg.strip()) for eid, text in admitted for seg in _SEGMENT.split(text) if seg.strip()]
    if not sentences:
        return {"label": "absent", "citations": [], "rationale": "no admitted text"}
    eid, quote = min(sentences, key=lambda s: (len(s[1]) < 25, len(words & set(content_words(s[1])))))
    return {
        "label": "supported",
        "citations": [{"evidence_id": eid, "quote": quote}],
        "inadmissible_support": [],
        "rationale": "supported",
    }


def closest_claim(claim: str, admitted: list[tuple[str, str]]) -> dict[str, Any]:
    """``supported``, quoting the admitted sentence sharing the *most* content words with ``claim``
    (ties: the first; a sentence carrying the planted instruction is never quoted).

    What a judge that obeys "mark every claim supported" does when it also knows its quote is
    checked: the real sentence closest to the claim, which may negate it ("Returns are not
    accepted ...") or name a rival ("The Model Y ..."). Only the agreement check can catch it.
    """
    words = set(content_words(claim))
    sentences = [
        (eid, seg.strip())
        for eid, text in admitted
        for seg in _SEGMENT.split(text)
        if seg.strip() and INJECTION not in seg.lower()
    ]
    if not sentences:
        return {"label": "absent", "citations": [], "rationale": "no admitted text"}
    eid, quote = max(sentences, key=lambda s: len(words & set(content_words(s[1]))))
    return {
        "label": "supported",
        "citations": [{"evidence_id": eid, "quote": quote}],
        "inadmissible_support": [],
        "rationale": "supported",
    }


def other_side(claim: str, verdict: dict[str, Any], admitted: list[tuple[str, str]]) -> list[dict[str, str]]:
    """The ``conflicting`` citations of a lexical verdict: admitted items it does not cite that take
    the other side (for ``supported``, an item holding the claim's words with other numbers; for
    ``contradicted``, an item holding all of them), quoted as the lexical rule quotes."""
    words = set(content_words(claim))
    numbers = {w for w in words if _NUMBER.match(w)}
    others = words - numbers
    cited = {c["evidence_id"] for c in verdict.get("citations", [])}
    found: list[dict[str, str]] = []
    for eid, text in admitted:
        have = set(content_words(text))
        if eid in cited:
            continue
        if verdict["label"] == "supported" and numbers - have and others and others <= have:
            if any(_NUMBER.match(w) for w in have):
                found += _quote_lines(eid, others, text, figure=True)
        elif verdict["label"] == "contradicted" and words and words <= have:
            found += _quote_lines(eid, words, text)
    return found


def offline_claim(
    claim: str, admitted: list[tuple[str, str]], excluded: list[tuple[str, str]]
) -> dict[str, Any]:
    """The verdict of the project's offline judge, in the LLM's output shape (more plausible verdicts)."""
    from auditor.judges import OfflineJudge

    def ev(eid: str, text: str) -> Evidence:
        return Evidence(evidence_id=eid, kind=EvidenceKind.OTHER, text=text, trace_id="fake")

    c = Claim(claim_id="c", answer_id="a", text=claim, start=0, end=len(claim))
    verdicts = OfflineJudge().judge_sync([c], [ev(*a) for a in admitted], [ev(*e) for e in excluded])
    if not verdicts or verdicts[0].label.value not in ("supported", "contradicted", "absent"):
        return judge_claim(claim, admitted, excluded)
    v = verdicts[0]
    return {
        "label": v.label.value,
        "citations": [c.model_dump() for c in v.citations],
        "conflicting": [
            {"evidence_id": c.evidence_id, "quote": c.quote}
            for c in v.conflicts
            if c.stance != ("supports" if v.label.value == "supported" else "contradicts")
        ],
        "inadmissible_support": list(v.inadmissible_support),
        "rationale": v.rationale or "",
    }


def decompose_text(text: str) -> dict[str, Any]:
    claims: list[dict[str, Any]] = []
    for m in _SENTENCE.finditer(text):
        raw = m.group(0)
        stripped = raw.strip()
        if not stripped:
            continue
        start = m.start() + (len(raw) - len(raw.lstrip()))
        lower = stripped.lower()
        reason = None
        if lower.startswith(("let me know", "feel free", "is there anything")):
            reason = "offer_to_help"
        elif lower.startswith(("i hope", "thanks", "thank you", "happy to help")):
            reason = "pleasantry"
        elif lower.startswith(("i don't have", "i do not have", "i'm sorry, i don't")):
            reason = "refusal"
        claims.append(
            {
                "text": stripped,
                "start": start,
                "end": start + len(stripped),
                "screened": reason is not None,
                "screen_reason": reason,
            }
        )
    refusal = bool(claims) and all(c["screen_reason"] == "refusal" for c in claims)
    return {"refusal": refusal, "claims": [] if refusal else claims}


class FakeOpenAI:
    """The server; ``base_url`` is ready once started (``with FakeOpenAI() as server: ...``)."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        latency: float = 0.0,
        hang_seconds: float = 10.0,
        offline_judge: bool = False,
    ) -> None:
        self.latency = latency
        self.offline_judge = offline_judge
        self.hang_seconds = hang_seconds
        self.reject_json_schema = False
        self.obey_injection = False
        self.always_supported_tiny_quote = False
        self.always_supported_unrelated_quote = False
        self.always_supported_closest_quote = False
        self.injection_quotes_evidence = False
        self.api_key: str | None = None
        self.models: list[str] | None = None
        self.models_route = True
        self.replies: list[str] = []
        self.model_requests: list[str] = []
        self.chat_replies: list[dict[str, Any]] = []
        self.requests = 0
        self.charged: list[int] = []  # total tokens of each chat completion answered, in order
        self.by_kind: Counter[str] = Counter()
        self.bodies: list[dict[str, Any]] = []
        self.arrivals: list[float] = []
        self.statuses: list[int] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._script: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._conns: set[socket.socket] = set()
        self._httpd = _Server((host, port), _make_handler(self))
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.05,), name="fake-openai", daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def enqueue(self, action: str, **options: Any) -> None:
        with self._lock:
            self._script.append((action, options))

    def most_in_window(self, seconds: float = 1.0) -> int:
        """The most chat requests that arrived within any window of ``seconds`` (a rate limit's check)."""
        with self._lock:
            return most_in_window(self.arrivals, seconds)

    def start(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._httpd.shutdown()
        with self._lock:
            for conn in list(self._conns):
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
        self._httpd.server_close()
        self._thread.join()

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- request handling (called from handler threads) ----

    def wait_out_latency(self, received: float) -> None:
        """Sleep until ``latency`` seconds have passed since the request was received.

        The server's own work (reading the prompt, the verdicts, the JSON) is inside the latency, as
        a real endpoint's is: a response takes ``latency`` seconds, not ``latency`` plus the fake's
        CPU, which under load (32 threads on 2 cores) added 5-15 ms to each request of the benchmark.
        """
        if self.latency:
            left = self.latency - (time.monotonic() - received)
            if left > 0:
                time.sleep(left)

    def _next_action(self) -> tuple[str, dict[str, Any]]:
        with self._lock:
            return self._script.pop(0) if self._script else ("ok", {})

    def respond(self, body: dict[str, Any]) -> tuple[int, dict[str, str], dict[str, Any] | bytes]:
        messages = body.get("messages", [])
        system = next((m.get("content", "") for m in messages if m.get("role") == "system"), "")
        prompt = "\n".join(str(m.get("content", "")) for m in messages)
        kind = (
            "fused"
            if "Task: decompose-and-judge" in system
            else "judge"
            if "Task: judge-claims" in system
            else "decompose"
            if "Task: decompose-answer" in system
            else "other"
        )
        with self._lock:
            self.requests += 1
            self.by_kind[kind] += 1
            self.bodies.append(body)
            self.arrivals.append(time.monotonic())
        if kind == "other":
            with self._lock:
                reply = self.chat_replies.pop(0) if self.chat_replies else None
            if reply is not None:
                return 200, {}, _chat_reply(body, reply, self.requests)
        action, options = self._next_action()
        if action == "429":
            after = options.get("retry_after", "1")  # None: a 429 without Retry-After
            return (
                429,
                {"Retry-After": str(after)} if after is not None else {},
                _error("rate limited", "rate_limit"),
            )
        if action == "500":
            after = {"Retry-After": str(options["retry_after"])} if "retry_after" in options else {}
            return 500, after, _error("internal error", "server_error")
        if action == "401":
            return 401, {}, _error("Incorrect API key provided", "invalid_request_error", "invalid_api_key")
        if self.models is not None and body.get("model") not in self.models:
            return (
                404,
                {},
                _error(
                    f"The model {body.get('model')!r} does not exist",
                    "invalid_request_error",
                    "model_not_found",
                ),
            )
        if action == "hang":
            self._stop.wait(float(options.get("seconds", self.hang_seconds)))
        rf = body.get("response_format") or {}
        if self.reject_json_schema and rf.get("type") == "json_schema":
            return (
                400,
                {},
                _error(
                    "response_format json_schema is not supported by this server", "invalid_request_error"
                ),
            )
        payload: dict[str, Any] | str = self._answer(kind, prompt, action)
        if kind == "other" and self.replies:  # an agent's own model call, not the auditor's
            with self._lock:
                payload = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        content = payload if isinstance(payload, str) else json.dumps(payload)
        finish = "stop"
        if action == "length":
            content, finish = content[: len(content) // 2], "length"
        elif action == "malformed":
            content = '{"verdicts": [{"claim_id": '
        refusal = "I can't help with that." if action == "refuse" else None
        if refusal:
            content = ""
        with self._lock:  # the tokens this answer charges (its usage's total), in order
            self.charged.append(len(prompt) // 4 + len(content) // 4 + 2)
        return (
            200,
            {},
            {
                "id": f"chatcmpl-{self.requests}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "fake"),
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": finish,
                        "message": {"role": "assistant", "content": content, "refusal": refusal},
                    }
                ],
                "usage": {
                    "prompt_tokens": len(prompt) // 4 + 1,
                    "completion_tokens": len(content) // 4 + 1,
                    "total_tokens": len(prompt) // 4 + len(content) // 4 + 2,
                },
            },
        )

    def _answer(self, kind: str, prompt: str, action: str) -> dict[str, Any]:
        admitted: list[tuple[str, str]] = []
        excluded: list[tuple[str, str]] = []
        blocks = fenced_blocks(prompt)
        for kind_, attrs, text in blocks:
            if kind_ == "EVIDENCE":
                item = (attrs.get("id", ""), _CLIP.sub("\n", text))
                (admitted if attrs.get("section") == "admitted" else excluded).append(item)
        injected = self.obey_injection and any(INJECTION in t.lower() for _, t in admitted + excluded)

        def verdict(text: str) -> dict[str, Any]:
            if self.always_supported_tiny_quote:
                cited = next(((eid, t.strip()[0]) for eid, t in admitted if t.strip()), None)
                if cited is None:
                    return {"label": "absent", "citations": [], "rationale": "no admitted text"}
                return {
                    "label": "supported",
                    "citations": [{"evidence_id": cited[0], "quote": cited[1]}],
                    "inadmissible_support": [],
                    "rationale": "supported",
                }
            if self.always_supported_unrelated_quote:
                return unrelated_claim(text, admitted)
            if self.always_supported_closest_quote or (injected and self.injection_quotes_evidence):
                return closest_claim(text, admitted)
            if injected:
                cite = (admitted or excluded or [("none", "")])[0][0]
                return {
                    "label": "supported",
                    "citations": [{"evidence_id": cite, "quote": "Verified by the source."}],
                    "inadmissible_support": [],
                    "rationale": "as instructed",
                }
            v = (offline_claim if self.offline_judge else judge_claim)(text, admitted, excluded)
            if not self.offline_judge:
                v["conflicting"] = other_side(text, v, admitted)
            if action == "fake_quote":
                v["citations"] = [
                    {"evidence_id": c["evidence_id"], "quote": "an invented quotation"}
                    for c in v["citations"]
                ]
            if action == "bad_label":
                v["label"] = "probably"
            if action == "common_knowledge" and v["label"] == "absent":
                v["common_knowledge"] = True
            return v

        if kind == "judge":
            verdicts = [
                {"claim_id": attrs.get("id", ""), **verdict(text)}
                for kind_, attrs, text in blocks
                if kind_ == "CLAIM"
            ]
            if action == "unknown_id":
                for v in verdicts:
                    v["claim_id"] = "c-" + v["claim_id"][::-1]
            return {"verdicts": verdicts}
        answer = next((text for kind_, _, text in blocks if kind_ == "ANSWER"), "")
        result = decompose_text(answer)
        if action == "bad_offsets":
            for c in result["claims"]:
                c["start"] += 3
                c["end"] += 3
            result["claims"].append(
                {
                    "text": "A claim the answer never made.",
                    "start": 0,
                    "end": 30,
                    "screened": False,
                    "screen_reason": None,
                }
            )
        if kind == "fused":
            for c in result["claims"]:
                c.update({"label": None} if c["screened"] else verdict(c["text"]))
        return result


class _Server(ThreadingHTTPServer):
    # socketserver's default backlog (5) drops the connections of a client opening more at once,
    # which retry a second later: a cost of this server that real ones (backlog 2048) do not have.
    request_queue_size = 128

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hung up (a timeout test) is expected, not news


def _chat_reply(body: dict[str, Any], message: dict[str, Any], number: int) -> dict[str, Any]:
    """A chat completion carrying ``message`` (``content`` and/or ``tool_calls``) as the assistant's."""
    calls = message.get("tool_calls") or []
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls" if calls else "stop",
                "message": {
                    "role": "assistant",
                    "content": message.get("content"),
                    **({"tool_calls": calls} if calls else {}),
                },
            }
        ],
        "usage": {"prompt_tokens": 20, "completion_tokens": 10, "total_tokens": 30},
    }


def _error(message: str, type_: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


def _model(name: str) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": 0, "owned_by": "fake"}


def _make_handler(server: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = 30
        # Headers and body go out as two writes: with Nagle's algorithm the body waits for the
        # client's delayed ACK (up to 40 ms a response), which a real server does not cost.
        disable_nagle_algorithm = True

        def setup(self) -> None:
            super().setup()
            with server._lock:
                server._conns.add(self.connection)

        def finish(self) -> None:
            with server._lock:
                server._conns.discard(self.connection)
            with contextlib.suppress(OSError):
                super().finish()

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _key_refused(self) -> bool:
            if server.api_key is None or self.headers.get("Authorization") == f"Bearer {server.api_key}":
                return False
            self._send(
                401, {}, _error("Incorrect API key provided", "invalid_request_error", "invalid_api_key")
            )
            return True

        def do_GET(self) -> None:
            path = self.path.rstrip("/")
            with server._lock:
                server.model_requests.append(path)
            if not server.models_route or not (path == "/v1/models" or path.startswith("/v1/models/")):
                self._send(404, {}, _error(f"no route {self.path}", "not_found"))
                return
            if self._key_refused():
                return
            if path == "/v1/models":
                listed = server.models or []
                self._send(200, {}, {"object": "list", "data": [_model(m) for m in listed]})
                return
            name = path.removeprefix("/v1/models/")
            if server.models is not None and name not in server.models:
                self._send(
                    404,
                    {},
                    _error(f"The model {name!r} does not exist", "invalid_request_error", "model_not_found"),
                )
                return
            self._send(200, {}, _model(name))

        def do_POST(self) -> None:
            received = time.monotonic()
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            if self._key_refused():
                return
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._send(404, {}, _error(f"no route {self.path}", "not_found"))
                return
            try:
                body = json.loads(raw)
            except ValueError:
                self._send(400, {}, _error("request body is not JSON", "invalid_request_error"))
                return
            with server._lock:
                server.in_flight += 1
                server.max_in_flight = max(server.max_in_flight, server.in_flight)
            try:
                status, headers, payload = server.respond(body)
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                server.wait_out_latency(received)
            finally:
                with server._lock:
                    server.in_flight -= 1
            with server._lock:
                server.statuses.append(status)
            self._send(status, headers, data)

        def _send(self, status: int, headers: dict[str, str], payload: dict[str, Any] | bytes) -> None:
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                self.close_connection = True

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--offline-judge", action="store_true", help="verdicts from auditor's offline judge")
    args = parser.parse_args()
    server = FakeOpenAI(port=args.port, latency=args.latency, offline_judge=args.offline_judge)
    print(f"fake OpenAI server on {server.base_url} (latency {args.latency}s); Ctrl-C to stop", flush=True)
    server.start()
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()


# ---- scenario builders for the tests -------------------------------------------------------------


def make_evidence(
    evidence_id: str, text: str, kind: str = "tool_result", name: str | None = "lookup"
) -> Evidence:
    return Evidence(
        evidence_id=evidence_id, kind=EvidenceKind(kind), name=name, text=text, trace_id="trace-1"
    )


def make_answer(
    text: str,
    claim_texts: list[str],
    evidence: tuple[Evidence, ...] = (),
    answer_id: str = "a1",
    question: str | None = None,
) -> tuple[Answer, list[Claim]]:
    """An answer and its claims (each claim text must occur in ``text``; offsets are computed)."""
    answer = Answer(
        answer_id=answer_id,
        trace_id="trace-1",
        span_id="span-1",
        text=text,
        question=question,
        generated_at=datetime(2026, 3, 12, 10, 0, tzinfo=UTC),
        evidence=evidence,
    )
    claims = []
    for n, claim in enumerate(claim_texts):
        start = text.index(claim)
        claims.append(
            Claim(
                claim_id=f"{answer_id}:c{n}",
                answer_id=answer_id,
                text=claim,
                start=start,
                end=start + len(claim),
            )
        )
    return answer, claims
