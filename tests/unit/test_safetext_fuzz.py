"""Fuzzed text of every unsafe class through every output: nothing unsafe is shown, and the rest reads as it was.

Each text mixes characters of every class that could act instead of being
read (controls, escape sequences, bidirectional controls, invisible format
characters, private-use, unassigned and surrogate code points, line and
paragraph separators) with letters, spaces and each format's own syntax. The
outputs are read back by real readers: markdown-it, docutils, an HTML parser,
the csv module and ElementTree (and, in tests/integration/test_report_page_script.py, Node
runs the HTML page's own script).
"""

from __future__ import annotations

import csv
import io
import random
import re
from xml.etree import ElementTree

import pytest

from torchmatrix.core import Outcome, Record
from torchmatrix.results import CellResult
from torchmatrix.util.safetext import for_terminal, report_line, report_lines, terminal_line, unsafe
from torchmatrix.views import escape, export, junit, markdown, model, rst, terminal_table

from .report_data import cell
from .test_report_escape import markdown_html, rst_html, text_of
from .test_safetext import SAFE, UNSAFE

ESCAPE_SEQUENCES = ["\x1b[2J", "\x1b[31m", "\x1b]0;title\x07", "\x1b]8;;https://example.invalid/\x1b\\", "\x1bc"]
PIECES = [*"".join(UNSAFE.values()), *ESCAPE_SEQUENCES, *SAFE, "1. ", "# ", "- ", ".. ", "=cmd", "\r\n"]
STORABLE = [piece for piece in PIECES if not 0xD800 <= ord(piece[0]) <= 0xDFFF]
"""No lone surrogate: a result file cannot hold one (storedjson refuses it), so no report is made of one."""


def fuzzed(rng: random.Random, longest: int = 16, pieces: list[str] = PIECES) -> str:
    return "".join(rng.choice(pieces) for _ in range(rng.randint(1, longest)))


def texts(count: int, seed: int, pieces: list[str] = PIECES) -> list[str]:
    rng = random.Random(seed)
    return [fuzzed(rng, pieces=pieces) for _ in range(count)]


def shown_unsafe(text: str, kept: str = "\n") -> list[str]:
    return [char for char in text if char not in kept and unsafe(char)]


def safe_part(text: str) -> str:
    """What of ``text`` is safe to show: a terminal shows it all, in order (an escape sequence's text after ESC too)."""
    return "".join(char for char in text if not unsafe(char))


def test_a_terminal_shows_every_safe_character_in_order_and_nothing_unsafe() -> None:
    for text in texts(300, seed=1):
        for line in (for_terminal(text, keep_newlines=False), terminal_line(text)):
            assert shown_unsafe(line, kept="") == []
        shown = for_terminal(text)
        assert shown_unsafe(shown) == [] and shown.count("\n") == text.count("\n")
        assert _subsequence(safe_part(text), shown), repr(text)


def _subsequence(part: str, whole: str) -> bool:
    rest = iter(whole)
    return all(char in rest for char in part)


def test_markdown_shows_the_report_line_literally_in_a_table_cell() -> None:
    for text in texts(200, seed=2):
        rendered = markdown_html(f"| a | b |\n| --- | --- |\n| {escape.markdown(text)} | x |\n")
        assert rendered.count("<td>") == 2, rendered
        assert shown_unsafe(rendered) == []
        assert not re.search(r"<(?!/?(table|thead|tbody|tr|th|td)>)", rendered), rendered
        assert text_of(rendered.split("<tbody>")[1].split("</td>")[0]) == report_line(text)


def test_rst_shows_the_report_line_literally_in_a_table_cell() -> None:
    for text in texts(60, seed=3):
        shown = escape.rst(text) or "?"
        body = rst_html(f".. list-table::\n\n   * - {shown}\n     - x\n")
        assert shown_unsafe(body) == []
        assert "href" not in body and "<em>" not in body and "<ul" not in body.replace('<ul class="simple">', "")
        assert text_of(body.split("<td>")[1].split("</td>")[0]) == (report_line(text) or "?")


def test_html_shows_the_report_line_in_content_and_attributes() -> None:
    for text in texts(300, seed=4):
        fragment = f'<p title="{escape.html_text(text)}">{escape.html_text(text)}</p>'
        assert shown_unsafe(fragment) == [] and "<" not in fragment[fragment.index(">") + 1 : -len("</p>")]
        assert text_of(fragment) == report_line(text)


def test_csv_shows_the_report_line_and_never_a_formula() -> None:
    for text in texts(300, seed=5):
        written = io.StringIO()
        csv.writer(written).writerow([escape.csv_cell(text)])
        (value,) = next(csv.reader(io.StringIO(written.getvalue())))
        assert shown_unsafe(value, kept="") == []
        assert value in (report_line(text), "'" + report_line(text)) and not value.startswith(("=", "+", "-", "@"))


def fuzzed_results(seed: int, count: int) -> list[CellResult]:
    """Results whose every text that came from a file is fuzzed."""
    rng = random.Random(seed)

    def stored(longest: int) -> str:
        return fuzzed(rng, longest, STORABLE)

    found = []
    for number in range(count):
        records = tuple(
            Record(stored(6), device, outcome, {"checks": [], stored(4): stored(16)}, stored(16), 0.1)
            for device, outcome in (("cpu", Outcome.FAIL), ("cuda", Outcome.ERROR), ("mps", Outcome.PASS))
        )
        found.append(cell(f"box{number}{stored(4)}", f"2.{number}.0", "3.11", records))
    return found


@pytest.fixture(scope="module")
def fuzzed_report() -> model.Report:
    return model.build(fuzzed_results(seed=6, count=12))


def test_whole_markdown_and_rst_reports_show_nothing_unsafe(fuzzed_report: model.Report) -> None:
    source = markdown.render(fuzzed_report)
    assert shown_unsafe(source) == [] and shown_unsafe(markdown_html(source)) == []
    source = rst.render(fuzzed_report)
    assert shown_unsafe(source) == [] and shown_unsafe(rst_html(source)) == []


def test_the_csv_and_junit_xml_show_nothing_unsafe_and_junit_keeps_a_messages_lines(
    fuzzed_report: model.Report,
) -> None:
    for row in csv.reader(io.StringIO(export.to_csv(fuzzed_report))):
        assert [value for value in row if shown_unsafe(value, kept="")] == []
    document = ElementTree.fromstring(junit.render(fuzzed_report))  # XML 1.0 holds every character left
    said = [element.text or "" for element in document.iter() if element.tag in ("failure", "error")]
    messages = [report_lines(record.message) for result in fuzzed_report.results for record in result.records]
    assert said and all(text in messages for text in said)
    assert [text for text in said if shown_unsafe(text, kept="\t\n")] == []


def test_the_terminal_table_shows_nothing_unsafe(fuzzed_report: model.Report) -> None:
    assert shown_unsafe(terminal_table.table(fuzzed_report.results, ["cpu", "cuda", "mps"])) == []
