"""The folder a pair runs from is the one a by-hand run starts in: real nox, real torch, two releases.

A test that runs a module beside it (``python -m helper``) or opens a data file
beside it by a relative path passes as it does by hand, when pytest is started
from the matrix's folder; a subprocess's error the test swallowed is in its
record, where pytest shows it; a file the pairs write there is theirs, not an
input, so a release writing it differently makes no record of another stale.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from torchmatrix import identity
from torchmatrix.core import Outcome, Record
from torchmatrix.results import CellResult

from .conftest import Run, Torch, Workspace

pytestmark = pytest.mark.integration

FILES = {
    "test_beside.py": """\
        import subprocess, sys

        def test_runs_the_module_beside_it():
            subprocess.run([sys.executable, "-m", "helper_beside_it"], check=True)
            with open("made_by_helper.txt") as made:
                assert made.read().startswith("torch ")

        def test_reads_the_data_beside_it():
            with open("data.txt") as data:
                assert data.read() == "42\\n"

        def test_a_failing_subprocess_says_why():
            subprocess.run([sys.executable, "-m", "broken_helper"], check=True)
        """,
    "helper_beside_it.py": """\
        import torch
        with open("made_by_helper.txt", "w") as made:  # each release writes its own version
            made.write("torch " + torch.__version__ + "\\n")
        """,
    "broken_helper.py": "raise ValueError('the helper broke')\n",
    "repro.py": """\
        with open("data.txt") as data:
            print(data.read().strip())
        with open("written_by_repro.txt", "w") as written:
            written.write("output\\n")
        """,
    "data.txt": "42\n",
}
TESTS = "test_beside.py::"


@dataclass(frozen=True)
class Ran:
    workspace: Workspace
    run: Run
    results: tuple[CellResult, ...]

    @property
    def folder(self) -> Path:
        return self.workspace.folder.resolve()

    def records(self, name: str) -> list[Record]:
        found = [record for result in self.results for record in result.records if record.probe == name]
        assert len(found) == len(self.results), name  # one per cell
        return found


@pytest.fixture(scope="module")
def ran(
    tmp_path_factory: pytest.TempPathFactory,
    envdir: Path,
    suite_cache: Path,
    torch_here: Torch,
    torch_other: Torch,
    warm: None,
) -> Ran:
    workspace = Workspace(tmp_path_factory.mktemp("workdir"), envdir, suite_cache)
    for name, text in FILES.items():
        (workspace.folder / name).write_text(textwrap.dedent(text))
    workspace.matrix_file.write_text(
        f"torch:\n  - {torch_other.entry}\n  - {torch_here.entry}\n"
        "probes: [test_beside.py, repro.py]\ndevices: [cpu]\ntimeout: 60\noutput: out\n"
    )
    run = workspace.nox("-s", "probe")
    return Ran(workspace, run, tuple(workspace.scan().results))


def test_a_test_runs_a_module_and_reads_a_file_beside_it_as_by_hand(ran: Ran) -> None:
    assert ran.run.returncode == 0, ran.run.output
    assert len(ran.results) == 2
    for name in ("test_runs_the_module_beside_it", "test_reads_the_data_beside_it"):
        assert [record.outcome for record in ran.records(TESTS + name)] == [Outcome.PASS] * 2, name
    assert [(record.outcome, record.message) for record in ran.records("repro.py")] == [(Outcome.PASS, "42")] * 2


def test_the_error_of_a_subprocess_a_failing_test_ran_is_in_its_record(ran: Ran) -> None:
    for record in ran.records(TESTS + "test_a_failing_subprocess_says_why"):
        assert record.outcome is Outcome.FAIL
        line, said, *stderr = record.message.splitlines()
        assert "CalledProcessError" in line and said == "Captured stderr:"
        assert stderr[-1] == "ValueError: the helper broke"
        assert record.metrics["captured_stderr"].strip().endswith("ValueError: the helper broke")


def test_the_files_read_beside_the_tests_are_their_inputs_and_those_the_pairs_wrote_are_not(ran: Ran) -> None:
    data, made, written = (
        str(ran.folder / name) for name in ("data.txt", "made_by_helper.txt", "written_by_repro.txt")
    )
    for name in (TESTS + "test_reads_the_data_beside_it", "repro.py"):
        for record in ran.records(name):
            read = record.inputs[identity.READ]
            assert read[data] == identity.file_digest(ran.folder / "data.txt"), name
            assert made not in read and written not in read, name
    assert (ran.folder / "made_by_helper.txt").read_text().startswith("torch ")  # written where a by-hand run would
    assert (ran.folder / "written_by_repro.txt").read_text() == "output\n"
    assert not list(ran.folder.rglob("__pycache__"))  # the helper's bytecode went where the cell's goes


def test_what_the_pairs_wrote_makes_no_later_run_stale_and_a_changed_data_file_does(ran: Ran) -> None:
    again = ran.workspace.nox("-s", "probe")
    assert again.returncode == 0, again.output
    assert again.output.count(") skipped: torch-") == 2, again.output  # each release rewrote the helper's file
    (ran.folder / "data.txt").write_text("43\n")
    edited = ran.workspace.nox("-s", "probe")
    assert f"{ran.folder / 'data.txt'} changed" in edited.output, edited.output
