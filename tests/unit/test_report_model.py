"""The report model: results of many machines merged into one table per probe."""

from __future__ import annotations

import json
import math
import shutil
from dataclasses import replace
from pathlib import Path

from torchmatrix import results
from torchmatrix.core import Outcome, Record
from torchmatrix.views import model
from torchmatrix.views.model import Column, Row
from torchmatrix.worker import repeats

from .report_data import autograd, batched, cell, everywhere, scenario


def marks(report: model.Report, probe: str) -> dict[tuple[str, str, str], str]:
    """(torch, machine, device) -> mark value, for the shown columns of one probe's table."""
    table = next(table for table in report.tables if table.probe == probe)
    return {
        (row.torch, column.machine, column.device): entry.mark.value
        for (row, column), entry in table.entries.items()
        if column in report.columns
    }


def test_the_same_cell_from_two_machines_is_two_columns() -> None:
    report = model.build(scenario())
    assert [column.label for column in report.columns] == [
        "H200 · cpu", "H200 · cuda", "linux-x86_64 · cpu", "macos-arm64 · cpu", "macos-arm64 · mps",
    ]  # fmt: skip
    found = marks(report, "autograd_dot")
    assert found["1.9.0", "linux-x86_64", "cpu"] == "pass"
    assert found["1.9.0", "macos-arm64", "mps"] == "fail"
    assert report.machines == ("H200", "linux-x86_64", "macos-arm64")


def test_for_one_machine_and_cell_the_newer_result_wins() -> None:
    report = model.build(scenario())
    assert marks(report, "batched_matmul")["2.2.0", "H200", "cpu"] == "pass"  # the older file says crash
    assert sum(result.machine == "H200" and result.torch == "2.2.0" for result in report.results) == 1


def test_rows_follow_release_order_and_pinned_pythons_are_rows_of_their_own() -> None:
    found = [
        cell("m", version, "3.10", everywhere({"cpu": (autograd("cpu"), batched("cpu"))}))
        for version in ("1.10.0", "2.0.0", "1.9.0", "2.0.0rc1")
    ]
    found.append(cell("m", "2.0.0", "3.12", everywhere({}), python_request="3.12", cell_id="torch-2.0.0-py3.12"))
    table = model.build(found).tables[0]
    assert [row.label for row in table.rows] == ["1.9.0", "1.10.0", "2.0.0rc1", "2.0.0", "2.0.0 (py3.12)"]


def test_columns_unavailable_everywhere_are_left_out_and_named() -> None:
    report = model.build(scenario())
    assert report.hidden == (
        Column("H200", "mps"), Column("linux-x86_64", "cuda"), Column("linux-x86_64", "mps"),
        Column("macos-arm64", "cuda"),
    )  # fmt: skip
    assert "Not shown, as every cell in them is unavailable: H200 · mps" in " ".join(report.afterword())


def test_a_machine_whose_cells_all_failed_to_install_keeps_its_columns() -> None:
    report = model.build([cell("m", "1.9.0", "3.9", outcome=Outcome.INSTALL_ERROR, message="boom")])
    assert [column.device for column in report.columns] == ["cpu", "cuda", "mps"]
    assert {entry.mark for table in report.tables for entry in table.entries.values()} == {Outcome.INSTALL_ERROR}
    assert [table.probe for table in report.tables] == ["autograd_dot", "batched_matmul"]


def test_bit_identical_and_within_tolerance_are_told_apart() -> None:
    found = marks(model.build(scenario()), "batched_matmul")
    assert found["2.2.0", "macos-arm64", "mps"] == "within-tolerance"
    assert found["2.2.0", "macos-arm64", "cpu"] == "pass"
    assert Outcome.WITHIN_TOLERANCE.symbol == "≈" and Outcome.PASS.symbol == "✓"


def test_cells_with_the_same_story_share_a_note_numbered_in_table_order() -> None:
    report = model.build(scenario())
    autograd_table = report.tables[0]
    h200_1_9 = Row("1.9.0", None)
    first = autograd_table.entries[h200_1_9, Column("H200", "cpu")]
    assert first.note == 1 and autograd_table.entries[h200_1_9, Column("H200", "cuda")].note == 1
    assert first.text == "inst-err¹"
    assert report.notes[0] == "install-error: connection reset by peer"  # the installer's last line, undecorated
    assert report.notes[1].startswith(
        "fail: y = 2 * dot(x, x): observed 0.0, expected 28.0; "
        "x.grad after y.backward(): observed [0.0, 0.0, 0.0, 0.0], expected [0.0, 4.0, 8.0, 12.0]; "
        "and 1 more failing check"
    )
    assert all(entry.note is None for entry in autograd_table.entries.values() if not entry.mark.noted)


