"""Same inputs, or no comparison: whether a check's result changed between two records, and on how many samples.

A check is one entry of a record's ``metrics.checks`` (a dict with a ``name``).
Two forms are compared:

- A check with ``samples``, a list of ``{"input": digest, "output": digest}``
  (the operator sweep's): sample by sample, only where both records hold a
  sample of that input digest, and both have its output (an output of None,
  one that is not reproducible, is no output). A sample that one release
  raised on (``raised <Error>``) and the other did not is *refused*: the
  release cannot take it (a keyword it lacks, a dtype it has no kernel for),
  counted apart, neither compared nor a change. Replayed from a store of
  captured samples, every release has the same inputs; where an operator's
  samples were generated in each release, the inputs that did not change are
  all that can be compared.
- Any other check: its ``observed`` value, by type and bits
  (:func:`torchmatrix.checks.value_key`), when both records were made from
  the same probe file (their ``inputs.probe``): such a probe fixes its inputs
  itself (constants, seeded generators).

Everything here comes from result files, so a value of the wrong type is no
sample, never an error.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..checks import value_key


@dataclass(frozen=True)
class Comparison:
    """How one check compares between two records: how many of its samples could be compared, how many changed,
    and how many of the same inputs one of the two refused (raised on) and the other took."""

    compared: int
    changed: int
    refused: int = 0

    @property
    def comparable(self) -> bool:
        return self.compared > 0


NOT_COMPARABLE = Comparison(0, 0)
RAISED = "raised "
"""How a sample's output says the operator raised on it (``raised TypeError``)."""


def compare(before: Mapping[str, Any], after: Mapping[str, Any], same_probe: bool) -> Comparison:
    """Compare check ``after`` with check ``before`` (the same check of an earlier record).

    ``same_probe``: whether the two records were made from the same probe file.
    """
    earlier, later = samples_of(before), samples_of(after)
    if earlier is not None and later is not None:
        return _compare_samples(earlier, later)
    if earlier is None and later is None and same_probe and "observed" in before and "observed" in after:
        return Comparison(1, int(value_key(before["observed"]) != value_key(after["observed"])))
    return NOT_COMPARABLE


def samples_of(check: Mapping[str, Any]) -> list[tuple[str, str | None]] | None:
    """The (input, output) digests of a check's samples; None for a check without ``samples``."""
    samples = check.get("samples")
    if not isinstance(samples, list):
        return None
    return [
        (sample["input"], sample.get("output") if isinstance(sample.get("output"), str) else None)
        for sample in samples
        if isinstance(sample, dict) and isinstance(sample.get("input"), str)
    ]


def changed_samples(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """The samples of check ``after`` whose output changed from the same input in check ``before``, as
    ``(input, output before, output after)``, in ``after``'s order: those :func:`compare` counts as changed."""
    earlier, later = samples_of(before), samples_of(after)
    if earlier is None or later is None:
        return []
    return [(digest, old, new) for digest, old, new, refused in _matched(earlier, later) if not refused and old != new]


def _compare_samples(earlier: list[tuple[str, str | None]], later: list[tuple[str, str | None]]) -> Comparison:
    compared = changed = refused = 0
    for _, before, output, was_refused in _matched(earlier, later):
        if was_refused:
            refused += 1
            continue
        compared += 1
        changed += before != output
    return Comparison(compared, changed, refused)


def _matched(
    earlier: list[tuple[str, str | None]], later: list[tuple[str, str | None]]
) -> Iterator[tuple[str, str, str, bool]]:
    """Each sample of ``later`` with an output whose input ``earlier`` holds with an output: (input, its output
    before, after, whether one of the two raised on it and the other did not)."""
    outputs: dict[str, str | None] = {}
    for digest, output in earlier:
        outputs.setdefault(digest, output)
    for digest, output in later:
        before = outputs.get(digest)
        if before is None or output is None:
            continue
        yield digest, before, output, before.startswith(RAISED) != output.startswith(RAISED)
