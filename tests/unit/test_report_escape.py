"""Escaping: hostile text from a result file comes out as the same literal text in every format."""

from __future__ import annotations

import html
import json
import math
from html.parser import HTMLParser

import docutils.core
import docutils.utils
import pytest
from markdown_it import MarkdownIt

from torchmatrix.util.safetext import report_line
from torchmatrix.views import escape

from .report_data import HOSTILE

LINE_STARTS = [
    "# heading", "- item", "+ item", "* item", "1. item", "2) item", "(iv) item", "a. item", "> quote",
    "---", "....", ".. comment", ":field: value", "| line", "=== x", "#. auto", "<div>", "&amp;", "\\x",
]  # fmt: skip


def markdown_html(source: str) -> str:
    return MarkdownIt("commonmark").enable("table").render(source)


def text_of(fragment: str) -> str:
    """The text an HTML fragment shows, tags dropped."""

    class Collect(HTMLParser):
        def __init__(self) -> None:
            super().__init__(convert_charrefs=True)
            self.parts: list[str] = []

        def handle_data(self, data: str) -> None:
            self.parts.append(data)

    collect = Collect()
    collect.feed(fragment)
    return "".join(collect.parts).strip()


def rst_html(source: str) -> str:
    """Docutils' HTML body for ``source``; any warning or error fails the test."""
    settings = {"report_level": 5, "halt_level": 2, "output_encoding": "unicode"}
    return docutils.core.publish_parts(source, writer="html5", settings_overrides=settings)["body"]


def test_markdown_is_literal_in_a_table_cell() -> None:
    cell = escape.markdown(HOSTILE)
    rendered = markdown_html(f"| a | b |\n| --- | --- |\n| {cell} | x |\n")
    assert rendered.count("<td>") == 2, rendered  # the `|` in the text did not split the cell
    assert "<script" not in rendered and "<a " not in rendered and "<em>" not in rendered and "<code>" not in rendered
    assert text_of(rendered.split("<tbody>")[1]).startswith(report_line(HOSTILE))


@pytest.mark.parametrize("start", LINE_STARTS)
def test_markdown_never_opens_a_block_in_a_list_item(start: str) -> None:
    rendered = markdown_html(f"1. {escape.markdown(start)}\n")
    assert rendered.count("<li>") == 1
    assert not any(tag in rendered for tag in ("<h1", "<ul", "<blockquote", "<hr", "<ol start", "<div"))
    assert text_of(rendered) == start


@pytest.mark.parametrize("start", LINE_STARTS)
def test_rst_is_literal_in_a_footnote_and_a_table_cell(start: str) -> None:
    text = escape.rst(start)
    body = rst_html(f"x [1]_\n\n.. list-table::\n\n   * - {text}\n\n.. [1] {text}\n")
    assert "<ul" not in body.replace('<ul class="simple">', "") and "<blockquote" not in body
    assert text_of(body).count(start) == 2


def test_rst_makes_no_link_role_or_substitution_of_hostile_text() -> None:
    body = rst_html(f".. list-table::\n\n   * - {escape.rst(HOSTILE)}\n")
    assert "href" not in body and "<script" not in body and "<em>" not in body
    assert report_line(HOSTILE) in html.unescape(body)


def test_html_text_is_inert_in_content_and_in_attributes() -> None:
    fragment = f'<p title="{escape.html_text(HOSTILE)}">{escape.html_text(HOSTILE)}</p>'
    assert "<script" not in fragment
    assert text_of(fragment) == report_line(HOSTILE)
    assert f'"{escape.html_text(HOSTILE)}"'.count('"') == 2


@pytest.mark.parametrize("formula", ["=1+1", "+1", "-1+2", "@SUM(A1)", "\t=1", "\r=1"])
def test_csv_cells_are_never_formulas(formula: str) -> None:
    assert str(escape.csv_cell(formula)).startswith("'")


def test_csv_cells_keep_numbers_and_plain_text() -> None:
    assert escape.csv_cell(-1.5) == -1.5
    assert escape.csv_cell(None) is None
    assert escape.csv_cell(True) is True
    assert escape.csv_cell("linux-x86_64") == "linux-x86_64"


def test_json_text_is_strict_even_with_non_finite_numbers() -> None:
    value = {"a": [math.nan, math.inf, -math.inf, 1.0]}
    assert json.loads(escape.json_text(value)) == {"a": ["nan", "inf", "-inf", 1.0]}
    assert escape.json_text({"a": 1}) == '{"a": 1}'
