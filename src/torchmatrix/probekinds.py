"""What a probe of the matrix is (a ``run(device)`` module, a script, or pytest tests), its devices, its digest.

Told from the files alone: the host never imports a probe.

- A folder, a pytest node id (``tests/test_dot.py::test_grad``), or a file
  that pytest would collect is pytest tests: a record per test. A file is
  collected when its name matches ``python_files`` of the pytest
  configuration that pytest itself would find for it, and it binds at its top
  level a ``unittest.TestCase`` subclass, a class matching ``python_classes``,
  or a callable whose name matches ``python_functions`` (``def test_a``, or
  ``test_a = make_test()``).
- A ``.py`` file whose top level defines ``run`` taking one parameter,
  ``device`` (``def run(device):``), is a module: the worker calls ``run``.
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
import configparser
import dataclasses
import fnmatch
import hashlib
import os
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path, PurePath

from .core import Kind, Probe
from .variables import DEVICE

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

DEVICE_VARIABLE = DEVICE.name
DEVICE_FIXTURE = "torchmatrix_device"
CPU_ONLY = ("cpu",)


def kind_of_file(path: Path) -> Kind:
    """A ``.py`` file's kind: tests if pytest would collect it, a module if it defines ``run(device)``, else a script.

    A file that does not parse stays a module, whose loading then records the SyntaxError.
    """
    try:
        tree = ast.parse(path.read_bytes(), str(path))
    except (SyntaxError, ValueError):
        return Kind.MODULE
    place = path.absolute()  # pytest's search for its configuration goes up to the file system's root
    names = pytest_names(place.parent)
    if names.collects_file(place) and _holds_tests(tree.body, names):
        return Kind.PYTEST
    return Kind.MODULE if any(_defines_run(node) for node in tree.body) else Kind.SCRIPT


@dataclasses.dataclass(frozen=True)
class PytestNames:
    """The names pytest collects tests by: ``python_files``, ``python_classes``, ``python_functions``."""

    files: tuple[str, ...] = ("test_*.py", "*_test.py")
    classes: tuple[str, ...] = ("Test",)
    functions: tuple[str, ...] = ("test",)

    def collects_file(self, path: Path) -> bool:
        """Whether pytest collects ``path`` when it walks a folder (``_pytest.pathlib.fnmatch_ex``)."""
        return any(_matches_path(pattern, path) for pattern in self.files)

    def is_test_class(self, name: str) -> bool:
        return _matches_prefix_or_glob(self.classes, name)

    def is_test_function(self, name: str) -> bool:
        return _matches_prefix_or_glob(self.functions, name)


# In the order pytest looks for them in each folder (``_pytest.config.findpaths.locate_config``, pytest 9).
PYTEST_CONFIG_FILES = ("pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini",
                       "setup.cfg")  # fmt: skip
_NAME_KEYS = {"files": "python_files", "classes": "python_classes", "functions": "python_functions"}


def pytest_names(folder: Path) -> PytestNames:
    """The names pytest collects by for tests in ``folder``, from the configuration pytest would find for them.

    As pytest does, the first file of :data:`PYTEST_CONFIG_FILES` that holds pytest's configuration, from
    ``folder`` up, is the one (a ``pyproject.toml`` without it is passed over; a ``pytest.ini`` is pytest's
    even when empty). The cell runs pytest on the probe's path, so that search starts where the probe lies.
    A configuration pytest could not read either leaves its default names: pytest then fails every test.
    """
    for place in (folder, *folder.parents):
        for name in PYTEST_CONFIG_FILES:
            if (place / name).is_file():
                try:
                    config = _pytest_config(place / name)
                except (OSError, UnicodeDecodeError, configparser.Error, tomllib.TOMLDecodeError):
                    return PytestNames()
                if config is not None:
                    return _names_in(config)
    return PytestNames()


def _pytest_config(path: Path) -> dict[str, object] | None:
    """The pytest section of a configuration file, or None where it holds none (``load_config_dict_from_file``)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".toml":
        document = tomllib.loads(text)
        if path.name in ("pytest.toml", ".pytest.toml"):
            return dict(document.get("pytest", {}))
        tool = document.get("tool", {}).get("pytest", {})
        native = {key: value for key, value in tool.items() if key != "ini_options"}
        ini_options = tool.get("ini_options")
        return native or (dict(ini_options) if ini_options is not None else None)
    parser = configparser.ConfigParser(interpolation=None, strict=False, default_section="\0")
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # pytest's keys keep their case
    parser.read_string(text, str(path))
    section = "tool:pytest" if path.suffix == ".cfg" else "pytest"
    if parser.has_section(section):
        return dict(parser.items(section))
    return {} if path.name in ("pytest.ini", ".pytest.ini") else None


