"""Result files: round trip, atomic replacement, and readers that skip what they cannot read."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sys
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from torchmatrix import identity, results
from torchmatrix.core import Constraint, Outcome, PinSource, Record
from torchmatrix.results import CellResult
from torchmatrix.util import atomicfile, storedjson

from ..conftest import rewrite, stored_content


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


def test_a_result_survives_the_round_trip_and_knows_its_file(tmp_path: Path) -> None:
    original = result(outcome=None)
    path = results.write(tmp_path, original)
    assert path == tmp_path / "linux-x86_64" / "torch-1.12.1-py3.10.json"
    assert results.read(path) == original
    assert results.read(path).path == path
    assert json.loads(path.read_text())["schema"] == results.SCHEMA_VERSION
    assert "path" not in json.loads(path.read_text())


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


def test_a_run_keeps_no_record_made_on_another_machine_identity_filed_under_its_name(tmp_path: Path) -> None:
    """``machine: box`` on two machines: a record the other made is not this one's, and one file says one
    machine's identity; kept under this one's, it would be said to be computed here, and no reader could tell."""
    amd = identity.Machine("linux", "x86_64", "AMD EPYC", "AuthenticAMD", "25", "1", ("x86-64-v3",)).to_json()
    xeon = identity.Machine("linux", "x86_64", "Xeon", "GenuineIntel", "6", "85", ("x86-64-v4",)).to_json()
    first = (record("slow", "cpu"), record("quick", "cpu", Outcome.FAIL))
    results.write(tmp_path, result(records=first, environment={identity.HARDWARE: amd}))
    path = results.write(tmp_path, result(records=(record("quick", "cpu"),), environment={identity.HARDWARE: xeon}))
    merged = results.read(path)
    assert [(found.probe, found.outcome) for found in merged.records] == [("quick", Outcome.PASS)]
    assert merged.environment[identity.HARDWARE] == xeon
    again = results.write(tmp_path, result(records=(record("slow", "cpu"),), environment={identity.HARDWARE: xeon}))
    assert [found.probe for found in results.read(again).records] == ["quick", "slow"], "one machine's records stay"


def test_a_run_of_tests_replaces_all_their_records_on_its_devices_so_a_test_that_is_gone_goes(tmp_path: Path) -> None:
    def test(name: str, device: str = "cpu", outcome: Outcome = Outcome.PASS) -> Record:
        return Record(f"tests/test_a.py::{name}", device, outcome, {}, "", 0.01, {"entry": "tests/test_a.py"})

    results.write(tmp_path, result(records=(test("test_old"), test("test_kept", "cuda"), record("other", "cpu"))))
    again = (test("test_new"), test("test_kept", outcome=Outcome.FAIL))
    merged = results.read(results.write(tmp_path, result(records=again, finished="2026-02-01T00:00:00+00:00")))
    assert [(found.probe, found.device, found.outcome) for found in merged.records] == [
        ("tests/test_a.py::test_kept", "cuda", Outcome.PASS),  # another device's: not re-measured
        ("other", "cpu", Outcome.PASS),
        ("tests/test_a.py::test_new", "cpu", Outcome.PASS),
        ("tests/test_a.py::test_kept", "cpu", Outcome.FAIL),
    ]
    assert identity.maker(merged.records[0]) == ("tests/test_a.py", "cuda")
    assert identity.maker(merged.records[1]) == ("other", "cpu")


def test_a_run_of_a_file_replaces_a_record_of_its_test_that_another_probe_made(tmp_path: Path) -> None:
    """A bisect of ``t.py::test_b`` stored its error (not found) in a release whose file has no such test; once
    the matrix runs ``t.py`` there, that record goes: kept, it would be a record of the file no run replaces, stale
    for ever, and every run of the cell would run the file again for it."""

    def test(name: str, entry: str, device: str = "cpu", outcome: Outcome = Outcome.PASS) -> Record:
        return Record(f"t.py::{name}", device, outcome, {}, "", 0.01, {"entry": entry})

    bisected = (test("test_b", "t.py::test_b", outcome=Outcome.ERROR), test("test_b", "t.py::test_b", "cuda"))
    results.write(tmp_path, result(records=(*bisected, record("other", "cpu"))))
    ran = (test("test_a", "t.py"),)

    def covered(found: Record) -> bool:  # the file t.py ran on cpu
        return found.device == "cpu" and found.probe.startswith("t.py::")

    path = results.write(tmp_path, result(records=ran, finished="2026-02-01T00:00:00+00:00"), covered)
    assert [(found.probe, found.device) for found in results.read(path).records] == [
        ("t.py::test_b", "cuda"),  # another device's: the file did not run there
        ("other", "cpu"),
        ("t.py::test_a", "cpu"),
    ]


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

    def as_schema_1(data: dict[str, Any]) -> None:
        data["schema"] = 1
        for stored in data["records"]:
            del stored["inputs"]

    rewrite(path, as_schema_1, seal=False)
    (upgraded,) = results.read(path).records
    assert upgraded.inputs == {"requirements": ["torch==1.12.1"], "timeout": 300, "probe": "a" * 64}


def test_unreadable_files_are_named_and_skipped(tmp_path: Path) -> None:
    good = results.write(tmp_path, result())
    folder = good.parent
    data = stored_content(good)
    record = data["records"][0]
    broken = {
        "truncated.json": good.read_text()[:100],
        "empty.json": "",
        "newer.json": json.dumps(dict(data, schema=99)),
        "schema-true.json": json.dumps(dict(data, schema=True)),
        "wrong.json": json.dumps({"schema": 2, "machine": "x"}),
        "array.json": "[]",
        "number.json": "5",
        "surrogate.json": json.dumps(dict(data, message="\ud800 x")),
        "repeated.json": json.dumps(dict(data, records=[record, dict(record, outcome="fail")])),
        "null.json": "null",
        "python-number.json": json.dumps(dict(data, python=3.9)),
        "torch-number.json": json.dumps(dict(data, torch=1.9)),
        "cell-passes.json": json.dumps(dict(data, outcome="pass")),
        "record-no-wheel.json": json.dumps(dict(data, records=[dict(record, outcome="no-wheel")])),
        "record-shown.json": json.dumps(dict(data, records=[dict(record, outcome="within-tolerance")])),
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
    assert "number.json: not a JSON object" in messages and "null.json: not a JSON object" in messages
    assert "repeated.json: does not fit schema 2: records[1] repeats 'autograd_dot' on 'cpu'" in messages
    assert "surrogate.json: a string holds a lone UTF-16 surrogate (an escape such as \\ud800): not text" in messages
    assert "python-number.json: does not fit schema 2: 'python' is a number" in messages
    assert "torch-number.json: does not fit schema 2: 'torch' is a number" in messages
    assert "cell-passes.json: does not fit schema 2: outcome 'pass' is not a cell outcome" in messages
    assert "record-no-wheel.json: does not fit schema 2: records[0]: outcome 'no-wheel' is a cell outcome" in messages
    assert "record-shown.json: does not fit schema 2: records[0]: outcome 'within-tolerance' is shown only" in messages
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


def scan_in_time(folder: Path, seconds: float = 20) -> results.Scan:
    """``results.scan(folder)``, failing instead of hanging if it does not end within ``seconds``."""
    found: list[results.Scan] = []
    reader = threading.Thread(target=lambda: found.append(results.scan(folder)), daemon=True)
    reader.start()
    reader.join(seconds)
    assert found, f"scanning {folder} did not end within {seconds} s"
    return found[0]


def beside(good: Path, name: str, text: str) -> Path:
    (good.parent / name).write_text(text, encoding="utf-8")
    return good.parent / name


def with_record(data: dict[str, Any], **changes: Any) -> str:
    return json.dumps(dict(data, records=[dict(data["records"][0], **changes)]))


def reasons(scan: results.Scan) -> dict[str, str]:
    """Each skipped file's name, and the reason given."""
    skipped = [
        warning.removeprefix("skipping ").split(": ", 1) for warning in scan.warnings if warning.startswith("skipping ")
    ]
    return {path.rsplit("/", 1)[-1]: reason for path, reason in skipped}


