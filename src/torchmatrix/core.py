"""The values every stage passes on: the devices, a probe, a (probe, device) pair, its record, the outcomes, a
cell's constraints with their rules.

The ground floor of the package: of torchmatrix it imports only the field checks of
:mod:`torchmatrix.util.storedjson`, which read a record's JSON, and every other module
takes these from here.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from .util.storedjson import checked

__all__ = [
    "CELL_OUTCOMES",
    "DEVICES",
    "RECORD_OUTCOMES",
    "STORED_OUTCOMES",
    "Constraint",
    "Kind",
    "MalformedRecord",
    "Outcome",
    "Pair",
    "PinSource",
    "Probe",
    "Record",
]

DEVICES = ("cpu", "cuda", "mps")
"""Every device a probe can run on, in the order tables show them (a matrix's ``devices: auto``)."""
MAX_REPEAT = 1000
"""The most runs of one (probe, device) pair a matrix's ``repeat:`` or ``--repeat`` may ask for."""


class Kind(str, Enum):
    """How a probe runs in a pair's process (:mod:`torchmatrix.matrix.kinds` tells them apart)."""

    MODULE = "module"
    """A file that defines ``run(device)``, which returns the record."""
    SCRIPT = "script"
    """A file run as ``python script.py`` would; its exit decides."""
    PYTEST = "pytest"
    """pytest tests (a file, folder or node id): a record per test."""
    SCRIPT_OR_TESTS = "script-or-tests"
    """A ``.py`` file without ``run(device)``: tests if pytest, asked in the cell, collects tests from it, else a
    script. Its records say which it ran as (:attr:`Record.kind`)."""

    @property
    def may_be_tests(self) -> bool:
        """Whether its records may be tests', named by their node ids."""
        return self in (Kind.PYTEST, Kind.SCRIPT_OR_TESTS)


@dataclass(frozen=True)
class Probe:
    """A probe: its name, where it lives, how it runs and on which devices.

    A probe is its path relative to the matrix's folder (``sub/repro.py``,
    ``tests/test_dot.py::test_grad``, ``tests/``), but a module or script of
    ``probes/``, which a matrix names by name (``autograd_dot``); each record
    of tests is named by its test's node id from ``root``.
    """

    name: str
    path: Path
    requires: tuple[str, ...] = ()
    """What it needs installed beside torch: its PEP 723 ``dependencies`` (:mod:`torchmatrix.matrix.pep723`)."""
    options: dict[str, Any] = field(default_factory=dict, hash=False)
    """What the matrix's ``probe_options`` gives it (plain JSON data; the probe reads it from
    :data:`torchmatrix.variables.PROBE_OPTIONS`). Its records depend on it: other options, other records."""
    kind: Kind = Kind.MODULE
    devices: tuple[str, ...] | None = None
    """The only devices it runs on (a script or tests that never read the device: cpu); None: the matrix's."""
    select: str = ""
    """pytest tests: what follows the file in the node id (``::test_grad``); '' for the whole file or folder."""
    root: Path | None = None
    """pytest tests: the folder their names are relative to (the matrix's), whichever root pytest finds for itself;
    the pairs run from :attr:`torchmatrix.matrix.Matrix.run_from`."""
    kind_reason: str = ""
    """Why it is of its kind, as its records say when the cell did not decide (:attr:`Record.kind_reason`)."""

    def runs_on(self, device: str) -> bool:
        return self.devices is None or device in self.devices

    @property
    def file_id(self) -> str:
        """The file's (or folder's) part of its tests' node ids: its path from :attr:`root` (``..`` and all)."""
        if self.root is None:
            return self.name
        return Path(os.path.relpath(self.path, self.root)).as_posix() + ("/" if self.name.endswith("/") else "")

    def test_named(self, sent: str) -> str | None:
        """The record name of the test a worker named ``sent`` (a node id from a root pytest chose: ``::test_grad``
        under ``-c other/pytest.ini``), as this file probe names its tests; None for a folder's or what is no test."""
        if "::" not in sent or self.name.endswith("/") or not self.kind.may_be_tests:
            return None
        return f"{self.file_id}::{sent.partition('::')[2]}"

    def covers(self, record_name: str) -> bool:
        """Whether a record named ``record_name`` is one this probe makes: its own name, or one of its tests."""
        if record_name == self.name or not self.kind.may_be_tests:
            return record_name == self.name
        if self.kind is Kind.SCRIPT_OR_TESTS:  # a file of probes/ is named by its stem, its tests from the root
            return record_name.startswith(f"{self.file_id}::")
        if self.name.endswith("/"):  # a folder
            return record_name.startswith(self.name)
        below = record_name[len(self.name) :] if record_name.startswith(self.name) else ""
        # a file's or a class's tests (``::test_grad``), or a test's parametrized cases (``[float32]``)
        return below.startswith("::") or ("::" in self.name and below.startswith("["))


def holds(holder: str, name: str) -> bool:
    """Whether the pytest node id ``holder`` holds the test ``name``: a folder's, a file's or a class's test, or a
    parametrized test's case (``test_grad[float32]``), as pytest names them."""
    if name == holder or not name.startswith(holder):
        return False
    return holder.endswith("/") or name[len(holder) :].startswith(("::", "["))


@dataclass(frozen=True)
class Pair:
    """One probe on one device: what a worker runs, and what a record answers for."""

    probe: Probe
    device: str


class PinSource(str, Enum):
    """Whose rule gives a cell a constraint."""

    KNOWN = "known"
    """torchmatrix's own: its known pins (``known_pins.yaml``)."""
    MATRIX = "matrix"
    """The matrix's ``pins:``."""


@dataclass(frozen=True)
class Constraint:
    """A constraint a cell is installed under (``numpy<2``), with the rule that gives it: whose the rule is, the
    torch releases it is for (``<2.3``), and its reason.

    The plan gives it and a result keeps it, so that what a cell was installed under is said in the words of the
    rule it had then, whatever the rules say now. Only :attr:`text` is of the cell's identity (its ``constraints``):
    the rest is words, which may be put better without making any record stale.
    """

    text: str
    source: PinSource
    torch: str
    reason: str = ""

    def to_json(self) -> dict[str, str]:
        """The constraint as a result file holds it, and :meth:`from_json` reads it."""
        return {"constraint": self.text, "source": self.source.value, "torch": self.torch, "reason": self.reason}

    @classmethod
    def from_json(cls, data: Any) -> Constraint:
        """The constraint ``data`` holds; ValueError naming the field that does not fit."""
        if not isinstance(data, dict):
            raise ValueError("not an object")
        source = checked(data, "source", str)
        if source not in {each.value for each in PinSource}:
            raise ValueError(f"source {source!r} is none of {', '.join(each.value for each in PinSource)}")
        return cls(
            text=checked(data, "constraint", str),
            source=PinSource(source),
            torch=checked(data, "torch", str),
            reason=checked(data, "reason", str),
        )


class Outcome(str, Enum):
    """Per (probe, device): the first nine. Per cell, before any probe runs: the last three.

    ``within-tolerance`` and ``stale`` are shown, never stored: a table's word for a ``pass`` whose probe
    records that its numbers were not bit-identical (``metrics.bit_identical`` false), and for a record whose
    identity is no longer what a run now would have (:func:`torchmatrix.freshness.marked_stale`).
    """

    PASS = "pass"
    WITHIN_TOLERANCE = "within-tolerance"
    FAIL = "fail"
    ERROR = "error"
    CRASH = "crash"
    TIMEOUT = "timeout"
    UNAVAILABLE = "unavailable"
    UNSTABLE = "unstable"
    """Repeated runs of the pair (``repeat``) disagreed: its message counts them (``3 pass, 2 fail``)."""
    STALE = "stale"
    """Made from what has changed since: its message says what it was and what changed."""
    NO_INTERPRETER = "no-interpreter"
    NO_WHEEL = "no-wheel"
    INSTALL_ERROR = "install-error"

    @property
    def symbol(self) -> str:
        return _SYMBOLS[self]

    @property
    def meaning(self) -> str:
        return _MEANINGS[self]

    @property
    def is_cell_outcome(self) -> bool:
        return self in CELL_OUTCOMES

    @property
    def is_stored(self) -> bool:
        """Whether a record or a result file may hold it; ``within-tolerance`` and ``stale`` are a view's alone."""
        return self not in (Outcome.WITHIN_TOLERANCE, Outcome.STALE)

    @property
    def noted(self) -> bool:
        """Whether a table cell showing it gets a note saying what happened."""
        return self not in {Outcome.PASS, Outcome.WITHIN_TOLERANCE, Outcome.UNAVAILABLE}


CELL_OUTCOMES = frozenset({Outcome.NO_INTERPRETER, Outcome.NO_WHEEL, Outcome.INSTALL_ERROR})
STORED_OUTCOMES = tuple(outcome for outcome in Outcome if outcome.is_stored)
"""Those a result file may hold: a record's and a cell's."""
RECORD_OUTCOMES = tuple(outcome for outcome in STORED_OUTCOMES if not outcome.is_cell_outcome)
"""Those a record may hold. The worker sends each but ``unstable``, which :mod:`torchmatrix.worker.repeats` makes
(its own list, ``envside/torchmatrix_worker/protocol.py``, is checked against this one by the tests)."""

_SYMBOLS = {
    Outcome.PASS: "✓",
    Outcome.WITHIN_TOLERANCE: "≈",
    Outcome.FAIL: "✗",
    Outcome.ERROR: "E",
    Outcome.CRASH: "☠",
    Outcome.TIMEOUT: "⏱",
    Outcome.UNAVAILABLE: "–",
    Outcome.UNSTABLE: "±",
    Outcome.STALE: "↻",
    Outcome.NO_INTERPRETER: "no-py",
    Outcome.NO_WHEEL: "no-whl",
    Outcome.INSTALL_ERROR: "inst-err",
}

_MEANINGS = {
    Outcome.PASS: "the probe's numbers are right (and bit-identical, where the probe records bit-identity)",
    Outcome.WITHIN_TOLERANCE: "right within the rounding tolerance, but not bit-identical",
    Outcome.FAIL: "the probe ran and its numbers are wrong",
    Outcome.ERROR: "the probe raised an exception",
    Outcome.CRASH: "the process died while the probe ran (e.g. a segfault)",
    Outcome.TIMEOUT: "the probe ran past the time limit and was stopped",
    Outcome.UNAVAILABLE: "this torch build or machine has no such device",
    Outcome.UNSTABLE: "repeated runs of the probe gave different outcomes",
    Outcome.STALE: "made from what has changed since (its probe, a file it read, the matrix, the build): re-run it",
    Outcome.NO_INTERPRETER: "no Python on this machine fits this torch release",
    Outcome.NO_WHEEL: "the index has no wheel of this release for this platform",
    Outcome.INSTALL_ERROR: "installing torch into the cell's environment failed",
}


class MalformedRecord(ValueError):
    """JSON that is no record (:meth:`Record.from_json`): the message names the field and what is wrong with it."""


@dataclass(frozen=True)
class Record:
    """The outcome of one probe on one device, with its numbers."""

    probe: str
    device: str
    outcome: Outcome
    metrics: dict[str, Any]
    message: str
    duration: float
    inputs: dict[str, Any] = field(default_factory=dict)
    """What it was made from (:func:`torchmatrix.identity.record_inputs`): when they change, it is re-measured."""
    kind: Kind | None = None
    """What its probe ran as: a module, a script, or tests (as pytest said, in the cell, of a file without
    ``run(device)``); None in a record stored before records said."""
    kind_reason: str = ""
    """Why: ``it defines run(device)``, ``pytest collected 3 tests from it``, ``pytest collected no test from it``."""

    @property
    def shown(self) -> Outcome:
        """What every view shows for it (terminal, Markdown, HTML alike): its outcome, a pass that records no
        bit-identity told apart."""
        if self.outcome is Outcome.PASS and self.metrics.get("bit_identical") is False:
            return Outcome.WITHIN_TOLERANCE
        return self.outcome

    def to_json(self) -> dict[str, Any]:
        """The record as a result file holds it, and :meth:`from_json` reads it."""
        return dict(asdict(self), outcome=self.outcome.value, kind=self.kind.value if self.kind else None)

    @classmethod
    def from_json(cls, data: Any) -> Record:
        """The record ``data`` holds: a result file's, or the worker's with what the runner adds (device, inputs).

        Every field is checked for its type, not converted; raises :class:`MalformedRecord` saying which is
        wrong. Each reader reacts its own way: the runner makes the pair's record an ``error`` that says why,
        :mod:`torchmatrix.results` refuses the file.
        """
        if not isinstance(data, dict):
            raise MalformedRecord("not an object")
        try:
            probe = checked(data, "probe", str)
            return cls(
                probe=probe,
                device=checked(data, "device", str),
                outcome=_record_outcome(checked(data, "outcome", str)),
                metrics=_checks_named_once(probe, checked(data, "metrics", dict)),
                message=checked(data, "message", str),
                duration=float(checked(data, "duration", (int, float))),
                inputs=checked(data, "inputs", dict),
                kind=_kind(_optional(data, "kind")),
                kind_reason=_optional(data, "kind_reason") or "",
            )
        except ValueError as exc:
            raise MalformedRecord(str(exc)) from None


def _optional(data: dict[str, Any], key: str) -> str | None:
    """``data[key]``, text, or None where a record stored before it was written holds none."""
    text: str | None = checked({key: data.get(key)}, key, str, optional=True)
    return text


def _kind(value: str | None) -> Kind | None:
    """The kind ``value`` names (None: a record stored before records said), else ValueError."""
    if value is None:
        return None
    try:
        return Kind(value)
    except ValueError:
        raise ValueError(f"kind {value!r} is none of {', '.join(kind.value for kind in Kind)}") from None


def _record_outcome(value: str) -> Outcome:
    """The outcome ``value`` names, if a record may hold it (:data:`RECORD_OUTCOMES`), else ValueError."""
    try:
        outcome = Outcome(value)
    except ValueError:
        raise ValueError(f"outcome {value!r} is none of {', '.join(each.value for each in RECORD_OUTCOMES)}") from None
    if outcome.is_cell_outcome:
        raise ValueError(f"outcome {value!r} is a cell outcome")
    if not outcome.is_stored:
        raise ValueError(f"outcome {value!r} is shown only")
    return outcome


def _checks_named_once(probe: str, metrics: dict[str, Any]) -> dict[str, Any]:
    """``metrics``, unless two of its ``checks`` share a name (ValueError): ``bisect --check`` and the views find a
    check by its name, and which of the two they took would be a guess."""
    checks = metrics.get("checks")
    seen: set[str] = set()
    for check in checks if isinstance(checks, list) else []:
        name = check.get("name") if isinstance(check, dict) else None
        if not isinstance(name, str):
            continue  # a check without a name is found by none
        if name in seen:
            raise ValueError(f"{probe} records two checks named {name!r}: a check is found by its name")
        seen.add(name)
    return metrics
