"""`.ci/gpu-check`, the checks that need a GPU, run here without one: its wheels, nox unpacked from them into a
Python that has torch and no nox (as a CUDA image has), its runs, and the results folders it leaves."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from packaging.utils import parse_wheel_filename

from torchmatrix import interpreters, results
from torchmatrix.core import Outcome
from torchmatrix.index.findlinks import pip_find_links
from torchmatrix.results import CellResult

from ..conftest import ROOT
from . import environment_with_torch

pytestmark = pytest.mark.integration

SCRIPT = ROOT / ".ci" / "gpu-check"
MACHINE = "test gpu"  # not a file name as it is: its results folder is test_gpu


def local_torch(python: interpreters.Interpreter) -> list[str]:
    """torch for ``python``, and its numpy: a wheel of pip's find-links folders that fits it, else from the index."""
    platforms = interpreters.host_platforms()
    for link in map(Path, pip_find_links()):
        for wheel in sorted(link.glob("torch-*.whl")) if link.is_dir() else []:
            if python.tags(platforms) & parse_wheel_filename(wheel.name)[3]:
                return [str(wheel), "numpy"]
    return ["torch==2.0.1", "numpy<2"]  # torch 2.2 and older need NumPy 1


@pytest.fixture(scope="module")
def torch_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A Python 3.11 environment with torch and what a CUDA image has besides, and no nox, built by uv."""
    image = ["pyyaml", "tabulate", "packaging", "setuptools"]
    env = tmp_path_factory.mktemp("gpu-image") / "env"
    return environment_with_torch(env, "3.11", lambda python: [*local_torch(python), *image])


def by_pair(result: CellResult) -> dict[tuple[str, str], Outcome]:
    return {(record.probe, record.device): record.outcome for record in result.records}


def test_the_gpu_checks_run_from_wheels_alone_and_leave_results_folders_to_copy(
    tmp_path: Path, torch_python: str
) -> None:
    wheels, out = tmp_path / "wheels", tmp_path / "out"
    fetched = subprocess.run(["bash", str(SCRIPT), "wheels", str(wheels)], capture_output=True, text=True)
    assert fetched.returncode == 0, fetched.stderr
    assert any(wheel.name.startswith("nox-") for wheel in wheels.iterdir())

    environ = dict(os.environ, TORCHMATRIX_MACHINE=MACHINE)
    command = ["bash", str(SCRIPT), "run", str(wheels), str(out), torch_python]
    ran = subprocess.run(command, cwd=tmp_path, env=environ, capture_output=True, text=True, timeout=1200)
    log = (out / "gpu-check.log").read_text(encoding="utf-8")
    assert ran.returncode == 0, log[-4000:]
    assert "== exit" not in log and log in ran.stdout

    (default,) = results.scan(out / "default").results
    (isolation,) = results.scan(out / "isolation").results
    assert {default.machine, isolation.machine} == {"test_gpu"}
    assert [folder.name for folder in (out / "default").iterdir()] == ["test_gpu"]
    assert default.environment["python_executable"] == torch_python
    assert {pair: outcome for pair, outcome in by_pair(default).items() if pair[1] == "cpu"} == {
        ("autograd_dot", "cpu"): Outcome.PASS,
        ("batched_matmul", "cpu"): Outcome.PASS,
        ("opsweep", "cpu"): Outcome.PASS,
    }
    assert by_pair(default)[("opsweep", "cuda")] is Outcome.UNAVAILABLE  # no GPU where the tests run

    # The fault suite's probes are named by their paths from tests/faults/ (probes/device_assert.py), the shipped
    # ones by their names (autograd_dot).
    cpu = {Path(record.probe).stem: record for record in isolation.records if record.device == "cpu"}
    assert cpu["device_assert"].outcome is Outcome.ERROR and "IndexError" in cpu["device_assert"].message
    assert all(cpu[probe].outcome is Outcome.PASS for probe in ("autograd_dot", "cuda_context", "atomic_sum"))
    assert len(cpu["atomic_sum"].metrics["repeats"]) == 5
    seen = cpu["sees_state"].metrics
    assert (seen["default_dtype"], seen["grad_enabled"], seen["variable"], seen["temporary_listing"]) == (
        "torch.float32", True, None, [],
    )  # fmt: skip
    assert log.count("1 machine(s); wrote") == 3  # each run's report, its table in the log