def nested(depth: int, innermost: Any = 0) -> Any:
    for _ in range(depth):
        innermost = [innermost]
    return innermost


def test_numbers_no_float_can_hold_and_non_json_constants_are_refused(tmp_path: Path) -> None:
    good = results.write(tmp_path, result())
    data = stored_content(good)
    huge = int("9" * 400)
    beside(good, "duration.json", with_record(data, duration=huge))
    beside(good, "error.json", with_record(data, metrics={"checks": [{"error": -huge, "tolerance": 1e-6}]}))
    beside(good, "nan.json", with_record(data, duration=float("nan")))
    beside(good, "infinity.json", with_record(data, metrics={"error": float("-inf")}))
    beside(good, "overflow.json", with_record(data, duration=1.0).replace('"duration": 1.0', '"duration": 1e400'))
    beside(good, "widest.json", with_record(data, metrics={"seed": 2**64 - 1, "min": -(2**63)}))
    scan = results.scan(tmp_path)
    assert reasons(scan) == {
        "duration.json": "an integer of 400 digits (at most 20, as a 64-bit integer has)",
        "error.json": "an integer of 400 digits (at most 20, as a 64-bit integer has)",
        "nan.json": "NaN is not JSON (torchmatrix stores non-finite numbers as the strings 'nan', 'inf')",
        "infinity.json": "-Infinity is not JSON (torchmatrix stores non-finite numbers as the strings 'nan', 'inf')",
        "overflow.json": "the number 1e400 is too large for a float",
    }
    assert sorted(found.path.name for found in scan.results) == [good.name, "widest.json"]


