"""Make text that came from a result file safe to show in each format.

Anything a probe returned, and anything in a result file copied in from
another machine, is untrusted: it may hold markup, table separators, newlines,
terminal escape sequences or spreadsheet formulas. Every renderer passes such
text through one of these functions; constants of our own need not.
"""

from __future__ import annotations

import html
import json
import math
import re
from typing import Any

# ESC followed by a CSI sequence, an OSC sequence (ended by BEL or ST) or a single-character sequence.
_ESCAPE_SEQUENCE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])?")
# C0 and C1 controls but tab and newline, and the invisible characters that reorder or hide text
# (bidirectional overrides, zero-width characters, line and paragraph separators), and the two non-characters
# U+FFFE and U+FFFF, which XML cannot hold.
_INVISIBLE_BUT_LINES = "\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufffe\uffff"
_INVISIBLE = re.compile(f"[\t\n{_INVISIBLE_BUT_LINES}]")
_INVISIBLE_LINES_KEPT = re.compile(f"[{_INVISIBLE_BUT_LINES}]")
_SPACES = re.compile(r"\s+")
# What starts a block in Markdown or reStructuredText when it opens a line: an enumerator such as `1.`,
# `a)` or `(iv)`; any other punctuation that opens a line is escaped by itself.
_ENUMERATOR = re.compile(r"^(\(?)([0-9]+|[A-Za-z]|[ivxlcdmIVXLCDM]+|#)([.)])(?=\s|$)")
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|~<>&!])")
_RST_SPECIAL = re.compile(r"([\\`*_\[\]|<>:])")
_CSV_FORMULA_START = ("=", "+", "-", "@")  # and tab and CR, which clean() has made spaces


def clean(text: object, limit: int = 0) -> str:
    """``text`` as one line of plain, visible characters, cut to ``limit`` characters (0: no limit).

    Terminal escape sequences are dropped, every run of whitespace (newlines
    included) becomes one space, and any other control or invisible character
    becomes U+FFFD, so what is shown is what is there.
    """
    text = str(text)
    # Most text is clean already: printable (no controls, no invisible formatting, no whitespace but spaces).
    if not (text.isprintable() and "  " not in text and text.strip(" ") == text):
        text = _ESCAPE_SEQUENCE.sub("", text)
        text = _SPACES.sub(" ", text)
        text = _INVISIBLE.sub("\ufffd", text).strip()
    if limit and len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


def lines(text: object) -> str:
    """``text`` as lines of visible characters: what :func:`clean` does, but tabs and line breaks are kept (CR LF
    and CR as LF), as a record's message was printed. No character is left that XML 1.0 cannot hold."""
    text = str(text).replace("\r\n", "\n").replace("\r", "\n")
    text = _ESCAPE_SEQUENCE.sub("", text)
    return _INVISIBLE_LINES_KEPT.sub("\ufffd", text)


def page_patterns() -> dict[str, str]:
    """What the HTML page's script removes from a text it shows, as regular expressions for JavaScript.

    The escape sequences :func:`clean` drops, and the characters it makes U+FFFD. Unlike :func:`clean`,
    which makes every whitespace a space, the page keeps tabs and line breaks (CR LF and CR as LF: its
    details show a probe's message as it was printed), and shows other control characters as U+FFFD.
    """
    return {"escapeSequence": _ESCAPE_SEQUENCE.pattern, "invisible": f"[{_INVISIBLE_BUT_LINES}]"}


def markdown(text: object) -> str:
    """``text`` as literal inline Markdown (GitHub-flavoured), safe inside a table cell or a list item."""
    escaped = _MARKDOWN_SPECIAL.sub(_markdown_character, clean(text))
    return _escape_line_start(escaped)


def _markdown_character(match: re.Match[str]) -> str:
    character = match.group(1)
    # Entities rather than backslashes for HTML's characters: a renderer that passes HTML through must not see a tag.
    return {"<": "&lt;", ">": "&gt;", "&": "&amp;"}.get(character, "\\" + character)


def rst(text: object) -> str:
    """``text`` as literal inline reStructuredText, safe in a list-table cell or a footnote."""
    return _escape_line_start(_RST_SPECIAL.sub(r"\\\1", clean(text)))


def _escape_line_start(text: str) -> str:
    """Keep a line from opening a list, heading, quote, comment or transition."""
    enumerator = _ENUMERATOR.match(text)
    if enumerator:
        return text[: enumerator.end(3) - 1] + "\\" + text[enumerator.end(3) - 1 :]
    # A backslash is an escape already; an ampersand begins an entity that stands for `<`, `>` or `&` (Markdown).
    if text and not text[0].isalnum() and text[0] not in "\\&" and text[0].isascii():
        return "\\" + text
    return text


def html_text(text: object, limit: int = 0) -> str:
    """``text`` for HTML element content or a quoted attribute value."""
    return html.escape(clean(text, limit), quote=True)


def csv_cell(value: object) -> object:
    """A value for a CSV cell: numbers as they are; text cleaned, and never read as a formula by a spreadsheet."""
    if value is None or isinstance(value, bool | int | float):
        return value
    text = clean(value)
    return "'" + text if text.startswith(_CSV_FORMULA_START) else text


def _finite(value: Any) -> Any:
    """``value`` with every non-finite float as a string ("nan", "inf", "-inf"): strict JSON has no NaN.

    A result file written by torchmatrix holds none, but one copied in from
    elsewhere may, and JSON.parse in a browser refuses the whole document then.
    """
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {str(key): _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def json_text(value: Any, **options: Any) -> str:
    """Strict JSON of ``value``; the slow walk of :func:`_finite` only when there is a non-finite float."""
    try:
        return json.dumps(value, allow_nan=False, **options)
    except ValueError:
        return json.dumps(_finite(value), allow_nan=False, **options)
