"""Two matrices sharing one output folder, through real nox and torch: each keeps the other's records."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import Torch, Workspace

pytestmark = pytest.mark.integration


def second_matrix(workspace: Workspace, torch: Torch) -> Path:
    """Beside the workspace's matrix: another probe and another timeout, the same output folder."""
    other = workspace.folder / "other.yaml"
    probes = "probes: [probes/ok.py, probes/noisy.py]\n"
    other.write_text(f"torch:\n  - {torch.entry}\n{probes}devices: [cpu]\ntimeout: 30\noutput: out\n")
    return other


def test_each_run_replaces_only_its_records_and_a_rerun_of_either_runs_nothing(
    workspace: Workspace, torch_here: Torch, warm: None
) -> None:
    first = workspace.matrix([torch_here], ["ok", "raises"], timeout=60)
    second = second_matrix(workspace, torch_here)
    for matrix in (first, second):
        run = workspace.nox("-s", "probe", env=workspace.environ(TORCHMATRIX_MATRIX=str(matrix)))
        assert run.returncode == 0, run.output
    assert "running: 1 of 2 pairs: no record of noisy on cpu" in run.output  # ok's record made under 60 s stands

    for matrix in (first, second, first):
        rerun = workspace.nox("-s", "probe", env=workspace.environ(TORCHMATRIX_MATRIX=str(matrix)))
        assert rerun.returncode == 0 and "up to date" in rerun.output, rerun.output
    (result,) = workspace.scan().results
    assert sorted(record.probe for record in result.records) == ["noisy", "ok", "raises"]
    table = workspace.nox("-s", "report").stdout
    assert all(probe in table for probe in ("noisy", "ok", "raises"))
