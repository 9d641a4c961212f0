"""compatibility.json and .csv: one row per (machine, torch, python, device, probe), for other tools."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

from torchmatrix import results
from torchmatrix.core import Outcome, Record
from torchmatrix.util.safetext import report_line
from torchmatrix.views import export, model

from .report_data import HOSTILE, assert_golden, cell, hostile, scenario


def test_the_scenario_exports_as_its_golden_csv() -> None:
    assert_golden("compatibility.csv", export.to_csv(model.build(scenario())))


def test_every_merged_cell_is_a_row_hidden_columns_and_planned_pairs_included() -> None:
    report = model.build(scenario())
    document = json.loads(export.to_json(report))
    keys = [(row["machine"], row["torch"], row["python"], row["device"], row["probe"]) for row in document["rows"]]
    assert len(keys) == len(set(keys))
    ran = sum(len(result.records) for result in report.results)
    planned = 2 * 3 * sum(1 for result in report.results if result.outcome)  # 2 probes x 3 devices each
    assert len(keys) == ran + planned
    assert ("linux-x86_64", "2.99.0", None, "mps", "batched_matmul") in keys  # no wheel: planned, hidden column


def test_rows_say_what_happened_and_where_the_rest_is() -> None:
    document = json.loads(export.to_json(model.build(scenario())))
    fail = next(row for row in document["rows"] if row["mark"] == "fail")
    assert fail["failing_checks"][0] == {
        "name": "y = 2 * dot(x, x)", "observed": 0.0, "expected": 28.0, "error": 28.0, "tolerance": 0.0,
    }  # fmt: skip
    assert fail["error_ratio"] == "inf" and fail["note"].startswith("fail: y = 2 * dot(x, x)")
    assert fail["result_file"] == "results/macos-arm64/torch-1.9.0-py3.9.json"
    assert document["environments"][fail["result_file"]]["blas"] == "mkl"
    near = next(row for row in document["rows"] if row["mark"] == "within-tolerance")
    assert near["outcome"] == "pass" and near["bit_identical"] is False and 0 < near["error_ratio"] <= 1
    assert document["legend"]["within-tolerance"]["symbol"] == "≈"


def test_a_row_names_the_file_its_result_was_read_from(tmp_path: Path) -> None:
    stored = results.write(tmp_path / "results", scenario()[0])
    copied = stored.rename(stored.with_name("copied from CI.json"))
    document = json.loads(export.to_json(model.build(results.scan(tmp_path / "results").results)))
    named = f"results/{copied.parent.name}/copied from CI.json"
    assert {row["result_file"] for row in document["rows"]} == {named}
    assert list(document["environments"]) == [named]
    assert (tmp_path / named).is_file()


def test_csv_has_the_same_rows_and_no_formula_or_control_character() -> None:
    report = model.build(hostile())
    rows = list(csv.DictReader(io.StringIO(export.to_csv(report))))
    assert len(rows) == len(export.rows(report))
    for row in rows:
        for value in row.values():
            assert not value.startswith(("=", "+", "-", "@")), value
            assert "\x1b" not in value and "\n" not in value and "\u202e" not in value
    assert rows[0]["message"] == report_line(HOSTILE)
    assert rows[0]["message"].endswith("red\ufffdevil =HYPERLINK(1)")
    assert any(row["machine"] == "'=cmd|' /C calc'!A0" for row in rows)


def test_json_keeps_text_exactly_and_stays_strict_with_non_finite_numbers() -> None:
    weird = {"checks": [{"name": "n", "observed": math.nan, "expected": math.inf, "error": 1.0, "tolerance": 0.5,
                         "ok": False}]}  # fmt: skip
    found = [cell("m", "1.9.0", "3.9", (Record("p", "cpu", Outcome.FAIL, weird, HOSTILE, 0.0),))]
    text = export.to_json(model.build(found))
    assert "NaN" not in text and "Infinity" not in text  # a browser's JSON.parse would refuse the file
    document = json.loads(text)
    row = document["rows"][0]
    assert row["message"] == HOSTILE and row["failing_checks"][0]["observed"] == "nan"
