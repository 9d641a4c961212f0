"""Load ``matrix.yaml`` into a frozen :class:`~torchmatrix.matrix.Matrix`, checked against :mod:`~torchmatrix.schema`.

Besides each key's own checks: the probes named must exist (by name in
``probes/``, or as a path beside the matrix file); without ``probes:``, every
probe in ``probes/`` runs but the opt-in ones; ``probe_options`` and an
expectation must name a probe the matrix runs, and an expectation a device it
runs on.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from . import scriptmeta, yamldoc
from .core import DEVICES, Probe
from .errors import did_you_mean
from .matrix import DEFAULT_INDEX_URL, DEFAULT_TIMEOUT, Expectation, Matrix, PinRule
from .schema import MATRIX_KEYS, PROBE_NAME, check_mapping, fail, list_of, pin_rule
from .yamldoc import Document, KeyPath


def _probe(name: str, path: Path) -> Probe:
    return Probe(name, path, scriptmeta.dependencies(path))


def _available_probes(probes_dir: Path) -> list[str]:
    """The probes a matrix can name: every ``probes/*.py`` but those whose name starts with ``_`` (helpers)."""
    return sorted(path.stem for path in probes_dir.glob("*.py") if not path.stem.startswith("_"))


def _default_probes(probes_dir: Path) -> list[str]:
    """What a matrix without ``probes:`` runs: the available probes, but those that say they are opt-in."""
    return [name for name in _available_probes(probes_dir) if not scriptmeta.read(probes_dir / f"{name}.py").opt_in]


def _resolve_probes(doc: Document, names: list[str], base: Path, probes_dir: Path) -> tuple[Probe, ...]:
    available = _available_probes(probes_dir)
    probes: list[Probe] = []
    for index, name in enumerate(names):
        path = ("probes", index)
        probe = _resolve_probe(doc, path, name, base, probes_dir, available)
        if any(known.name == probe.name for known in probes):
            raise fail(doc, path, f"a probe named {probe.name!r} is listed twice", "list each probe once")
        probes.append(probe)
    return tuple(probes)


def _resolve_probe(
    doc: Document, path: KeyPath, name: str, base: Path, probes_dir: Path, available: list[str]
) -> Probe:
    if PROBE_NAME.match(name):
        if name not in available:
            hint = did_you_mean(name, available, f"probes in {probes_dir}: {', '.join(available)}")
            raise fail(doc, path, f"no probe {name!r} in {probes_dir}", hint)
        return _probe(name, probes_dir / f"{name}.py")
    relative = Path(name)
    if relative.is_absolute() or ".." in relative.parts or relative.suffix != ".py" or "\\" in name:
        raise fail(
            doc,
            path,
            f"{name!r} is neither a probe name nor a .py path inside {base}",
            "name a probe in probes/ (e.g. autograd_dot) or give a relative path like my_probes/check.py",
        )
    if not PROBE_NAME.match(relative.stem):
        raise fail(doc, path, f"{relative.stem!r} cannot name a probe", "use letters, digits and _")
    resolved = base / relative
    if not resolved.is_file():
        raise fail(doc, path, f"no file {resolved}", f"a path is relative to the matrix file's folder, {base}")
    return _probe(relative.stem, resolved)


def load_matrix(file: Path, probes_dir: Path, output: Path | None = None) -> Matrix:
    """Read and validate the matrix at ``file``; names in ``probes:`` are looked up in ``probes_dir``.

    ``output``, when given (``$TORCHMATRIX_OUTPUT``), replaces the ``output:`` key.
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
    probe_names = fields.get("probes") or _default_probes(probes_dir)
    probes = _with_options(doc, _resolve_probes(doc, probe_names, base, probes_dir), fields.get("probe_options", {}))
    devices = fields.get("devices", DEVICES)
    expect = tuple(fields.get("expect", ()))
    _check_expectations(doc, expect, probes, devices)
    return Matrix(
        file=file,
        torch=fields["torch"],
        probes=probes,
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
    )


def _with_options(doc: Document, probes: tuple[Probe, ...], options: dict[str, dict[str, Any]]) -> tuple[Probe, ...]:
    """Each probe with its ``probe_options``; options for a probe the matrix does not run are a mistake."""
    names = [probe.name for probe in probes]
    for name in options:
        if name not in names:
            hint = did_you_mean(name, names, f"this matrix runs {', '.join(names)}")
            raise fail(doc, ("probe_options", name), f"{name!r} is not a probe of this matrix", hint)
    return tuple(dataclasses.replace(probe, options=options.get(probe.name, {})) for probe in probes)


def _check_expectations(
    doc: Document, expect: tuple[Expectation, ...], probes: tuple[Probe, ...], devices: tuple[str, ...]
) -> None:
    """An expectation must name a probe and a device this matrix runs, or no result could ever answer it."""
    names = [probe.name for probe in probes]
    for index, expectation in enumerate(expect):
        if expectation.probe not in names:
            hint = did_you_mean(expectation.probe, names, f"this matrix runs {', '.join(names)}")
            raise fail(doc, ("expect", index, "probe"), f"{expectation.probe!r} is not a probe of this matrix", hint)
        if expectation.device not in devices:
            raise fail(
                doc,
                ("expect", index, "device"),
                f"this matrix does not run on {expectation.device} (devices: {', '.join(devices)})",
                f"add {expectation.device} to devices:",
            )


def load_pin_rules(file: Path) -> tuple[PinRule, ...]:
    """Read a YAML list of pin rules (the format of a matrix's ``pins:`` key)."""
    doc = yamldoc.load(file)
    return tuple(list_of(pin_rule)(doc, (), doc.value))


def _project(doc: Document, base: Path, text: str) -> Path:
    folder = (base / text).resolve()
    if not any((folder / name).is_file() for name in ("pyproject.toml", "setup.py")):
        raise fail(doc, ("project",), f"{folder} holds no pyproject.toml or setup.py", "name your project's folder")
    return folder


def _absolute_location(link: str, base: Path) -> str:
    return link if "://" in link else str((base / link).resolve())
