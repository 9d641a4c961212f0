"""What a probe of the matrix is (a ``run(device)`` module, a script, or pytest tests), its devices, its digest.

Told here from what needs no asking; the host never imports a probe, nor pytest:

- A folder or a pytest node id (``tests/test_dot.py::test_grad``) is pytest
  tests: a record per test.
- A ``.py`` file whose top level defines ``run`` taking one parameter,
  ``device`` (``def run(device):``), is a module: the worker calls ``run``.
  That is torchmatrix's own protocol, read from the text.
- Any other ``.py`` file is tests or a script as pytest says, asked in the
  cell (:attr:`~torchmatrix.core.Kind.SCRIPT_OR_TESTS`): which files pytest
  collects tests from is pytest's rule, under the project's configuration and
  plugins, with the file's imports run; only pytest can apply it.
- A ``.py`` file the host's Python cannot parse has its whole kind decided in
  the cell, whose Python may be newer (a 3.12 f-string, a ``type``
  statement): the worker tells by the same rule (:func:`defines_run` of the
  worker's protocol) whether it defines ``run(device)``, else asks pytest.

A module is handed its device, so it runs on every device of the matrix. A
script or tests learn the device from ``TORCHMATRIX_DEVICE`` (tests also from
the ``torchmatrix_device`` fixture): those whose text never names either run
on cpu alone, since running them elsewhere would only repeat the cpu's
answer. A script's PEP 723 block can name its devices instead
(``[tool.torchmatrix] devices = ["cpu", "cuda"]``). A file the host cannot
parse runs on every device, as a module would.
"""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..core import Kind, Probe
from ..variables import DEVICE

DEVICE_VARIABLE = DEVICE.name
DEVICE_FIXTURE = "torchmatrix_device"
CPU_ONLY = ("cpu",)
DEFINES_RUN = "it defines run(device)"
ASKED = "a .py file without run(device): pytest, asked in the cell, says whether it holds tests"
UNPARSED = (
    "a .py file the host's Python cannot parse: the cell's Python says whether it defines run(device), else pytest"
    " whether it holds tests"
)

_protocol: Any = importlib.import_module("torchmatrix.envside.torchmatrix_worker.protocol")
"""Tells a module by the rule the worker tells one by (:func:`defines_run`), where the host can parse the file."""


def kind_of_file(path: Path) -> tuple[Kind, str]:
    """A ``.py`` file's kind, and why: a module if it defines ``run(device)``, else what pytest says in the cell.

    A file the host's Python cannot parse is asked of the cell: the cell's Python, which runs it, may be newer; the
    worker tells by the same rule whether it defines ``run(device)``, else asks pytest; where the cell's Python cannot
    parse the file either, the file's records hold the SyntaxError.
    """
    defines_run = _protocol.defines_run(path.read_bytes(), str(path))
    if defines_run is None:
        return Kind.SCRIPT_OR_TESTS, UNPARSED
    return (Kind.MODULE, DEFINES_RUN) if defines_run else (Kind.SCRIPT_OR_TESTS, ASKED)


def kinds_made(probe: Probe) -> frozenset[Kind] | None:
    """The kinds a run now may make ``probe``'s records as: the one the host decides; a script or tests for a file
    asked of pytest (or the kind the host told a record the worker sent none of); None (any) where the cell decides
    the whole kind, for a file the host's Python cannot parse."""
    if probe.kind is not Kind.SCRIPT_OR_TESTS:
        return frozenset({probe.kind})
    if probe.kind_reason == UNPARSED:
        return None
    return frozenset({Kind.SCRIPT, Kind.PYTEST, Kind.SCRIPT_OR_TESTS})


def devices_of(probe: Probe, named: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """The only devices a probe runs on (None: every device of the matrix); ``named``: its PEP 723 ``devices``.

    A file the host's Python cannot parse runs on every device: the cell may find it a module, which is handed its
    device; a script or tests found there that never read the device repeat the cpu's answer on the others.
    """
    if probe.kind is Kind.MODULE or probe.kind_reason == UNPARSED:
        return None
    if named is not None:
        return named
    words = (DEVICE_VARIABLE, DEVICE_FIXTURE) if probe.kind.may_be_tests else (DEVICE_VARIABLE,)
    for path in source_files(probe):
        text = path.read_text(encoding="utf-8", errors="replace")
        if any(word in text for word in words):
            return None
    return CPU_ONLY


def source_files(probe: Probe) -> list[Path]:
    """The files a probe's records depend on: its file; for tests, every test module and each conftest.py above.

    The conftest.py files from the root down to the tests' folder count, since
    pytest loads them; those inside a folder of tests are among its files. A file
    that may be tests is read with the conftest.py files above it.
    """
    if not probe.kind.may_be_tests:
        return [probe.path]
    own = sorted(_python_files(probe.path)) if probe.path.is_dir() else [probe.path]
    return [*_conftests_above(probe.path, probe.root), *own]


def _python_files(folder: Path) -> Iterator[Path]:
    for path in folder.rglob("*.py"):
        if "__pycache__" not in path.relative_to(folder).parts:
            yield path


def _conftests_above(path: Path, root: Path | None) -> list[Path]:
    folder = path if path.is_dir() else path.parent
    above = [] if root is None else [folder, *folder.parents]
    chain = [place for place in above if place == root or root in place.parents][::-1]
    if path.is_dir():
        chain = chain[:-1]  # the folder's own conftest.py is one of its files
    return [place / "conftest.py" for place in chain if (place / "conftest.py").is_file()]


def digest(probe: Probe) -> str:
    """sha256 of what a probe's records depend on: a file's bytes (and that the matrix says it is a script); for
    tests, each file's path and bytes."""
    files = source_files(probe)
    if probe.kind is Kind.SCRIPT:  # only the matrix says so (kind: script): that file asked of pytest runs otherwise
        return hashlib.sha256(b"kind: script\0" + probe.path.read_bytes()).hexdigest()
    if probe.kind is not Kind.PYTEST:
        return hashlib.sha256(probe.path.read_bytes()).hexdigest()
    combined = hashlib.sha256()
    base = probe.root or probe.path.parent
    for path in files:
        name = path.relative_to(base).as_posix() if base in path.parents else path.name
        combined.update(name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return combined.hexdigest()
