"""Repeated runs of each (probe, device) pair, merged into one record: its outcome, or ``unstable``.

A probe can be nondeterministic (atomics in a GPU reduction, a race, random
inputs without a seed): one run that passes says little. With ``repeat: N``
every pair runs N times, once in each of N rounds, and each round has workers
of its own (:func:`torchmatrix.cellrun.run_pairs`): no two runs of a pair share
a process, as two runs by hand do not. The N records of a pair become one:

- all N outcomes the same: that outcome, with the first run's metrics and
  message;
- any two different: ``unstable``, its message the counts and where a run of
  the most frequent outcome and one of the next first differ, in what they
  printed or else in their messages (``3 pass, 2 fail; first difference: its
  message, line 1: nothing → 'AssertionError: 0.31'``).

Either way the record keeps every run under ``metrics.repeats`` (outcome,
message, seconds, metrics), so that a metric can be compared run by run
(:mod:`torchmatrix.bisection.criteria`), and its duration is the longest run's: each run
had the whole timeout. What it read is what every run read (:func:`read_by_all`): a run
that a hash seed of its own led to another file, and that file changed, is a change. A record of one run is left
as it was.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from typing import Any

from .. import identity
from ..core import Outcome, Record
from . import printed

REPEATS = "repeats"
"""The key of the runs in a merged record's metrics."""

READ_OTHERWISE = "read otherwise by another run"
"""The digest of a file two runs of a pair found otherwise (one changed it, or it changed between them): none a
file has, so that the record is never current by it."""


def merged(records: Sequence[Record], repeat: int) -> list[Record]:
    """The records of ``repeat`` rounds of pairs, one merged record per record name and device, in the order of
    the first round.

    Grouped by name, not counted off: a pair of pytest tests makes a record per test.
    """
    if repeat == 1:
        return list(records)
    runs: dict[tuple[str, str], list[Record]] = {}
    for record in records:
        runs.setdefault((record.probe, record.device), []).append(record)
    return [merge(group) for group in runs.values()]


def merge(runs: Sequence[Record]) -> Record:
    """One record for the runs of one pair (see the module's docstring)."""
    first = dataclasses.replace(runs[0], inputs={**runs[0].inputs, identity.READ: read_by_all(runs)})
    each = [_run_json(run) for run in runs]
    longest = max(run.duration for run in runs)
    outcomes = Counter(run.outcome for run in runs)
    if len(outcomes) == 1:
        return dataclasses.replace(first, metrics={**first.metrics, REPEATS: each}, duration=longest)
    (usual, _), (other, _) = _ranked(outcomes)[:2]
    difference = first_difference(*(next(run for run in runs if run.outcome is kind) for kind in (usual, other)))
    message = counts(outcomes) + (f"; first difference: {difference}" if difference else "")
    return dataclasses.replace(
        first, outcome=Outcome.UNSTABLE, metrics={REPEATS: each}, message=message, duration=longest
    )


def read_by_all(runs: Sequence[Record]) -> dict[str, str | None] | None:
    """What the ``runs`` of one pair read, each file by what they found it to hold (:data:`READ_OTHERWISE` where
    two found it otherwise); None where what one of them read is not told, as then what they all read is not."""
    read: dict[str, str | None] = {}
    for run in runs:
        said = run.inputs.get(identity.READ)
        if not isinstance(said, dict):
            return None
        for path, digest in said.items():
            read[path] = digest if read.get(path, digest) == digest else READ_OTHERWISE
    return read


def counts(outcomes: Counter[Outcome]) -> str:
    """``3 pass, 2 fail``: the most frequent first, ties in the order of :class:`Outcome`."""
    return ", ".join(f"{count} {outcome.value}" for outcome, count in _ranked(outcomes))


def _ranked(outcomes: Counter[Outcome]) -> list[tuple[Outcome, int]]:
    """Each outcome and how often it came, the most frequent first, ties in the order of :class:`Outcome`."""
    order = list(Outcome)
    return sorted(outcomes.items(), key=lambda item: (-item[1], order.index(item[0])))


def first_difference(usual: Record, other: Record) -> str:
    """Where two runs that ended differently first differ: the first line they printed that does (a script's
    output, a test's captured output), else the first line of their messages; '' where both are alike."""
    before, after = (run.metrics.get("output") for run in (usual, other))
    if isinstance(before, list) and isinstance(after, list):
        said = printed.first_difference([str(line) for line in before], [str(line) for line in after])
        if said:
            return f"what it printed, {said}"
    said = printed.first_difference(usual.message.splitlines(), other.message.splitlines())
    return f"its message, {said}" if said else ""


def runs_of(record: Record) -> list[dict[str, Any]]:
    """Each run of the record as ``{outcome, message, duration, metrics}``; a record of one run is its own."""
    stored = record.metrics.get(REPEATS)
    if isinstance(stored, list) and stored and all(isinstance(run, dict) for run in stored):
        return stored
    return [_run_json(record)]


def _run_json(record: Record) -> dict[str, Any]:
    return {
        "outcome": record.outcome.value,
        "message": record.message,
        "duration": record.duration,
        "metrics": record.metrics,
    }
