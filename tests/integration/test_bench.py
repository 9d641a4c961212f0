"""The benchmark, run for real on one small cell: a table with every target met or not, and its exit code."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import ROOT

pytestmark = pytest.mark.integration

TARGETS = (
    "warm re-run of one cell (env kept), torch 1.9.0",
    "warm env rebuild (env deleted, wheel cache warm), torch 1.9.0",
    "2 probes in one cell vs 1 probe, torch 1.9.0",
    "re-run of a finished matrix with no change (1 cells)",
    "disk: 1 cells' env folders (and their bytecode) on top of the shared uv cache",
    "operator sweep of one cell (opsweep on cpu, every operator), torch 1.9.0",
    "`--repeat 5` vs one run per pair, torch 1.9.0 (6 pairs)",
    "`bisect --all` over 16 stand-in nightlies with 2 known changes",
)


def table(output: str) -> dict[str, str]:
    """The printed table's rows: figure -> its `met` column."""
    rows = [line.strip("|").split("|") for line in output.splitlines() if line.startswith("| ")]
    return {cells[0].strip(): cells[-1].strip() for cells in rows[1:]}


def test_the_benchmark_says_of_every_target_whether_it_is_met_and_exits_1_when_one_is_not(tmp_path: Path) -> None:
    command = [sys.executable, str(ROOT / "benchmarks" / "bench.py"), "--cells", "1.9.0", "--probes", "2"]
    run = subprocess.run(
        [*command, "--repeat", "1"],
        env=dict(os.environ, TMPDIR=str(tmp_path)),
        capture_output=True,
        text=True,
        timeout=1800,
    )
    output = run.stdout + run.stderr
    rows = table(run.stdout)
    assert set(TARGETS) <= rows.keys(), output
    assert {rows[name] for name in TARGETS} <= {"yes", "NO"}
    assert {met for name, met in rows.items() if name not in TARGETS} == {"-"}  # context, no target
    assert "isolation: a pair in a process of its own vs in-process, torch 1.9.0" in rows
    assert "a pair by kind of probe, torch 1.9.0" in rows
    assert run.returncode == (1 if "NO" in rows.values() else 0), output
    assert any(line.startswith("machine: ") for line in run.stdout.splitlines())
    assert "torch 1.9.0 on Python 3." in run.stdout
    assert not list(tmp_path.glob("torchmatrix-bench-*"))  # its temporary folder is gone