def _names_in(config: dict[str, object]) -> PytestNames:
    names: dict[str, tuple[str, ...]] = {}
    for field, key in _NAME_KEYS.items():
        value = config.get(key)
        if value is None:
            continue
        try:  # pytest's "args" type: a list as it is, text split as a shell would
            names[field] = tuple(map(str, value)) if isinstance(value, list) else tuple(shlex.split(str(value)))
        except ValueError:  # an unclosed quote: pytest could not read it either
            return PytestNames()
    return PytestNames(**names)


def _matches_path(pattern: str, path: Path) -> bool:
    """``_pytest.pathlib.fnmatch_ex``: a pattern without a separator matches the name, one with it the path."""
    if sys.platform.startswith("win") and os.sep not in pattern and "/" in pattern:
        pattern = pattern.replace("/", os.sep)
    if os.sep not in pattern:
        return fnmatch.fnmatch(path.name, pattern)
    if PurePath(path).is_absolute() and not os.path.isabs(pattern):
        pattern = f"*{os.sep}{pattern}"
    return fnmatch.fnmatch(str(path), pattern)


def _matches_prefix_or_glob(options: tuple[str, ...], name: str) -> bool:
    """``PyCollector._matches_prefix_or_glob_option``: a prefix, or a glob where the option holds one."""
    return any(
        name.startswith(option) or (any(c in option for c in "*?[") and fnmatch.fnmatch(name, option))
        for option in options
    )


def _holds_tests(body: list[ast.stmt], names: PytestNames) -> bool:
    """Whether a module's top level binds what pytest collects tests from.

    Read from the text: a ``unittest.TestCase`` subclass (a base whose name ends in ``TestCase``, or that
    was imported under another name), a class matching ``python_classes``, a function matching ``python_functions``,
    or such a name bound by assignment or ``from … import`` to what may be a callable. A base class imported
    as such (``from unittest import TestCase``) holds no test.
    """
    cases: set[str] = set()
    for node in _top_level(body):
        if isinstance(node, ast.ClassDef):
            if any(_base_name(base).endswith("TestCase") or _base_name(base) in cases for base in node.bases):
                return True
            if names.is_test_class(node.name):
                return True
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if names.is_test_function(node.name):
                return True
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                bound = alias.asname or alias.name
                if alias.name.endswith("TestCase"):
                    cases.add(bound)  # a base, under any name
                elif names.is_test_function(bound) or names.is_test_class(bound):
                    return True
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None and _may_be_callable(node.value):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bound_names = [target.id for target in targets if isinstance(target, ast.Name)]
            if any(names.is_test_function(name) or names.is_test_class(name) for name in bound_names):
                return True
    return False


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements run when pytest imports the module: those under ``if``, ``try`` and ``with`` included,
    but not under ``if __name__ == "__main__":``."""
    for node in body:
        yield node
        if isinstance(node, ast.If):
            if not _is_main_guard(node.test):
                yield from _top_level(node.body)
            yield from _top_level(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, *(handler.body for handler in node.handlers), node.orelse, node.finalbody):
                yield from _top_level(block)
        elif isinstance(node, ast.With):
            yield from _top_level(node.body)


def _is_main_guard(test: ast.expr) -> bool:
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and any(isinstance(c, ast.Constant) and c.value == "__main__" for c in test.comparators)
    )


def _base_name(base: ast.expr) -> str:
    if isinstance(base, ast.Attribute):
        return base.attr
    return base.id if isinstance(base, ast.Name) else ""


def _may_be_callable(value: ast.expr) -> bool:
    """Whether an assigned value may be a callable: anything but a literal, a display or a comprehension."""
    data = (ast.Constant, ast.JoinedStr, ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp, ast.SetComp,
            ast.DictComp, ast.GeneratorExp)  # fmt: skip
    return not isinstance(value, data)


def _defines_run(node: ast.stmt) -> bool:
    """Whether a top-level statement defines ``run`` as the worker calls it, ``run(device)``.

    Its first parameter is ``device`` and any other has a default: a script's own helper ``run(x)``, or
    ``run`` imported (``from subprocess import run``), does not make it a module.
    """
    if not isinstance(node, ast.FunctionDef) or node.name != "run":
        return False
    arguments = node.args
    positional = [*arguments.posonlyargs, *arguments.args]
    if not positional or positional[0].arg != "device":
        return False
    keyword_only_required = any(default is None for default in arguments.kw_defaults)
    return len(positional) - 1 <= len(arguments.defaults) and not keyword_only_required


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
