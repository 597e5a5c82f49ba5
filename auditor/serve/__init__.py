"""``auditor serve``: receive traces live over OTLP/HTTP, audit them in the background, serve the results.

A request's spans are stored before the server acknowledges it (:class:`auditor.store.Intake`);
a trace is audited once its root has ended and a quiet window has passed, by a bounded pool of
worker threads running the same pipeline as ``auditor audit`` (:func:`auditor.run.audit_async`);
``/api/...`` reads the store. OTLP requests are parsed by the installed adapters that implement
:class:`auditor.trace.SpanReceiver` (``otlp-proto`` and ``otlp-json`` from ``auditor-otel``).
Needs the ``serve`` extra (FastAPI, uvicorn); importing this package does not import them until
:func:`create_app` or :func:`serve` runs. See the README's "Run it as a service".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from auditor.serve._config import DEFAULT_GRPC_PORT, DEFAULT_HOST, DEFAULT_PORT, ServeConfig, serve_config

if TYPE_CHECKING:
    from auditor.serve._app import create_app
    from auditor.serve._server import serve


def __getattr__(name: str) -> Any:
    # FastAPI and uvicorn load only when the server is built.
    if name == "create_app":
        from auditor.serve._app import create_app

        return create_app
    if name == "serve":
        from auditor.serve._server import serve

        return serve
    raise AttributeError(name)


__all__ = [
    "DEFAULT_GRPC_PORT",
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "ServeConfig",
    "create_app",
    "serve",
    "serve_config",
]
