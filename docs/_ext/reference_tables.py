"""The docs' reference tables, read from the code at every build, so that they cannot drift from it.

A page asks for one with ``reference-table`` and the table's name::

    ```{reference-table} matrix-keys
    ```

``matrix-keys``  every key of matrix.yaml: :data:`torchmatrix.matrix.schema.MATRIX_KEYS` and the keys of its entries
``outcomes``     every :class:`torchmatrix.core.Outcome`, with its symbol and meaning
``sessions``     every session of the noxfile, as nox's own registry holds it
``variables``    every ``TORCHMATRIX_*`` variable of :data:`torchmatrix.variables.ALL`
``given``        every variable a probe finds set: :data:`torchmatrix.variables.GIVEN`
``normalised``   every rule of :data:`torchmatrix.worker.printed.RULES`, what `bisect --by-output` ignores
``commands``     every session of the ``torchmatrix`` command: :data:`torchmatrix.cli.COMMANDS`

Texts from the code (a key's help, a session's docstring) are Markdown: `code` in them shows as code.
"""

from __future__ import annotations

import contextlib
import os
import runpy
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nox.registry
from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from torchmatrix import cli, core, variables
from torchmatrix.matrix import schema
from torchmatrix.worker import printed

ROOT = Path(__file__).resolve().parents[2]
NOXFILE = ROOT / "noxfile.py"

Cell = str | nodes.Node
"""A table cell: Markdown text, or a node shown as it is (code, a symbol)."""
Row = tuple[Cell, ...]


def code(text: str) -> nodes.literal:
    return nodes.literal(text, text)


def key_rows(keys: Mapping[str, schema.Key] = schema.MATRIX_KEYS, prefix: str = "") -> Iterator[Row]:
    """A row per key, each followed by the keys of its entries (``torch[].version``)."""
    for name, key in keys.items():
        path = prefix + name
        yield code(path), "yes" if key.required else "no", code(f"{name}: {key.example}"), key.help
        if key.entries:
            yield from key_rows(key.entries, f"{path}[].")


def outcome_rows() -> Iterator[Row]:
    for outcome in core.Outcome:
        scope = "a cell, before any probe ran" if outcome.is_cell_outcome else "one probe on one device"
        yield code(outcome.value), nodes.Text(outcome.symbol), scope, outcome.meaning


def session_rows() -> Iterator[Row]:
    for name, function in noxfile_sessions(NOXFILE).items():
        description = (function.__doc__ or "").strip().split("\n")[0]  # the line `nox -l` shows
        if getattr(function, "parametrize", None):
            description += f' One session per cell: `nox -s {name}` runs them all, `nox -s "{name}(<cell>)"` one.'
        yield code(name), description


def variable_rows() -> Iterator[Row]:
    for variable in variables.ALL:
        yield code(variable.name), variable.overrides, code(f"{variable.name}={variable.example}")


def given_rows() -> Iterator[Row]:
    for variable in variables.GIVEN:
        yield code(variable.name), variable.means


def normalised_rows() -> Iterator[Row]:
    for rule in printed.RULES:
        untouched = ", ".join(f"`{line}`" for line in rule.untouched)
        pattern = rule.pattern.pattern.decode()
        yield rule.what, code(pattern), code(rule.example), code(rule.apply(rule.example)), untouched


def command_rows() -> Iterator[Row]:
    for name, command in cli.COMMANDS.items():
        yield code(name), code(command.usage), command.does


def noxfile_sessions(noxfile: Path) -> dict[str, Any]:
    """The sessions ``noxfile`` declares, by name, as nox's registry holds them once it has run the noxfile.

    The noxfile declares every session whatever its matrix: one that cannot be loaded leaves a
    single placeholder ``probe`` cell (:class:`torchmatrix.project.Loaded`). The docs go that way on
    purpose, naming a matrix file that does not exist, so that listing the sessions reads no index,
    asks no Python for its version, and works offline and with a broken ``matrix.yaml``.
    """
    with tempfile.TemporaryDirectory() as folder, _environ(variables.MATRIX.name, str(Path(folder) / "none.yaml")):
        runpy.run_path(str(noxfile))
    return nox.registry.get()


@contextlib.contextmanager
def _environ(name: str, value: str) -> Iterator[None]:
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            del os.environ[name]
        else:
            os.environ[name] = before


@dataclass(frozen=True)
class Table:
    headers: tuple[str, ...]
    rows: Callable[[], Iterator[Row]]
    sources: tuple[Path, ...]
    """The files it is read from: a change to one rebuilds the page that shows it."""


SRC = ROOT / "src" / "torchmatrix"
TABLES = {
    "matrix-keys": Table(("key", "required", "example", "what it is"), key_rows, (SRC / "matrix" / "schema.py",)),
    "outcomes": Table(("outcome", "symbol", "for", "meaning"), outcome_rows, (SRC / "core.py",)),
    "sessions": Table(("session", "what it does"), session_rows, (NOXFILE,)),
    "variables": Table(("variable", "what it replaces", "example"), variable_rows, (SRC / "variables.py",)),
    "given": Table(("variable", "what it holds"), given_rows, (SRC / "variables.py",)),
    "normalised": Table(
        ("what", "pattern", "a line", "compared as", "left as printed"),
        normalised_rows,
        (SRC / "printed.py", SRC / "envside" / "torchmatrix_worker" / "records.py"),
    ),
    "commands": Table(("session", "usage", "what it does"), command_rows, (SRC / "cli.py",)),
}


class ReferenceTable(SphinxDirective):
    """``reference-table NAME``: one of :data:`TABLES`, as a table with the classes ``reference-table`` and NAME."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        name = self.arguments[0]
        if name not in TABLES:
            raise self.error(f"no reference table {name!r}; there are {', '.join(TABLES)}")
        table = TABLES[name]
        for source in table.sources:
            self.env.note_dependency(str(source))
        self.messages: list[nodes.Node] = []
        group = nodes.tgroup(cols=len(table.headers))
        group += [nodes.colspec(colwidth=1) for _ in table.headers]
        group += nodes.thead("", self.row(table.headers))
        group += nodes.tbody("", *(self.row(row) for row in table.rows()))
        # colwidths-auto: the browser sizes the columns by their content, not equally
        return [nodes.table("", group, classes=["reference-table", name, "colwidths-auto"]), *self.messages]

    def row(self, cells: Row) -> nodes.row:
        return nodes.row("", *(nodes.entry("", nodes.paragraph("", "", *self.inline(cell))) for cell in cells))

    def inline(self, cell: Cell) -> list[nodes.Node]:
        if isinstance(cell, nodes.Node):
            return [cell]
        parsed, messages = self.state.inline_text(cell, self.lineno)
        self.messages += messages
        return list(parsed)


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("reference-table", ReferenceTable)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
