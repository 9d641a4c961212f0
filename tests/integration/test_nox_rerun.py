"""Re-runs through real nox and torch: unchanged cells are skipped, a change or --force runs them, -j is safe."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from torchmatrix import results
from torchmatrix.core import Outcome
from torchmatrix.environment import disk

from ..conftest import ROOT
from . import nox

pytestmark = pytest.mark.integration


def lines(run) -> list[str]:
    return (run.stdout + run.stderr).splitlines()


def test_unchanged_cells_are_skipped_until_something_changes(tmp_path: Path) -> None:
    mine = tmp_path / "mine.py"
    shutil.copy(ROOT / "probes" / "autograd_dot.py", mine)
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text("torch: [1.9.0]\nprobes: [autograd_dot, ./mine.py]\ndevices: [cpu]\ntimeout: 120\noutput: out\n")

    first = nox(tmp_path, matrix, "-s", "probe")
    assert first.returncode == 0, first.stdout + first.stderr
    stored = next((tmp_path / "out" / "results" / "ci-box").glob("torch-1.9.0-py*.json"))
    cell = stored.stem  # torch-1.9.0-py3.9, or another Python that has a 1.9.0 wheel
    assert f"nox > {cell}: running: no stored result" in lines(first)
    written = stored.read_bytes()

    again = nox(tmp_path, matrix, "-s", "probe")
    assert again.returncode == 0, again.stdout + again.stderr
    up_to_date = f"{cell}: up to date (every record's probe, torch build and interpreter unchanged since"
    assert any(up_to_date in line for line in lines(again))
    assert not any("[1/2]" in line for line in lines(again))
    assert stored.read_bytes() == written
    assert any(line.startswith("1.9.0") and "✓" in line for line in lines(again))  # the table still shows it

    mine.write_text(mine.read_text() + "\n# edited\n")
    edited = nox(tmp_path, matrix, "-s", "probe")
    # the probe's digest, and the file its pair read
    assert f"nox > {cell}: running: 1 of 2 pairs: probe mine.py changed; {mine} changed" in lines(edited)
    assert any("[1/1] mine.py on cpu ..." in line for line in lines(edited))  # autograd_dot's record stands
    assert [record.probe for record in results.read(stored).records] == ["autograd_dot", "mine.py"]

    before = stored.read_bytes()
    forced = nox(tmp_path, matrix, "-s", "probe", "--", "--force")
    assert f"nox > {cell}: running: --force: re-measuring every pair" in lines(forced)
    assert any("[1/2] autograd_dot on cpu ..." in line for line in lines(forced))
    assert stored.read_bytes() != before and results.read(stored).records

    shutil.rmtree(disk.environment_of(tmp_path / ".nox", "1.9.0"))  # named by nox's rule
    rebuilt = nox(tmp_path, matrix, "-s", "probe")
    assert f"nox > {cell}: running: no torch installed in the environment yet (new or rebuilt)" in lines(rebuilt)
    if results.read(stored).python not in ("3.6", "3.7"):  # -X pycache_prefix came with Python 3.8
        # torch's bytecode outlived the env it was compiled in
        assert list((tmp_path / ".nox" / ".pycache").rglob("site-packages/torch/__init__.cpython-3*.pyc"))

    typo = nox(tmp_path, matrix, "-s", "probe", "--", "--froce")
    assert typo.returncode == 2
    said = "torchmatrix: error: unknown option --froce: did you mean '--force'?"
    assert f'{said}\n  usage: nox -s "probe(<release>)" -- [--force]' in (typo.stdout + typo.stderr)


def test_cells_in_parallel_leave_valid_results_and_one_complete_table(tmp_path: Path) -> None:
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(
        textwrap.dedent(
            """
            torch: [1.9.0, 1.11.0]
            probes: [autograd_dot]
            devices: [cpu]
            timeout: 120
            output: out
            """
        )
    )
    run = nox(tmp_path, matrix, "-j", "2", "-s", "probe", "report")
    output = lines(run)
    assert run.returncode == 0, run.stdout + run.stderr

    scan = results.scan(tmp_path / "out" / "results")
    assert scan.warnings == ()
    assert {(result.torch, result.records[0].outcome) for result in scan.results} == {
        ("1.9.0", Outcome.PASS),
        ("1.11.0", Outcome.PASS),
    }
    headers = [index for index, line in enumerate(output) if line.split()[:3] == ["torch", "python", "probe"]]
    assert len(headers) == 1
    written = [index for index, line in enumerate(output) if "; written to " in line]
    assert len(written) == 2 and max(written) < headers[0]
    table = [line.split()[0] for line in output[headers[0] + 2 :] if line.strip()][:2]
    assert table == ["1.9.0", "1.11.0"]
