"""Result files: one JSON file per cell and machine, versioned, written atomically.

``<output>/results/<machine>/<cell-id>.json``, and beside them the inputs the
machine's pairs share (:func:`inputs_path`). Merging machines is copying their
folders together. Every reader of a results folder goes through :func:`scan`:
a file that cannot be read (truncated, not JSON, another schema, a field of the
wrong type) is named in a warning and skipped, and a killed writer's temporary
file is never looked at.

A results folder holds whatever was copied into it, from any machine, so
:func:`read` trusts nothing it has not checked: the file is read with every
limit of :mod:`torchmatrix.util.storedjson`, each field's type is checked, and a
result that claims another machine than its folder's, or a finish later than
this machine's clock allows (:data:`CLOCK_SKEW`), is refused instead of
shadowing the real one.
"""

from __future__ import annotations

import dataclasses
import errno
import re
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from .core import Constraint, MalformedRecord, Outcome, Record
from .identity import HARDWARE, LIMITS, describe_hardware, maker, record_inputs
from .util import atomicfile, safetext, storedjson
from .util.storedjson import MAX_FILE_BYTES, checked, checked_time, checked_version, moment

__all__ = ["SCHEMA_VERSION", "CellResult", "Scan", "read", "scan", "latest"]

SCHEMA_VERSION = 2
"""2: each record carries the inputs it was made from; a result may say the rules of its constraints
(``constrained_by``), which older ones lack and older readers pass over. 1: the cell's inputs stood for all its
records (read as 2)."""
INSTALLED_SESSION = "probe-installed"
"""The ``session`` of a result made in a torch installed already (``nox -s probe-installed``), not by a cell."""
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._+-]+")

CLOCK_SKEW = timedelta(hours=1)
"""How far a result's finish may lie ahead of this machine's clock: machines' clocks disagree a little.
A result further in the future would win over every real re-run of its cell until then."""


def safe_name(name: str) -> str:
    """A name usable as one path component everywhere."""
    return _SAFE_NAME.sub("_", name).strip("._") or "machine"


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class NewerSchema(ValueError):
    """A result file written by a newer torchmatrix: unreadable here, and never to be replaced from here."""


@dataclass(frozen=True)
class CellResult:
    """Everything one cell produced on one machine."""

    machine: str
    cell_id: str
    torch: str
    python: str | None
    python_request: str | None
    session: str
    outcome: Outcome | None
    """A cell outcome (no-wheel, no-interpreter, install-error); None when the probes ran."""
    message: str
    records: tuple[Record, ...]
    environment: dict[str, Any] = field(default_factory=dict)
    inputs: dict[str, Any] = field(default_factory=dict)
    """What the run that wrote the file was asked to do (its probes and their hashes, devices, requirements, …)."""
    started_at: str = ""
    finished_at: str = ""
    constrained_by: tuple[Constraint, ...] | None = None
    """The constraints its cell was installed under, each with the rule that gave it and the rule's reason then;
    None where the result does not say (one of a torchmatrix before it did, or of a torch installed already).
    Words, not inputs: its ``inputs`` hold the constraints themselves, which are what freshness compares."""
    path: Path | None = field(default=None, compare=False, repr=False)
    """The file it was read from (:func:`read` sets it); not stored in the file."""

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        del data["path"]
        data["schema"] = SCHEMA_VERSION
        data["outcome"] = self.outcome.value if self.outcome else None
        data["records"] = [record.to_json() for record in self.records]
        given = self.constrained_by
        data["constrained_by"] = None if given is None else [constraint.to_json() for constraint in given]
        return data

    @classmethod
    def from_json(cls, data: Any) -> CellResult:
        """Build from parsed JSON; raises ValueError with the reason when it does not fit the schema.

        Every field is checked for its type, not converted: a file that does not say exactly what this
        schema says is refused, never read as something it is not.
        """
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        if data.get("schema") == 1 and type(data["schema"]) is int:
            data = _from_schema_1(data)
        schema = data.get("schema")
        if type(schema) is int and schema > SCHEMA_VERSION:
            newer = f"schema {schema} is newer than this torchmatrix reads ({SCHEMA_VERSION}); upgrade torchmatrix"
            raise NewerSchema(newer)
        if type(schema) is not int or schema != SCHEMA_VERSION:
            raise ValueError(f"schema {schema!r} is not {SCHEMA_VERSION}")
        if storedjson.SEAL not in data and _since_seals(data):
            raise ValueError(
                f"its {storedjson.SEAL} was removed, which every result that records the pairs' resource limits "
                "has: it was changed after torchmatrix wrote it; run what made it again, or delete the file"
            )
        data = storedjson.unsealed(data)
        try:
            outcome = checked(data, "outcome", str, optional=True)
            cell_outcome = Outcome(outcome) if outcome else None
            if cell_outcome is not None and not cell_outcome.is_cell_outcome:
                raise ValueError(f"outcome {outcome!r} is not a cell outcome")
            records = checked(data, "records", list)
            if cell_outcome is not None and records:  # never written so: a cell outcome would hide what ran
                raise ValueError(f"the cell outcome {outcome!r} comes with records, which it would hide")
            return cls(
                machine=checked(data, "machine", str),
                cell_id=checked(data, "cell_id", str),
                torch=checked_version(data, "torch"),
                python=checked(data, "python", str, optional=True),
                python_request=checked(data, "python_request", str, optional=True),
                session=checked(data, "session", str),
                outcome=cell_outcome,
                message=checked(data, "message", str),
                records=_unique(tuple(_record(item, f"records[{index}]") for index, item in enumerate(records))),
                environment=checked(data, "environment", dict),
                inputs=checked(data, "inputs", dict),
                started_at=checked(data, "started_at", str),
                finished_at=checked_time(data, "finished_at"),
                constrained_by=_constrained_by(data),
            )
        except ValueError as exc:
            raise ValueError(f"does not fit schema {SCHEMA_VERSION}: {exc}") from None


