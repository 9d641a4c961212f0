"""A child nox, really run: the named sessions of a noxfile, with the variables given, into a log or through;
this checkout's probe sessions, on a stand-in torch, handing back how they ended."""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import nox
import pytest

from torchmatrix import results, variables
from torchmatrix.project import Project, load
from torchmatrix.sessions import childnox
from torchmatrix.sessions.handback import HandBack, Stored

from .. import standin
from ..conftest import ROOT

pytestmark = pytest.mark.integration


NOXFILE = textwrap.dedent(
    """
    import json, os, sys
    import nox

    @nox.session(python=False)
    def probe(session):
        print("hello from", session.name)
        with open(os.environ["OUT"], "w") as out:
            found = {"torch": os.environ.get("TORCHMATRIX_TORCH"), "cache": str(session.cache_dir)}
            json.dump(dict(found, posargs=session.posargs), out)

    @nox.session(python=False)
    def other(session):
        session.error("must not run")
    """
)


def test_the_sessions_run_with_the_variables_and_their_output_goes_to_the_log(tmp_path: Path) -> None:
    noxfile = tmp_path / "noxfile.py"
    noxfile.write_text(NOXFILE)
    out, log = tmp_path / "out.json", tmp_path / "logs" / "probe.log"
    settings = {"OUT": str(out), variables.TORCH.name: "1.12.0"}
    code = childnox.run(noxfile, tmp_path / "envs", ["probe"], settings, log, ["--repeat", "5"])
    assert code == 0
    assert json.loads(out.read_text()) == {
        "torch": "1.12.0",
        "cache": str(tmp_path / "envs" / ".cache"),
        "posargs": ["--repeat", "5"],
    }
    text = log.read_text()
    nox = shlex.join([sys.executable, "-c", childnox.NOX_MAIN])
    assert text.startswith(f"$ {nox} --noxfile {noxfile} --envdir {tmp_path / 'envs'}")
    assert "hello from probe" in text and "must not run" not in text


def test_the_exit_code_is_nox_s(tmp_path: Path) -> None:
    noxfile = tmp_path / "noxfile.py"
    noxfile.write_text(NOXFILE)
    assert childnox.run(noxfile, tmp_path / "envs", ["other"], {}, tmp_path / "other.log") == 1


MATRIX = """
torch: [9.0.0]
probes: [alpha.py]
devices: [cpu]
timeout: 60
output: out
find_links: [wheels]
"""


def probe_cells(folder: Path, matrix: str = MATRIX) -> tuple[Project, nox.Session]:
    """The project of a matrix of one stand-in torch and one probe in ``folder``, and what run_cells needs of
    the running nox session: where its environments are."""
    standin.wheel(folder / "wheels", "9.0.0", {"alpha": "pass"})
    standin.probe(folder, "alpha")
    (folder / "matrix.yaml").write_text(matrix)
    environ = dict(os.environ, TORCHMATRIX_MATRIX=str(folder / "matrix.yaml"), TORCHMATRIX_MACHINE="ci-box")
    session = SimpleNamespace(env_dir=folder / ".nox" / "bisect")
    return load(folder, environ), cast(nox.Session, session)


def test_a_probe_session_hands_back_the_result_it_wrote_then_that_it_is_up_to_date(tmp_path: Path) -> None:
    here, session = probe_cells(tmp_path)
    (cell,) = here.cells
    log = tmp_path / "logs" / "cell.log"
    handed = childnox.run_cells(here, session, ROOT / "noxfile.py", [cell], log)
    written = results.read(here.result_file(cell)).finished_at
    assert handed == {cell.session: HandBack(cell.session, Stored.WRITTEN, here.result_file(cell), written)}
    assert f"Running session {cell.session}" in log.read_text()  # the log is kept, for people

    (again,) = childnox.run_cells(here, session, ROOT / "noxfile.py", [cell], log).values()
    assert (again.stored, again.result, again.finished_at) == (Stored.UP_TO_DATE, here.result_file(cell), written)
    assert again.message.startswith(f"{cell.id}: ") and "up to date" in again.message


def test_a_probe_session_that_stops_hands_back_why_and_one_that_never_began_is_said_so(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file, where the results would go\n")
    here, session = probe_cells(tmp_path, MATRIX.replace("output: out", "output: taken/out"))
    (cell,) = here.cells
    log = tmp_path / "cell.log"
    (handed,) = childnox.run_cells(here, session, ROOT / "noxfile.py", [cell], log).values()
    assert (handed.stored, handed.result) == (Stored.NOTHING, None)
    assert handed.message == (
        f"{tmp_path / 'matrix.yaml'}: output: results cannot go under {here.machine_dir}: "
        f"{tmp_path / 'taken'} is a file\n  hint: name a folder you can write in (`output:`, or $TORCHMATRIX_OUTPUT "
        "for one run)"
    )

    unplanned = dataclasses.replace(cell, parameter="9.0.0-py3.1")  # no such session: nox stops before any runs
    (never,) = childnox.run_cells(here, session, ROOT / "noxfile.py", [unplanned], log).values()
    assert never == HandBack(
        "probe(9.0.0-py3.1)",
        Stored.NOTHING,
        None,
        message=f"the child nox handed back nothing: it stopped before its probe session began, or could not write its "
        f"hand-back (exit 3); see {log}",
    )
    assert "Sessions not found: probe(9.0.0-py3.1)" in log.read_text()
