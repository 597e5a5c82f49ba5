"""A loopback OTLP/HTTP trace receiver that writes what it receives to a file, as a Collector would.

Each ``POST /v1/traces`` body (an ``ExportTraceServiceRequest`` in protobuf) is appended to the
file with its 4-byte big-endian length in front: the Collector file exporter's ``format: proto``
stream, which the ``otlp-proto`` adapter reads. So a test gets the spans exactly as the
application's exporter sent them, with no decoding of ours in between. Standard library only.
"""

from __future__ import annotations

import struct
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class OtlpSink:
    """``with OtlpSink(path) as sink: ... sink.endpoint``; ``requests`` counts the bodies written."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.requests = 0
        self._lock = threading.Lock()
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path != "/v1/traces" or "protobuf" not in (self.headers.get("Content-Type") or ""):
                    self.send_response(404)
                    self.end_headers()
                    return
                with sink._lock, sink.path.open("ab") as out:
                    out.write(struct.pack(">I", len(body)) + body)
                    sink.requests += 1
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1/traces"

    def __enter__(self) -> OtlpSink:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()
