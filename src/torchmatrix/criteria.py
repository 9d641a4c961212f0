"""How a stored result becomes what bisect compares: an outcome, a metric's side of a threshold, or its value.

By outcome, a release shows its probe's outcome (``pass``, ``fail``,
``error``…). By metric, it shows which side of the threshold the metric is on
(``above 1e-06`` or ``not above 1e-06``), so a numeric drift can be bisected
while every release still passes; or, without a threshold, the metric's value
itself (an output digest), so that the first release with NEW's value is
found. A check (``--check NAME``, a ``name`` in ``metrics.checks``, such as one
operator of the sweep) narrows either to that check: its outcome, or a metric
inside it. A cell that did not run, a device the build or machine lacks, and a
check or metric the record does not hold make a release untestable.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .bisection import Observation
from .checks import check_outcome, checks_of
from .core import Outcome
from .results import CellResult

VALUE_SHOWN = 40
"""How much of a compared value the progress lines show."""


@dataclass(frozen=True)
class Criterion:
    """Compare by outcome (``metric`` None), by ``metric`` above or below ``threshold``, or by ``metric``'s value
    (``threshold`` None); of the record, or of its check named ``check``."""

    metric: str | None = None
    threshold: float | None = 0.0
    above: bool = True
    check: str | None = None

    @property
    def by_value(self) -> bool:
        return self.metric is not None and self.threshold is None

    def describe(self) -> str:
        where = f" of check {self.check!r}" if self.check is not None else ""
        if self.metric is None:
            return f"by the outcome{where}" if where else "by outcome"
        if self.threshold is None:
            return f"by the value of {self.metric}{where}"
        return f"by {self.metric}{where} {'above' if self.above else 'below'} {self.threshold:g}"

    def label(self, category: str | None) -> str:
        """A category as a person reads it: ``pass``, ``max_abs_diff above 1e-06``, ``observed = "5fd7…"``."""
        if self.metric is None:
            return str(category)
        return f"{self.metric} = {_shortened(str(category))}" if self.by_value else f"{self.metric} {category}"

    def to_json(self) -> dict[str, Any]:
        scope = {"check": self.check} if self.check is not None else {}
        if self.metric is None:
            return {"by": "outcome", **scope}
        if self.threshold is None:
            return {"by": "value", "metric": self.metric, **scope}
        return {"by": "metric", "metric": self.metric, "above" if self.above else "below": self.threshold, **scope}


def observe(result: CellResult, probe: str, device: str, criterion: Criterion) -> Observation:
    """What ``result`` shows for ``probe`` on ``device`` under ``criterion``."""
    if result.outcome is not None:
        return Observation(None, f"{result.outcome.value}: {_first_line(result.message)}".rstrip(": "))
    record = next((r for r in result.records if r.probe == probe and r.device == device), None)
    if record is None:
        return Observation(None, f"the result holds no record of {probe} on {device}")
    if record.outcome is Outcome.UNAVAILABLE:
        return Observation(None, f"{device} unavailable: {_first_line(record.message)}".rstrip(": "))
    why = f" ({_first_line(record.message)})" if record.message else ""
    scope: Mapping[str, Any] = record.metrics
    if criterion.check is not None:
        check = checks_of(record).get(criterion.check)
        if check is None:
            return Observation(None, f"{record.outcome.value}, no check {criterion.check!r}{why}")
        if criterion.metric is None:
            outcome = check_outcome(check).value
            return Observation(outcome, f"check {criterion.check}: {outcome}")
        scope = check
    if criterion.metric is None:
        message = _first_line(record.message)
        return Observation(record.outcome.value, record.outcome.value + (f" ({message})" if message else ""))
    if criterion.threshold is None:
        found = metric_found(scope, criterion.metric)
        if found is None:
            return Observation(None, f"{record.outcome.value}, no metric {criterion.metric!r}{why}")
        text = json.dumps(found, sort_keys=True)
        return Observation(text, f"{criterion.metric} = {_shortened(text)}")
    value = metric_value(scope, criterion.metric)
    if value is None:
        return Observation(None, f"{record.outcome.value}, no metric {criterion.metric!r}{why}")
    side = _side(value, criterion.threshold, criterion.above)
    return Observation(side, f"{criterion.metric} = {value:g} ({side})")


def metric_found(metrics: Mapping[str, Any], name: str) -> Any:
    """What ``metrics`` holds under ``name`` (a path if dotted, else the key at any depth, a list where several
    hold it); None where nothing does."""
    if "." in name:
        return _at_path(metrics, name.split("."))
    values = list(_under_key(metrics, name))
    values = [value for value in values if value is not None]
    return None if not values else values[0] if len(values) == 1 else values


def metric_value(metrics: Mapping[str, Any], name: str) -> float | None:
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


def _side(value: float, threshold: float, above: bool) -> str:
    if math.isnan(value):
        return "nan"
    word = "above" if above else "below"
    beyond = value > threshold if above else value < threshold
    return f"{'' if beyond else 'not '}{word} {threshold:g}"


def _shortened(text: str) -> str:
    return text if len(text) <= VALUE_SHOWN else text[: VALUE_SHOWN - 1] + "…"


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