def _since_seals(data: dict[str, Any]) -> bool:
    """Whether ``data`` was written by a torchmatrix that seals what it writes: it records the pairs' resource
    limits (:data:`torchmatrix.identity.LIMITS`), as every run since does, the cell's or any record's."""
    given = data.get("records")
    records = given if isinstance(given, list) else []
    found = [data.get("inputs"), *(item.get("inputs") for item in records if isinstance(item, dict))]
    return any(isinstance(inputs, dict) and LIMITS in inputs for inputs in found)


def _unique(records: tuple[Record, ...]) -> tuple[Record, ...]:
    """``records``, unless two are of one (probe, device): which would stand for it cannot be told."""
    seen: set[tuple[str, str]] = set()
    for index, record in enumerate(records):
        if (record.probe, record.device) in seen:
            raise ValueError(f"records[{index}] repeats {record.probe!r} on {record.device!r}")
        seen.add((record.probe, record.device))
    return records


def _from_schema_1(data: dict[str, Any]) -> dict[str, Any]:
    """A schema-1 file as schema 2 says it: the cell's inputs, which all its records shared, given to each record."""
    inputs, records = data.get("inputs"), data.get("records")
    if not isinstance(inputs, dict) or not isinstance(records, list):
        return {**data, "schema": SCHEMA_VERSION}  # what is wrong with it is said by the checks that follow
    upgraded = [
        dict(item, inputs=record_inputs(inputs, str(item.get("probe")))) if isinstance(item, dict) else item
        for item in records
    ]
    return {**data, "records": upgraded, "schema": SCHEMA_VERSION}


def _constrained_by(data: dict[str, Any]) -> tuple[Constraint, ...] | None:
    """The constraints a result says its cell was installed under, with their rules; None where it says nothing
    (a file written before results said)."""
    given = checked({"constrained_by": data.get("constrained_by")}, "constrained_by", list, optional=True)
    if given is None:
        return None
    return tuple(_constraint(item, f"constrained_by[{index}]") for index, item in enumerate(given))


def _constraint(item: Any, where: str) -> Constraint:
    """The constraint ``item`` holds; ValueError naming ``where`` it is in the file when it is malformed."""
    try:
        return Constraint.from_json(item)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None


def _record(item: Any, where: str) -> Record:
    """The record ``item`` holds; ValueError naming ``where`` it is in the file when it is malformed."""
    try:
        return Record.from_json(item)
    except MalformedRecord as exc:
        raise ValueError(f"{where}: {exc}") from None


def result_path(results_dir: Path, machine: str, cell_id: str) -> Path:
    return results_dir / safe_name(machine) / f"{cell_id}.json"


INPUTS_FOLDER = "inputs"
"""The folder of a machine's results that its pairs share, beside the result files (which no reader looks into)."""


