"""What a probe of the matrix is (a ``run(device)`` module, a script, or pytest tests), its devices, its digest.

Told from the files alone: the host never imports a probe.

- A ``.py`` file that binds ``run`` at its top level (``def run(device):``) is
  a module: the worker calls ``run``.
- A folder, a pytest node id (``tests/test_dot.py::test_grad``), or a file
  that pytest would collect by its defaults (named ``test_*.py`` or
  ``*_test.py``, holding ``test*`` functions or ``Test*`` classes) is pytest
  tests: a record per test.
- Any other ``.py`` file is a script, run as ``python script.py`` would run it.

A module is handed its device, so it runs on every device of the matrix. A
script or tests learn the device from ``TORCHMATRIX_DEVICE`` (tests also from
the ``torchmatrix_device`` fixture): those whose text never names either run
on cpu alone, since running them elsewhere would only repeat the cpu's
answer. A script's PEP 723 block can name its devices instead
(``[tool.torchmatrix] devices = ["cpu", "cuda"]``).
"""

from __future__ import annotations

import ast
import fnmatch
import hashlib
from collections.abc import Iterator
from pathlib import Path

from .core import Kind, Probe
from .variables import DEVICE

DEVICE_VARIABLE = DEVICE.name
DEVICE_FIXTURE = "torchmatrix_device"
TEST_FILES = ("test_*.py", "*_test.py")
"""pytest's default ``python_files``."""
CPU_ONLY = ("cpu",)


def kind_of_file(path: Path) -> Kind:
    """A ``.py`` file's kind: tests as pytest finds them, a module if it binds ``run(device)``, else a script.

    A file that does not parse stays a module, whose loading then records the SyntaxError.
    """
    try:
        tree = ast.parse(path.read_bytes(), str(path))
    except (SyntaxError, ValueError):
        return Kind.MODULE
    if is_test_file(path.name) and any(_is_test(node) for node in tree.body):
        return Kind.PYTEST
    return Kind.MODULE if any(_binds_run(node) for node in tree.body) else Kind.SCRIPT


def is_test_file(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in TEST_FILES)


def _is_test(node: ast.stmt) -> bool:
    """Whether pytest collects a top-level statement by its default names: ``test*`` functions, ``Test*`` classes."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return node.name.startswith("test")
    return isinstance(node, ast.ClassDef) and node.name.startswith("Test")


def _binds_run(node: ast.stmt) -> bool:
    """Whether a top-level statement binds ``run`` to what could take a device.

    A script's own ``def run():`` without parameters, called at its end, does not make it a module.
    """
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return node.name == "run" and bool(node.args.posonlyargs or node.args.args or node.args.vararg)
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return any((alias.asname or alias.name) == "run" for alias in node.names)
    if isinstance(node, ast.Assign):
        return any(isinstance(target, ast.Name) and target.id == "run" for target in node.targets)
    return False


def devices_of(kind: Kind, files: list[Path], named: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """The only devices a probe runs on (None: every device of the matrix); ``named``: its PEP 723 ``devices``."""
    if kind is Kind.MODULE:
        return None
    if named is not None:
        return named
    words = (DEVICE_VARIABLE, DEVICE_FIXTURE) if kind is Kind.PYTEST else (DEVICE_VARIABLE,)
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        if any(word in text for word in words):
            return None
    return CPU_ONLY


def source_files(probe: Probe) -> list[Path]:
    """The files a probe's records depend on: its file; for tests, every test module and each conftest.py above.

    The conftest.py files from the root down to the tests' folder count, since
    pytest loads them; those inside a folder of tests are among its files.
    """
    if probe.kind is not Kind.PYTEST:
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
    """sha256 of what a probe's records depend on: a file's bytes; for tests, each file's path and bytes."""
    files = source_files(probe)
    if probe.kind is not Kind.PYTEST:
        return hashlib.sha256(probe.path.read_bytes()).hexdigest()
    combined = hashlib.sha256()
    base = probe.root or probe.path.parent
    for path in files:
        name = path.relative_to(base).as_posix() if base in path.parents else path.name
        combined.update(name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return combined.hexdigest()
