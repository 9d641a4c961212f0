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


def describe(lines: Sequence[str], limit: int = 60) -> str:
    """What was printed, in a few words: ``prints 'tensor(28.)'``, ``prints 3 lines, the last 'x'``."""
    if not lines:
        return "prints nothing"
    last = lines[-1] if len(lines[-1]) <= limit else lines[-1][: limit - 1] + "…"
    return f"prints {last!r}" if len(lines) == 1 else f"prints {len(lines)} lines, the last {last!r}"