def inputs_path(results_dir: Path, machine: str) -> Path:
    """Where the pairs of ``machine`` keep the inputs a probe makes once for every cell
    (:data:`torchmatrix.variables.INPUTS`): the operator sweep's captured samples."""
    return results_dir / safe_name(machine) / INPUTS_FOLDER


def write(results_dir: Path, result: CellResult, replaced: Callable[[Record], bool] | None = None) -> Path:
    """Store ``result`` in its cell's file on this machine, atomically, with the records it did not re-measure
    (``replaced``: whether a stored record is one the pairs that ran answer for, :func:`merged`).

    Read, merged (:func:`merged`) and replaced under the file's lock, so that two
    runs finishing at once (two matrices sharing one output) keep each other's
    records. Returns the file's path; OSError when it cannot be written, would
    be larger than a reader accepts (:data:`MAX_FILE_BYTES`), or holds a result
    of a newer schema (:class:`NewerSchema`), which it would lose.
    """
    path = result_path(results_dir, result.machine, result.cell_id)
    with atomicfile.locked(path.parent):
        try:
            stored: CellResult | None = read(path)
        except NewerSchema as exc:  # its records are a newer torchmatrix's, which this one cannot keep
            raise OSError(errno.EEXIST, f"it holds a result this torchmatrix cannot keep: {exc}") from exc
        except (OSError, ValueError):
            stored = None  # none yet, or one no reader can use: the new result replaces it
        text = atomicfile.json_text(storedjson.sealed(merged(stored, result, replaced).to_json()))
        size = len(text.encode("utf-8"))
        if size > MAX_FILE_BYTES:
            raise OSError(errno.EFBIG, f"it would be {size / (1 << 20):.1f} MiB, over the {MAX_FILE_BYTES >> 20} MiB "
                                       "a result file may be: its probes store too much in their metrics")  # fmt: skip
        atomicfile.write_text(path, text)
    return path


def merged(stored: CellResult | None, new: CellResult, replaced: Callable[[Record], bool] | None = None) -> CellResult:
    """``new`` with every record of ``stored`` that ``new`` did not re-measure, each as it was made.

    A run replaces only the records it made: those of other probes or devices
    (another matrix's, or pairs that were up to date) stay. A pair it ran
    replaces all of that pair's records, so a test that is gone goes too, and
    every record ``replaced`` says it answers for, whoever made it: a test's
    record a bisect of its node id made goes once the file that should hold
    it ran (by hand, ``pytest FILE`` there holds no such test), never kept as
    a record of that file which no run of it replaces. A
    cell outcome (install-error, no-wheel, …) never replaces measured records:
    it says what went wrong on one run, while they say what ran. Nor does a
    result made on another machine identity (:data:`~torchmatrix.identity.HARDWARE`)
    than ``new``, filed under one name: its records would be said to be this
    machine's.
    """
    if stored is None or stored.outcome is not None:
        return new
    made, here = stored.environment.get(HARDWARE), new.environment.get(HARDWARE)
    if isinstance(made, dict) and isinstance(here, dict) and made != here:
        return new
    if new.outcome is not None:
        return stored if stored.records else new
    fresh = {(record.probe, record.device): record for record in new.records}
    remade = {maker(record) for record in new.records}
    kept = [
        fresh.pop((record.probe, record.device), record)
        for record in stored.records
        if (record.probe, record.device) in fresh
        or (maker(record) not in remade and not (replaced is not None and replaced(record)))
    ]
    return dataclasses.replace(new, records=(*kept, *fresh.values()))


def read(path: Path) -> CellResult:
    """Read the result file ``<results>/<machine>/<name>.json``; raises OSError or ValueError naming what is wrong.

    The result knows its ``path``. See the module's docstring for what is refused.
    """
    result = CellResult.from_json(storedjson.read(path))
    check_origin(result.machine, result.finished_at, path)
    return dataclasses.replace(result, path=path)


def check_origin(machine: str, finished_at: str, path: Path) -> None:
    """Raise unless a file naming ``machine`` belongs in its folder and has not finished in the future.

    Either would let it quietly stand for a cell's real result: a file in one machine's folder that names
    another machine is read as that machine's, and a result from the future wins over every real re-run.
    """
    folder = path.parent.name
    if safe_name(machine) != folder:
        raise ValueError(
            f"it names machine {machine!r}, not that of its folder {folder!r}; "
            f"move it into the folder {safe_name(machine)!r} if it is that machine's, or delete it"
        )
    now = datetime.now(timezone.utc)
    if moment(finished_at) > now + CLOCK_SKEW:
        raise ValueError(
            f"it says it finished at {finished_at}, over {CLOCK_SKEW.total_seconds() / 3600:g} h after now "
            f"by this machine's clock ({now.isoformat(timespec='seconds')}); set right whichever clock is wrong "
            "and re-run the cell, or delete the file"
        )


