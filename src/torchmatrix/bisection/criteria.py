"""How a stored result becomes what bisect compares: an outcome, a metric's side of a threshold, its value, or output.

By outcome, a release shows its probe's outcome (``pass``, ``fail``,
``error``…). By metric, it shows which side of the threshold the metric is on
(``above 1e-06`` or ``not above 1e-06``), so a numeric drift can be bisected
while every release still passes; or, without a threshold, the metric's value
itself (an output digest), so that the first release with NEW's value is
found. A check (``--check NAME``, a ``name`` in ``metrics.checks``, such as one
operator of the sweep) narrows either to that check: its outcome, or a metric
inside it. By output, it shows the outcome and what a script or a test
printed and raised, by digest, all of it, with only what is per-process gone
(:mod:`torchmatrix.worker.printed`), so that a script that only prints can be
bisected. A cell that did not run, a device the build or machine lacks, and
a check, metric or output the record does not hold make a release untestable.
"""

from __future__ import annotations

import hashlib
import importlib
import math
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..checks import check_outcome, checks_of, value_key
from ..core import Kind, Outcome, Record, holds
from ..results import CellResult
from ..worker import printed, repeats
from .search import Observation

VALUE_SHOWN = 40
"""How much of a compared value the progress lines show."""


@dataclass(frozen=True)
class Criterion:
    """Compare by outcome (``metric`` None), by ``metric`` above or below ``threshold``, by ``metric``'s value
    (``threshold`` None), of the record or of its check named ``check``; or ``by_output``."""

    metric: str | None = None
    threshold: float | None = 0.0
    above: bool = True
    check: str | None = None
    by_output: bool = False

    @property
    def by_value(self) -> bool:
        return self.metric is not None and self.threshold is None

    def describe(self) -> str:
        if self.by_output:
            return "by output"
        where = f" of check {self.check!r}" if self.check is not None else ""
        if self.metric is None:
            return f"by the outcome{where}" if where else "by outcome"
        if self.threshold is None:
            return f"by the value of {self.metric}{where}"
        return f"by {self.metric}{where} {'above' if self.above else 'below'} {self.threshold:g}"

    def label(self, category: str | None) -> str:
        """A category as a person reads it: ``pass``, ``max_abs_diff above 1e-06``, ``observed = "5fd7…"``."""
        if self.by_output and category is not None:
            return printed.Printed.from_category(category).describe()
        if self.metric is None:
            return str(category)
        return f"{self.metric} = {_shortened(str(category))}" if self.by_value else f"{self.metric} {category}"

    def same(self, one: str, other: str) -> bool:
        """Whether two categories are one outcome: equal texts, or by output, :func:`printed.same` (one release
        may be the same as two that are not: where its runs print what varies, what it shows of either is lost)."""
        return printed.same(one, other) if self.by_output else one == other

    def to_json(self) -> dict[str, Any]:
        if self.by_output:
            return {"by": "output"}
        scope = {"check": self.check} if self.check is not None else {}
        if self.metric is None:
            return {"by": "outcome", **scope}
        if self.threshold is None:
            return {"by": "value", "metric": self.metric, **scope}
        return {"by": "metric", "metric": self.metric, "above" if self.above else "below": self.threshold, **scope}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Criterion:
        """What :meth:`to_json` wrote; ValueError for anything else."""
        check = data.get("check")
        if check is not None and not isinstance(check, str):
            raise ValueError("'compare' names a check that is no text")
        rest = {key: value for key, value in data.items() if key != "check"}
        if data == {"by": "output"}:
            return cls(by_output=True)
        if rest == {"by": "outcome"}:
            return cls(check=check)
        metric = rest.get("metric")
        if not isinstance(metric, str):
            raise ValueError(f"'compare' is neither by outcome nor by a metric: {data!r}"[:200])
        if rest == {"by": "value", "metric": metric}:
            return cls(metric, None, check=check)
        sides = [side for side in ("above", "below") if side in rest]
        if rest.get("by") != "metric" or len(sides) != 1 or set(rest) != {"by", "metric", *sides}:
            raise ValueError(f"'compare' is neither by outcome nor by a metric: {data!r}"[:200])
        threshold = rest[sides[0]]
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
            raise ValueError("'compare' names no number for its threshold")
        return cls(metric, float(threshold), sides[0] == "above", check)


SKIP_EXIT = 125
"""The exit status with which a script says it does not apply (``git bisect run``'s skip)."""
NAME_ONE = "name one of them"
"""What to do when a name holds several tests: a file, class or parametrized test named whole asks each of its tests
as the ends run them, so this is said of one that holds several only at some release."""


