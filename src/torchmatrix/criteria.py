"""How a stored result becomes what bisect compares: the outcome's category, or a metric against a threshold.

By outcome, a release shows its probe's outcome (``pass``, ``fail``,
``error``…). By metric, it shows which side of the threshold the metric is on
(``above 1e-06`` or ``not above 1e-06``), so a numeric drift can be bisected
while every release still passes. A cell that did not run, a device the build
or machine lacks, and a metric the record does not hold make a release
untestable.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from . import repeats
from .bisection import Observation
from .core import Outcome, Record
from .results import CellResult


@dataclass(frozen=True)
class Criterion:
    """Compare by outcome (``metric`` None), or by ``metric`` above or below ``threshold``."""

    metric: str | None = None
    threshold: float = 0.0
    above: bool = True

    def describe(self) -> str:
        if self.metric is None:
            return "by outcome"
        return f"by {self.metric} {'above' if self.above else 'below'} {self.threshold:g}"

    def label(self, category: str | None) -> str:
        """A category as a person reads it: ``pass``, or ``max_abs_diff above 1e-06``."""
        return str(category) if self.metric is None else f"{self.metric} {category}"

    def to_json(self) -> dict[str, Any]:
        if self.metric is None:
            return {"by": "outcome"}
        return {"by": "metric", "metric": self.metric, "above" if self.above else "below": self.threshold}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Criterion:
        """What :meth:`to_json` wrote; ValueError for anything else."""
        if data == {"by": "outcome"}:
            return cls()
        sides = [side for side in ("above", "below") if side in data]
        if data.get("by") != "metric" or len(sides) != 1 or set(data) != {"by", "metric", *sides}:
            raise ValueError(f"'compare' is neither by outcome nor by a metric: {data!r}"[:200])
        metric, threshold = data["metric"], data[sides[0]]
        if not isinstance(metric, str) or isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
            raise ValueError("'compare' names no metric, or no number for its threshold")
        return cls(metric, float(threshold), sides[0] == "above")


def observe(result: CellResult, probe: str, device: str, criterion: Criterion) -> Observation:
    """What ``result`` shows for ``probe`` on ``device`` under ``criterion``.

    A record of repeated runs (:mod:`torchmatrix.repeats`) shows what all its
    runs show; where they disagree (``unstable``, or a metric on both sides of
    the threshold) the release is untestable, and the observation says so.
    """
    if result.outcome is not None:
        return Observation(None, f"{result.outcome.value}: {_first_line(result.message)}".rstrip(": "))
    record = next((r for r in result.records if r.probe == probe and r.device == device), None)
    if record is None:
        return Observation(None, f"the result holds no record of {probe} on {device}")
    runs = repeats.runs_of(record)
    if record.outcome is Outcome.UNAVAILABLE:
        return Observation(None, f"{device} unavailable: {_first_line(record.message)}".rstrip(": "), len(runs))
    if criterion.metric is None:
        return _by_outcome(record, len(runs))
    values = [metric_value(run.get("metrics") or {}, criterion.metric) for run in runs]
    if None in values:
        why = f" ({_first_line(record.message)})" if record.message else ""
        return Observation(None, f"{record.outcome.value}, no metric {criterion.metric!r}{why}", len(runs))
    return _by_metric([value for value in values if value is not None], criterion)


def _by_outcome(record: Record, runs: int) -> Observation:
    message = _first_line(record.message)
    if record.outcome is Outcome.UNSTABLE:
        return Observation(None, f"unstable: {message}", runs, unstable=True)
    return Observation(record.outcome.value, record.outcome.value + (f" ({message})" if message else ""), runs)


def _by_metric(values: list[float], criterion: Criterion) -> Observation:
    sides = Counter(_side(value, criterion) for value in values)
    if len(sides) > 1:
        split = ", ".join(f"{side} in {count}" for side, count in sides.most_common())
        return Observation(None, f"unstable: {criterion.metric} {split} of {len(values)} runs", len(values), True)
    (side,) = sides
    shown = f"{values[0]:g}" if len(set(values)) == 1 else f"{min(values):g} to {max(values):g}"
    return Observation(side, f"{criterion.metric} = {shown} ({side})", len(values))


def metric_value(metrics: dict[str, Any], name: str) -> float | None:
    """The metric ``name`` in a record's metrics, or None.

    A dotted name is a path from the top (``checks.0.error``; numbers index
    lists). A plain name is every number stored under that key at any depth
    (e.g. in each entry of ``checks``), and the largest counts; NaN wins, as
    the worst value there is.
    """
    if "." in name:
        found = _at_path(metrics, name.split("."))
        values = [found] if found is not None else []
    else:
        values = list(_under_key(metrics, name))
    numbers = [number for number in (_number(value) for value in values) if number is not None]
    if not numbers:
        return None
    return math.nan if any(math.isnan(number) for number in numbers) else max(numbers)


def _side(value: float, criterion: Criterion) -> str:
    if math.isnan(value):
        return "nan"
    word = "above" if criterion.above else "below"
    beyond = value > criterion.threshold if criterion.above else value < criterion.threshold
    return f"{'' if beyond else 'not '}{word} {criterion.threshold:g}"


def _at_path(value: Any, parts: list[str]) -> Any:
    for part in parts:
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def _under_key(value: Any, key: str) -> Iterator[Any]:
    if isinstance(value, dict):
        for name, item in value.items():
            if name == key:
                yield item
            else:
                yield from _under_key(item, key)
    elif isinstance(value, list):
        for item in value:
            yield from _under_key(item, key)


def _number(value: Any) -> float | None:
    """A stored number; the worker stores non-finite floats as the strings 'nan', 'inf', '-inf'."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if value in ("nan", "inf", "-inf"):
        return float(value)
    return None


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""
