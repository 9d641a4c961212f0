"""What a script printed, as `nox -s bisect -- … --by-output` compares it: all of it, less what is per-process.

The worker reads a script's whole output (``envside/torchmatrix_worker/records.py``,
``read_output``): it replaces what provably differs from one process to the
next (:data:`RULES`) and the cell's own torch version, then keeps the sha256
of all of it (``metrics.output_sha256``), its size as printed
(``output_bytes``) and, for a person to read, its last 64 KiB as lines
(``output``; ``output_truncated`` when there was more). What it raised, or the
text it exited with, is kept the same way (``raised``). A release is then how
the script ended (its outcome, exit code and exception, type and message) and
the digest: a change anywhere in the output, kept or not, is a change.
"""

from __future__ import annotations

import importlib
import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .core import Outcome

KEPT = "the end kept"


def _worker() -> Any:
    """The worker's module: it applies the rules, in each cell's Python (it is no typed module of the host's)."""
    return importlib.import_module("torchmatrix.envside.torchmatrix_worker.records")


@dataclass(frozen=True)
class Rule:
    what: str
    pattern: re.Pattern[bytes]
    replacement: str
    example: str
    """A line it changes, for the docs and the tests."""
    untouched: tuple[str, ...]
    """Lines it must leave as printed: each a way it could hide a change."""

    def apply(self, line: str) -> str:
        return self.pattern.sub(self.replacement.encode("utf-8"), line.encode("utf-8")).decode("utf-8")


_EXAMPLES = {
    "an object's address in its default repr": (
        "<MulBackward0 object at 0x7f3a2c1d5e80>",
        (
            "bits of 0.3: 0x3e99999a",
            "at 0x3e99999a",
            "<0x3e99999a>",
            "id 0x7f3a2c1d5e80 >",
            "<float32 value at 0x3e99999a>",
        ),
    ),
    "the random part of the names of a pair's folders": (
        "saved to /tmp/torchmatrix-worker-k2j4x9_a/torchmatrix-pair-9xq1b2c3/model.pt",
        ("/tmp/tmpab12_x9q/model.pt", "torchmatrix-pair-9xq1b2c3d", "my-torchmatrix-pair-results"),
    ),
}
RULES = tuple(
    Rule(what, re.compile(pattern), replacement.decode("utf-8"), *_EXAMPLES[what])
    for what, pattern, replacement in _worker().PER_PROCESS
)
TORCH_VERSION = _worker().TORCH_VERSION.decode("utf-8")


def normalised(text: str, torch_versions: Sequence[str] = ()) -> str:
    """``text`` as the worker normalises what a script printed in a cell of ``torch_versions``."""
    worker = _worker()
    data = worker.normalised_output(text.encode("utf-8"), worker.output_rules(list(torch_versions)))
    return str(data.decode("utf-8"))


@dataclass(frozen=True)
class Printed:
    """One run of a script as by-output compares it: how it ended, and all it printed (by digest)."""

    ended: str
    """The outcome, the exit code where not 0, and what it raised or exited with (newlines as ``\\n``)."""
    sha256: str
    size: int
    """Bytes printed, in all."""
    cut: bool
    """Whether ``lines`` are only the end of what it printed."""
    lines: tuple[str, ...]

    @classmethod
    def of_run(cls, outcome: str, message: str, metrics: Mapping[str, Any]) -> Printed | str:
        """A run's record (its outcome, message and metrics) as compared; what is missing, as text, if it cannot be."""
        lines, digest, size = metrics.get("output"), metrics.get("output_sha256"), metrics.get("output_bytes")
        if not isinstance(lines, list):
            return "no output recorded: only scripts' output is kept"
        if not isinstance(digest, str) or not isinstance(size, int):
            return "no digest of the whole output: a record of an older torchmatrix, run it again"
        ended = outcome
        code = metrics.get("exit_code")
        if isinstance(code, int) and not isinstance(code, bool) and code != 0:
            ended += f" (exit code {code})"
        raised = metrics.get("raised")
        if isinstance(raised, str) and raised:
            ended += ": " + _one_line(raised)
        elif outcome in (Outcome.CRASH, Outcome.TIMEOUT, Outcome.ERROR) and message.strip():
            ended += ": " + message.strip().splitlines()[0]
        whole = metrics.get("raised_sha256")  # a message longer than a record keeps: all of it, by digest
        if isinstance(whole, str) and whole:
            ended += f" (all {whole[:16]})"
        cut = metrics.get("output_truncated") is True
        return cls(ended, digest, size, cut, tuple(str(line) for line in lines))

    def category(self) -> str:
        """What is compared, as one text: equal texts, equal runs."""
        return "\n".join([self.ended, f"sha256 {self.sha256}, {self.size} bytes{', cut' if self.cut else ''}",
                          *self.lines])  # fmt: skip

    @classmethod
    def from_category(cls, text: str) -> Printed:
        ended, digest, *lines = text.split("\n")
        sha256, _, size = digest.removeprefix("sha256 ").partition(", ")
        return cls(ended, sha256, int(size.split(" ")[0]), size.endswith(", cut"), tuple(lines))

    def describe(self, limit: int = 100) -> str:
        """``fail: AssertionError: 0.96, prints 'x'``; where the record kept only its end, how much was printed."""
        ended = self.ended if len(self.ended) <= limit else self.ended[: limit - 1] + "…"
        shown = describe(self.lines, limit)
        if self.cut:
            shown = f"prints {self.size} bytes, of which {KEPT}: {shown.removeprefix('prints ')}"
        return f"{ended}, {shown}"


