"""The docs and the code agree, as the pages' Markdown reads.

No page (nor the README) names a variable or key that does not exist, every
example of the key reference is a value its key accepts, and the matrix page's
example shows every key. The built site's reference tables, and the sessions the
pages name, are checked against the code in tests/integration/test_docs.py: they
build the site and run `nox -l`.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
import yaml
from markdown_it import MarkdownIt

from torchmatrix import identity, variables
from torchmatrix.errors import ConfigError
from torchmatrix.matrix import loader, schema, yamldoc
from torchmatrix.matrix.schema import Key

from ..conftest import ROOT

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
        loader.load_matrix(matrix, probes_dir=tmp_path)
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


def test_the_identity_page_lists_every_part_as_the_code_declares_it() -> None:
    page = (DOCS / "identity.md").read_text(encoding="utf-8")
    section = page.split("## Each part, as a record stores it", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    listed = {row.split("|")[1].strip().strip("`"): [cell.strip() for cell in row.split("|")[2:-1]] for row in rows}
    assert set(listed) == {part.key for part in identity.PARTS} | {identity.READ}
    for part in identity.PARTS:
        label, portable = listed[part.key][0], listed[part.key][1]
        assert (label, portable) == (part.label, "yes" if part.portable else "no"), part.key
