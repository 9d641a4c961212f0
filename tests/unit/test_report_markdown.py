"""COMPATIBILITY.md: GitHub-flavoured Markdown that renders to the tables, notes and legend meant."""

from __future__ import annotations

import re

from markdown_it import MarkdownIt

from torchmatrix.views import markdown, model

from .report_data import assert_golden, hostile, scenario

CHARTS = {"batched_matmul": "compatibility-batched_matmul.svg"}


def tables(rendered: str) -> list[list[list[str]]]:
    """Each HTML table as rows of cell texts."""
    found = []
    for table in re.findall(r"<table>(.*?)</table>", rendered, re.S):
        rows = re.findall(r"<tr>(.*?)</tr>", table, re.S)
        found.append([[re.sub(r"<[^>]+>", "", cell) for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)]
                      for row in rows])  # fmt: skip
    return found


def html(text: str) -> str:
    return MarkdownIt("commonmark").enable("table").render(text)


def test_the_scenario_renders_as_its_golden_file() -> None:
    assert_golden("COMPATIBILITY.md", markdown.render(model.build(scenario()), CHARTS))


def test_one_table_per_probe_with_symbols_notes_legend_and_picture() -> None:
    rendered = html(markdown.render(model.build(scenario()), CHARTS))
    autograd, batched, legend = tables(rendered)
    assert autograd[0] == ["torch", "python", "H200 · cpu", "H200 · cuda", "linux-x86_64 · cpu",
                           "macos-arm64 · cpu", "macos-arm64 · mps"]  # fmt: skip
    assert autograd[1] == ["1.9.0", "3.9", "inst-err¹", "inst-err¹", "✓", "✓", "✗²"]
    assert batched[3] == ["2.2.0", "3.11, 3.12", "✓", "≈", "✓", "✓", "≈"]
    assert ["≈", "within-tolerance", "right within the rounding tolerance, but not bit-identical"] in legend
    assert '<img src="compatibility-batched_matmul.svg"' in rendered
    assert "<li>fail: y = 2 * dot(x, x): observed 0.0, expected 28.0;" in rendered


def test_hostile_text_stays_text_and_keeps_the_tables_square() -> None:
    rendered = html(markdown.render(model.build(hostile())))
    assert "<script" not in rendered and "<a " not in rendered and "<em>" not in rendered
    for table in tables(rendered):
        assert len({len(row) for row in table}) == 1, table


def test_no_results_says_so() -> None:
    assert "No results yet" in markdown.render(model.build([]))
