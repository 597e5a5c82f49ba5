"""The README and docs/ stay true to the code: every command, option and setting is documented,
every shipped policy loads, and the public API is pinned."""

from __future__ import annotations

import ast
import importlib
import re

import click
import pytest

import auditor
from auditor.cli import cli
from auditor.policy import load_policy, shipped_policies
from auditor.settings import SETTINGS
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = README + "".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").rglob("*.md")))


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


def test_every_setting_is_in_the_settings_table() -> None:
    table = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    for variable, _ in SETTINGS.values():
        assert f"`{variable}`" in table


@pytest.mark.parametrize("name", shipped_policies())
def test_every_shipped_policy_loads(name: str) -> None:
    assert load_policy(name).sha256


PUBLIC_API = [
    "AuditOptions",
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


#: Dotted names in the docs that are not Python objects (JUnit suites, the entry-point group, a file).
NOT_PYTHON = {
    "auditor.gate.answers",
    "auditor.gate.thresholds",
    "auditor.adapters",
    "auditor.db",
    # the names of the annotations a write-back puts on an answer's span (docs/integrations/phoenix.md)
    "auditor.groundedness",
    "auditor.claim",
}


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def test_every_code_path_the_docs_name_exists() -> None:
    paths = set(re.findall(r"`((?:auditor|adapters|benchmarks|tests)/[\w/.-]*)`", DOCS))
    missing = sorted(p for p in paths if not (ROOT / p.split("::")[0]).exists())
    assert not missing, f"the docs name files that do not exist: {missing}"


def test_every_dotted_name_the_docs_use_resolves() -> None:
    names = set(re.findall(r"\b(auditor(?:\.\w+)+)", DOCS)) - NOT_PYTHON
    broken = sorted(n for n in names if not _resolves(n.rstrip(".")))
    assert not broken, f"the docs name Python objects that do not exist: {broken}"


def test_the_public_audit_function_is_not_shadowed_by_a_module() -> None:
    # A submodule named like a public function would replace it on the package once imported.
    import auditor.run

    assert callable(auditor.audit)
    assert not any((ROOT / "auditor" / f"{name}.py").exists() for name in auditor.__all__)


def test_the_sample_pytest_failure_is_what_the_plugin_prints() -> None:
    from auditor.testing import NotGroundedError, assert_grounded

    page = (ROOT / "docs" / "pytest.md").read_text(encoding="utf-8")
    call = re.search(r"A failing check of `assert_grounded\((.*?)\)` reads", page)
    block = re.search(r"reads \(`tests/test_docs.py`[^\n]*\n\n```\n(.*?)```", page, re.S)
    assert call and block, "docs/pytest.md lost its sample failure"
    refund = repr("Refunds are accepted within 30 days of purchase.")
    answer, evidence = ast.literal_eval(f"({call.group(1).replace('REFUND', refund)})")
    with pytest.raises(NotGroundedError) as failure:
        assert_grounded(answer, evidence)
    printed = f"auditor.testing.NotGroundedError: {failure.value}".splitlines()
    assert [line.removeprefix("E   ") for line in block.group(1).splitlines()] == printed


def test_the_sample_undecided_failure_is_what_the_plugin_prints() -> None:
    from auditor.testing import NotGroundedError, assert_grounded
    from tests.support.fake_openai import FakeOpenAI

    page = (ROOT / "docs" / "pytest.md").read_text(encoding="utf-8")
    judge = re.search(
        r'With\s+`judge="(openai:[^"]+)"`, a failing check of `assert_grounded\((.*?)\)`', page, re.S
    )
    block = re.search(r"with a local server standing in for the model\):\n\n```\n(.*?)```", page, re.S)
    assert judge and block, "docs/pytest.md lost its sample undecided failure"
    refund = repr("Refunds are accepted within 30 days of purchase.")
    answer, evidence = ast.literal_eval(f"({judge.group(2).replace('REFUND', refund)})")
    with FakeOpenAI() as server, pytest.raises(NotGroundedError) as failure:
        server.enqueue("refuse")  # the one call: the claim the cascade could not settle offline
        assert_grounded(answer, evidence, judge=judge.group(1), base_url=server.base_url)
    assert server.by_kind["judge"] == 1
    printed = f"auditor.testing.NotGroundedError: {failure.value}".splitlines()
    assert [line.removeprefix("E   ") for line in block.group(1).splitlines()] == printed


def test_the_sample_gate_failure_is_what_the_gate_prints(monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    page = (ROOT / "docs" / "gate.md").read_text(encoding="utf-8")
    block = re.search(r"```\n\$ auditor gate (\S+)\n(.*?)```", page, re.S)
    assert block, "docs/gate.md lost its sample output"
    head, names, tail = re.fullmatch(r"(.*)\{(.*)\}(.*)", block.group(1)).groups()  # type: ignore[union-attr]
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(cli, ["gate", *(f"{head}{n}{tail}" for n in names.split(","))])
    assert result.exit_code == 1
    assert result.stdout.splitlines() == block.group(2).splitlines()
