"""A fresh clone's first run: the default matrix's output is the user's own, so no file of the clone changes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from torchmatrix import results

from .. import standin
from ..conftest import ROOT

pytestmark = pytest.mark.integration


def git(folder: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True, text=True).stdout


def test_a_first_probe_run_in_a_fresh_clone_changes_no_file_of_it(tmp_path: Path, private_cache: Path) -> None:
    """The clone's own noxfile and matrix.yaml, one cell of a stand-in torch: what it writes, git ignores."""
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "--quiet", str(ROOT), str(clone))
    standin.wheel(tmp_path / "wheels", "9.0.0", {"alpha": "pass"})
    probe = standin.probe(tmp_path, "alpha")
    with standin.index(tmp_path / "wheels") as index:
        environ = dict(
            os.environ, TORCHMATRIX_INDEX_URL=index, TORCHMATRIX_TORCH="9.0.0", TORCHMATRIX_PROBES=str(probe)
        )
        for name in ("TORCHMATRIX_MATRIX", "TORCHMATRIX_MACHINE", "TORCHMATRIX_OUTPUT"):
            environ.pop(name, None)  # the clone's matrix.yaml as it is, on this machine as it names itself
        run = subprocess.run(
            [sys.executable, "-m", "nox", "-s", "probe"], cwd=clone, env=environ, capture_output=True, text=True,
            timeout=900,
        )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    (stored,) = results.scan(clone / "out" / "results").results
    assert (stored.torch, {record.probe for record in stored.records}) == ("9.0.0", {"../alpha.py"})  # beside it
    assert (clone / "out" / "COMPATIBILITY.md").is_file()  # the report that follows every probe run
    assert git(clone, "status", "--porcelain") == ""
