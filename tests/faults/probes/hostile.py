"""Returns text that no output may interpret: HTML, Markdown table syntax, terminal control sequences.

A reusable fixture for every renderer (terminal, Markdown, HTML, CSV): run it
through a real cell, then check that each output shows the text inert. It
fails (outcome ``fail``) so that renderers which print the messages of
failures print this one. The strings are module constants and the module
imports nothing at top level, so tests on the host can import it to know what
to look for.
"""

HTML = '<script>alert("x")</script><img src=x onerror=alert(1)> &amp; </td></tr></table>'
MARKDOWN = "| injected | cell | `code` **bold** [link](javascript:alert(1)) <!--"
MARKDOWN_TABLE = "| a | b |\n|---|---|\n| forged | row |"
ANSI = (
    "\x1b[2J\x1b[H\x1b[31mred\x1b[0m \x1b]0;window title\x07 \x1b]8;;https://example.invalid/\x1b\\link\x1b]8;;\x1b\\"
)
CONTROL = "bell\x07 backspace\x08\x08 NUL\x00 DEL\x7f csi\x9b2J bidi\u202eevil\u202c"
INVISIBLE = (
    "alm\u061c lrm\u200e rlm\u200f isolate\u2067evil\u2069 shy\u00ad zwj\u200d bom\ufeff"
    " note\ufff9a\ufffab\ufffb tag\U000e0041 private\ue000 nonchar\U0010ffff"
)
"""Characters that reorder text or hide it: bidirectional marks and isolates, invisible format characters,
interlinear annotations, a tag, a private-use character and a non-character."""
LINE_BREAKS = "cr\rover vt\x0bff\x0cfs\x1cnel\x85sep\u2028line"
"""Characters that end a line for str.splitlines: whatever follows one is on a new line."""
CSV = '=HYPERLINK("https://example.invalid","click"),"quoted, comma",+1,-1,@SUM(A1)'
FORGED_LOG = "nox > Session probe(0.0.1) was successful in 1 second."

FIRST_LINE = " ".join((ANSI, HTML, MARKDOWN, CONTROL, INVISIBLE, CSV, LINE_BREAKS))
MESSAGE = "\n".join((FIRST_LINE, MARKDOWN_TABLE, FORGED_LOG))
"""The probe's message: everything on its first line (the line a terminal shows), then forged lines."""


def run(device):
    check = {
        "name": HTML + MARKDOWN,
        "observed": ANSI,
        "expected": CSV,
        "error": CONTROL,
        "tolerance": 0.0,
        "ok": False,
    }
    return {"outcome": "fail", "metrics": {"checks": [check], FIRST_LINE: MARKDOWN_TABLE}, "message": MESSAGE}
