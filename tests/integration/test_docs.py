"""The docs and the code agree, as the site `nox -s docs` builds shows them.

The site's reference tables show every key of matrix.yaml, every outcome, every
session nox finds in the noxfile and every variable, as the code declares them;
no page (nor the README) names a session that nox does not list, and the pages
show a command for every session. What the pages' Markdown alone shows is
checked in tests/unit/test_docs.py.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from sphinx.cmd.build import build_main

from torchmatrix import cli, variables
from torchmatrix.core import Outcome
from torchmatrix.worker import printed

from ..conftest import ROOT
from ..unit.test_docs import DOCS, DOCS_PAGES, PAGES, code_of, key_paths, sessions_named

pytestmark = [
    pytest.mark.integration,
    # myst-parser 5.2 still uses an attribute Sphinx 9 deprecates (for Sphinx 11): not ours to fix
    pytest.mark.filterwarnings("ignore::PendingDeprecationWarning:myst_parser"),
]


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


def test_the_site_publishes_the_example_report_and_the_inputs_its_scripts_read(site: Path) -> None:
    soup = BeautifulSoup((site / "reports.html").read_text(encoding="utf-8"), "html.parser")
    linked = {link["href"] for link in soup.select("a[href^='example-report/']")}
    assert linked == {"example-report/compatibility.html", "example-report/CHECK-CHANGES.md"}
    for href in linked:
        assert (site / href).is_file(), href
    page = (site / "example-report" / "compatibility.html").read_text(encoding="utf-8")
    assert (
        "linux-x86_64-intel-xeon" in page and (site / "example-report" / "compatibility-opsweep-checks.html").is_file()
    )
    assert (site / "example-report" / "inputs" / "opsweep" / "samples.json").is_file()


def test_every_key_of_the_matrix_is_in_the_key_reference(site: Path) -> None:
    expected = [
        [path, "yes" if key.required else "no", f"{path.rsplit('.', 1)[-1]}: {key.example}", text(key.help)]
        for path, key in key_paths()
    ]
    for table in tables(site, "matrix-keys"):
        assert table == expected


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
    # "* probe -> Install one …": while the matrix is broken, the probe session has no cells
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
    expected = [
        [rule.what, rule.pattern.pattern.decode(), rule.example, rule.apply(rule.example), ", ".join(rule.untouched)]
        for rule in printed.RULES
    ]
    for table in tables(site, "normalised"):
        assert table == expected


def test_every_session_of_the_torchmatrix_command_is_in_its_table(site: Path) -> None:
    expected = [[name, command.usage, text(command.does)] for name, command in cli.COMMANDS.items()]
    for table in tables(site, "commands"):
        assert table == expected


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_no_page_names_a_session_that_does_not_exist(page: Path, nox_sessions: dict[str, str]) -> None:
    named = {name for _, code in code_of(page) for name in sessions_named(code)}
    assert named <= set(nox_sessions), f"{page.name} names sessions the noxfile lacks: {named - set(nox_sessions)}"


def test_the_pages_show_a_command_for_every_session(nox_sessions: dict[str, str]) -> None:
    named = {name for page in DOCS_PAGES for _, code in code_of(page) for name in sessions_named(code)}
    assert sorted(set(nox_sessions) - named) == []
