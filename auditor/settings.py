"""Settings: one table, one precedence.

Precedence: an explicit argument > a CLI flag > an ``AUDITOR_*`` environment variable > the default.
Secrets (API keys) come only from the environment.

=================  ===================  ==============================================================
setting            environment          default
=================  ===================  ==============================================================
home               ``AUDITOR_HOME``     the platform's app directory for "auditor" (``~/.config/auditor``)
db_url             ``AUDITOR_DB_URL``   ``sqlite:///<home>/auditor.db`` (:meth:`auditor.store.Store.default_url`)
judge              ``AUDITOR_JUDGE``    ``offline``
base_url           ``AUDITOR_BASE_URL`` none (OpenAI's API), or any OpenAI-compatible ``/v1`` URL
policy             ``AUDITOR_POLICY``   ``default`` (the shipped ``policies/default.toml``)
api_key            ``OPENAI_API_KEY``   none (a secret: environment only, no flag)
run_lease          ``AUDITOR_RUN_LEASE`` ``30`` seconds: a running audit's lease on its stored run (:func:`run_lease`)
serve_token        ``AUDITOR_SERVE_TOKEN`` none: the bearer token ``auditor serve`` requires (a secret; ``--token`` too)
serve_quiet        ``AUDITOR_SERVE_QUIET`` ``5`` seconds without a new span before a trace whose root ended is audited
serve_root_wait    ``AUDITOR_SERVE_ROOT_WAIT`` ``300`` seconds without a new span before a trace with no ended root is audited
serve_max_body     ``AUDITOR_SERVE_MAX_BODY`` ``16777216`` bytes: the largest OTLP request body, before and after gzip
serve_queue        ``AUDITOR_SERVE_QUEUE`` ``1000`` traces waiting for an audit before OTLP requests get 503
serve_rate         ``AUDITOR_SERVE_RATE`` ``100`` OTLP requests per second per client address before 429 / RESOURCE_EXHAUSTED
serve_backlog      ``AUDITOR_SERVE_BACKLOG`` ``500`` acknowledged request bodies waiting to be read into spans before OTLP requests get 429 / RESOURCE_EXHAUSTED
serve_readers      ``AUDITOR_SERVE_READERS`` by the store (1 on SQLite, 2 on PostgreSQL): processes reading acknowledged request bodies into spans
serve_hosts        ``AUDITOR_SERVE_HOSTS`` none: names (comma-separated, ``*`` any) the server answers to besides its bound address
serve_proxies      ``AUDITOR_SERVE_PROXIES`` none: reverse proxies (addresses, networks) whose ``X-Forwarded-For`` is believed
serve_header_timeout ``AUDITOR_SERVE_HEADER_TIMEOUT`` ``10`` seconds for a request's line and headers to arrive before 408
serve_body_timeout ``AUDITOR_SERVE_BODY_TIMEOUT`` ``60`` seconds for a request's whole body to arrive before 408
retain_spans       ``AUDITOR_RETAIN_SPANS`` none (kept for ever): received spans older than this (``7d``, ``12h``) are pruned (``auditor db prune``, ``auditor serve``)
retain_answers     ``AUDITOR_RETAIN_ANSWERS`` none (kept for ever): runs and their answers older than this are pruned
retain_traces      ``AUDITOR_RETAIN_TRACES`` the answers' age: kept trace content older than this, read by no stored run, is pruned
serve_prune_every  ``AUDITOR_SERVE_PRUNE_EVERY`` ``3600`` seconds between ``auditor serve``'s prunes, when a ``retain_*`` age is set
serve_sample       ``AUDITOR_SERVE_SAMPLE`` ``1``: the share of traces audited, by trace id (``0.1`` or ``10%``; replicas agree)
serve_filter       ``AUDITOR_SERVE_FILTER`` none: audit only traces with ``service=NAME``, ``agent=NAME``, ``attribute:KEY=VALUE`` (comma-separated)
serve_budget       ``AUDITOR_SERVE_BUDGET`` none: the LLM judge's spending cap, ``N tokens/hour``, ``N tokens/day``, ``N usd/hour`` or ``N usd/day``
serve_budget_spent ``AUDITOR_SERVE_BUDGET_SPENT`` ``wait``: once the cap is spent, traces ``wait`` for the next window or are judged ``offline``
serve_events_endpoint ``AUDITOR_SERVE_EVENTS_ENDPOINT`` none: an OTLP/HTTP logs URL that receives each verdict as a ``gen_ai.evaluation.result`` event
llm_prices         ``AUDITOR_LLM_PRICES`` the built-in table; ``MODEL=PROMPT/COMPLETION,...`` USD per million tokens on top
llm_rate           ``AUDITOR_LLM_RATE`` none (no limit): LLM requests per second/minute/hour for a whole run (on Ray: the cluster), e.g. ``3000/min`` (``--rate-limit``)
=================  ===================  ==============================================================

Every command reads its ``--policy``, ``--judge``, ``--base-url`` and ``--db`` through
:func:`setting` (or the library call it makes does), so an environment variable means the same
everywhere.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import click

from auditor.errors import UsageError

SETTINGS: dict[str, tuple[str, str | None]] = {
    "home": ("AUDITOR_HOME", None),
    "db_url": ("AUDITOR_DB_URL", None),
    "judge": ("AUDITOR_JUDGE", "offline"),
    "base_url": ("AUDITOR_BASE_URL", None),
    "policy": ("AUDITOR_POLICY", None),
    "api_key": ("OPENAI_API_KEY", None),
    "run_lease": ("AUDITOR_RUN_LEASE", "30"),
    "serve_token": ("AUDITOR_SERVE_TOKEN", None),
    "serve_quiet": ("AUDITOR_SERVE_QUIET", "5"),
    "serve_root_wait": ("AUDITOR_SERVE_ROOT_WAIT", "300"),
    "serve_max_body": ("AUDITOR_SERVE_MAX_BODY", "16777216"),
    "serve_queue": ("AUDITOR_SERVE_QUEUE", "1000"),
    "serve_rate": ("AUDITOR_SERVE_RATE", "100"),
    "serve_backlog": ("AUDITOR_SERVE_BACKLOG", "500"),
    "serve_readers": ("AUDITOR_SERVE_READERS", ""),  # by the store: auditor.serve._config.readers_for
    "serve_hosts": ("AUDITOR_SERVE_HOSTS", None),
    "serve_proxies": ("AUDITOR_SERVE_PROXIES", None),
    "serve_header_timeout": ("AUDITOR_SERVE_HEADER_TIMEOUT", "10"),
    "serve_body_timeout": ("AUDITOR_SERVE_BODY_TIMEOUT", "60"),
    "retain_spans": ("AUDITOR_RETAIN_SPANS", None),
    "retain_answers": ("AUDITOR_RETAIN_ANSWERS", None),
    "retain_traces": ("AUDITOR_RETAIN_TRACES", None),
    "serve_prune_every": ("AUDITOR_SERVE_PRUNE_EVERY", "3600"),
    "serve_sample": ("AUDITOR_SERVE_SAMPLE", None),
    "serve_filter": ("AUDITOR_SERVE_FILTER", None),
    "serve_budget": ("AUDITOR_SERVE_BUDGET", None),
    "serve_budget_spent": ("AUDITOR_SERVE_BUDGET_SPENT", "wait"),
    "serve_events_endpoint": ("AUDITOR_SERVE_EVENTS_ENDPOINT", None),
    "llm_prices": ("AUDITOR_LLM_PRICES", None),
    "llm_rate": ("AUDITOR_LLM_RATE", None),
}


def setting(name: str, given: str | None = None) -> str | None:
    """``given`` if set, else the environment variable, else the default."""
    if given:
        return given
    variable, default = SETTINGS[name]
    return os.environ.get(variable) or default


def app_dir() -> Path:
    """The app directory (verdict cache, later the SQLite store); ``AUDITOR_HOME`` relocates it."""
    home = setting("home")
    return Path(home) if home else Path(click.get_app_dir("auditor"))


def run_lease(given: float | None = None) -> float:
    """The lease of a running audit on its stored run, in seconds (``given`` > ``AUDITOR_RUN_LEASE`` > 30).

    The audit renews it every third of that; a running run not renewed for that long is abandoned
    (its process was killed) and the next audit on the same inputs resumes it.
    """
    return positive_number("run_lease", given, unit="seconds")


def positive_number(name: str, given: float | None = None, *, unit: str = "") -> float:
    """A setting that is a positive number of ``unit`` (``given`` > its environment variable > its default).

    Raises:
        UsageError: the value is not a positive finite number (the variable named).
    """
    variable, default = SETTINGS[name]
    raw = given if given is not None else os.environ.get(variable) or default
    try:
        value = float(raw or "")
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise UsageError(
            f"{variable}={raw!r} is not a positive number{' of ' + unit if unit else ''}: set it to one "
            f"such as {default} (the default), or unset it."
        )
    return value
