"""The README stays true to the code: every command, option and setting is documented,
every shipped policy loads, and the public API is pinned."""

from __future__ import annotations

import click
import pytest

import auditor
from auditor.cli import cli
from auditor.policy import load_policy
from auditor.policy._loading import shipped_policies
from auditor.settings import SETTINGS
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = README + "".join(p.read_text(encoding="utf-8") for p in (ROOT / "docs").glob("*.md"))


def commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    found: list[tuple[str, click.Command]] = []
    for name, command in group.commands.items():
        path = f"{prefix}{name}"
        found.append((path, command))
        if isinstance(command, click.Group):
            found.extend(commands(command, path + " "))
    return found


@pytest.mark.parametrize(("path", "command"), commands(cli), ids=[p for p, _ in commands(cli)])
def test_every_command_and_option_is_documented(path: str, command: click.Command) -> None:
    assert f"auditor {path}" in DOCS, f"`auditor {path}` is not in the README or docs/"
    for param in command.params:
        if isinstance(param, click.Option):
            assert any(opt in DOCS for opt in param.opts), (
                f"`auditor {path}` option {param.opts} undocumented"
            )


def test_every_setting_is_in_the_readme_table() -> None:
    for variable, _ in SETTINGS.values():
        assert f"`{variable}`" in README


@pytest.mark.parametrize("name", shipped_policies())
def test_every_shipped_policy_loads(name: str) -> None:
    assert load_policy(name).sha256


PUBLIC_API = [
    "AuditResult",
    "Policy",
    "Store",
    "__version__",
    "audit",
    "collect_evidence",
    "load_policy",
    "read_traces",
    "reconstruct",
    "render_report",
    "write_report",
]


def test_public_api_is_pinned() -> None:
    assert sorted(auditor.__all__) == PUBLIC_API
    for name in auditor.__all__:
        assert getattr(auditor, name) is not None
