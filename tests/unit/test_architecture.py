"""docs/architecture.md and docs/glossary.md agree with the code: the import chain, the modules, the names.

The architecture page's table of rows is the import chain: a module imports
from its own row or the rows above it, never below, and every module of
src/torchmatrix has a row. Every file either page names exists, and a name
said to be in a file (`Cell` in `plan.py`) is defined there.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..conftest import ROOT

PACKAGE = ROOT / "src" / "torchmatrix"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
GLOSSARY = ROOT / "docs" / "glossary.md"
WORKER_PACKAGE = "envside/torchmatrix_worker/"
"""The worker's own package: its modules import each other (relatively), and nothing else of torchmatrix."""
ROW = re.compile(r"^\| (\d+) \|[^|]*\|(.*)\|$", re.MULTILINE)
"""A row of the import chain: ``| 3 | the plan | `releases.py`, `plan.py` |``."""


def modules() -> list[str]:
    """Every module of the package, as the pages name it: ``plan.py``, ``report/model.py``."""
    return sorted(path.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob("*.py"))


def rows() -> dict[str, int]:
    """What the chain's table says: a module (``plan.py``) or a package (``report/``), and its row."""
    chain = ARCHITECTURE.read_text(encoding="utf-8").split("## The import chain", 1)[1]
    found = {}
    for number, names in ROW.findall(chain):
        for name in re.findall(r"`([^`]+)`", names):
            found[name] = int(number)
    assert found, "docs/architecture.md has no table under '## The import chain'"
    return found


def row_of(module: str, chain: dict[str, int]) -> int | None:
    if module in chain:
        return chain[module]
    package = module.split("/", 1)[0] + "/"
    return chain.get(package) if "/" in module else None


def imports(module: str) -> Iterator[str]:
    """The modules of the package that ``module`` imports (``from . import plan`` is ``plan.py``)."""
    path = PACKAGE / module
    here = module.split("/")[:-1]
    known = set(modules())
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - (node.level - 1)] + (node.module.split(".") if node.module else [])
            elif node.module and node.module.split(".")[0] == "torchmatrix":
                base = node.module.split(".")[1:]
            else:
                continue
            for alias in node.names:
                submodule = "/".join([*base, alias.name]) + ".py"
                yield submodule if submodule in known else _file(base)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "torchmatrix":
                    yield _file(alias.name.split(".")[1:])


def _file(parts: list[str]) -> str:
    """``["report"]`` -> ``report/__init__.py``; ``["core"]`` -> ``core.py``; ``[]`` -> ``__init__.py``."""
    folder = PACKAGE.joinpath(*parts)
    return "/".join([*parts, "__init__.py"]) if folder.is_dir() or not parts else "/".join(parts) + ".py"


def test_every_module_has_a_row_and_every_row_names_a_module() -> None:
    chain = rows()
    unplaced = [module for module in modules() if module != "__init__.py" and row_of(module, chain) is None]
    assert unplaced == [], "add them to the table under '## The import chain' of docs/architecture.md"
    named = {module for module in modules()} | {module.split("/", 1)[0] + "/" for module in modules()}
    assert sorted(set(chain) - named) == []


@pytest.mark.parametrize("module", modules())
def test_a_module_imports_only_from_its_row_or_above(module: str) -> None:
    chain = rows()
    if module == "__init__.py" or module.startswith("envside/"):
        outside = [imported for imported in imports(module) if not imported.startswith(WORKER_PACKAGE)]
        assert outside == [], f"{module} runs without torchmatrix installed: it imports nothing of it but its own"
        return
    row = row_of(module, chain)
    assert row is not None
    below = {imported: row_of(imported, chain) for imported in imports(module) if imported != "__init__.py"}
    assert {name: at for name, at in below.items() if at is None or at > row} == {}, f"{module} is in row {row}"


def test_no_module_imports_itself_in_a_circle() -> None:
    graph = {module: set(imports(module)) - {module} for module in modules()}
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        assert module not in path, f"a circle: {' -> '.join((*path[path.index(module) :], module))}"
        if module in done:
            return
        for imported in graph.get(module, ()):
            visit(imported, (*path, module))
        done.add(module)

    for module in graph:
        visit(module, ())


def test_no_two_modules_and_no_two_classes_share_a_name() -> None:
    """One name per idea: ``plan.py`` beside ``sessions/plan.py``, or two ``Ending``s, would be two ideas with one
    name (a package's ``__init__.py`` and a session's module named after its nox session aside)."""
    names: dict[str, list[str]] = {}
    classes: dict[str, list[str]] = {}
    for module in modules():
        stem = module.rsplit("/", 1)[-1].removesuffix(".py")
        if stem != "__init__" and not module.startswith("sessions/"):
            names.setdefault(stem, []).append(module)
        for node in ast.parse((PACKAGE / module).read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef):
                classes.setdefault(node.name, []).append(module)
    sessions = {module.rsplit("/", 1)[-1].removesuffix(".py") for module in modules() if module.startswith("sessions/")}
    packages = {module.split("/", 1)[0] for module in modules() if "/" in module}
    assert {stem: where for stem, where in names.items() if len(where) > 1 or stem in sessions - {"__init__"}} == {}
    assert sessions.isdisjoint(packages - {"sessions"}), "a session's module shares its name with a package"
    assert {name: where for name, where in classes.items() if len(where) > 1} == {}


@pytest.mark.parametrize("page", [ARCHITECTURE, GLOSSARY], ids=lambda page: page.name)
def test_every_file_a_page_names_exists(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    named = set(re.findall(r"(?<!python )\b[\w/]+\.py\b", text)) | set(re.findall(r"`(\w+/)`", text))
    missing = [name for name in named if not ((PACKAGE / name).exists() or (ROOT / name).exists())]
    assert missing == []


@pytest.mark.parametrize("page", [ARCHITECTURE, GLOSSARY], ids=lambda page: page.name)
def test_a_name_said_to_be_in_a_file_is_defined_there(page: Path) -> None:
    said = re.findall(r"`(\w+)` in `([\w/]+\.py)`", page.read_text(encoding="utf-8"))
    for name, file in said:
        tree = ast.parse((PACKAGE / file).read_text(encoding="utf-8"))
        defined = {
            node.name for node in tree.body if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        } | {
            target.id
            for node in tree.body
            if isinstance(node, (ast.Assign, ast.AnnAssign))
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
            if isinstance(target, ast.Name)
        }
        assert name in defined, f"{page.name}: {name} is not defined in {file}"
