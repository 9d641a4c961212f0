"""The docs and the code agree.

The site's reference tables show every key of matrix.yaml, every outcome, every
session nox finds in the noxfile and every variable, as the code declares them;
and no page (nor the README) names a session, variable or key that does not exist.
"""

from __future__ import annotations

import os
import re
import shlex
import socket
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
import yaml
from bs4 import BeautifulSoup
from markdown_it import MarkdownIt
from sphinx.cmd.build import build_main

from torchmatrix import cli, config, printed, schema, variables, yamldoc
from torchmatrix.core import Outcome
from torchmatrix.errors import ConfigError
from torchmatrix.schema import Key

from ..conftest import ROOT

# myst-parser 5.2 still uses an attribute Sphinx 9 deprecates (for Sphinx 11): not ours to fix
pytestmark = pytest.mark.filterwarnings("ignore::PendingDeprecationWarning:myst_parser")

DOCS = ROOT / "docs"
DOCS_PAGES = sorted(DOCS.glob("*.md"))
PAGES = [*DOCS_PAGES, ROOT / "README.md"]


def key_paths(keys: Mapping[str, Key] = schema.MATRIX_KEYS, prefix: str = "") -> Iterator[tuple[str, Key]]:
    """``("torch", …), ("torch[].version", …), …``: every key a matrix may hold, entries' keys after their list."""
    for name, key in keys.items():
        yield prefix + name, key
        if key.entries:
            yield from key_paths(key.entries, f"{prefix}{name}[].")


