"""A local stand-in for the LangSmith API that keeps the ingest request bodies the SDKs send.

The ``langsmith`` SDKs (Python and JS) send runs in batches: ``POST /runs/batch`` with a JSON body
``{"post": [...], "patch": [...]}``, or ``POST /runs/multipart`` with a ``multipart/form-data``
body (one part per run, ``post.<id>`` / ``patch.<id>``, and its ``inputs`` / ``outputs`` / ...
in parts of their own), which the newest SDKs compress with zstd when the server says it can.
Which one an SDK sends is the server's ``GET /info`` answer (``batch_ingest_config``,
``instance_flags``), so this server answers it as the generator asks.

Bodies are kept as received, less a ``Content-Encoding: zstd`` (decompressed, as a proxy that
logs requests would store them). Standard library only, plus ``zstandard`` for compressed bodies
(a dependency of the Python SDK). The Node generator (``langsmith_js/generate.mjs``) has the same
stand-in in JavaScript.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


@dataclass
class Body:
    path: str
    content_type: str
    data: bytes


@dataclass
class LangSmithCapture:
    """The server; use it as a context manager (``url`` is the ``LANGSMITH_ENDPOINT``)."""

    multipart: bool = True
    zstd: bool = False
    port: int = 0
    bodies: list[Body] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), _handler(self))
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def info(self) -> dict[str, Any]:
        return {
            "version": "0.10.0",
            "batch_ingest_config": {
                "use_multipart_endpoint": self.multipart,
                "scale_up_qsize_trigger": 1000,
                "scale_up_nthreads_limit": 1,
                "scale_down_nempty_trigger": 4,
                "size_limit": 100,
                "size_limit_bytes": 20971520,
            },
            "instance_flags": {"zstd_compression_enabled": self.zstd},
        }

    def keep(self, body: Body) -> None:
        with self._lock:
            self.bodies.append(body)

    def write(self, out: Path, stem: str) -> Path:
        """JSON bodies as JSON lines (``stem.jsonl``); multipart bodies one after another, each
        starting with its boundary line (``stem.multipart``)."""
        out.mkdir(parents=True, exist_ok=True)
        runs = [b for b in self.bodies if b.path.rstrip("/").endswith(("/runs/batch", "/runs/multipart"))]
        if runs and all(b.content_type.startswith("application/json") for b in runs):
            path = out / f"{stem}.jsonl"
            path.write_bytes(
                b"".join(json.dumps(json.loads(b.data), ensure_ascii=False).encode() + b"\n" for b in runs)
            )
        else:
            path = out / f"{stem}.multipart"
            path.write_bytes(b"".join(b.data if b.data.endswith(b"\n") else b.data + b"\r\n" for b in runs))
        print(f"{path}: {len(runs)} request bodies ({', '.join(sorted({b.path for b in runs}))})")
        return path

    def __enter__(self) -> LangSmithCapture:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def _handler(capture: LangSmithCapture) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.split("?")[0].rstrip("/").endswith("/info"):
                self._send(200, capture.info())
            else:
                self._send(200, {})

        def do_POST(self) -> None:
            data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.headers.get("Content-Encoding", "").lower() == "zstd":
                import zstandard

                data = zstandard.ZstdDecompressor().decompressobj().decompress(data)
            capture.keep(Body(self.path, self.headers.get("Content-Type", ""), data))
            self._send(202, {})

        do_PATCH = do_POST

    return Handler
