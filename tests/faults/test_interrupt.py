"""Interrupting real nox runs: finished cells keep their results, nothing half-written is read, no process lingers."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from .conftest import INJECT, MACHINE, Torch, Workspace, read_until, stop, wait_for_pids, wait_until_dead

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not Path("/proc").is_dir(), reason="process checks read /proc"),
]

# (signal, sent to nox's whole process group as a terminal's Ctrl-C is, nox's exit status)
INTERRUPTIONS = [
    pytest.param(signal.SIGINT, False, 130, id="SIGINT"),
    pytest.param(signal.SIGINT, True, 130, id="ctrl-c"),
    pytest.param(signal.SIGTERM, False, -signal.SIGTERM, id="SIGTERM"),
    pytest.param(signal.SIGKILL, False, -signal.SIGKILL, id="SIGKILL"),
]


def leftovers(workspace: Workspace) -> list[str]:
    return sorted(path.name for path in workspace.machine_dir.glob(".*.tmp"))


@pytest.mark.parametrize(("signum", "group", "status"), INTERRUPTIONS)
def test_interrupted_in_the_middle_of_a_cell(
    workspace: Workspace,
    torch_here: Torch,
    torch_other: Torch,
    pids_file: Path,
    warm: None,
    signum: signal.Signals,
    group: bool,
    status: int,
) -> None:
    workspace.matrix([torch_other, torch_here], ["ok", "hang"], timeout=600)
    environ = workspace.environ(TORCHMATRIX_FAULTS_HANG=torch_here.version, TORCHMATRIX_FAULTS_PIDS=str(pids_file))
    nox = workspace.start("-s", "probe", env=environ)
    try:
        read_until(nox, "hang on cpu ...", count=2)  # the first cell's hang passes; the second's hangs
        pids = wait_for_pids(pids_file)
        (os.killpg if group else os.kill)(nox.pid, signum)
        assert nox.wait(timeout=60) == status
    finally:
        stop(nox)

    assert wait_until_dead(pids) == []  # the worker and the process its probe started
    scan = workspace.scan()
    assert scan.warnings == ()
    (finished,) = scan.results  # the first cell's, whole; nothing of the interrupted one
    assert finished.torch == torch_other.version and len(finished.records) == 2
    assert leftovers(workspace) == []

    rerun = workspace.nox("-s", "probe", env=workspace.environ(TORCHMATRIX_FAULTS_HANG="never"))
    assert rerun.returncode == 0, rerun.output
    assert sorted(result.torch for result in workspace.scan().results) == sorted(
        [torch_other.version, torch_here.version]
    )


@pytest.mark.parametrize(
    ("signum", "status"),
    [pytest.param(signal.SIGKILL, -signal.SIGKILL, id="SIGKILL"), pytest.param(signal.SIGINT, 130, id="SIGINT")],
)
def test_interrupted_while_writing_a_result(
    workspace: Workspace, torch_here: Torch, warm: None, signum: signal.Signals, status: int
) -> None:
    workspace.matrix([torch_here], ["ok"])
    first = workspace.nox("-s", "probe")
    assert first.returncode == 0, first.output
    (path,) = workspace.machine_dir.glob("*.json")
    before = path.read_bytes()

    environ = workspace.environ(
        PYTHONPATH=str(INJECT),
        TORCHMATRIX_FAULTS_SIGNAL_AT_RENAME=signum.name,
        TORCHMATRIX_FAULTS_RESULTS=str(workspace.results_dir),
    )
    interrupted = workspace.nox("-s", "probe", "--", "--force", env=environ)  # up to date: force a new write
    assert interrupted.returncode == status, interrupted.output
    assert "written to" not in interrupted.output

    assert path.read_bytes() == before  # the old result, whole
    if signum == signal.SIGKILL:
        (leftover,) = leftovers(workspace)  # the new one, complete under its temporary name: never read
        assert leftover.startswith(f".{path.name}.")
    else:
        assert leftovers(workspace) == []  # an interrupted write removes its temporary file
    report = workspace.nox("-s", "report")
    assert report.returncode == 0 and "skipping" not in report.output and ".tmp" not in report.output

    rerun = workspace.nox("-s", "probe")
    assert rerun.returncode == 0, rerun.output
    assert "up to date" in rerun.output and path.read_bytes() == before  # the old result still stands for the cell
    assert [result.machine for result in workspace.scan().results] == [MACHINE]
