"""Result files: round trip, atomic replacement, and readers that skip what they cannot read."""

from __future__ import annotations

import json
from pathlib import Path

from torchmatrix import results
from torchmatrix.core import Outcome, Record
from torchmatrix.results import CellResult


def record(probe: str, device: str, outcome: Outcome = Outcome.PASS) -> Record:
    return Record(probe, device, outcome, {}, "", 0.01, {"probe": probe})


def result(torch: str = "1.12.1", finished: str = "2026-01-01T00:00:00+00:00", **changes) -> CellResult:
    fields = dict(
        machine="linux-x86_64", cell_id=f"torch-{torch}-py3.10", torch=torch, python="3.10", python_request=None,
        session=f"probe({torch})", outcome=None, message="",
        records=(Record("autograd_dot", "cpu", Outcome.PASS, {"checks": []}, "", 0.01),),
        environment={"torch": torch}, inputs={}, started_at=finished, finished_at=finished,
    )  # fmt: skip
    fields.update(changes)
    return CellResult(**fields)


def test_a_result_survives_the_round_trip(tmp_path: Path) -> None:
    original = result(outcome=None)
    path = results.write(tmp_path, original)
    assert path == tmp_path / "linux-x86_64" / "torch-1.12.1-py3.10.json"
    assert results.read(path) == original
    assert json.loads(path.read_text())["schema"] == results.SCHEMA_VERSION


def test_a_run_replaces_only_the_records_it_made_and_leaves_no_temporary(tmp_path: Path) -> None:
    first = (record("autograd_dot", "cpu", Outcome.FAIL), record("autograd_dot", "cuda"), record("other", "cpu"))
    results.write(tmp_path, result(message="first", records=first))
    again = (record("autograd_dot", "cpu", Outcome.PASS), record("batched_matmul", "cpu"))
    path = results.write(tmp_path, result(message="second", records=again, finished="2026-02-01T00:00:00+00:00"))
    assert sorted(found.name for found in path.parent.iterdir()) == [".lock", path.name]
    merged = results.read(path)
    assert [(found.probe, found.device, found.outcome) for found in merged.records] == [
        ("autograd_dot", "cpu", Outcome.PASS),
        ("autograd_dot", "cuda", Outcome.PASS),
        ("other", "cpu", Outcome.PASS),
        ("batched_matmul", "cpu", Outcome.PASS),
    ]
    assert (merged.message, merged.finished_at) == ("second", "2026-02-01T00:00:00+00:00")


def test_a_cell_outcome_never_replaces_measured_records(tmp_path: Path) -> None:
    path = results.write(tmp_path, result(message="measured"))
    results.write(tmp_path, result(message="uv failed", outcome=Outcome.INSTALL_ERROR, records=()))
    assert results.read(path).message == "measured"
    failed = result(torch="1.9.0", outcome=Outcome.INSTALL_ERROR, records=(), message="uv failed")
    assert results.read(results.write(tmp_path, failed)).outcome is Outcome.INSTALL_ERROR
    assert results.read(results.write(tmp_path, result(torch="1.9.0"))).outcome is None  # a run replaces the error


def test_a_schema_1_file_is_read_with_its_cell_inputs_given_to_each_record(tmp_path: Path) -> None:
    inputs = {"requirements": ["torch==1.12.1"], "timeout": 300, "probes": {"autograd_dot": "a" * 64}, "devices": []}
    path = results.write(tmp_path, result(inputs=inputs))
    data = json.loads(path.read_text())
    data["schema"] = 1
    for stored in data["records"]:
        del stored["inputs"]
    path.write_text(json.dumps(data))
    (upgraded,) = results.read(path).records
    assert upgraded.inputs == {"requirements": ["torch==1.12.1"], "timeout": 300, "probe": "a" * 64}


def test_unreadable_files_are_named_and_skipped(tmp_path: Path) -> None:
    good = results.write(tmp_path, result())
    folder = good.parent
    data = json.loads(good.read_text())
    record = data["records"][0]
    broken = {
        "truncated.json": good.read_text()[:100],
        "empty.json": "",
        "newer.json": json.dumps(dict(data, schema=99)),
        "schema-true.json": json.dumps(dict(data, schema=True)),
        "wrong.json": json.dumps({"schema": 2, "machine": "x"}),
        "array.json": "[]",
        "python-number.json": json.dumps(dict(data, python=3.9)),
        "torch-number.json": json.dumps(dict(data, torch=1.9)),
        "cell-passes.json": json.dumps(dict(data, outcome="pass")),
        "record-no-wheel.json": json.dumps(dict(data, records=[dict(record, outcome="no-wheel")])),
        "records-text.json": json.dumps(dict(data, records="pass")),
        "duration-true.json": json.dumps(dict(data, records=[dict(record, duration=True)])),
    }
    for name, text in broken.items():
        (folder / name).write_text(text)
    (folder / "binary.json").write_bytes(b"\xff\xfe\x00")
    (folder / "folder.json").mkdir()
    (folder / f".{good.name}.x1y2z3.tmp").write_text(good.read_text()[:50])  # a writer killed mid-write
    scan = results.scan(tmp_path)
    assert [found.cell_id for found in scan.results] == ["torch-1.12.1-py3.10"]
    assert len(scan.warnings) == len(broken) + 2
    messages = "\n".join(scan.warnings)
    assert "truncated.json: not valid JSON" in messages
    assert "empty.json: not valid JSON" in messages
    assert "newer.json: schema 99 is newer than this torchmatrix reads" in messages
    assert "schema-true.json: schema True is not 2" in messages
    assert "wrong.json: does not fit schema 2: no 'outcome'" in messages
    assert "array.json: not a JSON object" in messages
    assert "python-number.json: does not fit schema 2: 'python' is a number" in messages
    assert "torch-number.json: does not fit schema 2: 'torch' is a number" in messages
    assert "cell-passes.json: does not fit schema 2: outcome 'pass' is not a cell outcome" in messages
    assert "record-no-wheel.json: does not fit schema 2: records[0]: outcome 'no-wheel' is a cell outcome" in messages
    assert "records-text.json: does not fit schema 2: 'records' is a string" in messages
    assert "duration-true.json: does not fit schema 2: records[0]: 'duration' is a boolean" in messages
    assert "binary.json: not UTF-8" in messages
    assert "folder.json: " in messages
    assert ".tmp" not in messages


def test_the_newest_result_of_a_cell_wins_and_order_follows_versions() -> None:
    old = result("1.12.1", "2026-01-01T00:00:00+00:00", cell_id="torch-1.12.1-py3.9", python="3.9")
    new = result("1.12.1", "2026-02-01T00:00:00+00:00")
    other = result("1.9.0")
    assert results.latest([old, new, other]) == [other, new]


def test_machine_names_are_safe_path_components() -> None:
    assert results.safe_name("H200 / rack 3") == "H200_rack_3"
    assert results.safe_name("../..") == "machine"
