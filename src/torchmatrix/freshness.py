"""Which (probe, device) records of a cell still answer for a new run, so that a re-run runs only the others.

Freshness is decided per record. A record stands for a new run of its pair
when its identity (:mod:`torchmatrix.identity`) is what a run now would have:
the same inputs (:data:`torchmatrix.identity.RECORD_INPUTS`: requirements,
interpreter and its exact version, the worker's sha256, the torch build and
the package set, where torch comes from, the pairs' environment, the seed, a
timeout that would not change its outcome; the sha256 of its probe file, and
the probe's options where the matrix gives it some), and every file its pair
read unchanged. Records of probes or devices the run does not ask for are none
of its business: two matrices sharing one output folder keep each other's.

The torch build counts as an input (:func:`torchmatrix.cellenv.torch_build`,
read without importing torch), and only in an environment whose install
finished and whose torch imported (:func:`torchmatrix.cellenv.built_torch`).

A cell whose environment holds no such torch (new, rebuilt or half-installed)
runs every pair: without installing, nothing tells which build the installer
would pick, and a skip must never hide a change. A cell whose last run ended
before the probes ran (e.g. ``install-error``) runs again, so a retry retries.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from . import identity, results
from .core import Outcome, Pair, Record
from .identity import PACKAGES, READ, TORCH_BUILD
from .results import INSTALLED_SESSION

FORCE = "--force"

_LABELS = {
    "requirements": "the requirements",
    identity.CONSTRAINTS: "the constraints",
    identity.VENV_SEED: "the environment's seed",
    "index": "where torch is installed from",
    "environment": "the variables the pairs see",
    "seed": "the seed",
    "workdir": "the folder the pairs run from",
    PACKAGES: "the installed packages",
    "interpreter": "the interpreter",
    "python_version": "the Python version",
    "worker": "torchmatrix's worker script",
    "project": "the sources of the matrix's project",
    TORCH_BUILD: "the torch build",
    "repeat": "the runs per pair",
}
# What a record made before an input existed was made from: one run per pair, as every run then had.
# Nor constraints, nor a seed: its environment had neither.
_IMPLIED: dict[str, Any] = {"repeat": 1, identity.CONSTRAINTS: [], identity.VENV_SEED: []}


@dataclass(frozen=True)
class Stale:
    """The pairs of a cell to run, and why (one line for the log); none when every stored record stands."""

    pairs: tuple[Pair, ...]
    reason: str


def stale(stored: results.CellResult | None, pairs: Sequence[Pair], inputs: Mapping[str, Any]) -> Stale:
    """The ``pairs`` whose record in ``stored`` does not stand for a run from ``inputs`` (with :data:`TORCH_BUILD`).

    Decided per (probe, device) record: a record of another probe or device in
    the file (another matrix's) neither runs nor goes. Tests run as one pair,
    and do when any of their records does not stand.
    """
    everything = tuple(pairs)
    if stored is None:
        return Stale(everything, "no stored result")
    if stored.outcome is not None:
        return Stale(everything, f"the last run ended in {stored.outcome.value}")
    if inputs.get(TORCH_BUILD) is None:
        return Stale(everything, "no torch installed in the environment yet (new or rebuilt)")
    made: dict[tuple[str, str], list[Record]] = {}
    digests = identity.FileDigests()
    for record in stored.records:
        made.setdefault(identity.maker(record), []).append(record)
    missing: dict[str, list[str]] = {}
    changes: list[str] = []
    chosen = []
    makers = {(pair.probe.name, pair.device) for pair in pairs}
    for pair in pairs:
        records = made.get((pair.probe.name, pair.device))
        # A record of one of its tests that another probe made (a bisect's node id, from another folder) is
        # what the views show for it, and is not this pair's: the pair runs, and its own replaces it.
        others = [
            record.probe
            for maker, made_by in made.items()
            if maker not in makers
            for record in made_by
            if record.device == pair.device and pair.probe.covers(record.probe)
        ]
        if others:
            changes.append(f"{others[0]} was made by another probe than {pair.probe.name}")
        elif not records:
            missing.setdefault(pair.probe.name, []).append(pair.device)
        else:
            found = [
                record_changes(record, identity.record_inputs(dict(inputs), record.probe, pair.probe.name), digests)
                for record in records
            ]
            if not any(found):
                continue
            changes += [change for changed in found for change in changed]
        chosen.append(pair)
    if not chosen:
        return Stale((), f"up to date (every record's probe, torch build and interpreter unchanged since "
                         f"{stored.finished_at}); add `-- {FORCE}` to re-measure")  # fmt: skip
    phrases = [f"no record of {probe} on {', '.join(devices)}" for probe, devices in missing.items()]
    count = f"{len(chosen)} of {len(everything)} pairs: " if len(chosen) < len(everything) else ""
    return Stale(tuple(chosen), count + "; ".join(dict.fromkeys([*changes, *phrases])))


class Current(Protocol):
    """What a run now would do (:class:`torchmatrix.project.Project` is one)."""

    @property
    def machine(self) -> str:
        """The name this machine's results are filed under."""

    def owner(self, record_name: str) -> Any:
        """The probe that makes records named ``record_name``; None when it runs none such."""

    def wanted_for(self, result: results.CellResult, record: Record) -> Mapping[str, Any] | None:
        """What a run now would make ``record`` of ``result`` from; None when it would not run its cell."""


def marked_stale(found: Iterable[results.CellResult], current: Current) -> list[results.CellResult]:
    """``found``, each record whose identity is not what a run now would have shown as :data:`Outcome.STALE`.

    Its message keeps what it was and says what changed: every view shows it so, and none takes it for
    a current outcome. Of a record of a probe ``current`` does not run (another matrix sharing the output
    runs it), only the files it read are asked, its probe's among them. Records filed under another machine
    than ``current``'s are compared by what means the same everywhere (:data:`identity.PORTABLE`): their
    interpreter and files are that machine's.
    """
    marked = []
    digests = identity.FileDigests()
    for result in found:
        records = []
        for record in result.records:
            here = result.machine == current.machine
            wanted = current.wanted_for(result, record)
            if current.owner(record.probe) is None:  # another matrix's: what it read is all there is to ask
                changes = identity.changed_files(record.inputs.get(READ), digests) if here else []
            elif wanted is None:
                changes = ["no cell of the matrix would make it (its torch is no release)"]
            else:
                changes = record_changes(
                    record, wanted if here else identity.portable(wanted), digests if here else None
                )
            records.append(_stale(record, changes) if changes else record)
        marked.append(dataclasses.replace(result, records=tuple(records)))
    return marked


WAS = "was"
"""The one metric a stale record keeps: the outcome it had (its numbers are of what has changed since)."""


def _stale(record: Record, changes: list[str]) -> Record:
    was = f"was {record.outcome.symbol} {record.outcome.value}"
    return dataclasses.replace(
        record, outcome=Outcome.STALE, metrics={WAS: record.outcome.value}, message=f"{was}; {'; '.join(changes)}"
    )


def stands_for(record: Record, wanted: Mapping[str, Any], files: identity.FileDigests | None = None) -> bool:
    """Whether ``record`` answers for a run of its probe from ``wanted`` (:func:`identity.record_inputs`)."""
    return not record_changes(record, wanted, files or identity.FileDigests())


def record_changes(record: Record, wanted: Mapping[str, Any], files: identity.FileDigests | None) -> list[str]:
    """One phrase per input of ``wanted`` that ``record`` was not made from (``probe autograd_dot changed``), and
    one per file it read that is not as it was (``/src/helper.py changed``).

    Only the keys ``wanted`` holds are compared: bisect and verify, which have no
    environment at hand, leave out the torch build and the package set. ``files``:
    the files it read as hashed now (one :class:`identity.FileDigests` for a pass over many records); None where
    they are not compared, as only the machine it ran on has them. The timeout counts only
    where it could change the outcome: a record that finished in less than the
    new limit would finish again, one that ran past its limit would run past a
    lower one too.
    """
    made = {**_IMPLIED, **record.inputs}
    if "requirements" in wanted and "requirements" not in made:  # nothing was installed for it
        return [f"{identity.maker(record)[0]} was measured by {INSTALLED_SESSION}, in a torch installed already"]
    changes = []
    # A probe's options are stored only where it has some: none wanted and none stored is the same.
    for key, value in {"options": None, **wanted}.items():
        if key == "timeout":
            if not _timeout_keeps(record, made.get(key), value):
                changes.append(f"the timeout changed: {_short(made.get(key))} → {_short(value)}")
        elif made.get(key) != value:
            changes += describe_changes({key: made.get(key)}, {key: value}, probe=identity.maker(record)[0])
    return changes + (identity.changed_files(made.get(READ), files) if files is not None else [])


def _timeout_keeps(record: Record, made_under: Any, limit: Any) -> bool:
    if made_under == limit:
        return True
    if not all(isinstance(value, (int, float)) and not isinstance(value, bool) for value in (made_under, limit)):
        return False
    if record.outcome is Outcome.TIMEOUT:
        return limit <= made_under
    return record.duration < limit


def describe_changes(old: Mapping[str, Any], new: Mapping[str, Any], probe: str = "") -> list[str]:
    """One phrase per input that differs, e.g. ``the Python version changed: 3.9.17 → 3.9.18``."""
    changes: list[str] = []
    for key in sorted(old.keys() | new.keys()):
        before, after = old.get(key), new.get(key)
        if before == after:
            continue
        if key == "probe":
            recorded = before is not None
            changes.append(f"probe {probe} changed" if recorded else f"probe {probe}'s digest was not recorded")
        elif key == "options":
            changes.append(f"the options of probe {probe} changed")
        elif key == TORCH_BUILD and before is None:
            changes.append("the torch build was not recorded")
        elif key in (TORCH_BUILD, PACKAGES, "worker", "project", "index", "environment"):
            changes.append(f"{_LABELS[key]} changed")
        elif key == "workdir":  # whole: two folders' paths often share their first 60 characters
            changes.append(f"{_LABELS[key]} changed: {before} → {after}")
        else:
            changes.append(f"{_LABELS.get(key, key)} changed: {_short(before)} → {_short(after)}")
    return changes


def _short(value: Any) -> str:
    text = (" ".join(map(str, value)) or "none") if isinstance(value, list) else str(value)
    return text if len(text) <= 60 else text[:59] + "…"
