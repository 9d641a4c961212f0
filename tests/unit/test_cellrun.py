"""A cell run is a value: what it stored, or why nothing, told apart from how nox says it."""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import IO

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from torchmatrix import cellrun, identity, results
from torchmatrix.cellrun import CellOutcome, CellRequest, Installer, NothingStored, UpToDate, Written
from torchmatrix.core import Constraint, Outcome, PinSource
from torchmatrix.environment import cellenv
from torchmatrix.index import releases
from torchmatrix.matrix import PinRule, TorchEntry
from torchmatrix.project import Project
from torchmatrix.sessions import probe as probe_session
from torchmatrix.sessions.handback import ResultFile, Stored

from .test_cellenv import ASKED, SOURCE, make_env
from .test_project import project
from .test_results import result


class Environment:
    """A cell's environment whose installer answers as told: each install fails while ``failing`` says so."""

    def __init__(self, folder: Path, failing: Sequence[bool] = (True,), uses_uv: bool = False) -> None:
        self.location = folder / "probe-1-12-1"
        self.location.mkdir(parents=True)
        self.python = str(self.location / "bin" / "python")
        self.uses_uv = uses_uv
        self.failing = list(failing)
        self.installs: list[list[str]] = []
        self.lines: list[str] = []
        self.rebuilt = 0

    def log(self, line: str) -> None:
        self.lines.append(line)

    warn = log

    def install(self, arguments: Sequence[str], output: IO[str]) -> bool:
        self.installs.append(list(arguments))
        output.write("Resolved 3 packages\nerror: no matching distribution for torch==1.12.1\n")
        return not self.failing.pop(0)

    def run(self, arguments: Sequence[str]) -> str:
        return ""  # the seed: ensurepip

    def rebuild(self) -> None:
        self.rebuilt += 1


def planned(tmp_path: Path) -> Project:
    return project(tmp_path, TorchEntry(Version("1.12.1")))


def test_a_failed_install_in_a_new_environment_is_the_cells_install_error_stored(tmp_path: Path) -> None:
    here = planned(tmp_path)
    ended = cellrun.run_cell(here, here.cells[0], Environment(tmp_path), Installer(), CellRequest())
    assert isinstance(ended, CellOutcome) and ended.outcome is Outcome.INSTALL_ERROR
    assert "no matching distribution for torch==1.12.1" in ended.message and ended.path is not None
    stored = results.read(ended.path)
    assert (stored.outcome, stored.finished_at) == (Outcome.INSTALL_ERROR, ended.finished_at)


def test_a_stored_result_keeps_each_constraint_its_cell_got_with_the_rule_that_gave_it(tmp_path: Path) -> None:
    known = PinRule(SpecifierSet("<2.3"), (), "built against NumPy 1.x", (Requirement("numpy<2"),))
    here = project(tmp_path, TorchEntry(Version("1.12.1")), known=known)
    ended = cellrun.run_cell(here, here.cells[0], Environment(tmp_path), Installer(), CellRequest())
    assert isinstance(ended, CellOutcome) and ended.path is not None
    stored = results.read(ended.path)
    assert stored.inputs["constraints"] == ["numpy<2"]
    assert stored.constrained_by == (Constraint("numpy<2", PinSource.KNOWN, "<2.3", "built against NumPy 1.x"),)


def test_an_index_found_dead_is_not_asked_again_in_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(releases, "reachable", lambda url: False)
    here, installer = planned(tmp_path), Installer()
    first = Environment(tmp_path / "a", failing=[True, True], uses_uv=True)
    ended = cellrun.run_cell(here, here.cells[0], first, installer, CellRequest())
    assert ["--offline" in install for install in first.installs] == [False, True]
    assert f"cannot reach {here.matrix.index_url}: installing from uv's cache alone (--offline)" in first.lines
    assert isinstance(ended, CellOutcome) and "cannot be reached and uv's cache lacks something" in ended.message
    later = Environment(tmp_path / "b", failing=[True], uses_uv=True)
    cellrun.run_cell(here, here.cells[0], later, installer, CellRequest())
    assert ["--offline" in install for install in later.installs] == [True], "offline at once"
    fresh = Environment(tmp_path / "c", failing=[True, True], uses_uv=True)
    cellrun.run_cell(here, here.cells[0], fresh, Installer(), CellRequest())  # another run knows nothing of it
    assert ["--offline" in install for install in fresh.installs] == [False, True]


