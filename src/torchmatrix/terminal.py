"""Text from probes, installers and result files, made safe to show on a terminal.

A probe's message, an installer's output or a result file merged from another
machine may hold escape sequences that clear the screen, rewrite earlier lines,
set the window title or hide text (ANSI/OSC sequences, carriage returns,
bidirectional overrides). Everything torchmatrix prints that it did not write
itself goes through :func:`escape` at the point of display; the stored data
keeps the text as it was.
"""

from __future__ import annotations

import unicodedata

# Control characters, format characters (bidirectional overrides, zero-width
# marks), lone surrogates, and the Unicode line and paragraph separators.
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def escape(text: str, *, keep_newlines: bool = True) -> str:
    """``text`` with every character a terminal could act on written as a Python escape (``\\x1b``).

    Newlines are kept unless ``keep_newlines`` is false; HTML and Markdown are
    inert on a terminal and stay as they are.
    """
    return "".join(
        char
        if (char == "\n" and keep_newlines) or unicodedata.category(char) not in _UNSAFE_CATEGORIES
        else char.encode("unicode_escape").decode("ascii")
        for char in text
    )


def first_line(text: str) -> str:
    """The first line of ``text`` (as ``str.splitlines`` splits), escaped: one line of a log."""
    lines = text.splitlines()
    return escape(lines[0], keep_newlines=False) if lines else ""
