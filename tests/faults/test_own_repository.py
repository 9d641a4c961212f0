"""torchmatrix installed in someone else's repository: a noxfile of two lines gives the sessions over its files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import PROBES, Torch

pytestmark = pytest.mark.integration

NOXFILE = "import torchmatrix.noxsessions\n\ntorchmatrix.noxsessions.register(__file__)\n"


def test_a_two_line_noxfile_runs_the_repositorys_own_matrix_probes_and_results(
    tmp_path: Path, envdir: Path, suite_cache: Path, torch_here: Torch, warm: None
) -> None:
    repository = tmp_path / "mylib"
    (repository / "probes").mkdir(parents=True)
    (repository / "probes" / "mine.py").write_text((PROBES / "ok.py").read_text())
    (repository / "noxfile.py").write_text(NOXFILE)
    (repository / "matrix.yaml").write_text(f"torch:\n  - {torch_here.entry}\nprobes: [mine]\ndevices: [cpu]\n")
    environ = {"TORCHMATRIX_CACHE_DIR": str(suite_cache), "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin"}
    command = [sys.executable, "-m", "nox", "--envdir", str(envdir)]
    run = subprocess.run(command, cwd=repository, env=environ, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    (stored,) = (repository / "reports" / "results").glob("*/torch-*.json")
    assert stored.name == f"torch-{torch_here.version}-py{torch_here.python}.json"
    assert (repository / "reports" / "COMPATIBILITY.md").read_text().count("mine") >= 1
    listed = subprocess.run([*command, "-l"], cwd=repository, env=environ, capture_output=True, text=True)
    assert all(name in listed.stdout for name in ("probe-installed", "report", "plan", "bisect", "verify"))
    assert "tests" not in listed.stdout.split()  # torchmatrix's own sessions stay in torchmatrix's noxfile