def _one_line(text: str) -> str:
    """``text`` on one line, told apart from any other: backslashes and line ends escaped."""
    return text.replace("\\", "\\\\").replace("\r", "\\r").replace("\n", "\\n")


def describe(lines: Sequence[str], limit: int = 100) -> str:
    """What was printed, in a few words: ``prints 'a' / 'b'`` when it is short, else its length and last line."""
    if not lines:
        return "prints nothing"
    shown = " / ".join(repr(line) for line in lines)
    if len(lines) <= 3 and len(shown) <= limit:
        return f"prints {shown}"
    if len(lines) == 1:
        return f"prints 1 line of {len(lines[0])} characters, {_shortened(lines[0], limit // 2)!r}"
    last = _shortened(lines[-1], limit // 2)
    return f"prints {len(lines)} lines, the last {last!r}"


def _shortened(line: str, limit: int) -> str:
    return line if len(line) <= limit else line[: limit - 1] + "…"


def what_changed(old: str, new: str) -> list[str]:
    """Between two categories: how the ending changed, and the first line printed that did, or that the output
    changed before the end kept."""
    before, after = Printed.from_category(old), Printed.from_category(new)
    said = []
    if before.ended != after.ended:
        shown = f"{_around(before.ended, after.ended)} → {_around(after.ended, before.ended)}"
        said.append(f"how it ended, from OLD to NEW: {shown}")
    difference = first_difference(before.lines, after.lines)
    if difference:
        where = f" (of {KEPT})" if before.cut or after.cut else ""
        said.append(f"what it printed, from OLD to NEW{where}: {difference}")
    elif before.sha256 != after.sha256 and (before.cut or after.cut):
        said.append(
            f"what it printed, from OLD to NEW: {KEPT} is the same, what came before it is not "
            f"({before.size} bytes → {after.size} bytes in all)"
        )
    elif before.sha256 != after.sha256:  # lines read alike, bytes do not: line ends, controls, not UTF-8
        said.append(
            "what it printed, from OLD to NEW: bytes its lines do not show (a line's end, \\r or \\f, or bytes "
            f"that are not UTF-8; {before.size} bytes → {after.size} bytes in all): compare its output byte by byte"
        )
    return said


def first_difference(old: Sequence[str], new: Sequence[str]) -> str:
    """The first line where two outputs differ: ``line 1: 'tensor(0.)' → 'tensor(28.)'``; '' when none does.

    A long line is shown around where it changes.
    """
    for number, (before, after) in enumerate(itertools.zip_longest(old, new), start=1):
        if before != after:
            return f"line {number}: {_around(before, after)} → {_around(after, before)}"
    return ""


def _around(line: str | None, other: str | None, width: int = 60) -> str:
    """``line`` as shown beside ``other``: whole if short, else from a little before where they differ."""
    if line is None:
        return "nothing"
    if len(line) <= width:
        return repr(line)
    start = next(
        (i for i, (a, b) in enumerate(zip(line, other or "", strict=False)) if a != b), min(len(line), len(other or ""))
    )
    start = max(0, start - 10)
    shown = ("…" if start else "") + line[start : start + width] + ("…" if start + width < len(line) else "")
    return repr(shown)
