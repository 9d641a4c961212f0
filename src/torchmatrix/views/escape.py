"""Quote text that came from a result file for each report format, so that it reads as literal text there.

Anything a probe returned, and anything in a result file copied in from
another machine, is untrusted: it may hold markup, table separators, newlines,
terminal escape sequences or spreadsheet formulas. Which characters are unsafe
to show at all, and what a report shows instead, :mod:`torchmatrix.util.safetext`
decides; this module quotes what is left in each format's syntax (Markdown,
reStructuredText, HTML, CSV, JSON). Every renderer passes such text through
one of these functions; constants of our own need not.
"""

from __future__ import annotations

import html
import json
import math
import re
from typing import Any

from ..util.safetext import report_line

# What starts a block in Markdown or reStructuredText when it opens a line: an enumerator such as `1.`,
# `a)` or `(iv)`; any other punctuation that opens a line is escaped by itself.
_ENUMERATOR = re.compile(r"^(\(?)([0-9]+|[A-Za-z]|[ivxlcdmIVXLCDM]+|#)([.)])(?=\s|$)")
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|~<>&!])")
_RST_SPECIAL = re.compile(r"([\\`*_\[\]|<>:])")
_CSV_FORMULA_START = ("=", "+", "-", "@")  # and tab and CR, which report_line() has made spaces


def markdown(text: object) -> str:
    """``text`` as literal inline Markdown (GitHub-flavoured), safe inside a table cell or a list item."""
    escaped = _MARKDOWN_SPECIAL.sub(_markdown_character, report_line(text))
    return _escape_line_start(escaped)


def _markdown_character(match: re.Match[str]) -> str:
    character = match.group(1)
    # Entities rather than backslashes for HTML's characters: a renderer that passes HTML through must not see a tag.
    return {"<": "&lt;", ">": "&gt;", "&": "&amp;"}.get(character, "\\" + character)


def rst(text: object) -> str:
    """``text`` as literal inline reStructuredText, safe in a list-table cell or a footnote."""
    return _escape_line_start(_RST_SPECIAL.sub(r"\\\1", report_line(text)))


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
    return html.escape(report_line(text, limit), quote=True)


def csv_cell(value: object) -> object:
    """A value for a CSV cell: numbers as they are; text cleaned, and never read as a formula by a spreadsheet."""
    if value is None or isinstance(value, bool | int | float):
        return value
    text = report_line(value)
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