PYTEST_USAGE_ERROR = 4
"""pytest's exit code for a command it refuses as given (``ExitCode.USAGE_ERROR``): a node id its file does not hold
(``ERROR: not found: …``), an option it does not know."""
_PROTOCOL: Any = importlib.import_module("torchmatrix.envside.torchmatrix_worker.protocol")
BEFORE_TESTS: str = _PROTOCOL.BEFORE_TESTS
"""The metric of a test file's record where pytest ended before it ran a test: no test printed anything."""
CONFTEST_FAILED: str = _PROTOCOL.CONFTEST_FAILED
"""The metric naming the ``conftest.py`` that failed to import as pytest began (exit code 4 too): no name or option
refused, and a release whose torch has what it imports may hold it."""
CORRECT_IT = "correct the name or the option (`pytest --collect-only -q FILE` lists a file's tests)"
"""What to do when pytest refused the command as given at both ends: no wider range helps."""


def not_one_test(name: str, tests: list[str]) -> str:
    """Why ``name`` (a test file, a class, a parametrized test's id) cannot be bisected as one record."""
    shown = ", ".join(tests[:3]) + (f", … {len(tests)} in all" if len(tests) > 3 else "")
    return f"{name} is not one test but holds {len(tests)} ({shown}): {NAME_ONE}"


def records_under(result: CellResult, name: str, device: str) -> list[Record]:
    """The records on ``device`` of the tests ``name`` holds (:func:`torchmatrix.core.holds`); none when ``name``
    is one record's own."""
    return [record for record in result.records if record.device == device and holds(name, record.probe)]


def record_of(result: CellResult, name: str, device: str) -> Record | None:
    """The record of ``name`` on ``device``; for a test that has none, the error (or skip) pytest reported of the
    module or class that holds it, what kept its tests from being collected (an import that now fails). Never a
    holder that ran as a script: pytest collected no test from it, so none of its tests has an outcome there."""
    records = {record.probe: record for record in result.records if record.device == device}
    if name in records:
        return records[name]
    path, _, _ = name.partition("[")  # a parameter may hold "::" itself
    parts = path.split("::")
    holders = ("::".join(parts[:end]) for end in range(len(parts) - 1, 0, -1))
    return next((records[holder] for holder in holders if holder in records and _kept_its_tests(records[holder])), None)


def _kept_its_tests(holder: Record) -> bool:
    """Whether ``holder``, the record of a module or class, is pytest's of what kept its tests from running (or
    one of a torchmatrix before records said their kind)."""
    return holder.kind in (Kind.PYTEST, None) and holder.outcome in (Outcome.ERROR, Outcome.UNAVAILABLE)


def observe(result: CellResult, probe: str, device: str, criterion: Criterion) -> Observation:
    """What ``result`` shows for ``probe`` on ``device`` under ``criterion``.

    A record of repeated runs (:mod:`torchmatrix.worker.repeats`) shows what all its
    runs show; where they disagree (``unstable``, a metric on both sides of the
    threshold, a check or a value that differs) the release is untestable, and
    the observation says so.
    """
    if result.outcome is not None:
        return Observation(None, f"{result.outcome.value}: {_first_line(result.message)}".rstrip(": "))
    record = record_of(result, probe, device)
    if record is None:
        under = records_under(result, probe, device)
        if under:
            return Observation(None, not_one_test(probe, [each.probe for each in under]))
        return Observation(None, f"the result holds no record of {probe} on {device}")
    runs = repeats.runs_of(record)
    if record.outcome is Outcome.UNAVAILABLE and record.metrics.get("exit_code") == SKIP_EXIT:
        return Observation(None, f"skipped: the script exited with {SKIP_EXIT} (as for git bisect run: it does not "
                                 "apply to this release)", len(runs))  # fmt: skip
    if record.outcome is Outcome.UNAVAILABLE:
        return Observation(None, f"{device} unavailable: {_first_line(record.message)}".rstrip(": "), len(runs))
    if _ended_before_a_test(record) and (criterion.by_output or _refused_as_given(record)):
        return _ended_early(record, len(runs), criterion)
    if criterion.by_output:
        return _output_observed(record)
    if criterion.metric is None and criterion.check is None:
        return _by_outcome(record, len(runs))
    if criterion.check is None and criterion.threshold is not None:
        values = [metric_value(run.get("metrics") or {}, str(criterion.metric)) for run in runs]
        if None in values:
            why = f" ({_first_line(record.message)})" if record.message else ""
            return Observation(None, f"{record.outcome.value}, no metric {criterion.metric!r}{why}", len(runs))
        return _by_metric([value for value in values if value is not None], criterion)
    seen = [_in_run(run.get("metrics") or {}, record, criterion) for run in runs]
    missing = next((text for category, text in seen if category is None), None)
    if missing is not None:
        return Observation(None, missing, len(runs))
    counts = Counter(category for category, _ in seen)
    if len(counts) > 1:
        split = ", ".join(f"{_shortened(str(category))} in {count}" for category, count in counts.most_common())
        return Observation(None, f"unstable: {split} of {len(runs)} runs", len(runs), True)
    category, text = seen[0]
    return Observation(category, text, len(runs))


