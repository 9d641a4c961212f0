"""Each (probe, device) pair starts from the same state, from the matrix's folder with an empty temporary folder
of its own, and leaves nothing running.

Real nox on real torch, both ways a worker starts a pair's process: forked
(Linux) and a new Python (macOS, Windows; $TORCHMATRIX_WORKER_START=spawn here).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from torchmatrix.core import Outcome
from torchmatrix.results import CellResult

from ..conftest import ROOT
from .conftest import PROBES, Run, Torch, Workspace, alive, kill_all

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not Path("/proc").is_dir(), reason="process checks read /proc"),
]

ORDER = ["empties_its_folder", "sees_state", "changes_state", "sees_state_again", "leaves_daemons"]
UNTOUCHED = {"default_dtype": "torch.float32", "grad_enabled": True, "deterministic": False, "variable": None}


@dataclass(frozen=True)
class Isolated:
    workspace: Workspace
    run: Run
    result: CellResult
    pids: list[int]
    alive_after_the_run: list[int]

    def metrics(self, probe: str) -> dict:
        (record,) = [record for record in self.result.records if record.probe == probe]
        assert record.outcome is Outcome.PASS, record.message
        return record.metrics


@pytest.fixture(scope="module", params=["fork", "spawn"])
def isolated(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    envdir: Path,
    suite_cache: Path,
    torch_here: Torch,
    warm: None,
):
    workspace = Workspace(tmp_path_factory.mktemp(f"isolation-{request.param}"), envdir, suite_cache)
    shutil.copy(PROBES / "sees_state.py", workspace.folder / "probes" / "sees_state_again.py")
    workspace.matrix([torch_here], ORDER, timeout=60)
    pids_file = workspace.folder / "pids"
    environ = workspace.environ(TORCHMATRIX_FAULTS_PIDS=str(pids_file), TORCHMATRIX_WORKER_START=request.param)
    run = workspace.nox("-s", "probe", env=environ)
    pids = [int(pid) for pid in pids_file.read_text().split()] if pids_file.exists() else []
    try:
        (result,) = workspace.scan().results
        yield Isolated(workspace, run, result, pids, [pid for pid in pids if alive(pid)])
    finally:
        kill_all(pids)


def test_every_pair_runs(isolated: Isolated) -> None:
    assert isolated.run.returncode == 0, isolated.run.output
    assert [(record.probe, record.outcome) for record in isolated.result.records] == [
        (probe, Outcome.PASS) for probe in ORDER
    ]


def test_a_pair_sees_the_state_after_import_whatever_the_pairs_before_it_changed(isolated: Isolated) -> None:
    before, after = isolated.metrics("sees_state"), isolated.metrics("sees_state_again")
    for seen in (before, after):
        assert {key: seen[key] for key in UNTOUCHED} == UNTOUCHED
        assert seen["num_threads"] == isolated.result.environment["num_threads"]  # not the 1 changes_state set
        assert seen["matmul_precision"] in ("highest", None)  # None: a torch before 1.12
        assert seen["temporary_listing"] == []
    folder = str(isolated.workspace.folder.resolve())
    assert before["cwd"] == after["cwd"] == folder  # the matrix's, not the / the pair between them went to
    assert before["temporary"] != after["temporary"]


def test_a_probe_that_empties_its_temporary_folder_empties_its_own_alone(isolated: Isolated) -> None:
    emptied = isolated.metrics("empties_its_folder")
    assert emptied["deleted"] == []  # a fresh, empty folder: the system's shared one was never in reach
    assert Path(emptied["folder"]).name.startswith("torchmatrix-pair-")
    assert not Path(emptied["folder"]).exists()  # removed after the pair, with what it wrote there
    assert (ROOT / "README.md").exists()  # the checkout nox runs from: a worker's own working folder
    assert (isolated.workspace.folder / "matrix.yaml").exists()
    for seen in ("sees_state", "sees_state_again"):
        assert not Path(isolated.metrics(seen)["temporary"]).exists()


def test_a_child_in_a_session_of_its_own_and_a_daemon_die_with_their_pair(isolated: Isolated) -> None:
    assert len(isolated.pids) == 2  # the setsid child, the double-forked daemon
    assert isolated.alive_after_the_run == []
