"""Real nox, uv and torch 2.2.2 and 2.3.0 on Python 3.11: each cell holds what an environment made by hand holds.

``python -m venv`` seeds pip and setuptools on 3.11, and torch 2.3's inductor needs setuptools: torch.compile
works in both releases. The known pin ``numpy<2`` (before 2.3) only bounds NumPy where a cell has it: a test
that imports NumPy, which nothing installs, fails alike in both, and a bisect finds nothing to blame; where a
probe asks for NumPy, the two releases hold different NumPys, and the answer names it.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from torchmatrix import interpreters, results
from torchmatrix.core import Outcome

from . import nox

pytestmark = pytest.mark.integration

TESTS = """\
import torch


def test_compile():
    torch.compile(lambda x: x.sin() + 1)(torch.randn(3))


def test_numpy():
    import numpy  # noqa: F401
"""
NUMPY_ONE = """\
# /// script
# dependencies = ["numpy"]
# ///
import numpy
import torch

assert numpy.__version__.startswith("1."), numpy.__version__
print(torch.from_numpy(numpy.ones(2)).sum().item())
"""


@pytest.fixture(autouse=True)
def python_311() -> None:
    if not any(python.minor == "3.11" for python in interpreters.discover()):
        pytest.skip("no Python 3.11 here; `uv python install 3.11` gives one")


def matrix(tmp_path: Path, probe: str) -> Path:
    path = tmp_path / "matrix.yaml"
    path.write_text(
        textwrap.dedent(
            f"""
            torch: [2.2.2, 2.3.0]
            probes: [{probe}]
            devices: [cpu]
            timeout: 600
            output: out
            """
        )
    )
    return path


def test_torch_compile_works_and_a_package_no_cell_installs_is_missing_in_every_release(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_by_hand.py").write_text(TESTS)
    file = matrix(tmp_path, "tests/")
    run = nox(tmp_path, file, "-s", "probe")
    assert run.returncode == 0, run.stdout + run.stderr
    stored = {result.torch: result for result in results.scan(tmp_path / "out" / "results").results}
    for version in ("2.2.2", "2.3.0"):
        result = stored[version]
        outcomes = {record.probe.split("::")[-1]: record for record in result.records}
        assert outcomes["test_compile"].outcome is Outcome.PASS, outcomes["test_compile"].message
        assert outcomes["test_numpy"].outcome is Outcome.FAIL
        assert "No module named 'numpy'" in outcomes["test_numpy"].message
        packages = result.environment["packages"]
        assert packages["setuptools"] == "65.5.0" and packages.get("numpy") is None, packages
    assert stored["2.2.2"].inputs["constraints"] == ["numpy<2", "setuptools<70"]

    bisect = nox(
        tmp_path, file, "-s", "bisect", "--", "tests/test_by_hand.py::test_numpy", "--from", "2.2.2", "--to", "2.3.0"
    )
    said = bisect.stdout + bisect.stderr
    assert "both show fail on cpu: nothing to bisect" in said, said
    assert "built 0 of" in said  # the stored results answered


def test_a_package_a_probe_asks_for_that_the_pins_bound_differently_is_named_at_the_boundary(tmp_path: Path) -> None:
    (tmp_path / "numpy_one.py").write_text(NUMPY_ONE)
    file = matrix(tmp_path, "numpy_one.py")
    bisect = nox(tmp_path, file, "-s", "bisect", "--", "numpy_one.py", "--from", "2.2.2", "--to", "2.3.0")
    said = bisect.stdout + bisect.stderr
    assert bisect.returncode == 0, said
    assert "first release with NEW's outcome (fail): torch 2.3.0" in said
    (summary,) = (tmp_path / "out" / "bisect" / "ci-box").glob("*.json")
    (boundary,) = json.loads(summary.read_text())["boundaries"]
    assert boundary["says"].startswith("the packages change here too: torch 2.3.0 has numpy 2.")
    assert "where 2.2.2 had 1.26.4 (pinned there: numpy<2; here: none)" in boundary["says"]
