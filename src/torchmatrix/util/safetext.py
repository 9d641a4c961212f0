"""Text torchmatrix did not write, made safe to show: which characters are unsafe, and how each output shows them.

A probe's message, a test's node id, an installer's output or a result file
copied in from another machine may hold characters that act instead of being
read: escape sequences that clear the screen, rewrite earlier lines or set the
window title; bidirectional controls that show text in another order than it
is stored; invisible characters that hide text or make two names look alike.
Everything torchmatrix shows that it did not write itself goes through this
module at the point of display; the stored data keeps the text as it was.

A character is unsafe when its Unicode general category is one of
:data:`UNSAFE_CATEGORIES`: a control (Cc), a format character (Cf: the
bidirectional controls U+061C, U+200E, U+200F, U+202A–U+202E and
U+2066–U+2069, and the invisible ones, such as U+00AD, U+200B, U+FEFF,
U+FFF9–U+FFFB and the tags U+E0001–U+E007F), a private-use character (Co), a
lone surrogate (Cs), a code point unassigned in this Python's Unicode database
(Cn, which holds the non-characters U+FFFE and U+FFFF that XML cannot hold),
or a line or paragraph separator (Zl, Zp). Everything else is shown as it is:
letters, marks, symbols, emoji, spaces, and Markdown's or HTML's punctuation,
which each report format quotes in its own renderer (:mod:`torchmatrix.views.escape`).

What each output does with each kind of unsafe character, on a terminal
(:func:`for_terminal`) and in a report (:func:`report_line` for a cell of
Markdown, reST, HTML or CSV; :func:`report_lines` for a message shown whole,
in JUnit XML and the HTML page's details):

- an escape sequence (ESC and a CSI, OSC or one-character sequence): on a
  terminal ESC is written ``\\x1b`` and the rest stays; a report drops it whole;
- a line feed: a terminal keeps it in text of several lines, else writes
  ``\\n``; a cell makes it a space, lines keep it;
- a tab, CR or CR LF: a terminal writes ``\\t``, ``\\r``; a cell makes them a
  space, lines keep a tab and make CR and CR LF a line feed;
- any other control (Cc) and the line and paragraph separators (Zl, Zp): a
  terminal writes a Python escape (``\\x00``, ``\\x85``, ``\\u2028``); a cell makes
  those Python counts whitespace a space, lines do not; either makes the rest U+FFFD;
- a format character (Cf, the bidirectional controls among them), a private-use
  character (Co), a lone surrogate (Cs) or an unassigned code point (Cn): a
  terminal writes a Python escape (``\\u202e``, ``\\ue000``, ``\\ud800``,
  ``\\U000e0041``); a report writes U+FFFD.

A terminal shows the code point, so whoever reads a log can tell what was
there; a report shows U+FFFD, which a table's reader needs no more than the
colours of pytest's output. The HTML page applies :func:`page_patterns` in the
browser, the same classes by their names (``\\p{Cf}``), so there it is the
browser's Unicode version that says which code points are unassigned.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"})
"""The Unicode general categories whose characters are never shown as they are."""
# ESC followed by a CSI sequence, an OSC sequence (ended by BEL or ST) or a single-character sequence.
_ESCAPE_SEQUENCE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])?")
_SPACES = re.compile(r"\s+")
_REPLACEMENT = "\ufffd"


def unsafe(char: str) -> bool:
    """Whether ``char`` is of one of the :data:`UNSAFE_CATEGORIES`."""
    return unicodedata.category(char) in UNSAFE_CATEGORIES


def _replaced(text: str, shown: Callable[[str], str], kept: str = "") -> str:
    """``text`` with every unsafe character but those in ``kept`` replaced by what ``shown`` makes of it."""
    # str.isprintable is false exactly for the unsafe categories and for the spaces (Zs) but U+0020:
    # most text is printable, and is checked at C speed.
    if text.isprintable():
        return text
    return "".join(shown(char) if char not in kept and unsafe(char) else char for char in text)


def _python_escape(char: str) -> str:
    return char.encode("unicode_escape", "backslashreplace").decode("ascii")


def for_terminal(text: str, *, keep_newlines: bool = True) -> str:
    """``text`` with every unsafe character written as a Python escape (``\\x1b``, ``\\u202e``).

    Line feeds are kept unless ``keep_newlines`` is false; HTML and Markdown are
    inert on a terminal and stay as they are.
    """
    return _replaced(text, _python_escape, "\n" if keep_newlines else "")


def terminal_line(text: str) -> str:
    """The first line of ``text`` (as ``str.splitlines`` splits), escaped: one line of a log."""
    lines = text.splitlines()
    return for_terminal(lines[0], keep_newlines=False) if lines else ""


def report_line(text: object, limit: int = 0) -> str:
    """``text`` as one line of visible characters for a report, cut to ``limit`` characters (0: no limit).

    Escape sequences are dropped, every run of whitespace (line breaks
    included) becomes one space, and any other unsafe character becomes
    U+FFFD, so what is shown is what is there.
    """
    text = str(text)
    # Most text is clean already: printable (nothing unsafe, no whitespace but single spaces within).
    if not (text.isprintable() and "  " not in text and text.strip(" ") == text):
        text = _SPACES.sub(" ", _ESCAPE_SEQUENCE.sub("", text))
        text = _replaced(text, lambda _: _REPLACEMENT).strip()
    if limit and len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


def report_lines(text: object) -> str:
    """``text`` as lines of visible characters for a report: what :func:`report_line` does, but tabs and line
    breaks are kept (CR LF and CR as LF), as a record's message was printed. No character is left that XML 1.0
    cannot hold."""
    text = str(text).replace("\r\n", "\n").replace("\r", "\n")
    return _replaced(_ESCAPE_SEQUENCE.sub("", text), lambda _: _REPLACEMENT, "\t\n")


def page_patterns() -> dict[str, str]:
    """What the HTML page's script does to a text it shows, as JavaScript regular expressions: what
    :func:`report_lines` does (``escapeSequence``, flags ``g``: removed; ``unsafe``, flags ``gu``: U+FFFD)."""
    classes = "".join(f"\\p{{{category}}}" for category in sorted(UNSAFE_CATEGORIES))
    return {"escapeSequence": _ESCAPE_SEQUENCE.pattern, "unsafe": f"(?![\\t\\n])[{classes}]"}