def finished(result: CellResult) -> datetime:
    """When ``result`` finished; the oldest time there is when it does not say (a file always does)."""
    return moment(result.finished_at)


@dataclass(frozen=True)
class Scan:
    results: tuple[CellResult, ...]
    warnings: tuple[str, ...]


def scan(results_dir: Path) -> Scan:
    """Every readable result under ``results_dir`` (all machines); one warning per unreadable file, and one
    per cell whose result more than one file holds (a copy beside the cell's own file)."""
    found, warnings = storedjson.read_each(results_dir, read)
    holders: dict[tuple[str, str], list[CellResult]] = {}
    for result in found:
        holders.setdefault((result.machine, result.cell_id), []).append(result)
    for same in (results for results in holders.values() if len(results) > 1):
        kept = latest(same)[0]
        names = ", ".join(str(result.path) for result in same)
        warnings.append(
            f"{len(same)} files hold cell {kept.cell_id} of {kept.machine} ({names}): the cell's own file counts, "
            f"else the one finished last ({kept.path}); delete the others"
        )
    return Scan(tuple(found), tuple(warnings + _mixed_hardware(found)))


def _mixed_hardware(found: Iterable[CellResult]) -> list[str]:
    """One warning per machine whose results come from more than one CPU or GPU model, or (among the results that
    record it, :data:`~torchmatrix.identity.HARDWARE`) more than one machine identity: one column, two machines."""
    seen: dict[tuple[str, str], set[str]] = {}
    for result in found:
        devices = result.environment.get("devices")
        for kind in ("cpu", "cuda"):
            named = devices.get(kind) if isinstance(devices, dict) else None
            names = named if isinstance(named, list) else [named] if named else []
            seen.setdefault((result.machine, f"{kind.upper()} models"), set()).update(str(name) for name in names)
        hardware = result.environment.get(HARDWARE)
        if isinstance(hardware, dict):  # an older result does not say: it is compared by its models alone
            seen.setdefault((result.machine, "machine identities"), set()).add(describe_hardware(hardware))
    return [
        f"machine {machine} holds results of {len(models)} {kind} ({'; '.join(sorted(models))}), "
        "which can compute differently: file each under its own name (the default name says the model, its ISA "
        "and a digest of the rest; `machine:` or TORCHMATRIX_MACHINE name one)"
        for (machine, kind), models in sorted(seen.items())
        if len(models) > 1
    ]


def warn_skipped(scan: Scan | Iterable[str], warn: Callable[[str], object]) -> None:
    """Hand ``warn`` each of ``scan``'s warnings (or each warning given), as one terminal line.

    A warning names a path from a results folder, which may hold anything, a newline included: kept, it
    would start a line of its own, one that could pass for nox's.
    """
    for warning in scan.warnings if isinstance(scan, Scan) else scan:
        warn(safetext.for_terminal(warning, keep_newlines=False))


def cell_key(result: CellResult) -> tuple[str, str, str | None]:
    """What makes two results the same cell: machine, torch release, and the Python the matrix asked for."""
    return (result.machine, result.torch, result.python_request)


def latest(found: Iterable[CellResult]) -> list[CellResult]:
    """One result per cell, in torch-version order: the one in the cell's own file, which runs write, over a copy
    beside it under another name (whatever time it says it finished at); else the most recently finished."""
    newest: dict[tuple[str, str, str | None], CellResult] = {}
    for result in found:
        key = cell_key(result)
        if key not in newest or _precedence(result) > _precedence(newest[key]):
            newest[key] = result
    return sorted(newest.values(), key=sort_key)


def _precedence(result: CellResult) -> tuple[bool, datetime]:
    own = result.path is not None and result.path.name == f"{result.cell_id}.json"
    return own, finished(result)


def sort_key(result: CellResult) -> tuple[Version, Version, str]:
    return (version_of(result.torch), version_of(result.python or "0"), result.machine)


def version_of(text: str) -> Version:
    """``text`` as a version; 0 when it is something else (a result file's Python), so that it sorts first."""
    try:
        return Version(text)
    except InvalidVersion:
        return Version("0")
