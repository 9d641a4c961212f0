"""Load ``matrix.yaml`` into a frozen :class:`~torchmatrix.matrix.Matrix`, checked against its :mod:`.schema`.

Besides each key's own checks: the probes named must exist (by name in
``probes/``, or as a path beside the matrix file); without ``probes:``, every
probe in ``probes/`` runs but the opt-in ones; ``probe_options`` and an
expectation must name a probe the matrix runs, and an expectation a device it
runs on.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .. import variables
from ..core import DEVICES, Kind, Probe, holds
from ..errors import UsageError, did_you_mean
from . import DEFAULT_INDEX_URL, DEFAULT_TIMEOUT, Expectation, Matrix, PinRule, ProbeEntry, kinds, pep723, yamldoc
from .schema import MATRIX_KEYS, PROBE_KINDS, PROBE_NAME, check_mapping, fail, list_of, pin_rule
from .yamldoc import Document, KeyPath


def available_probes(probes_dir: Path) -> list[str]:
    """The probes a matrix can name: every ``probes/*.py`` but those whose name starts with ``_`` (helpers)."""
    return sorted(path.stem for path in probes_dir.glob("*.py") if not path.stem.startswith("_"))


NOT_PROBES = frozenset({"noxfile.py"})
"""Files beside a matrix that are never a probe, so never a suggestion for one mistyped."""


def nearby(typed: str, folder: Path) -> list[str]:
    """What lies where the path ``typed`` (relative to ``folder``) points, written as it would be typed: the
    ``.py`` files and the folders beside the file it names, for a close match to a path that is not there; never a
    noxfile, which is no probe (``nope.py`` is not ``noxfile.py`` mistyped)."""
    parent = Path(typed).parent
    try:
        found = sorted((folder / parent).iterdir())
    except OSError:  # the folder is not there either
        return []
    return [
        (parent / path.name).as_posix() + ("/" if path.is_dir() else "")
        for path in found
        if not path.name.startswith(".") and path.name not in NOT_PROBES and (path.suffix == ".py" or path.is_dir())
    ]


def runs_text(probes: Sequence[Probe]) -> str:
    """``this matrix runs autograd_dot, repro.py``, or that it runs none (the default matrix names no probe)."""
    return f"this matrix runs {', '.join(probe.name for probe in probes)}" if probes else "this matrix runs no probe"


def _nameable(stem: str) -> bool:
    """Whether ``probes/<stem>.py`` is a probe a matrix can name by its name: one of :func:`available_probes`."""
    return bool(PROBE_NAME.match(stem)) and not stem.startswith("_")


def _default_probes(probes_dir: Path) -> list[str]:
    """What a matrix without ``probes:`` runs: the available probes, but those that say they are opt-in."""
    return [name for name in available_probes(probes_dir) if not pep723.read(probes_dir / f"{name}.py").opt_in]


def _resolve_probes(doc: Document, entries: list[ProbeEntry], base: Path, probes_dir: Path) -> tuple[Probe, ...]:
    available = available_probes(probes_dir)
    probes: list[Probe] = []
    for index, entry in enumerate(entries):
        path = ("probes", index)
        probe = _resolve_probe(doc, path, entry, base, probes_dir, available)
        if any(known.name == probe.name for known in probes):
            raise fail(doc, path, f"a probe named {probe.name!r} is listed twice", "list each probe once")
        overlap = next((known for known in probes if known.covers(probe.name) or probe.covers(known.name)), None)
        if overlap:
            raise fail(doc, path, f"{probe.name!r} and {overlap.name!r} hold the same tests", "list each test once")
        probes.append(probe)
    return tuple(probes)


def _resolve_probe(
    doc: Document, path: KeyPath, entry: ProbeEntry, base: Path, probes_dir: Path, available: list[str]
) -> Probe:
    """A probe entry: a name in ``probes_dir``, or a path inside ``base`` (a file, a folder of tests, a node id)."""
    name = entry.probe
    if (*path, "probe") in doc.lines:  # written as a mapping: its `probe:` is what is wrong
        path = (*path, "probe")
    folder_of_tests = name not in available and (base / name).is_dir()  # `tests`, written for `tests/`
    if PROBE_NAME.match(name) and not folder_of_tests:
        if name not in available:
            held = f"probes in {probes_dir}: {', '.join(available)}" if available else f"{probes_dir} holds no probe"
            otherwise = f"{held}; a script or tests go by their path, relative to {base}"
            hint = did_you_mean(name, [*available, *nearby(name, base)], otherwise)
            raise fail(doc, path, f"no probe {name!r} in {probes_dir}", hint)
        return probe_at(probes_dir / f"{name}.py", base, probes_dir=probes_dir, kind=entry.kind)
    target, _, select = name.partition("::")
    relative = Path(target)
    if relative.is_absolute() or ".." in relative.parts or "\\" in name or not target:
        raise fail(
            doc,
            path,
            f"{name!r} is neither a probe name nor a path inside {base}",
            "name a probe in probes/ (e.g. autograd_dot) or give a relative path like my_probes/check.py, "
            "tests/ or tests/test_dot.py::test_grad",
        )
    resolved = base / relative
    if not resolved.exists():
        hint = did_you_mean(target, nearby(target, base), f"a path is relative to {base}")
        raise fail(doc, path, f"no file {resolved}", hint)
    if resolved.is_dir():
        if select or resolved.resolve() == base.resolve():
            raise fail(doc, path, f"{name!r} is a folder", "name a folder of tests inside it, e.g. tests/")
    elif relative.suffix != ".py":
        raise fail(doc, path, f"{name!r} is not a .py file", "name a probe, a script, or pytest tests")
    if entry.kind is Kind.SCRIPT and (select or resolved.is_dir()):
        what = "a node id names a test" if select else "a folder holds tests"
        raise fail(doc, (*path[:-1], "kind"), f"{what}: it cannot run as a script", "leave kind: out")
    return probe_at(resolved, base, select, probes_dir, entry.kind)


def given_probes(
    entries: Sequence[str], base: Path, probes_dir: Path, devices: Sequence[str], listed: Sequence[Probe] = ()
) -> tuple[Probe, ...]:
    """The probes ``$TORCHMATRIX_PROBES`` names: names in ``probes_dir``, or paths (absolute, or from ``base``, the
    matrix's :attr:`Matrix.probes_root`), each named by its path from ``base`` (``../repro.py`` from elsewhere); one
    the matrix lists (``listed``: the same file, the same tests) as the matrix has it, with its ``kind:`` and options.

    Unlike a matrix file's, they may lie anywhere: they are this user's own words for this run
    (bisect names a script this way). A mistake is a :class:`UsageError`.
    """
    probes: list[Probe] = []
    for entry in entries:
        target, _, select = entry.partition("::")
        path = probes_dir / f"{entry}.py" if PROBE_NAME.match(entry) else base / target
        if not path.exists():
            near = nearby(target, base) + (available_probes(probes_dir) if PROBE_NAME.match(entry) else [])
            hint = did_you_mean(target, near, f"a path is relative to {base}")
            raise UsageError(f"${variables.PROBES.name}: no probe {entry!r} ({path} does not exist)\n  hint: {hint}")
        if not path.is_dir() and path.suffix != ".py":
            raise UsageError(f"${variables.PROBES.name}: {entry!r} is not a .py file; name a probe, a script, or tests")
        probe = probe_at(path.resolve(), base, select, probes_dir)
        probe = next((known for known in listed if _same(known, probe.path, probe.select)), probe)
        if not any(probe.runs_on(device) for device in devices):
            raise UsageError(f"${variables.PROBES.name}: {_runs_only_on(probe)}\n  hint: {_reads_device_hint(probe)}")
        if any(known.name == probe.name for known in probes):
            raise UsageError(f"${variables.PROBES.name}: two probes named {probe.name!r}")
        probes.append(probe)
    return tuple(probes)


def _refuse_tests_without_their_options(chosen: Sequence[Probe], listed: Sequence[Probe]) -> None:
    """A test given alone (a node id) of a file or folder the matrix gives ``probe_options`` would run without them,
    as no run of the matrix runs it: a :class:`UsageError`."""
    for probe in chosen:
        holder = next((known for known in listed if probe.select and known.options and _holds(known, probe)), None)
        if holder is not None:
            raise UsageError(
                f"${variables.PROBES.name}: {probe.name!r} is a test of {holder.name}, which the matrix gives "
                f"probe_options: alone it would run without them\n  hint: run {holder.name}, all its tests"
            )


def _same(known: Probe, path: Path, select: str) -> bool:
    """Whether the matrix's probe ``known`` is the file or folder at ``path`` (links resolved), with ``select``."""
    return (known.path.resolve(), known.select) == (path, select)


def _holds(known: Probe, test: Probe) -> bool:
    """Whether the tests of the matrix's probe ``known`` hold the one ``test`` names, by whatever path each is
    given (links resolved): a folder's, or a file's (a class's) test."""
    holder, file = known.path.resolve(), test.path.resolve()
    if holder.is_dir():
        return holder in file.parents
    return holder == file and holds(known.select, test.select)


def probe_at(
    path: Path, base: Path, select: str = "", probes_dir: Path | None = None, kind: Kind | None = None
) -> Probe:
    """The probe at ``path`` (a file, or a folder of tests) of a matrix whose probe paths are from ``base`` (its
    :attr:`Matrix.probes_root`); ``select``: ``::test_x``; ``kind``: what the matrix says it is (``kind:``), else
    told here or asked of pytest in the cell.

    A probe is its path from ``base`` (a folder's ends in /; one from elsewhere, ``$TORCHMATRIX_PROBES``'s, starts
    with ``..``), the root its tests are named from: two ``repro.py`` in two folders are two probes. A module or a
    script that a matrix can name by name, one of ``probes_dir``, is named so (``autograd_dot``).
    """
    kind, reason = _kind_at(path, select, kind)
    root = base
    if kind is not Kind.PYTEST:
        meta = pep723.read(path)
        probe = Probe(_file_name(path, root, probes_dir), path, meta.dependencies, kind=kind, kind_reason=reason,
                      root=root if kind.may_be_tests else None)  # fmt: skip
        return dataclasses.replace(probe, devices=kinds.devices_of(probe, meta.devices))
    name = _path_from(root, path) + ("/" if path.is_dir() else "") + (f"::{select}" if select else "")
    probe = Probe(name, path, kind=kind, select=f"::{select}" if select else "", root=root, kind_reason=reason)
    return dataclasses.replace(probe, devices=kinds.devices_of(probe, None))


def _kind_at(path: Path, select: str, given: Kind | None) -> tuple[Kind, str]:
    """The kind of the probe at ``path``, and why: what needs no asking (a node id or a folder is tests, a file
    that defines ``run(device)`` is a module), or what the matrix says; else the cell asks pytest."""
    if select:
        return Kind.PYTEST, "a node id names a test"
    if path.is_dir():
        return Kind.PYTEST, "a folder holds tests"
    if given is not None:
        word = next(word for word, kind in PROBE_KINDS.items() if kind is given)
        return given, f"the matrix says kind: {word}"
    return kinds.kind_of_file(path)


def _file_name(path: Path, root: Path, probes_dir: Path | None) -> str:
    """A module's or a script's name: its stem if the matrix can name it so (``probes_dir/NAME.py``), else its
    path from ``root``."""
    if probes_dir is not None and path.parent.resolve() == probes_dir.resolve() and _nameable(path.stem):
        return path.stem
    return _path_from(root, path)


def _path_from(root: Path, path: Path) -> str:
    """``path`` from the folder ``root``, as a user types it (``sub/repro.py``, ``../repro.py``)."""
    return Path(os.path.relpath(path, root)).as_posix()


def load_matrix(
    file: Path, probes_dir: Path, output: Path | None = None, probes: Sequence[str] | None = None
) -> Matrix:
    """Read and validate the matrix at ``file``; names in ``probes:`` are looked up in ``probes_dir``.

    ``output``, when given (``$TORCHMATRIX_OUTPUT``), replaces the ``output:`` key; ``probes``
    (``$TORCHMATRIX_PROBES``) the ``probes:`` key, and the expectations then kept are those about them.
    """
    file = file.resolve() if file.exists() else file.absolute()
    doc = yamldoc.load(file, display_name=str(file))
    if doc.value is None:
        raise fail(doc, (), "the file is empty", "start from the default matrix.yaml")
    fields = check_mapping(doc, (), doc.value, MATRIX_KEYS)
    base = file.parent
    if "probes" in fields and not fields["probes"]:
        hint = "leave the key out to run every probe in probes/ that is not opt-in"
        raise fail(doc, ("probes",), "lists no probe", hint)
    devices = fields.get("devices", DEVICES)
    expect = tuple(fields.get("expect", ()))
    entries = fields.get("probes") or [ProbeEntry(name) for name in _default_probes(probes_dir)]
    root = _probes_root(doc, base, fields["probes_root"]) if "probes_root" in fields else base
    listed = _with_options(doc, _resolve_probes(doc, entries, root, probes_dir), fields.get("probe_options", {}))
    if probes is None:
        chosen = listed
        _check_devices(doc, chosen, devices, listed="probes" in fields)
        _check_expectations(doc, expect, chosen, devices)
    else:
        chosen = given_probes(probes, root, probes_dir, devices, listed)
        _refuse_tests_without_their_options(chosen, listed)
        expect = tuple(e for e in expect if any(probe.covers(e.probe) for probe in chosen))
    return Matrix(
        file=file,
        torch=fields["torch"],
        probes=chosen,
        devices=devices,
        timeout=fields.get("timeout", DEFAULT_TIMEOUT),
        output=output or base / fields.get("output", "reports"),
        machine=fields.get("machine"),
        index_url=fields.get("index_url", DEFAULT_INDEX_URL).rstrip("/"),
        find_links=(
            tuple(_absolute_location(link, base) for link in fields["find_links"]) if "find_links" in fields else None
        ),
        pins=tuple(fields.get("pins", ())),
        expect=expect,
        project=_project(doc, base, fields["project"]) if "project" in fields else None,
        requires=tuple(fields.get("requires", ())),
        repeat=fields.get("repeat", 1),
        strict=fields.get("strict", False),
        env=tuple(fields.get("env", {}).items()),
        pass_env=tuple(fields.get("pass_env", ())),
        probes_dir=probes_dir,
        probes_root=root if "probes_root" in fields else None,
    )


def _with_options(doc: Document, probes: tuple[Probe, ...], options: dict[str, dict[str, Any]]) -> tuple[Probe, ...]:
    """Each probe with its ``probe_options``; options for a probe the matrix does not run are a mistake."""
    names = [probe.name for probe in probes]
    for name in options:
        if name not in names:
            hint = did_you_mean(name, names, runs_text(probes))
            raise fail(doc, ("probe_options", name), f"{name!r} is not a probe of this matrix", hint)
    return tuple(dataclasses.replace(probe, options=options.get(probe.name, {})) for probe in probes)


def _check_expectations(
    doc: Document, expect: tuple[Expectation, ...], probes: tuple[Probe, ...], devices: tuple[str, ...]
) -> None:
    """An expectation must name a probe (or one of its tests) and a device it runs on, or no result could answer it."""
    names = [probe.name for probe in probes]
    for index, expectation in enumerate(expect):
        owner = next((probe for probe in probes if probe.covers(expectation.probe)), None)
        if owner is None:
            hint = did_you_mean(expectation.probe, names, f"{runs_text(probes)}; a test goes by its node id")
            raise fail(doc, ("expect", index, "probe"), f"{expectation.probe!r} is not a probe of this matrix", hint)
        if expectation.device not in devices:
            raise fail(
                doc,
                ("expect", index, "device"),
                f"this matrix does not run on {expectation.device} (devices: {', '.join(devices)})",
                f"add {expectation.device} to devices:",
            )
        if not owner.runs_on(expectation.device):
            raise fail(doc, ("expect", index, "device"), _runs_only_on(owner), _reads_device_hint(owner))


def _check_devices(doc: Document, probes: tuple[Probe, ...], devices: tuple[str, ...], listed: bool) -> None:
    """Every probe must run on one of the matrix's devices at least."""
    for index, probe in enumerate(probes):
        if not any(probe.runs_on(device) for device in devices):
            place = ("probes", index) if listed else ("devices",)
            raise fail(doc, place, f"{_runs_only_on(probe)}, and this matrix runs on {', '.join(devices)}",
                       _reads_device_hint(probe))  # fmt: skip


def _runs_only_on(probe: Probe) -> str:
    assert probe.devices is not None
    return f"{probe.name} runs on {', '.join(probe.devices)} alone"


def _reads_device_hint(probe: Probe) -> str:
    tests = f"tests run on every device when they read ${kinds.DEVICE_VARIABLE} "
    tests += f"or use the {kinds.DEVICE_FIXTURE} fixture"
    script = f"a script runs on every device when it reads ${kinds.DEVICE_VARIABLE}, "
    script += "or on those its PEP 723 block lists under [tool.torchmatrix] devices"
    if probe.kind is Kind.SCRIPT_OR_TESTS:
        return f"{script}; {tests}"
    return tests if probe.kind is Kind.PYTEST else script


def load_pin_rules(file: Path) -> tuple[PinRule, ...]:
    """Read a YAML list of pin rules (the format of a matrix's ``pins:`` key)."""
    doc = yamldoc.load(file)
    return tuple(list_of(pin_rule)(doc, (), doc.value))


def _probes_root(doc: Document, base: Path, text: str) -> Path:
    folder = (base / text).resolve()
    if not folder.is_dir():
        raise fail(doc, ("probes_root",), f"{folder} is no folder", "name the folder probe paths are from, e.g. ..")
    return folder


def _project(doc: Document, base: Path, text: str) -> Path:
    folder = (base / text).resolve()
    if not any((folder / name).is_file() for name in ("pyproject.toml", "setup.py")):
        raise fail(doc, ("project",), f"{folder} holds no pyproject.toml or setup.py", "name your project's folder")
    return folder


def _absolute_location(link: str, base: Path) -> str:
    return link if "://" in link else str((base / link).resolve())
