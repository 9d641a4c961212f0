"""The example report in a fresh clone: its command finds the committed table up to date, and git ignores the rest.

A report rendered into reports/ in every format (as ``TORCHMATRIX_OUTPUT=reports nox -s report`` writes it) leaves
``git status`` empty but for the table README.md shows, which is committed and checked.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import ROOT

pytestmark = pytest.mark.integration

EVERY_FORMAT = (
    "import runpy; from torchmatrix.views import publish; "
    "example = runpy.run_path('docs/_ext/example_report.py'); "
    "print(len(publish.write(example['REPORTS'], example['render'](publish.FORMATS))))"
)
"""Every file of the example's report, written into the clone's reports/ (each whose text differs)."""


def git(folder: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True, text=True).stdout


def test_a_clone_renders_the_committed_table_again_and_ignores_every_other_file_of_the_report(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "--quiet", str(ROOT), str(clone))
    again = subprocess.run(
        [sys.executable, "docs/_ext/example_report.py"], cwd=clone, capture_output=True, text=True, timeout=300
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout.strip() == f"{clone / 'reports'} is up to date"
    every = subprocess.run(
        [sys.executable, "-c", EVERY_FORMAT], cwd=clone, capture_output=True, text=True, timeout=300
    )  # fmt: skip
    assert every.returncode == 0, every.stdout + every.stderr
    assert int(every.stdout) >= 5  # the page, the sweep's page, CHECK-CHANGES.md, JSON, CSV, RST, …
    assert (clone / "reports" / "compatibility.html").is_file()
    assert git(clone, "status", "--porcelain") == ""
