"""docs/conventions.md's coverage table stays true: every row names a fixture that exists, and
every framework fixture folder has a row.

The table is read from the document, so a row added later (with its fixture) is checked the same.
"""

from __future__ import annotations

import re

from tests.conftest import FIXTURES, ROOT

DOC = ROOT / "docs" / "conventions.md"
HEADING = "## Coverage by framework"
COLUMNS = ["framework or instrumentation", "version tested", "fixture", "what is read", "known gaps"]


def _rows() -> list[dict[str, str]]:
    text = DOC.read_text(encoding="utf-8")
    assert HEADING in text, f"{DOC.name} has no {HEADING!r} section"
    section = text.split(HEADING, 1)[1].split("\n## ", 1)[0]
    lines = [line.strip() for line in section.splitlines() if line.strip().startswith("|")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    assert header == COLUMNS, f"the coverage table's columns are {header}, expected {COLUMNS}"
    rows = []
    for line in lines[2:]:  # after the header and its rule
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        assert len(cells) == len(COLUMNS), f"a coverage row has {len(cells)} cells: {line}"
        rows.append(dict(zip(COLUMNS, cells, strict=True)))
    return rows


def _folders(cell: str) -> list[str]:
    return re.findall(r"`tests/fixtures/([\w./-]+?)/?`", cell)


def test_every_row_names_a_fixture_folder_that_exists() -> None:
    rows = _rows()
    assert rows, "the coverage table has no rows"
    for row in rows:
        name = row["framework or instrumentation"]
        folders = _folders(row["fixture"])
        assert folders, f"row {name!r} names no fixture folder (`tests/fixtures/<folder>/`)"
        for folder in folders:
            path = FIXTURES / folder
            assert path.is_dir() and any(path.iterdir()), f"row {name!r}: {path} is missing or empty"
            if folder.startswith("frameworks/"):
                assert (path / "expected.json").is_file(), f"row {name!r}: {path} has no expected.json"
        for column in ("version tested", "what is read", "known gaps"):
            assert row[column], f"row {name!r}: {column!r} is empty"


def test_every_framework_fixture_folder_has_a_row() -> None:
    named = {folder.rstrip("/") for row in _rows() for folder in _folders(row["fixture"])}
    frameworks = FIXTURES / "frameworks"
    folders = sorted(p.name for p in frameworks.iterdir() if p.is_dir()) if frameworks.is_dir() else []
    missing = [f for f in folders if f"frameworks/{f}" not in named]
    assert not missing, f"fixture folders without a row in {DOC.name}'s coverage table: {missing}"
