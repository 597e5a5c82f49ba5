"""``auditor serve``: receive OTLP/HTTP, audit in the background, answer the JSON API."""

from __future__ import annotations

import click

from auditor.cli.options import base_url_option, db_option, judge_option, policy_option


@click.command("serve")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Interface to bind; anything but loopback needs --token or --insecure.",
)
@click.option(
    "--port", type=click.IntRange(0, 65535), default=4318, show_default=True, help="OTLP/HTTP and API port."
)
@click.option(
    "--token",
    default=None,
    help="Bearer token required on OTLP and API requests (default: AUDITOR_SERVE_TOKEN).",
)
@click.option("--insecure", is_flag=True, help="Allow a non-loopback --host without a token.")
@click.option(
    "--grpc", "grpc", is_flag=True, help="Also receive OTLP/gRPC (the Python SDK's default exporter)."
)
@click.option(
    "--grpc-port",
    type=click.IntRange(0, 65535),
    default=4317,
    show_default=True,
    help="OTLP/gRPC port (with --grpc).",
)
@click.option(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    help="A name clients reach the server by (repeatable; * for any), besides its bound address; "
    "other Host headers get 400 (default: AUDITOR_SERVE_HOSTS, comma-separated).",
)
@click.option(
    "--trusted-proxy",
    "trusted_proxies",
    multiple=True,
    help="A reverse proxy's address or network (repeatable) whose X-Forwarded-For names the client "
    "(default: AUDITOR_SERVE_PROXIES, comma-separated; none).",
)
@policy_option
@judge_option
@base_url_option
@db_option
@click.option(
    "--workers", type=click.IntRange(1, 64), default=2, show_default=True, help="Traces audited at once."
)
@click.option(
    "--quiet",
    type=click.FloatRange(0, min_open=True),
    default=None,
    help="Seconds without a new span before a trace whose root ended is audited (default: AUDITOR_SERVE_QUIET, else 5).",
)
def serve_command(
    host: str,
    port: int,
    token: str | None,
    insecure: bool,
    grpc: bool,
    grpc_port: int,
    allowed_hosts: tuple[str, ...],
    trusted_proxies: tuple[str, ...],
    policy_name: str | None,
    judge_spec: str | None,
    base_url: str | None,
    db_url: str | None,
    workers: int,
    quiet: float | None,
) -> None:
    """Receive traces over OTLP/HTTP (POST /v1/traces) and, with --grpc, OTLP/gRPC; audit each once it is complete, serve /api/answers."""
    try:
        from auditor.serve import serve, serve_config
    except ImportError as exc:  # the serve extra is not installed
        from auditor.errors import UsageError

        raise UsageError(
            f"auditor serve needs the serve extra: pip install 'trace-auditor[serve]' ({exc})"
        ) from exc

    config = serve_config(
        host=host,
        port=port,
        token=token,
        insecure=insecure,
        db_url=db_url,
        policy=policy_name,
        judge=judge_spec,
        base_url=base_url,
        workers=workers,
        quiet=quiet,
        grpc_port=grpc_port if grpc else None,
        hosts=allowed_hosts or None,
        proxies=trusted_proxies or None,
    )
    serve(config, announce=lambda line: click.echo(line, err=True))