def _ended_early(record: Record, runs: int, criterion: Criterion) -> Observation:
    """A record of pytest ending before it ran a test: an error as by outcome, marked ``refused`` where pytest refused
    the command as given (a node id a release's parameters do not hold), which a release that holds the test differs
    from. By output, a release that printed nothing, no test's output, and ended so: what --by-output compares with
    another release's output (:class:`printed.Printed`), never a category it cannot read."""
    seen = replace(_by_outcome(record, runs), refused=_refused_as_given(record))
    if not criterion.by_output:
        return seen
    release = printed.one_release([_printed_nothing(run) for run in repeats.runs_of(record)])
    if isinstance(release, str):  # its runs ended in other words (a time, a count): each process's own, no release's
        return Observation(None, f"unstable: {release}", runs, True)
    return replace(seen, category=release.category())


def _printed_nothing(run: Mapping[str, Any]) -> printed.Printed:
    """A run (:func:`repeats.runs_of`) of pytest ending before it ran a test as --by-output compares it: it printed
    nothing, no test's output, and ended in pytest's error."""
    return printed.Printed(f"{run.get('outcome')}: {_first_line(str(run.get('message') or ''))}", NOTHING_PRINTED,
                           False, ())  # fmt: skip


def _ended_before_a_test(record: Record) -> bool:
    """Whether ``record`` is of a pytest run that ended before it ran a test (a name or an option it refused, a
    ``conftest.py`` that failed to import or called ``sys.exit(1)``), as the worker recorded it: its test never
    printed."""
    return record.outcome is Outcome.ERROR and record.metrics.get(BEFORE_TESTS) is True


def _refused_as_given(record: Record) -> bool:
    """Whether pytest refused the command as given (exit code 4 before a test, no ``conftest.py`` failed)."""
    failed = record.metrics.get(CONFTEST_FAILED)
    return _ended_before_a_test(record) and record.metrics.get("pytest_exit") == PYTEST_USAGE_ERROR and not failed


NOTHING_PRINTED = hashlib.sha256(b"").hexdigest()
"""The digest of all a run printed where it printed nothing."""


def _by_outcome(record: Record, runs: int) -> Observation:
    message = _first_line(record.message)
    if record.outcome is Outcome.UNSTABLE:
        return Observation(None, f"unstable: {message}", runs, unstable=True)
    return Observation(record.outcome.value, record.outcome.value + (f" ({message})" if message else ""), runs)


def _by_metric(values: list[float], criterion: Criterion) -> Observation:
    assert criterion.threshold is not None
    sides = Counter(_side(value, criterion.threshold, criterion.above) for value in values)
    if len(sides) > 1:
        split = ", ".join(f"{side} in {count}" for side, count in sides.most_common())
        return Observation(None, f"unstable: {criterion.metric} {split} of {len(values)} runs", len(values), True)
    (side,) = sides
    shown = f"{values[0]:g}" if len(set(values)) == 1 else f"{min(values):g} to {max(values):g}"
    return Observation(side, f"{criterion.metric} = {shown} ({side})", len(values))


def _in_run(metrics: Mapping[str, Any], record: Record, criterion: Criterion) -> tuple[str | None, str]:
    """(category, what a person reads) of one run's metrics; category None where the run holds nothing to compare."""
    why = f" ({_first_line(record.message)})" if record.message else ""
    scope: Mapping[str, Any] = metrics
    if criterion.check is not None:
        check = checks_of(Record(record.probe, record.device, record.outcome, dict(metrics), "", 0.0)).get(
            criterion.check
        )
        if check is None:
            return None, f"{record.outcome.value}, no check {criterion.check!r}{why}"
        if criterion.metric is None:
            outcome = check_outcome(check).value
            return outcome, f"check {criterion.check}: {outcome}"
        scope = check
    assert criterion.metric is not None
    if criterion.threshold is None:
        found = metric_found(scope, criterion.metric)
        if found is None:
            return None, f"{record.outcome.value}, no metric {criterion.metric!r}{why}"
        text = value_key(found)
        return text, f"{criterion.metric} = {_shortened(text)}"
    value = metric_value(scope, criterion.metric)
    if value is None:
        return None, f"{record.outcome.value}, no metric {criterion.metric!r}{why}"
    side = _side(value, criterion.threshold, criterion.above)
    return side, f"{criterion.metric} = {value:g} ({side})"


def _output_observed(record: Record) -> Observation:
    """How each run ended and the digest of all it printed (:class:`printed.Printed`), the runs as one release
    (:func:`printed.one_release`): where they cannot be one, unstable."""
    runs = repeats.runs_of(record)
    seen = [printed.Printed.of_run(str(run.get("outcome")), str(run.get("message") or ""), run.get("metrics") or {})
            for run in runs]  # fmt: skip
    missing = next((why for why in seen if isinstance(why, str)), None)
    if missing is not None:
        return Observation(None, f"{record.outcome.value}, {missing}", len(runs))
    release = printed.one_release([run for run in seen if isinstance(run, printed.Printed)])
    if isinstance(release, str):
        return Observation(None, f"unstable: {release}", len(runs), True)
    return Observation(release.category(), release.describe(), len(runs))


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
