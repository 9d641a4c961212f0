"""Text made safe for a terminal: nothing a terminal acts on gets through; the rest is left alone."""

from __future__ import annotations

import unicodedata

import pytest

from torchmatrix.terminal import escape, first_line

from ..faults.probes import hostile

UNSAFE = ("Cc", "Cf", "Cs", "Zl", "Zp")


@pytest.mark.parametrize("text", [hostile.MESSAGE, hostile.ANSI, hostile.CONTROL, hostile.LINE_BREAKS, "\ud800"])
def test_nothing_a_terminal_acts_on_gets_through(text: str) -> None:
    for escaped in (escape(text, keep_newlines=False), first_line(text)):
        assert not [char for char in escaped if unicodedata.category(char) in UNSAFE]
    assert not [char for char in escape(text) if char != "\n" and unicodedata.category(char) in UNSAFE]


def test_escapes_read_as_python_writes_them() -> None:
    assert escape("\x1b[31mred\x1b[0m\ttab") == r"\x1b[31mred\x1b[0m\ttab"
    assert escape("a\u202eb\x9bc\x00") == r"a\u202eb\x9bc\x00"
    assert escape("two\nlines") == "two\nlines"
    assert escape("two\nlines", keep_newlines=False) == r"two\nlines"


def test_ordinary_text_html_markdown_and_symbols_are_left_alone() -> None:
    text = "✓ pass – torch 1.9.0 on café ☠ ⏱ 日本 " + hostile.HTML + hostile.MARKDOWN + hostile.CSV
    assert escape(text) == text


def test_first_line_stops_where_str_splitlines_does() -> None:
    assert first_line("ok\rfake ✓ pass") == "ok"
    assert first_line("ok\u2028fake") == "ok"
    assert first_line("") == ""
    assert first_line("\x1b[2Jsummary\ndetails") == r"\x1b[2Jsummary"
