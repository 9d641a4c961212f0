"""Two real `nox -s probe` runs at once on the same results folder end with whole, valid files only.

They share the cells' environments too: a run of a cell waits while another measures it.
"""

from __future__ import annotations

import pytest

from .conftest import Torch, Workspace, stop

pytestmark = pytest.mark.integration


def test_two_probe_runs_at_once_leave_only_valid_files(
    workspace: Workspace, torch_here: Torch, torch_other: Torch, warm: None
) -> None:
    workspace.matrix([torch_other, torch_here], ["ok", "slow", "raises"])
    environ = workspace.environ(TORCHMATRIX_FAULTS_SLOW="1")
    runs = [workspace.start("-s", "probe", env=environ) for _ in range(2)]
    try:
        outputs = [run.communicate(timeout=300)[0] for run in runs]
    finally:
        for run in runs:
            stop(run)

    for run, output in zip(runs, outputs, strict=True):
        assert run.returncode == 0, output
    # They share each cell's environment: one measures a cell while the other waits, then finds it up to date.
    assert sum(output.count("; written to ") for output in outputs) == 2, outputs
    skipped = [line for output in outputs for line in output.splitlines() if line.startswith("nox > Session probe(")]
    assert sum(" skipped: " in line and ": up to date (" in line for line in skipped) == 2, outputs
    scan = workspace.scan()
    assert scan.warnings == ()
    assert sorted(result.torch for result in scan.results) == sorted([torch_other.version, torch_here.version])
    for result in scan.results:
        assert [(record.probe, record.outcome.value) for record in result.records] == [
            ("ok", "pass"), ("slow", "pass"), ("raises", "error"),
        ]  # fmt: skip
    assert sorted(path.name for path in workspace.machine_dir.iterdir() if path.name != ".lock") == sorted(
        f"{result.cell_id}.json" for result in scan.results
    )
