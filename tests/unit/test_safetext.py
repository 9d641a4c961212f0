"""Unsafe text: which characters are unsafe, how a terminal shows them and how a report does."""

from __future__ import annotations

import sys

import pytest

from torchmatrix.util.safetext import for_terminal, report_line, report_lines, terminal_line, unsafe

from ..faults.probes import hostile

UNSAFE = {
    "controls (Cc)": "\x00\x07\x08\t\n\x0b\x0c\r\x1b\x1c\x7f\x85\x9b",
    "bidirectional controls (Cf)": "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069",
    "invisible format characters (Cf)": "\u00ad\u0600\u180e\u200b\u200c\u200d\u2060\u2064\ufeff\ufff9\ufffa\ufffb"
    "\U000e0001\U000e0041\U000e007f",
    "private use (Co)": "\ue000\uf8ff\U000f0000\U0010fffd",
    "lone surrogates (Cs)": "\ud800\udbff\udc00\udfff",
    "non-characters, unassigned in every Unicode version (Cn)": "\ufdd0\ufdef\ufffe\uffff\U0001fffe\U0010ffff",
    "line and paragraph separators (Zl, Zp)": "\u2028\u2029",
}
"""Characters of every unsafe class, as Unicode lists them (not as torchmatrix does)."""
SAFE = "a Z 9 é ß 日本 ✓ ☠ ⏱ 😀 \u00a0\u2003\u3000 e\u0301 <>&\"'|*_`[]#=+-@.:\\~!"
"""Letters, marks, symbols, emoji, spaces (Zs) and every format's punctuation: shown as they are."""


@pytest.mark.parametrize("kind", UNSAFE)
def test_every_class_of_unsafe_characters_is_unsafe(kind: str) -> None:
    assert [char for char in UNSAFE[kind] if not unsafe(char)] == []


def test_letters_symbols_spaces_and_punctuation_are_safe() -> None:
    assert [char for char in SAFE if unsafe(char)] == []


def test_printable_text_is_exactly_text_without_unsafe_characters_or_spaces_but_the_space() -> None:
    """The escapers pass printable text by at C speed (str.isprintable): it must hold nothing unsafe."""
    differ = [
        hex(code)
        for code in range(sys.maxunicode + 1)
        if chr(code).isprintable() is (unsafe(chr(code)) or (chr(code).isspace() and code != 0x20))
    ]
    assert differ == []


@pytest.mark.parametrize("text", [hostile.MESSAGE, hostile.ANSI, hostile.CONTROL, hostile.LINE_BREAKS, "\ud800"])
def test_nothing_a_terminal_acts_on_gets_through(text: str) -> None:
    for escaped in (for_terminal(text, keep_newlines=False), terminal_line(text)):
        assert not [char for char in escaped if unsafe(char)]
    assert not [char for char in for_terminal(text) if char != "\n" and unsafe(char)]


def test_a_terminal_shows_each_unsafe_character_as_python_writes_it() -> None:
    assert for_terminal("\x1b[31mred\x1b[0m\ttab") == r"\x1b[31mred\x1b[0m\ttab"
    assert for_terminal("a\u202eb\x9bc\x00") == r"a\u202eb\x9bc\x00"
    assert (
        for_terminal("\u061c\u00ad\ufff9\U000e0041\ue000\ud800\ufffe")
        == r"\u061c\xad\ufff9\U000e0041\ue000\ud800\ufffe"
    )
    assert for_terminal("two\nlines") == "two\nlines"
    assert for_terminal("two\nlines", keep_newlines=False) == r"two\nlines"


def test_ordinary_text_html_markdown_and_symbols_are_left_alone() -> None:
    text = "✓ pass – torch 1.9.0 on café ☠ ⏱ 日本 " + SAFE + hostile.HTML + hostile.MARKDOWN + hostile.CSV
    assert for_terminal(text) == report_lines(text) == text
    assert report_line(text) == " ".join(text.split())  # a cell is one line: each run of spaces is one space


def test_terminal_line_stops_where_str_splitlines_does() -> None:
    assert terminal_line("ok\rfake ✓ pass") == "ok"
    assert terminal_line("ok\u2028fake") == "ok"
    assert terminal_line("") == ""
    assert terminal_line("\x1b[2Jsummary\ndetails") == r"\x1b[2Jsummary"


def test_a_report_line_drops_escape_sequences_and_shows_unsafe_characters_as_replacements() -> None:
    assert report_line("\x1b[31mred\x1b[0m\x1b]0;title\x07 ok") == "red ok"
    assert report_line("a\u202eb\u200bc\x00d") == "a\ufffdb\ufffdc\ufffdd"
    assert report_line("al\u061cm shy\u00ad note\ufff9 tag\U000e0041") == "al\ufffdm shy\ufffd note\ufffd tag\ufffd"
    assert report_line("  two\n lines\t\r\n\u2028") == "two lines"
    assert report_line("x" * 10, limit=5) == "xxxx…"
    assert report_line(1.5) == "1.5"


def test_report_lines_keep_tabs_and_line_breaks_and_nothing_xml_cannot_hold() -> None:
    assert report_lines("a\tb\r\nc\rd\x1b[1m\u2028e\x00\ufffe\u061c") == "a\tb\nc\nd\ufffde\ufffd\ufffd\ufffd"
