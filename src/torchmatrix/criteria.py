"""How a stored result becomes what bisect compares: the outcome's category, a metric against a threshold, or output.

By outcome, a release shows its probe's outcome (``pass``, ``fail``,
``error``…). By metric, it shows which side of the threshold the metric is on
(``above 1e-06`` or ``not above 1e-06``), so a numeric drift can be bisected
while every release still passes. By output, it shows the outcome and what a
script printed, normalised (:mod:`torchmatrix.printed`), so that a script that
only prints can be bisected. A cell that did not run, a device the build or
machine lacks, and a metric or output the record does not hold make a release
untestable.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from . import printed
from .bisection import Observation
from .core import Outcome, Record
from .results import CellResult


@dataclass(frozen=True)
class Criterion:
    """Compare by outcome (``metric`` None), by ``metric`` above or below ``threshold``, or ``by_output``."""

    metric: str | None = None
    threshold: float = 0.0
    above: bool = True
    by_output: bool = False

    def describe(self) -> str:
        if self.by_output:
            return "by output"
        if self.metric is None:
            return "by outcome"
        return f"by {self.metric} {'above' if self.above else 'below'} {self.threshold:g}"

    def label(self, category: str | None) -> str:
        """A category as a person reads it: ``pass``, ``max_abs_diff above 1e-06``, ``pass, prints 'tensor(28.)'``."""
        if self.by_output and category is not None:
            outcome, *lines = category.split("\n")
            return f"{outcome}, {printed.describe(lines)}"
        return str(category) if self.metric is None else f"{self.metric} {category}"

    def to_json(self) -> dict[str, Any]:
        if self.by_output:
            return {"by": "output"}
        if self.metric is None:
            return {"by": "outcome"}
        return {"by": "metric", "metric": self.metric, "above" if self.above else "below": self.threshold}


def observe(result: CellResult, probe: str, device: str, criterion: Criterion) -> Observation:
    """What ``result`` shows for ``probe`` on ``device`` under ``criterion``."""
    if result.outcome is not None:
        return Observation(None, f"{result.outcome.value}: {_first_line(result.message)}".rstrip(": "))
    record = next((r for r in result.records if r.probe == probe and r.device == device), None)
    if record is None:
        return Observation(None, f"the result holds no record of {probe} on {device}")
    if record.outcome is Outcome.UNAVAILABLE:
        return Observation(None, f"{device} unavailable: {_first_line(record.message)}".rstrip(": "))
    if criterion.by_output:
        return _output_observed(result, record, criterion)
    if criterion.metric is None:
        message = _first_line(record.message)
        return Observation(record.outcome.value, record.outcome.value + (f" ({message})" if message else ""))
    value = metric_value(record.metrics, criterion.metric)
    if value is None:
        why = f" ({_first_line(record.message)})" if record.message else ""
        return Observation(None, f"{record.outcome.value}, no metric {criterion.metric!r}{why}")
    side = _side(value, criterion)
    return Observation(side, f"{criterion.metric} = {value:g} ({side})")


def _output_observed(result: CellResult, record: Record, criterion: Criterion) -> Observation:
    """The outcome, with the message where it is not the output's end (an exception), then the lines printed."""
    lines = record.metrics.get("output")
    if not isinstance(lines, list):
        return Observation(None, f"{record.outcome.value}, no output recorded: only scripts' output is kept")
    versions = [str(result.environment.get("torch") or ""), result.torch]
    said = "" if record.outcome in (Outcome.PASS, Outcome.FAIL) else _first_line(record.message)
    outcome = record.outcome.value + (f": {printed.normalised([said], versions)[0]}" if said else "")
    category = "\n".join([outcome, *printed.normalised([str(line) for line in lines], versions)])
    return Observation(category, criterion.label(category))


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
