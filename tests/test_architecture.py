"""The layout stays as docs/architecture.md draws it: the packages it names exist, every stage
package is named, the import layers it lists are the ones `.importlinter` enforces, and no module
outgrows the size we split at."""

from __future__ import annotations

import configparser
import importlib
import re
from pathlib import Path

import pytest

from tests.conftest import ROOT

ARCHITECTURE = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
PACKAGE = ROOT / "auditor"
#: Packages that hold data, not code (shipped policies, report templates, Alembic revisions).
DATA_PACKAGES = {"policies", "reports_templates"}


def named_packages() -> list[str]:
    return re.findall(r"^### `(auditor\.\w+)`$", ARCHITECTURE, re.M)


def stage_packages() -> list[str]:
    return sorted(
        f"auditor.{p.name}"
        for p in PACKAGE.iterdir()
        if (p / "__init__.py").is_file() and p.name not in DATA_PACKAGES
    )


def test_every_package_the_doc_names_exists() -> None:
    for name in named_packages():
        assert (PACKAGE / name.split(".")[1] / "__init__.py").is_file(), f"{name} is in the doc, not the code"


def test_every_stage_package_is_named() -> None:
    assert sorted(named_packages()) == stage_packages()


def test_the_doc_lists_the_layers_the_contract_enforces() -> None:
    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter")
    enforced = [
        line.strip().removeprefix("auditor.")
        for line in config["importlinter:contract:layers"]["layers"].split()
    ]
    rule = ARCHITECTURE.split("1. **Layers.**", 1)[1].split("2. **", 1)[0]
    documented = re.findall(r"`(\w+)`", rule)
    assert documented == enforced
    # every stage package sits in a layer, so none escapes the contract
    assert {f"auditor.{name}" for name in enforced} >= set(stage_packages())


def test_only_cross_stage_modules_at_the_top_level() -> None:
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= 6, top
    for name in top:
        if name != "__init__.py":
            assert f"`{name}`" in ARCHITECTURE, f"top-level {name} is not described in docs/architecture.md"


@pytest.mark.parametrize("package", stage_packages())
def test_each_stage_exports_what_it_lists(package: str) -> None:
    module = importlib.import_module(package)
    exported = getattr(module, "__all__", None)
    assert exported, f"{package} has no __all__"
    for name in exported:
        assert getattr(module, name) is not None


def python_files() -> list[Path]:
    return [
        p for root in ("auditor", "adapters") for p in (ROOT / root).rglob("*.py") if ".venv" not in p.parts
    ]


def test_no_module_over_600_lines() -> None:
    long = {
        str(p.relative_to(ROOT)): n for p in python_files() if (n := len(p.read_text().splitlines())) > 600
    }
    assert not long, f"split these by job: {long}"


def import_linter_config() -> configparser.ConfigParser:
    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter")
    return config


def test_the_acyclic_contract_covers_every_root_package() -> None:
    config = import_linter_config()
    roots = config["importlinter"]["root_packages"].split()
    assert {"auditor", "auditor_otel", "auditor_langchain", "benchmarks"} <= set(roots)
    contract = config["importlinter:contract:acyclic"]
    assert contract["type"] == "acyclic_siblings"
    assert contract["ancestors"].split() == roots
    assert "depth" not in contract  # the default (10) reaches every package we have


def test_no_import_circles() -> None:
    # The contract's own check, run here too: for every package, its modules and sub-packages
    # (each taken with everything under it) import one another one way. Imports inside functions
    # and under TYPE_CHECKING count: a circle hidden in a function is still a circle to a reader.
    import grimp

    roots = import_linter_config()["importlinter"]["root_packages"].split()
    graph = grimp.build_graph(*roots, cache_dir=None)
    packages = sorted(m for m in graph.modules if graph.find_children(m))
    circles = {p: sorted(graph.nominate_cycle_breakers(p)) for p in packages}
    assert {p: c for p, c in circles.items() if c} == {}


JUDGES = PACKAGE / "judges"
#: The judges stage by job (docs/architecture.md, "auditor.judges").
JUDGES_SUB_PACKAGES = ("offline", "llm", "verify", "reading", "cache")


def test_the_judges_stage_is_laid_out_by_job() -> None:
    found = sorted(p.name for p in JUDGES.iterdir() if (p / "__init__.py").is_file())
    assert found == sorted(JUDGES_SUB_PACKAGES)
    for name in JUDGES_SUB_PACKAGES:
        module = importlib.import_module(f"auditor.judges.{name}")
        assert module.__doc__ and module.__all__, f"auditor.judges.{name} has no docstring or no __all__"
        for name_ in module.__all__:
            assert getattr(module, name_) is not None
        modules = sorted(p.name for p in (JUDGES / name).glob("*.py") if p.name != "__init__.py")
        assert modules and all(m.startswith("_") for m in modules), (name, modules)
        assert f"`{name}/`" in ARCHITECTURE, f"judges/{name}/ is not in docs/architecture.md"
    # beside the sub-packages, only what every judge shares
    assert sorted(p.name for p in JUDGES.glob("*.py")) == [
        "__init__.py",
        "_cascade.py",
        "_setup.py",
        "_unjudged.py",
        "_verdicts.py",
    ]
    assert (JUDGES / "offline" / "offline_judge.json").is_file()  # package data of auditor.judges.offline


def test_no_judges_module_over_400_lines() -> None:
    long = {
        str(p.relative_to(ROOT)): n
        for p in JUDGES.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 400
    }
    assert not long, f"split these by job: {long}"


def test_the_judges_contracts_keep_the_checks_apart_from_the_judges() -> None:
    config = import_linter_config()
    forbidden = {
        config[s]["source_modules"].strip(): set(config[s]["forbidden_modules"].split())
        for s in config.sections()
        if config[s].get("type") == "forbidden"
    }
    assert {"auditor.judges.offline", "auditor.judges.llm"} <= forbidden["auditor.judges.verify"]
    assert "auditor.judges.llm" in forbidden["auditor.judges.offline"]