def all_key_names() -> set[str]:
    return {path.rsplit(".", 1)[-1] for path, _ in key_paths()}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site as `nox -s docs` builds it, every warning an error, with no network."""
    out = tmp_path_factory.mktemp("site")

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("building the docs tried to open a network connection")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket.socket, "connect", refuse)
        status = build_main(
            ["-W", "--keep-going", "-n", "-q", "-w", str(out / "warnings"), "-b", "html", "-d", str(out / "doctrees")]
            + [str(DOCS), str(out / "html")]
        )
    assert status == 0, (out / "warnings").read_text()
    return out / "html"


def tables(site: Path, name: str) -> list[list[list[str]]]:
    """The text of each body cell of every ``reference-table NAME`` in the site."""
    found = []
    for page in sorted(site.glob("*.html")):
        soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
        for table in soup.select(f"table.reference-table.{name}"):
            rows = table.select("tbody tr")
            found.append([[" ".join(cell.get_text().split()) for cell in row.find_all("td")] for row in rows])
    assert found, f"no page shows the reference table {name!r}"
    return found


def text(markdown: str) -> str:
    """What ``markdown`` from the code (a help, a docstring) reads as, once rendered."""
    return markdown.replace("`", "")


def test_every_key_of_the_matrix_is_in_the_key_reference(site: Path) -> None:
    expected = [
        [path, "yes" if key.required else "no", f"{path.rsplit('.', 1)[-1]}: {key.example}", text(key.help)]
        for path, key in key_paths()
    ]
    for table in tables(site, "matrix-keys"):
        assert table == expected


def test_every_key_table_of_the_schema_is_reached_from_matrix_keys() -> None:
    """A table of entry keys that no key declares as its ``entries`` would be missing from the reference."""
    reached = [schema.MATRIX_KEYS, *(key.entries for _, key in key_paths() if key.entries)]
    declared = {name: table for name, table in vars(schema).items() if name.endswith("_KEYS")}
    assert declared, "schema.py declares no *_KEYS table"
    for name, table in declared.items():
        assert any(table is seen for seen in reached), f"schema.{name} is no key's entries"


@pytest.mark.parametrize("name", [name for name, key in schema.MATRIX_KEYS.items() if key.entries])
def test_the_entries_a_key_declares_are_those_the_validator_checks(name: str, tmp_path: Path) -> None:
    entries = schema.MATRIX_KEYS[name].entries
    assert entries is not None
    matrix = tmp_path / "matrix.yaml"
    other_keys = "" if name == "torch" else "torch: [1.12.1]\n"
    matrix.write_text(f"{other_keys}{name}:\n  - not_a_key_at_all: 1\n")
    with pytest.raises(ConfigError) as error:
        config.load_matrix(matrix, probes_dir=tmp_path)
    assert (error.value.key, error.value.problem) == (f"{name}[0].not_a_key_at_all", "unknown key")
    assert error.value.hint == f"known keys: {', '.join(sorted(entries))}"


@pytest.mark.parametrize("path", [path for path, _ in key_paths()])
def test_each_example_in_the_key_reference_is_a_value_its_key_accepts(path: str, tmp_path: Path) -> None:
    key = dict(key_paths())[path]
    name = path.rsplit(".", 1)[-1]
    file = tmp_path / "example.yaml"
    file.write_text(f"{name}: {key.example}\n")
    doc = yamldoc.load(file)
    schema.check_mapping(doc, (), doc.value, {name: key})


def test_every_outcome_is_in_the_outcomes_table(site: Path) -> None:
    for table in tables(site, "outcomes"):
        assert [row[0] for row in table] == [outcome.value for outcome in Outcome]
        for row, outcome in zip(table, Outcome, strict=True):
            assert row[1] == outcome.symbol
            assert ("cell" in row[2]) == outcome.is_cell_outcome, row
            assert row[3] == outcome.meaning


@pytest.fixture(scope="module")
def nox_sessions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The sessions `nox -l` lists, and their descriptions, with a broken matrix: it must not stop the listing."""
    broken = tmp_path_factory.mktemp("broken") / "matrix.yaml"
    broken.write_text("torch: [1.12.1\n")
    listing = subprocess.run(
        [sys.executable, "-m", "nox", "--script-mode", "none", "--noxfile", str(ROOT / "noxfile.py"), "-l"],
        env={**os.environ, variables.MATRIX.name: str(broken)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    # "* probe(matrix-error) -> Install one …": a parametrized session is listed by its cells
    sessions = dict(re.findall(r"^[*-] ([\w-]+)(?:\(.*?\))? -> (.*)$", listing, re.MULTILINE))
    assert sessions, listing
    return sessions


def test_every_session_nox_lists_is_in_the_sessions_table(site: Path, nox_sessions: dict[str, str]) -> None:
    for table in tables(site, "sessions"):
        shown = {row[0]: row[1] for row in table}
        assert sorted(shown) == sorted(nox_sessions)
        for name, description in nox_sessions.items():
            assert shown[name].startswith(text(description)), name


def test_every_variable_is_in_the_variables_table(site: Path) -> None:
    expected = [[v.name, text(v.overrides), f"{v.name}={v.example}"] for v in variables.ALL]
    for table in tables(site, "variables"):
        assert table == expected


def test_every_variable_a_probe_finds_set_is_in_its_table(site: Path) -> None:
    for table in tables(site, "given"):
        assert table == [[variable.name, text(variable.means)] for variable in variables.GIVEN]


def test_every_normalisation_rule_is_in_its_table(site: Path) -> None:
    expected = [[rule.what, rule.pattern.pattern, rule.example, rule.apply(rule.example)] for rule in printed.RULES]
    for table in tables(site, "normalised"):
        assert table == expected


def test_every_session_of_the_torchmatrix_command_is_in_its_table(site: Path) -> None:
    expected = [[name, command.usage, text(command.does)] for name, command in cli.COMMANDS.items()]
    for table in tables(site, "commands"):
        assert table == expected


def code_of(page: Path) -> Iterator[tuple[str, str]]:
    """Each code span and code block of ``page``, with the info of a block (``yaml``, ``console``) or ''."""
    for token in MarkdownIt("commonmark").enable("table").parse(page.read_text(encoding="utf-8")):
        if token.type in ("fence", "code_block"):
            yield token.info.strip(), token.content
        for child in token.children or ():
            if child.type == "code_inline":
                yield "", child.content


SESSION = re.compile(r"([a-z][\w-]*)(?:\(.*\))?")
"""A session as a command names it: ``report``, or ``probe(1.12.1)`` (a cell of ``probe``)."""


def sessions_named(code: str) -> Iterator[str]:
    """The sessions each `nox … -s NAME [NAME …]` in ``code`` runs: ``nox -j 2 -s probe report`` names two."""
    for line in code.splitlines():
        for command in re.findall(r"\bnox\b(.*)", line):
            try:
                words = shlex.split(command, comments=True)
            except ValueError:  # an unbalanced quote in a line of output
                words = command.split()
            for index, word in enumerate(words):
                if word in ("-s", "-e", "--session", "--sessions"):
                    for name in words[index + 1 :]:
                        session = SESSION.fullmatch(name)
                        if not session:  # an option, `&&`, or the text after a command in a table of output
                            break
                        yield session[1]


def test_sessions_named_reads_nox_command_lines() -> None:
    assert list(sessions_named('$ nox -j 2 -s probe report\nnox -s "probe(1.12.1)" -- --force  # one cell')) == [
        "probe",
        "report",
        "probe",
    ]
    assert list(sessions_named("pip install -e . && nox --script-mode none -s probe-installed -- py")) == [
        "probe-installed"
    ]
    assert list(sessions_named("nox > Running session probe(1.9.0)")) == []
    assert list(sessions_named("| `nox -j 2 -s probe report` vs one cell | 1.03x |")) == ["probe"]
    assert list(sessions_named('nox > torch 1.11.0: nox -s "probe(1.11.0)" … (log: …)')) == ["probe"]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_no_page_names_a_session_that_does_not_exist(page: Path, nox_sessions: dict[str, str]) -> None:
    named = {name for _, code in code_of(page) for name in sessions_named(code)}
    assert named <= set(nox_sessions), f"{page.name} names sessions the noxfile lacks: {named - set(nox_sessions)}"


def test_the_pages_show_a_command_for_every_session(nox_sessions: dict[str, str]) -> None:
    named = {name for page in DOCS_PAGES for _, code in code_of(page) for name in sessions_named(code)}
    assert sorted(set(nox_sessions) - named) == []


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_no_page_names_a_variable_that_does_not_exist(page: Path) -> None:
    named = set(re.findall(r"\bTORCHMATRIX_[A-Z0-9_]+", page.read_text(encoding="utf-8")))
    known = {variable.name for variable in (*variables.ALL, *variables.GIVEN)}
    assert named <= known, f"{page.name} names variables that do not exist: {named - known}"


NOT_KEYS = {"javascript:"}
"""Code that looks like a key and is not one: a URL scheme (in Reports' safety notes)."""


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_no_page_names_a_key_that_does_not_exist(page: Path, tmp_path: Path) -> None:
    """A key named in code (`output:`) is one the schema declares; a YAML block is a matrix the schema accepts."""
    for info, code in code_of(page):
        if not info and re.fullmatch(r"[a-z_]+:", code) and code not in NOT_KEYS:
            assert code[:-1] in all_key_names(), f"{page.name}: {code}"
        if info == "yaml":
            file = tmp_path / "block.yaml"
            file.write_text(code)
            doc = yamldoc.load(file, display_name=f"a yaml block of {page.name}")
            schema.check_mapping(doc, (), doc.value, schema.MATRIX_KEYS)


def yaml_key_paths(value: object, prefix: str = "") -> Iterator[str]:
    """The key paths a YAML value holds, written as the reference writes them (``torch[].version``)."""
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{prefix}.{key}" if prefix else key
            yield path
            yield from yaml_key_paths(item, path)
    elif isinstance(value, list):
        for item in value:
            yield from yaml_key_paths(item, f"{prefix}[]")


def test_the_matrix_page_example_shows_every_key() -> None:
    """The first YAML block of docs/matrix.md comments on every key: a new key must be explained there."""
    example = next(code for info, code in code_of(DOCS / "matrix.md") if info == "yaml")
    shown = set(yaml_key_paths(yaml.safe_load(example)))
    assert sorted({path for path, _ in key_paths()} - shown) == []