def test_error_ratio_is_the_worst_check_with_exact_checks_as_zero_or_infinity() -> None:
    def ratio(*checks: dict) -> float | None:
        return model.error_ratio(Record("p", "cpu", Outcome.PASS, {"checks": list(checks)}, "", 0.0))

    assert ratio({"error": 1.0, "tolerance": 4.0, "ok": True}, {"error": -3.0, "tolerance": 4.0, "ok": True}) == 0.75
    assert ratio({"error": 0.0, "tolerance": 0.0, "ok": True}) == 0.0
    assert ratio({"error": 28.0, "tolerance": 0.0, "ok": False}) == math.inf
    assert ratio({"error": "x", "tolerance": 1.0}, {"error": True, "tolerance": 1.0}, "junk") is None
    assert ratio({"error": math.nan, "tolerance": 1.0}, {"error": 1.0, "tolerance": -1.0}) is None
    assert model.error_ratio(Record("p", "cpu", Outcome.PASS, {"checks": "junk"}, "", 0.0)) is None


def test_each_row_lists_the_pythons_its_cells_ran_on() -> None:
    report = model.build(scenario())
    assert report.pythons[Row("2.2.0", None)] == ("3.11", "3.12")
    assert report.pythons[Row("2.99.0", None)] == ()


def test_no_results_is_an_empty_report_that_says_what_to_do() -> None:
    report = model.build([])
    assert report.tables == () and report.columns == () and report.marks == ()
    assert "nox -s probe" in report.describe()


def test_folders_copied_in_from_two_machines_merge_and_bad_files_are_skipped(tmp_path: Path) -> None:
    laptop, server, merged = tmp_path / "laptop", tmp_path / "server", tmp_path / "merged"
    for result in scenario():
        results.write(server if result.machine == "H200" else laptop, result)
    # Copying folders together is the whole merge; the older H200 result was overwritten in its own folder.
    shutil.copytree(laptop, merged)
    shutil.copytree(server, merged, dirs_exist_ok=True)
    good = merged / "H200" / "torch-2.2.0-py3.12.json"
    (merged / "H200" / "truncated.json").write_text(good.read_text()[:200])
    (merged / "H200" / "newer.json").write_text(json.dumps(dict(json.loads(good.read_text()), schema=99)))
    # An older file of the same cell, under another name (the planner chose another Python then): it loses.
    old = next(result for result in scenario() if result.machine == "H200" and "11-01" in result.finished_at)
    results.write(merged, replace(old, python="3.11", cell_id="torch-2.2.0-py3.11"))

    scan = results.scan(merged)
    report = model.build(scan.results)
    assert {column.machine for column in report.columns} == {"H200", "linux-x86_64", "macos-arm64"}
    assert len(scan.warnings) == 2
    assert any("truncated.json: not valid JSON" in warning for warning in scan.warnings)
    assert any("newer.json: schema 99 is newer" in warning for warning in scan.warnings)
    assert marks(report, "autograd_dot")["2.2.0", "H200", "cuda"] == "error"
    assert marks(report, "batched_matmul")["2.2.0", "H200", "cpu"] == "pass"


def test_the_newest_finish_is_the_latest_time_whatever_the_offset() -> None:
    east = cell("H200", "2.2.0", "3.11", (autograd("cpu"),), finished="2026-11-20T10:00:00+02:00")  # 08:00 UTC
    utc = cell("laptop", "2.2.0", "3.11", (autograd("cpu"),), finished="2026-11-20T09:00:00+00:00")
    assert model.build([east, utc]).updated == "2026-11-20T09:00:00+00:00"


def test_an_unstable_pair_has_its_own_mark_and_a_note_with_its_counts() -> None:
    runs = [Record("autograd_dot", "cpu", outcome, {"checks": []}, "", 0.1) for outcome in (Outcome.PASS,) * 3]
    runs += [Record("autograd_dot", "cpu", Outcome.FAIL, {"checks": [{"name": "y", "ok": False}]}, "", 0.1)] * 2
    unstable = repeats.merge(runs)
    report = model.build([cell("m", "2.6.0", "3.12", (unstable,))])
    (entry,) = report.tables[0].entries.values()
    assert (entry.mark, entry.mark.symbol, entry.text) == (Outcome.UNSTABLE, "±", "±¹")
    assert report.notes == ("unstable: 3 pass, 2 fail",)
    assert report.marks == (Outcome.UNSTABLE,)
    assert Outcome.UNSTABLE.meaning == "repeated runs of the probe gave different outcomes"
