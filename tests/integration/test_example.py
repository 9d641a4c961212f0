"""examples/gausstail end to end, from a fresh copy, as its user runs it: the table, a bisect, verify, SUPPORTED.md.

gausstail's log_cdf uses torch.special.log_ndtr where torch has it (1.12.0 and
later) and log(Φ(x)) before, which underflows to -inf far in the tail: its
test_far_tail fails on 1.9.0 and 1.11.0 and passes on 1.12.0 and 1.12.1. All
four releases are ones the suite installs anyway (the fault suite 1.9.0 and
1.11.0, test_nox_bisect_verify 1.11.0 to 1.12.1), so with a warm uv cache
only pytest, and setuptools to build the library, may come from the index.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from torchmatrix import results
from torchmatrix.core import Outcome

from ..conftest import ROOT

pytestmark = pytest.mark.integration

EXAMPLE = ROOT / "examples" / "gausstail"
FAR_TAIL = "tests/test_log_cdf.py::test_far_tail"


class Repository:
    """A fresh copy of the example, and nox run in it the way its user runs it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("reports", ".nox", "__pycache__", "*.egg-info"))
        self.environ = {name: value for name, value in os.environ.items() if not name.startswith("TORCHMATRIX_")}
        self.environ["TORCHMATRIX_CACHE_DIR"] = str(folder.parent / "cache")

    def nox(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "nox", *args], cwd=self.folder, env=self.environ,
            capture_output=True, text=True, timeout=900,
        )  # fmt: skip
        output = done.stdout + done.stderr
        assert done.returncode == 0, output
        return output

    def stored(self) -> dict[str, results.CellResult]:
        return {result.torch: result for result in results.scan(self.folder / "reports" / "results").results}


@pytest.fixture(scope="module")
def repository(tmp_path_factory: pytest.TempPathFactory) -> Repository:
    return Repository(tmp_path_factory.mktemp("example") / "gausstail")


@pytest.fixture(scope="module")
def table(repository: Repository) -> str:
    return repository.nox()


@pytest.fixture(scope="module")
def bisected(repository: Repository, table: str) -> str:
    return repository.nox("-s", "bisect", "--", FAR_TAIL, "--from", "1.11.0", "--to", "1.12.1")


def test_its_tests_make_a_table_of_three_releases(repository: Repository, table: str) -> None:
    stored = repository.stored()
    assert stored.keys() == {"1.9.0", "1.11.0", "1.12.1"}
    for torch, result in stored.items():
        assert result.environment["packages"]["gausstail"] == "0.1.0"  # the library's own wheel
        cpu = {record.probe: record.outcome for record in result.records if record.device == "cpu"}
        far_tail = Outcome.PASS if torch == "1.12.1" else Outcome.FAIL
        assert cpu == {
            "tests/test_log_cdf.py::test_centre": Outcome.PASS,
            FAR_TAIL: far_tail,
            "tests/test_log_cdf.py::test_gradient": Outcome.PASS,
        }
    assert re.search(r"^1\.11\.0 +3\.\d+ +tests/test_log_cdf\.py::test_centre +✓", table, re.M)
    assert "✗ fail (" in table and f"{FAR_TAIL}: assert -inf == -203.91715 ±" in table  # pytest's own words


def test_a_bisect_of_one_test_finds_the_release_that_fixed_it(bisected: str) -> None:
    assert "2 known already" in bisected and "built 1 of at most 3 cells" in bisected
    assert "first release with NEW's outcome (pass): torch 1.12.0 (1 run)" in bisected
    assert "last release with OLD's outcome (fail): torch 1.11.0 (1 run)" in bisected


def test_verify_checks_the_expectations_about_that_test(repository: Repository, bisected: str) -> None:
    verified = repository.nox("-s", "verify")
    assert f"✓ {FAR_TAIL} on cpu, torch <1.12: fail: holds for torch-1.9.0-py3." in verified
    assert "2 of 2 expectations hold; 0 violated, 0 not tested by any result" in verified


def test_the_supported_versions_table_is_ready_for_the_library_s_docs(repository: Repository, bisected: str) -> None:
    repository.nox("-s", "report", "--", "--format", "supported", "--all-cells")  # 1.12.0: bisect built it
    python = {torch: result.python for torch, result in repository.stored().items()}
    assert (repository.folder / "reports" / "SUPPORTED.md").read_text().splitlines()[:8] == [
        "## Supported torch versions",
        "",
        "| torch | Python | cpu |",
        "| :-- | :-- | :-- |",
        f"| 1.12.1 | {python['1.12.1']} | ✓ all 3 pass |",
        f"| 1.12.0 | {python['1.12.0']} | ✓ all 3 pass |",
        f"| 1.11.0 | {python['1.11.0']} | ✗ 2 of 3 pass; fail: test\\_far\\_tail |",
        f"| 1.9.0 | {python['1.9.0']} | ✗ 2 of 3 pass; fail: test\\_far\\_tail |",
    ]


def test_its_bug_report_s_script_is_bisected_by_what_it_prints(repository: Repository, bisected: str) -> None:
    output = repository.nox("-s", "bisect", "--", "repro.py", "--by-output", "--from", "1.11.0", "--to", "1.12.1")
    assert (
        "first release with NEW's outcome (pass, prints 'tensor([ -15.0650, -203.9172, -804.6085])'): torch 1.12.0"
        in output
    )
    assert (
        "last release with OLD's outcome (pass, prints 'tensor([-15.0650,     -inf,     -inf])'): torch 1.11.0"
        in output
    )
