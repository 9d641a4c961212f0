"""`nox -s probe-installed -- PYTHON`: the probes in a torch installed already, with real nox and real torch."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from torchmatrix import results
from torchmatrix.core import Outcome

from ..conftest import ROOT
from . import environment_with_torch, nox

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def installed_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A Python 3.9 environment with torch 1.9.0, built by uv outside of torchmatrix."""
    env = tmp_path_factory.mktemp("installed") / "env"
    return environment_with_torch(env, "3.9", lambda _: ["torch==1.9.0", "numpy<2"])


@pytest.fixture
def matrix(tmp_path: Path) -> Path:
    path = tmp_path / "matrix.yaml"
    path.write_text(textwrap.dedent("torch: [2.0.1]\nprobes: [autograd_dot, batched_matmul]\noutput: out\n"))
    return path


def test_the_probes_run_in_the_named_python_and_its_result_is_the_cell_of_its_torch(
    tmp_path: Path, matrix: Path, installed_python: str
) -> None:
    run = nox(tmp_path, matrix, "-s", "probe-installed", "--", installed_python)
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    assert "running 6 (probe, device) pairs in its installed torch" in output

    (result,) = results.scan(tmp_path / "out" / "results").results
    assert (result.cell_id, result.torch, result.python, result.session) == (
        "torch-1.9.0-py3.9", "1.9.0", "3.9", "probe-installed",
    )  # fmt: skip
    assert result.environment["python_executable"] == installed_python
    assert {(r.probe, r.device): r.outcome for r in result.records if r.device == "cpu"} == {
        ("autograd_dot", "cpu"): Outcome.PASS,
        ("batched_matmul", "cpu"): Outcome.PASS,
    }
    assert not list((tmp_path / ".nox").glob("probe-*"))  # no environment was built
    assert "| 1.9.0 | 3.9 | ✓ |" in (tmp_path / "out" / "COMPATIBILITY.md").read_text(encoding="utf-8")


def test_a_python_without_torch_is_one_message_and_the_next_python_still_runs(
    tmp_path: Path, matrix: Path, bare_python: str, installed_python: str
) -> None:
    run = nox(tmp_path, matrix, "-s", "probe-installed", "--", bare_python, installed_python)
    output = run.stdout + run.stderr
    assert run.returncode == 1
    assert output.count(f"{bare_python}: torch does not import") == 1
    assert f"torchmatrix: error: no result for {bare_python}: see above" in output
    assert [result.cell_id for result in results.scan(tmp_path / "out" / "results").results] == ["torch-1.9.0-py3.9"]


def test_a_python_is_found_on_path_by_its_name(tmp_path: Path, matrix: Path, installed_python: str) -> None:
    environ = dict(os.environ, PATH=f"{Path(installed_python).parent}{os.pathsep}{os.environ['PATH']}")
    run = subprocess.run(
        [sys.executable, "-m", "nox", "-f", str(ROOT / "noxfile.py"), "--envdir", str(tmp_path / ".nox"),
         "-s", "probe-installed", "--", "python"],
        env=dict(environ, TORCHMATRIX_MATRIX=str(matrix), TORCHMATRIX_MACHINE="ci-box"),
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    (result,) = results.scan(tmp_path / "out" / "results").results
    assert result.environment["python_executable"] == installed_python


def test_a_package_installed_in_the_named_python_since_makes_its_records_stale(
    tmp_path: Path, matrix: Path, installed_python: str
) -> None:
    """What the named Python's environment holds is asked of it, as a cell's environment is read: a package installed
    there since is a change the report names, not a record that stays current."""
    run = nox(tmp_path, matrix, "-s", "probe-installed", "--", installed_python)
    assert run.returncode == 0, run.stdout + run.stderr
    table = tmp_path / "out" / "COMPATIBILITY.md"
    assert "stale" not in table.read_text(encoding="utf-8")
    uv = [sys.executable, "-m", "uv", "pip"]
    subprocess.run([*uv, "install", "-q", "--python", installed_python, "six"], check=True)
    try:
        report = nox(tmp_path, matrix, "-s", "report")
    finally:
        subprocess.run([*uv, "uninstall", "-q", "--python", installed_python, "six"], check=True)
    assert report.returncode == 0, report.stdout + report.stderr
    assert "stale: was ✓ pass; the installed packages changed" in table.read_text(encoding="utf-8")
    again = nox(tmp_path, matrix, "-s", "report")  # the package gone again: the environment the records were made in
    assert again.returncode == 0 and "stale" not in table.read_text(encoding="utf-8"), again.stdout + again.stderr