def test_a_new_environment_of_a_python_without_ensurepip_says_why_it_is_left_unseeded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(releases, "reachable", lambda url: True)
    here = planned(tmp_path)
    python = here.cells[0].interpreter
    assert python is not None
    cell = dataclasses.replace(here.cells[0], interpreter=dataclasses.replace(python, seed=(), ensurepip=False))
    made = Environment(tmp_path / "uv", uses_uv=True)
    cellrun.run_cell(here, cell, made, Installer(), CellRequest())
    assert f"python{python.minor} at {python.path} has no ensurepip" in "\n".join(made.lines)
    seeded = Environment(tmp_path / "virtualenv")  # virtualenv seeds the environments it makes its own way
    cellrun.run_cell(here, cell, seeded, Installer(), CellRequest())
    assert "has no ensurepip" not in "\n".join(seeded.lines)


def test_a_cells_own_outcome_never_replaces_measured_records(tmp_path: Path) -> None:
    here = planned(tmp_path)
    cell = dataclasses.replace(here.cells[0], outcome=Outcome.NO_WHEEL, hint="no wheel for this platform")
    measured = result(machine=here.machine, cell_id=cell.id, torch="1.12.1", python=cell.python)
    path = results.write(here.results_dir, measured)
    ended = cellrun.run_cell(here, cell, Environment(tmp_path), Installer(), CellRequest())
    assert ended == CellOutcome(
        Outcome.NO_WHEEL, f"no wheel for this platform\n(the records stored at {measured.finished_at} are kept)", None
    )
    assert results.read(path) == measured


def test_what_stops_a_run_before_anything_is_stored_is_a_value(tmp_path: Path) -> None:
    here = planned(tmp_path)
    unplanned = dataclasses.replace(here.cells[0], interpreter=None, outcome=None, hint="no Python 3.10 here")
    assert cellrun.run_cell(here, unplanned, Environment(tmp_path), Installer(), CellRequest()) == NothingStored(
        "no Python 3.10 here"
    )
    newer = here.result_file(here.cells[0])
    newer.parent.mkdir(parents=True)
    newer.write_text(json.dumps({"schema": 999}))
    ended = cellrun.run_cell(here, here.cells[0], Environment(tmp_path / "x"), Installer(), CellRequest())
    assert isinstance(ended, NothingStored) and "holds a newer torchmatrix's result" in ended.message
    assert json.loads(newer.read_text()) == {"schema": 999}


def test_a_stored_result_that_cannot_be_read_is_kept_aside_not_lost(tmp_path: Path) -> None:
    """It may still hold records of probes this run does not run: it is kept under a name no reader takes."""
    here = planned(tmp_path)
    broken = here.result_file(here.cells[0])
    broken.parent.mkdir(parents=True)
    broken.write_text('{"schema": 2, "records": [{"probe": "mine"')
    made = Environment(tmp_path / "x")
    ended = cellrun.run_cell(here, here.cells[0], made, Installer(), CellRequest())
    assert isinstance(ended, CellOutcome) and ended.path == broken
    [kept] = broken.parent.glob(f"{broken.name}.unreadable-*")
    assert kept.read_text() == '{"schema": 2, "records": [{"probe": "mine"'
    assert any("the stored result cannot be read (" in line and f"kept as {kept}" in line for line in made.lines)
    assert results.scan(here.results_dir).warnings == (), "what is kept aside is no result to warn of"


class Session:
    """What the probe session's telling asks of nox: skip and error end it, as nox's do."""

    class Ended(Exception):
        pass

    def __init__(self) -> None:
        self.said: list[tuple[str, str]] = []

    def skip(self, message: str) -> None:
        self.said.append(("skip", message))
        raise Session.Ended

    def error(self, message: str) -> None:
        self.said.append(("error", message))
        raise Session.Ended


@pytest.mark.parametrize(
    ("ended", "said", "stored"),
    [
        (Written(Path("r.json"), result()), [], Stored.WRITTEN),
        (Written(Path("r.json"), result(), ("autograd_dot on cpu: fail",)), ["error"], Stored.WRITTEN),
        (UpToDate(Path("r.json"), result(), "up to date"), ["skip"], Stored.UP_TO_DATE),
        (CellOutcome(Outcome.INSTALL_ERROR, "no torch", Path("r.json")), ["error"], Stored.WRITTEN),
        (CellOutcome(Outcome.NO_WHEEL, "no wheel", Path("r.json")), ["skip"], Stored.WRITTEN),
        (CellOutcome(Outcome.NO_WHEEL, "no wheel; kept", None), ["skip"], Stored.NOTHING),
        (
            CellOutcome(Outcome.NO_INTERPRETER, "no Python", Path("r.json"), "", ("✗ c: no-interpreter",)),
            ["error"],
            Stored.WRITTEN,
        ),
        (NothingStored("cannot write"), ["error"], Stored.NOTHING),
    ],
)
def test_the_probe_session_says_each_ending_in_noxs_words(
    ended: cellrun.Ended, said: list[str], stored: Stored
) -> None:
    session, ending = Session(), ResultFile()
    with contextlib.suppress(Session.Ended):
        probe_session.tell(session, ended, ending)  # type: ignore[arg-type]
    assert [kind for kind, _ in session.said] == said
    assert ending.stored is stored


