"""What a script printed, as `nox -s bisect -- … --by-output` compares it: normalised, so that noise is no change.

A script from a bug report prints what it computed, and often with it what
differs on every run: a memory address (``<MulBackward0 object at
0x7f3a2c1d5e80>``), a temporary path, a duration, the time of day, the torch
version itself. Each :data:`RULES` entry replaces one of these in every line,
in order; the cell's own torch version (as ``torch.__version__`` says it)
becomes ``<torch version>``; trailing spaces and trailing blank lines go.
Everything else counts: a digit that changes is a change.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    what: str
    pattern: re.Pattern[str]
    replacement: str
    example: str
    """A line it changes, for the docs and the tests."""

    def apply(self, line: str) -> str:
        return self.pattern.sub(self.replacement, line)


RULES = (
    Rule(
        "temporary paths: a pair's folder and what tempfile names",
        re.compile(r"(?:/[^\s/'\"]+)*/(?:torchmatrix-(?:worker|pair)-|tmp)[A-Za-z0-9_]{6,}(?:/[^\s'\"]*)?"),
        "<tmp>",
        "saved to /tmp/torchmatrix-worker-k2j4x9_a/torchmatrix-pair-9xq1b2c3/model.pt",
    ),
    Rule(
        "memory addresses",
        re.compile(r"\b0x[0-9a-fA-F]{6,}\b"),
        "0x…",
        "<MulBackward0 object at 0x7f3a2c1d5e80>",
    ),
    Rule(
        "dates and times of day",
        re.compile(r"\b(?:\d{4}-\d{2}-\d{2}[ T])?\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?"),
        "<clock>",
        "started 2026-01-05 14:03:27.118",
    ),
    Rule(
        "durations: a number with a unit of time",
        re.compile(r"\b\d+(?:\.\d+)?(?:e[-+]?\d+)?\s?(?:ns|us|µs|ms|s|sec|secs|seconds?|min|minutes?|h|hours?)\b"),
        "<duration>",
        "forward took 0.0312 s, backward 1.2ms",
    ),
)
TORCH_VERSION = "<torch version>"


def normalised(lines: Iterable[str], torch_versions: Sequence[str] = ()) -> list[str]:
    """``lines`` with :data:`RULES` applied, ``torch_versions`` replaced, and trailing spaces and blank lines gone."""
    versions = sorted({version for version in torch_versions if version}, key=len, reverse=True)  # 1.12.1+cpu first
    result = []
    for line in lines:
        for version in versions:
            line = line.replace(version, TORCH_VERSION)
        for rule in RULES:
            line = rule.apply(line)
        result.append(line.rstrip())
    while result and not result[-1]:
        result.pop()
    return result


def describe(lines: Sequence[str], limit: int = 100) -> str:
    """What was printed, in a few words: ``prints 'a' / 'b'`` when it is short, else its length and last line."""
    if not lines:
        return "prints nothing"
    shown = " / ".join(repr(line) for line in lines)
    if len(lines) <= 3 and len(shown) <= limit:
        return f"prints {shown}"
    last = lines[-1] if len(lines[-1]) <= limit // 2 else lines[-1][: limit // 2 - 1] + "…"
    return f"prints {len(lines)} lines, the last {last!r}"


def first_difference(old: Sequence[str], new: Sequence[str]) -> str:
    """The first line where two outputs differ: ``line 1: 'tensor(0.)' → 'tensor(28.)'``; '' when none does."""
    for number, (before, after) in enumerate(itertools.zip_longest(old, new), start=1):
        if before != after:
            return f"line {number}: {_shown(before)} → {_shown(after)}"
    return ""


def _shown(line: str | None) -> str:
    return "nothing" if line is None else repr(line)
