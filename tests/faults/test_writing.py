"""Results that cannot be written, through real nox and torch: one message, the measurements kept, exit non-zero.

Run as root, a mode bit does not stop a write, so the folders are made
immutable (``chattr +i``) and the disk is a full tmpfs mounted for the test;
where this machine allows neither, the test says so and skips.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import MACHINE, Torch, Workspace

pytestmark = pytest.mark.integration


@pytest.fixture
def immutable() -> Iterator[list[Path]]:
    """Folders to make immutable (``chattr +i``), made mutable again afterwards."""
    folders: list[Path] = []
    yield folders
    for folder in folders:
        subprocess.run(["chattr", "-i", str(folder)], check=False)


def make_immutable(folder: Path, folders: list[Path]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not allowed here")
    folders.append(folder)


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A folder on a tmpfs of 1 MiB that a file has filled."""
    mount = tmp_path / "full"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        with (mount / "filler").open("wb") as filler:
            try:
                while True:
                    filler.write(b"\0" * 65536)
                    filler.flush()
            except OSError:
                pass
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_after_the_probes_ran_is_one_message_and_the_result_is_printed(
    workspace: Workspace, torch_here: Torch, full_disk: Path, warm: None
) -> None:
    workspace.matrix([torch_here], ["ok"])
    run = workspace.nox("-s", f"probe({torch_here.version})", env=workspace.environ(TORCHMATRIX_OUTPUT=str(full_disk)))
    assert run.returncode == 1, run.output
    assert "Traceback" not in run.output
    cell_id = f"torch-{torch_here.version}-py{torch_here.python}"
    message = f"{cell_id}: cannot write {full_disk}/results/{MACHINE}/{cell_id}.json: No space left on device"
    assert f"aborted: {message}; the result is printed above as JSON" in run.output, run.output[-3000:]
    printed = json.loads(run.stdout[run.stdout.index("{\n") : run.stdout.index("\n}\n") + 2])
    assert printed["cell_id"] == cell_id and [record["outcome"] for record in printed["records"]] == ["pass"]


def test_a_read_only_results_folder_refuses_probe_at_once_but_not_what_only_reads(
    workspace: Workspace, torch_here: Torch, immutable: list[Path], warm: None
) -> None:
    workspace.matrix([torch_here], ["ok"])
    with workspace.matrix_file.open("a") as matrix:
        matrix.write("expect:\n  - {probe: ok, device: cpu, torch: '>=1', outcome: pass}\n")
    make_immutable(workspace.machine_dir, immutable)

    run = workspace.nox("-s", "probe")
    assert run.returncode == 2, run.output
    assert (
        f"output: results cannot go under {workspace.machine_dir}: {workspace.machine_dir} is read-only" in run.output
    )
    assert "Traceback" not in run.output
    assert "uv pip install" not in run.output  # refused before anything was installed

    assert workspace.nox("-l").returncode == 0
    plan = workspace.nox("-s", "plan")
    assert plan.returncode == 0 and "ready" in plan.stdout
    verify = workspace.nox("-s", "verify")
    assert "no up-to-date result" in verify.output and "torchmatrix: error" not in verify.output
