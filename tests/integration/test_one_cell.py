"""Real nox and uv over stand-in wheels: a run of one cell shows that cell, and rewrites only what changed."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from .. import standin
from . import nox

pytestmark = pytest.mark.integration

MATRIX = """
torch: [8.0.0, 8.1.0]
probes: [alpha.py]
devices: [cpu]
timeout: 60
output: out
find_links: [wheels]
"""


def table_rows(stdout: str) -> list[str]:
    return [line.split()[0] for line in stdout.splitlines() if line.startswith("8.")]


def test_one_cells_run_prints_its_rows_and_a_line_for_the_rest(tmp_path: Path) -> None:
    for version in ("8.0.0", "8.1.0"):
        standin.wheel(tmp_path / "wheels", version, {"alpha": "pass"})
    standin.probe(tmp_path, "alpha")
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(textwrap.dedent(MATRIX))
    everything = nox(tmp_path, matrix, "-s", "probe")
    assert everything.returncode == 0, everything.stdout + everything.stderr
    assert table_rows(everything.stdout) == ["8.0.0", "8.1.0"]
    assert "cell 1 of 2: torch-8.0.0-py" in everything.stderr and "cell 2 of 2: torch-8.1.0-py" in everything.stderr
    page = tmp_path / "out" / "compatibility.html"
    before = page.stat().st_mtime_ns

    one = nox(tmp_path, matrix, "-s", "probe(8.1.0)", "--", "--force")
    text = one.stdout + one.stderr
    assert one.returncode == 0, text
    assert table_rows(one.stdout) == ["8.1.0"]
    assert "1 other stored cell(s) not shown, as this run did not run them: `nox -s report` shows them" in text

    report = nox(tmp_path, matrix, "-s", "report")  # asked for itself: every table
    assert table_rows(report.stdout) == ["8.0.0", "8.1.0"]
    assert "are up to date" in report.stdout + report.stderr  # nothing changed since the last report
    assert page.stat().st_mtime_ns != before  # the forced re-run changed its durations: the page was rewritten