def test_nesting_is_capped_at_reading(tmp_path: Path) -> None:
    good = results.write(tmp_path, result())
    data = stored_content(good)
    # The metrics object is the 4th level (file, records, record, metrics); the lists fill it up to the cap.
    beside(good, "at-the-cap.json", with_record(data, metrics={"x": nested(storedjson.MAX_DEPTH - 5, [])}))
    beside(good, "over-the-cap.json", with_record(data, metrics={"x": nested(storedjson.MAX_DEPTH - 4, [])}))
    beside(good, "parser-breaking.json", good.read_text().replace('"inputs": {}', '"inputs": ' + "[" * 200_000))
    scan = results.scan(tmp_path)
    too_deep = f"lists and objects nested more than {storedjson.MAX_DEPTH} deep"
    assert reasons(scan) == {"over-the-cap.json": too_deep, "parser-breaking.json": too_deep}
    assert sorted(found.path.name for found in scan.results) == ["at-the-cap.json", good.name]


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and symbolic links")
def test_only_regular_files_inside_the_results_folder_are_read(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    good = results.write(folder, result())
    # A valid result outside the folder. (A link to /dev/zero is tests/faults' to try: the old reader ate memory.)
    elsewhere = results.write(tmp_path / "elsewhere", result("1.13.0"))
    os.mkfifo(good.parent / "fifo.json")
    (good.parent / "folder.json").mkdir()
    (good.parent / "out.json").symlink_to(elsewhere)
    (good.parent / "inside.json").symlink_to(good.name)
    (folder / "linked-machine").symlink_to(elsewhere.parent, target_is_directory=True)
    scan = scan_in_time(folder)
    assert reasons(scan) == {
        "fifo.json": "not a regular file but a FIFO",
        "folder.json": "not a regular file but a directory",
        "out.json": f"a link to '{elsewhere}', outside the results folder",
        elsewhere.name: f"a link to '{elsewhere}', outside the results folder",
    }
    assert sorted(found.path.name for found in scan.results) == ["inside.json", good.name]


def written_of_size(folder: Path, torch: str, size: int) -> Path:
    """The result of torch ``torch``, its message padded so that its file has ``size`` bytes."""
    padding = size - results.write(folder, result(torch)).stat().st_size
    path = results.result_path(folder, "linux-x86_64", f"torch-{torch}-py3.10")
    atomicfile.write_json(path, storedjson.sealed(result(torch, message="x" * padding).to_json()))  # write refuses it
    assert path.stat().st_size == size
    return path


def test_a_file_larger_than_the_limit_is_refused(tmp_path: Path) -> None:
    fits = written_of_size(tmp_path, "1.13.0", storedjson.MAX_FILE_BYTES)
    over = written_of_size(tmp_path, "2.0.0", storedjson.MAX_FILE_BYTES + 1)
    scan = results.scan(tmp_path)
    assert reasons(scan) == {
        over.name: "larger than a result file may be (8 MiB, where a record's metrics are at most 1 MiB): "
        "no torchmatrix result; move it out of the results folder"
    }
    assert [found.path for found in scan.results] == [fits]


@pytest.mark.skipif(sys.platform != "linux", reason="a file name that is not UTF-8")
def test_text_that_is_not_utf8_is_refused_in_a_file_and_in_its_name(tmp_path: Path) -> None:
    good = results.write(tmp_path, result())
    latin_1 = good.read_text().replace('"message": ""', '"message": "caf\xe9"').encode("latin-1")
    (good.parent / "latin-1.json").write_bytes(latin_1)
    os.rename(results.write(tmp_path, result("2.0.0")), os.fsencode(good.parent) + b"/\xff.json")
    scan = results.scan(tmp_path)
    assert reasons(scan) == {"latin-1.json": "not UTF-8 text", "\udcff.json": "its name is not UTF-8 text"}
    assert [found.path for found in scan.results] == [good]


def test_a_torch_that_is_no_version_and_a_finish_that_is_no_time_are_refused(tmp_path: Path) -> None:
    good = results.write(tmp_path, result())
    data = stored_content(good)
    beside(good, "nightly.json", json.dumps(dict(data, torch="nightly")))
    beside(good, "no-offset.json", json.dumps(dict(data, finished_at="2026-01-01T00:00:00")))
    beside(good, "empty-time.json", json.dumps(dict(data, finished_at="")))
    scan = results.scan(tmp_path)
    no_time = "does not fit schema 2: 'finished_at' is not an ISO 8601 time with a UTC offset"
    assert reasons(scan) == {
        "nightly.json": "does not fit schema 2: 'torch' is not a version: 'nightly'",
        "no-offset.json": f"{no_time}: '2026-01-01T00:00:00'",
        "empty-time.json": f"{no_time}: ''",
    }
    assert [found.path for found in scan.results] == [good]


def test_the_rules_of_a_cells_constraints_are_kept_and_a_result_that_has_none_reads_as_saying_nothing(
    tmp_path: Path,
) -> None:
    given = (Constraint("numpy<2", PinSource.KNOWN, "<2.3", "built against NumPy 1.x"),)
    path = results.write(tmp_path, result(inputs={"constraints": ["numpy<2"]}, constrained_by=given))
    assert results.read(path).constrained_by == given
    assert json.loads(path.read_text())["constrained_by"] == [
        {"constraint": "numpy<2", "source": "known", "torch": "<2.3", "reason": "built against NumPy 1.x"}
    ]
    older = {key: value for key, value in stored_content(path).items() if key != "constrained_by"}
    beside(path, "older.json", json.dumps(older))
    beside(path, "elsewhere.json", json.dumps(dict(older, constrained_by=[dict(given[0].to_json(), source="x")])))
    scan = results.scan(tmp_path)
    assert reasons(scan) == {
        "elsewhere.json": "does not fit schema 2: constrained_by[0]: source 'x' is none of known, matrix"
    }
    assert {found.path.name: found.constrained_by for found in scan.results} == {path.name: given, "older.json": None}


def test_a_cell_outcome_that_comes_with_records_is_refused(tmp_path: Path) -> None:
    """No run writes one: shown, the cell's outcome would hide the records under it."""
    good = results.write(tmp_path, result())
    beside(good, "hiding.json", json.dumps(dict(stored_content(good), outcome="no-wheel")))
    scan = results.scan(tmp_path)
    assert reasons(scan) == {
        "hiding.json": "does not fit schema 2: the cell outcome 'no-wheel' comes with records, which it would hide"
    }
    assert [found.path for found in scan.results] == [good]


def test_a_result_from_the_future_or_in_another_machines_folder_is_refused(tmp_path: Path) -> None:
    now = datetime.now(timezone.utc)
    soon = (now + results.CLOCK_SKEW - timedelta(minutes=5)).isoformat()  # a clock a little ahead: fine
    later = (now + results.CLOCK_SKEW + timedelta(minutes=5)).isoformat(timespec="seconds")
    good = results.write(tmp_path, result(finished=soon))
    future = results.write(tmp_path, result("1.13.0", finished=later))
    stray = beside(good, "stray.json", json.dumps(result("2.0.0", machine="H200 / rack 3").to_json()))
    scan = results.scan(tmp_path)
    assert reasons(scan)[future.name].startswith(f"it says it finished at {later}, over 1 h after now")
    assert reasons(scan)[stray.name] == (
        "it names machine 'H200 / rack 3', not that of its folder 'linux-x86_64'; "
        "move it into the folder 'H200_rack_3' if it is that machine's, or delete it"
    )
    assert [found.path for found in scan.results] == [good]


def test_a_machine_whose_name_is_no_path_component_reads_back_from_the_folder_it_is_written_to(tmp_path: Path) -> None:
    path = results.write(tmp_path, result(machine="H200 / rack 3"))
    assert path.parent.name == "H200_rack_3"
    assert results.read(path).machine == "H200 / rack 3"


def test_the_newest_result_is_the_latest_time_whatever_the_offset() -> None:
    # 10:00 at +02:00 is 08:00 UTC: earlier than 09:00 UTC, though later as text.
    east = result(finished="2026-01-01T10:00:00+02:00", message="east")
    utc = result(finished="2026-01-01T09:00:00+00:00", message="utc")
    assert results.latest([utc, east]) == [utc]
    assert results.latest([east, utc]) == [utc]


def test_warnings_reach_the_terminal_one_line_each(tmp_path: Path) -> None:
    folder = tmp_path / "box\nnox > Session probe(9.9.9) was successful"
    folder.mkdir()
    (folder / "x.json").write_text("{")
    shown: list[str] = []
    results.warn_skipped(results.scan(tmp_path), shown.append)
    assert shown == [f"skipping {tmp_path}/box\\nnox > Session probe(9.9.9) was successful/x.json: not valid JSON "
                     "(Expecting property name enclosed in double quotes at line 1); truncated?"]  # fmt: skip


def test_a_result_larger_than_a_reader_accepts_is_not_written(tmp_path: Path) -> None:
    huge = Record(
        "autograd_dot", "cpu", Outcome.PASS, {"values": ["x" * 1000] * (storedjson.MAX_FILE_BYTES // 1000)}, "", 0.0
    )
    with pytest.raises(OSError, match=r"it would be \d+\.\d MiB, over the 8 MiB a result file may be"):
        results.write(tmp_path, result(records=(huge,)))
    assert not list(tmp_path.rglob("*.json"))


def test_a_result_of_a_newer_schema_is_never_replaced_by_an_older_torchmatrix(tmp_path: Path) -> None:
    path = results.write(tmp_path, result())
    newest = results.SCHEMA_VERSION + 1
    newer = dict(json.loads(path.read_text()), schema=newest, records=[{"of": "the future"}])
    path.write_text(json.dumps(newer))
    with pytest.raises(OSError, match=rf"cannot keep: schema {newest} is newer than this torchmatrix reads"):
        results.write(tmp_path, result())
    assert json.loads(path.read_text()) == newer
    broken = results.write(tmp_path, result("2.0.0"))
    broken.write_text("{")  # unreadable by anyone: replaced
    assert results.read(results.write(tmp_path, result("2.0.0"))).torch == "2.0.0"


def test_a_copy_of_a_cells_file_beside_it_is_named_and_never_counts_over_the_cells_own(tmp_path: Path) -> None:
    """A file dropped in under another name, saying it finished later (even in the future), hides no run's result."""
    own = results.write(tmp_path, result("1.12.1", "2026-01-01T00:00:00+00:00"))
    copy = own.parent / "copy.json"
    shutil.copy(own, copy)
    rewrite(copy, lambda data: data.update(finished_at="2026-02-01T00:00:00+00:00"))
    scan = results.scan(tmp_path)
    assert scan.warnings == (
        f"2 files hold cell torch-1.12.1-py3.10 of linux-x86_64 ({copy}, {own}): the cell's own file counts, "
        f"else the one finished last ({own}); delete the others",
    )
    assert [found.path for found in results.latest(scan.results)] == [own]
    other = own.parent / "other.json"
    own.rename(other)  # two copies and no own file: the one finished last
    assert [found.path for found in results.latest(results.scan(tmp_path).results)] == [copy]


WARNING_END = (
    "which can compute differently: file each under its own name (the default name says the model, its ISA and a "
    "digest of the rest; `machine:` or TORCHMATRIX_MACHINE name one)"
)


def test_a_machine_folder_holding_results_of_two_cpu_models_is_named(tmp_path: Path) -> None:
    for torch, cpu in (("1.12.1", "AMD EPYC"), ("2.2.0", "Intel(R) Xeon(R) Processor")):
        results.write(tmp_path, result(torch, environment={"torch": torch, "devices": {"cpu": cpu}}))
    results.write(tmp_path, result("2.0.1", machine="H200", environment={"devices": {"cuda": ["NVIDIA H200"] * 2}}))
    assert results.scan(tmp_path).warnings == (
        f"machine linux-x86_64 holds results of 2 CPU models (AMD EPYC; Intel(R) Xeon(R) Processor), {WARNING_END}",
    )


def test_a_machine_folder_holding_results_of_two_machine_identities_is_named(tmp_path: Path) -> None:
    """One model string, two CPUs (AVX2 and AVX-512): only the identity each result stored tells them apart."""
    cpu = "Intel(R) Xeon(R) CPU @ 2.20GHz"
    avx2 = identity.Machine("linux", "x86_64", cpu, "GenuineIntel", "6", "79", ("x86-64-v2", "x86-64-v3"))
    avx512 = dataclasses.replace(avx2, model="85", levels=(*avx2.levels, "x86-64-v4"), features=("avx512_vnni",))
    for torch, hardware in (("1.12.1", avx2), ("2.2.0", avx512), ("2.0.1", None)):  # 2.0.1: from before it was stored
        stored = {identity.HARDWARE: hardware.to_json()} if hardware else {}
        results.write(tmp_path, result(torch, environment={"devices": {"cpu": cpu}, **stored}))
    assert results.scan(tmp_path).warnings == (
        f"machine linux-x86_64 holds results of 2 machine identities ({cpu} (GenuineIntel 6/79, x86-64-v3, "
        f"{avx2.digest()}); {cpu} (GenuineIntel 6/85, x86-64-v4, {avx512.digest()})), {WARNING_END}",
    )


def test_a_result_edited_after_it_was_written_is_refused_and_one_written_before_seals_is_read(tmp_path: Path) -> None:
    """An outcome changed by hand, in the text as an editor or sed changes it, is never shown as the cell's."""
    good = results.write(tmp_path, result(records=(Record("autograd_dot", "cpu", Outcome.FAIL, {}, "", 0.01),)))
    edited = beside(good, "edited.json", good.read_text().replace('"outcome": "fail"', '"outcome": "pass"'))
    assert edited.read_text() != good.read_text()
    older = beside(good, "older.json", json.dumps(stored_content(good)))  # a torchmatrix before seals wrote it so
    scan = scan_in_time(tmp_path)
    assert reasons(scan) == {
        "edited.json": "it was changed after torchmatrix wrote it: its content_sha256 is not its content's sha256; "
        "run what made it again, or delete the file"
    }
    assert sorted(found.path.name for found in scan.results) == sorted([good.name, older.name])
    assert [record.outcome for found in scan.results for record in found.records] == [Outcome.FAIL, Outcome.FAIL]


def test_a_result_whose_seal_was_removed_is_refused(tmp_path: Path) -> None:
    """One that records the pairs' resource limits was written sealed: without its seal, it was edited."""
    limited = Record("autograd_dot", "cpu", Outcome.FAIL, {}, "", 0.01, inputs={identity.LIMITS: {"stack": [1, 2]}})
    good = results.write(tmp_path, result(records=(limited,)))
    data = json.loads(good.read_text())
    del data[storedjson.SEAL]
    data["records"][0]["outcome"] = "pass"
    beside(good, "unsealed.json", json.dumps(data))
    assert reasons(scan_in_time(tmp_path)) == {
        "unsealed.json": "its content_sha256 was removed, which every result that records the pairs' resource "
        "limits has: it was changed after torchmatrix wrote it; run what made it again, or delete the file"
    }
