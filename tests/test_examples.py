"""The worked example in ``examples/``: the guarded support agent, and the CI gate over its golden traces."""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import shlex
import sys
from importlib import metadata
from pathlib import Path
from types import ModuleType

import pytest
import xmlschema
from click.testing import CliRunner
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from auditor.cli.gate import gate_command

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
GATE = ["--policy", str(EXAMPLES / "gate-policy.toml"), "--labels", str(EXAMPLES / "golden" / "labels.jsonl")]


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("support_agent_example", EXAMPLES / "support_agent.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


example = load_example()


def test_the_guarded_agent_serves_grounded_answers_and_strips_the_rest() -> None:
    served = {q: (text, audit) for q, text, audit in example.answer(list(example.SCRIPTS))}
    for question in example.GOLDEN:
        text, audit = served[question]
        assert text == example.SCRIPTS[question][-1]  # served unchanged
        assert audit.grounded is True or audit.refusal is True
    text, audit = served["How much was refunded on order 10042?"]
    assert audit.contradicted == 1
    assert "$95.00" not in text and "approved on 2026-03-12" in text and "I removed 1 statement" in text


@pytest.mark.slow
def test_the_gate_passes_on_the_committed_golden_traces(tmp_path: Path) -> None:
    junit = tmp_path / "gate.xml"
    result = CliRunner().invoke(
        gate_command, [str(EXAMPLES / "golden" / "runs.json"), *GATE, "--junit", str(junit)]
    )
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "GATE PASSED" in result.stdout and "refusal accuracy 100.0% (1/1" in result.stdout
    xmlschema.XMLSchema(str(ROOT / "tests" / "support" / "junit-4.xsd")).validate(str(junit))


@pytest.mark.slow
def test_golden_traces_regenerate_and_a_regression_fails_the_gate(tmp_path: Path) -> None:
    fresh = example.export_golden(tmp_path / "fresh")
    committed = json.loads((EXAMPLES / "golden" / "runs.json").read_text(encoding="utf-8"))
    assert [r["name"] for r in json.loads(fresh.read_text(encoding="utf-8"))] == [
        r["name"] for r in committed
    ]
    assert CliRunner().invoke(gate_command, [str(fresh), *GATE]).exit_code == 0
    # The model starts misquoting a refund: one contradicted claim fails the release.
    regressed = dict(example.SCRIPTS)
    question = example.GOLDEN[0]
    regressed[question] = [
        *example.SCRIPTS[question][:-1],
        "Yes. ACME's order 10042 was refunded $95.00 (refund RF-311, approved on 2026-03-12).",
    ]
    bad = example.export_golden(tmp_path / "bad", scripts=regressed)
    result = CliRunner().invoke(gate_command, [str(bad), *GATE])
    assert result.exit_code == 1 and "contradicted claims 1" in result.stdout


def _install_line(example: Path) -> list[str]:
    """The requirements of the ``pip install`` line an example documents in its docstring."""
    doc = ast.get_docstring(ast.parse(example.read_text(encoding="utf-8"))) or ""
    match = re.search(r"``pip install ([^`]+)``", doc)
    assert match, f"{example.name} states no install line"
    return shlex.split(match.group(1))


def _requirement(arg: str) -> Requirement:
    local = {
        ".": "trace-auditor",
        "./adapters/langchain": "auditor-langchain",
        "./adapters/otel": "auditor-otel",
    }
    path, _, extras = arg.partition("[")
    if path in local:
        return Requirement(local[path] + ("[" + extras if extras else ""))
    return Requirement(arg)


def _closure(requirements: list[Requirement]) -> set[str]:
    """Every distribution the requirements pull in, extras followed (names normalised)."""
    seen: set[str] = set()
    todo = list(requirements)
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        key = name + "[" + ",".join(sorted(req.extras)) + "]"
        if key in seen:
            continue
        seen.add(key)
        seen.add(name)
        for line in metadata.requires(req.name) or []:
            sub = Requirement(line)
            if sub.marker is None or any(sub.marker.evaluate({"extra": e}) for e in req.extras | {""}):
                todo.append(sub)
    return seen


@pytest.mark.slow
def test_each_example_installs_what_it_imports_with_its_documented_line() -> None:
    providers = metadata.packages_distributions()
    for example in sorted(EXAMPLES.glob("*.py")):
        installed = _closure([_requirement(a) for a in _install_line(example)])
        tree = ast.parse(example.read_text(encoding="utf-8"))
        modules = {
            n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module
        }
        modules |= {
            a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
        }
        for module in sorted(modules - set(sys.stdlib_module_names) - {"__future__"}):
            dists = {canonicalize_name(d) for d in providers.get(module, [])}
            assert dists & installed, (
                f"{example.name} imports {module}, which its install line does not bring"
            )