def test_under_strict_a_cell_this_machine_has_no_python_for_fails_unless_expected(tmp_path: Path) -> None:
    here = planned(tmp_path)
    cell = dataclasses.replace(here.cells[0], interpreter=None, outcome=Outcome.NO_INTERPRETER, hint="no Python 3.10")
    strict = cellrun.run_cell(here, cell, Environment(tmp_path), Installer(), CellRequest(strict=True))
    assert isinstance(strict, CellOutcome) and strict.not_allowed == (f"✗ {cell.id}: no-interpreter (no Python 3.10)",)
    loose = cellrun.run_cell(here, cell, Environment(tmp_path / "again"), Installer(), CellRequest())
    assert isinstance(loose, CellOutcome) and loose.not_allowed == ()


class StoppedRebuild(Environment):
    """An environment whose making anew stops halfway, as at Ctrl-C while uv clears it: what was there stays."""

    def rebuild(self) -> None:
        raise KeyboardInterrupt


def test_a_rebuild_stopped_halfway_leaves_no_environment_that_counts_as_built(tmp_path: Path) -> None:
    env = StoppedRebuild(tmp_path)
    make_env(env.location)
    cellenv.mark_built(env.location, SOURCE, ASKED)
    here = planned(tmp_path)
    elsewhere = identity.build_source("https://pypi.org/simple", ["/srv/wheels"])
    with pytest.raises(KeyboardInterrupt):
        cellrun._ensure_sound(env, here.cells[0], elsewhere, ASKED)
    # Run again from where it came from, the torch and packages left where the removal stopped vouch for nothing.
    assert cellenv.built_torch(env.location) is None and cellenv.half_built(env.location)
    assert cellenv.source_mismatch(env.location, SOURCE) == ""


def test_an_environment_a_removal_left_halfway_is_rebuilt_though_its_marker_stayed(tmp_path: Path) -> None:
    """``nox --reuse-venv=never`` clears the environment before torchmatrix's code runs: stopped halfway, the marker
    may stay over packages whose files are gone, which the installer, reading their metadata, takes for installed."""
    env = Environment(tmp_path)
    site = (
        make_env(env.location, "torch/__init__.py,sha256=AAAA,1\ntorch/__pycache__/x.pyc,,\n")
        / "lib/python3.9/site-packages"
    )
    (site / "torch").mkdir()
    (site / "torch" / "__init__.py").write_text("")
    cellenv.mark_built(env.location, SOURCE, ASKED)
    cellrun._ensure_whole(env)
    assert env.rebuilt == 0  # whole, its bytecode never compiled
    (site / "torch" / "__init__.py").unlink()
    cellrun._ensure_whole(env)
    assert env.rebuilt == 1
    assert env.lines[-1].endswith(
        "torch/__init__.py, which its packages installed, is gone: a removal of it stopped halfway"
    )


def test_an_environment_virtualenv_seeded_is_not_rebuilt_for_the_bytecode_folders_its_record_lists(
    tmp_path: Path,
) -> None:
    """virtualenv's seeder lists each ``__pycache__`` folder as a row of its own, and copies none where it compiled
    nothing: a folder of bytecode that is not there is no removal stopped halfway, or every run rebuilds."""
    env = Environment(tmp_path)
    record = "torch/__init__.py,sha256=AAAA,1\ntorch/__pycache__,,\ntorch/sub/__pycache__/x.cpython-39.pyc,,\n"
    site = make_env(env.location, record) / "lib/python3.9/site-packages"
    (site / "torch").mkdir()
    (site / "torch" / "__init__.py").write_text("")
    cellenv.mark_built(env.location, SOURCE, ASKED)
    cellrun._ensure_whole(env)
    assert env.rebuilt == 0 and cellenv.missing_file(env.location) is None
