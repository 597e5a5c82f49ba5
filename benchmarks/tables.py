"""The Markdown table every benchmark section is printed as (``python -m benchmarks`` and each
section run alone, e.g. ``python -m benchmarks.report``)."""

from __future__ import annotations

from typing import Any


def markdown_table(title: str, header: list[str], rows: list[list[Any]]) -> str:
    """``### title``, a blank line, then the table: each column as wide as its widest cell."""
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=True)]

    def line(cells: list[Any]) -> str:
        return "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([f"### {title}", "", line(header), rule, *(line(r) for r in rows), ""])
