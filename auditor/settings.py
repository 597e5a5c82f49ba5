"""Settings: one table, one precedence.

Precedence: an explicit argument > a CLI flag > an ``AUDITOR_*`` environment variable > the default.
Secrets (API keys) come only from the environment.

=================  ===================  ==============================================================
setting            environment          default
=================  ===================  ==============================================================
home               ``AUDITOR_HOME``     the platform's app directory for "auditor" (``~/.config/auditor``)
judge              ``AUDITOR_JUDGE``    ``offline``
base_url           ``AUDITOR_BASE_URL`` none (OpenAI's API), or any OpenAI-compatible ``/v1`` URL
policy             ``AUDITOR_POLICY``   ``default`` (the shipped ``policies/default.toml``)
=================  ===================  ==============================================================
"""

from __future__ import annotations

import os
from pathlib import Path

import click

SETTINGS: dict[str, tuple[str, str | None]] = {
    "home": ("AUDITOR_HOME", None),
    "judge": ("AUDITOR_JUDGE", "offline"),
    "base_url": ("AUDITOR_BASE_URL", None),
    "policy": ("AUDITOR_POLICY", None),
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
