"""Whether a cell's stored result still answers for it, so that a re-run can skip the cell.

A stored result stands for a new run when it was made from the same inputs
(requirements, interpreter and its exact version, devices, timeout, the sha256
of every probe file and of the worker: ``project.Project.inputs``) and with
the same torch build. The build is identified without importing torch (which
costs seconds): by the digest of the ``RECORD`` file of torch's installed
``.dist-info``, which lists the sha256 of every file the wheel put in place, so
two environments share a digest exactly when they hold the same wheel.

A cell whose environment holds no torch yet (a new or rebuilt environment)
always runs: without installing, nothing tells which build the installer would
pick, and a skip must never hide a change. A cell whose last run ended before
the probes ran (e.g. ``install-error``) always runs again, so a retry retries.
"""

from __future__ import annotations

import csv
import hashlib
import importlib.metadata
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import results
from .errors import UsageError

FORCE = "--force"
TORCH_BUILD = "torch_build"
"""The key of :func:`torch_build`'s digest among a result's inputs."""

# Written by the installer, not taken from the wheel: they differ between
# installers (and RECORD cannot hold its own hash), so they are left out.
_INSTALLER_FILES = frozenset({"INSTALLER", "REQUESTED", "RECORD", "direct_url.json"})

_LABELS = {
    "requirements": "the requirements",
    "interpreter": "the interpreter",
    "python_version": "the Python version",
    "devices": "the devices",
    "timeout": "the timeout",
    "worker": "torchmatrix's worker script",
    TORCH_BUILD: "the torch build",
}


@dataclass(frozen=True)
class Verdict:
    """Whether the stored result can stand for a new run, and why (one line for the log)."""

    up_to_date: bool
    reason: str


def wants_force(posargs: Sequence[str]) -> bool:
    """True for ``nox -s probe -- --force``; any other argument is a mistake (a typo must not skip quietly)."""
    unknown = [argument for argument in posargs if argument != FORCE]
    if unknown:
        raise UsageError(f"unknown argument {unknown[0]!r} for probe sessions; the one they take is {FORCE}")
    return FORCE in posargs


def site_packages(env: Path) -> list[Path]:
    """The environment's site-packages: ``lib/pythonX.Y/site-packages`` (POSIX), ``Lib/site-packages`` (Windows)."""
    found = [*sorted(env.glob("lib/python*/site-packages")), env / "Lib" / "site-packages"]
    unique = {path.resolve(): path for path in found if path.is_dir()}
    return list(unique.values())


def torch_build(env: Path) -> str | None:
    """``<version> sha256:<digest of torch's RECORD>`` for the torch installed in ``env``, without importing it.

    None when ``env`` holds no torch, or one whose files are not recorded (nothing identifies its build then).
    """
    folders = [str(folder) for folder in site_packages(env)]
    distributions = list(importlib.metadata.distributions(name="torch", path=folders)) if folders else []
    records = [(dist.version, dist.read_text("RECORD")) for dist in distributions]
    if not records or any(record is None for _, record in records):
        return None
    digest = hashlib.sha256()
    for _, record in sorted(records, key=lambda item: item[0]):
        for line in sorted(_wheel_entries(record or "")):
            digest.update(line.encode("utf-8") + b"\n")
    return f"{records[0][0]} sha256:{digest.hexdigest()}"


def _wheel_entries(record: str) -> list[str]:
    """``path,hash`` of every file the wheel installed into site-packages.

    Scripts outside it (``../../../bin/torchrun``) are left out: the installer
    writes their first line with the environment's own path. So is bytecode,
    which some installers compile and others do not.
    """
    entries = []
    for row in csv.reader(io.StringIO(record)):
        if len(row) < 2 or not row[1]:
            continue
        path = row[0]
        parts = path.split("/")
        if path.startswith(("..", "/")) or path.endswith(".pyc"):
            continue
        if parts[0].endswith(".dist-info") and parts[-1] in _INSTALLER_FILES:
            continue
        entries.append(f"{path},{row[1]}")
    return entries


def verdict(result_file: Path, inputs: Mapping[str, Any]) -> Verdict:
    """Compare the result stored in ``result_file`` with a run from ``inputs`` (which include :data:`TORCH_BUILD`)."""
    if not result_file.exists():
        return Verdict(False, "no stored result")
    try:
        stored = results.read(result_file)
    except (OSError, ValueError) as exc:
        return Verdict(False, f"the stored result cannot be read ({exc})")
    if stored.outcome is not None:
        return Verdict(False, f"the last run ended in {stored.outcome.value}")
    if inputs.get(TORCH_BUILD) is None:
        return Verdict(False, "no torch installed in the environment yet (new or rebuilt)")
    changes = describe_changes(stored.inputs, inputs)
    if changes:
        return Verdict(False, "; ".join(changes))
    return Verdict(
        True,
        f"up to date (probes, torch build and interpreter unchanged since {stored.finished_at}); "
        f"add `-- {FORCE}` to re-measure",
    )


RECORD_INPUTS = ("requirements", "interpreter", "python_version", "timeout", "worker")
"""Besides the probe's own hash, what one probe's records depend on; the other probes and the devices do not."""


def stands_for(stored: results.CellResult, inputs: Mapping[str, Any], probe: str) -> bool:
    """Whether ``stored``'s records of ``probe`` still answer for a run from ``inputs`` (bisect and verify ask).

    Narrower than :func:`verdict`, which asks it of the whole cell: here other
    probes and the device list may have changed. A cell that did not run
    (no-wheel, no-interpreter, install-error) never stands: planning it again
    costs seconds, and an install error may have been a passing network fault.
    """
    if stored.outcome is not None:
        return False
    if any(stored.inputs.get(key) != inputs.get(key) for key in RECORD_INPUTS):
        return False
    probe_hash = inputs.get("probes", {}).get(probe)
    return probe_hash is not None and stored.inputs.get("probes", {}).get(probe) == probe_hash


def describe_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """One phrase per input that differs, e.g. ``probe autograd_dot changed``."""
    changes: list[str] = []
    for key in sorted(old.keys() | new.keys()):
        before, after = old.get(key), new.get(key)
        if before == after:
            continue
        if key == "probes" and isinstance(before, dict) and isinstance(after, dict):
            changes += _probe_changes(before, after)
        elif key == TORCH_BUILD and before is None:
            changes.append("the torch build was not recorded")
        elif key in (TORCH_BUILD, "worker"):
            changes.append(f"{_LABELS[key]} changed")
        else:
            changes.append(f"{_LABELS.get(key, key)} changed: {_short(before)} → {_short(after)}")
    return changes


def _probe_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    changes = []
    for name in sorted(before.keys() | after.keys()):
        if name not in before:
            changes.append(f"probe {name} added")
        elif name not in after:
            changes.append(f"probe {name} removed")
        elif before[name] != after[name]:
            changes.append(f"probe {name} changed")
    return changes


def _short(value: Any) -> str:
    text = " ".join(map(str, value)) if isinstance(value, list) else str(value)
    return text if len(text) <= 60 else text[:59] + "…"
