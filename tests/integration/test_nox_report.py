"""Real nox: `nox -s report` merges result folders copied in from other machines, renders, diffs."""

from __future__ import annotations

import json
import re
import textwrap
from dataclasses import replace
from pathlib import Path
from xml.etree import ElementTree

import pytest

from torchmatrix import results
from torchmatrix.core import Outcome, Record

from ..unit.report_data import cell, scenario
from .test_nox_probe import nox

pytestmark = pytest.mark.integration


@pytest.fixture
def matrix(tmp_path: Path) -> Path:
    """A matrix whose output folder holds three machines' results (as if copied in) and one corrupt file."""
    path = tmp_path / "matrix.yaml"
    path.write_text(textwrap.dedent("torch: [1.9.0]\nprobes: [autograd_dot, batched_matmul]\noutput: out\n"))
    for result in scenario():
        results.write(tmp_path / "out" / "results", result)
    (tmp_path / "out" / "results" / "H200" / "torch-9.9.9.json").write_text('{"schema": 1, "mach')
    return path


def test_report_merges_every_machine_folder_and_writes_every_file(tmp_path: Path, matrix: Path) -> None:
    run = nox(tmp_path, matrix, "-s", "report", "--", "--all-cells")  # the scenario's cells are no matrix's
    assert run.returncode == 0, run.stdout + run.stderr
    out = tmp_path / "out"
    # The scenario's records name nothing they were made from: stale, with no numbers to chart.
    assert sorted(path.name for path in out.iterdir() if path.is_file()) == [
        "CHECK-CHANGES.md", "COMPATIBILITY.md", "compatibility.csv", "compatibility.html", "compatibility.json",
    ]  # fmt: skip
    table = (out / "COMPATIBILITY.md").read_text()
    assert "↻" in table
    assert "| torch | python | H200 · cpu | H200 · cuda | linux-x86\\_64 · cpu | macos-arm64 · cpu |" in table
    assert f"skipping {out / 'results' / 'H200' / 'torch-9.9.9.json'}: not valid JSON" in run.stderr
    assert "Reading the results warned 1 time (a file that could not be read" in table, table
    assert str(tmp_path) not in table
    assert {row["machine"] for row in json.loads((out / "compatibility.json").read_text())["rows"]} == {
        "H200", "linux-x86_64", "macos-arm64",
    }  # fmt: skip
    # Each machine's terminal table (this one, ci-box, has no results of its own: no table).
    assert run.stdout.index("H200:\n") < run.stdout.index("linux-x86_64:\n") < run.stdout.index("macos-arm64:\n")
    assert "ci-box:" not in run.stdout


def test_rst_on_request_and_a_diff_against_another_result_set(tmp_path: Path, matrix: Path) -> None:
    other = tmp_path / "last-week" / "results"
    for result in scenario():
        if result.machine == "macos-arm64" and result.torch == "2.2.0":
            result = replace(result, outcome=None, records=tuple(
                replace(record, outcome=record.outcome.FAIL) if record.device == "mps" else record
                for record in result.records
            ))  # fmt: skip
        results.write(other, result)
    run = nox(tmp_path, matrix, "-s", "report", "--", "--format", "rst", "--diff", str(other.parent))
    assert run.returncode == 0, run.stdout + run.stderr
    assert (tmp_path / "out" / "COMPATIBILITY.rst").read_text().startswith("torch compatibility\n===")
    assert not (tmp_path / "out" / "COMPATIBILITY.md").exists()
    assert f"2 cells changed outcome between {other} (before) and {tmp_path / 'out' / 'results'} (after):" in run.stdout
    lines = [line.split() for line in run.stdout.splitlines()]
    # The scenario's records name nothing they were made from: each after is stale now, and said so, as the table does.
    assert ["autograd_dot", "2.2.0", "macos-arm64", "·", "mps", "✗", "fail", "↻", "stale:", "✓", "pass"] in lines
    stale_after = ["↻", "stale:", "≈", "within-tolerance"]
    assert ["batched_matmul", "2.2.0", "macos-arm64", "·", "mps", "✗", "fail", *stale_after] in lines


def test_a_bad_option_is_one_message_and_exit_code_2(tmp_path: Path, matrix: Path) -> None:
    run = nox(tmp_path, matrix, "-s", "report", "--", "--format", "pdf")
    assert run.returncode == 2
    hint = "hint: choose from md, rst, html, json, csv, changes, supported, junit, all"
    assert f"torchmatrix: error: --format: unknown format 'pdf'\n  {hint}" in run.stderr
    assert "Traceback" not in run.stderr
    assert not (tmp_path / "out" / "COMPATIBILITY.md").exists()


def test_junit_for_ci_and_the_tables_on_githubs_step_summary(
    tmp_path: Path, matrix: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = tmp_path / "step_summary.md"
    summary.write_text("earlier steps' lines\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    run = nox(tmp_path, matrix, "-s", "report", "--", "--all-cells", "--format", "junit")
    assert run.returncode == 0, run.stdout + run.stderr
    suites = ElementTree.parse(tmp_path / "out" / "junit.xml").getroot()
    assert suites.tag == "testsuites" and int(suites.get("tests", 0)) > 0
    written = summary.read_text()
    assert written.startswith("earlier steps' lines\n# torch compatibility")  # added to, never replaced
    assert "| torch | python | H200 · cpu |" in written


def test_a_release_installed_under_a_known_pin_its_neighbour_was_not_says_so_with_the_pins_reason(
    tmp_path: Path,
) -> None:
    path = tmp_path / "matrix.yaml"
    path.write_text("torch: [1.13.1, 2.2.0]\nprobes: [autograd_dot]\noutput: out\n")
    for torch, constraints in (("1.13.1", ["numpy<2"]), ("2.2.0", ["numpy<2", "setuptools<70"])):
        record = Record("autograd_dot", "cpu", Outcome.PASS, {}, "", 0.1)
        results.write(tmp_path / "out" / "results", cell("a-box", torch, "3.10", (record,),
                                                         inputs={"constraints": constraints}))  # fmt: skip
    run = nox(tmp_path, path, "-s", "report", "--", "--all-cells")
    assert run.returncode == 0, run.stdout + run.stderr
    said = "torch 2.2.0 was installed under the constraint setuptools<70, unlike 1.13.1: a known pin for torch "
    assert f"note: {said}" in run.stdout and "pkg_resources" in run.stdout, run.stdout  # under the machine's table
    table = (tmp_path / "out" / "COMPATIBILITY.md").read_text()
    number = re.search(r"\| 2\.2\.0([⁰¹²³⁴⁵⁶⁷⁸⁹]+) \|", table)  # the release's note, after the records' own
    assert number, table
    written = said.replace("<", "&lt;")  # as Markdown keeps it
    assert f"{number[1].translate(str.maketrans('⁰¹²³⁴⁵⁶⁷⁸⁹', '0123456789'))}. {written}" in table
