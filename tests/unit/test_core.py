"""A record's JSON: written and read in one place, checked alike for the runner and for result files; the outcomes
the worker sends are core's."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from torchmatrix import results, variables
from torchmatrix.core import RECORD_OUTCOMES, MalformedRecord, Outcome, Pair, Probe, Record
from torchmatrix.envside.torchmatrix_worker import protocol
from torchmatrix.util import storedjson
from torchmatrix.worker import runner

RECORD = Record("sweep", "cpu", Outcome.PASS, {"checks": [{"name": "mul", "ok": True}]}, "fine", 0.5, {"probe": "a"})

MALFORMED = {
    "outcome": (
        {"outcome": "bogus"},
        "outcome 'bogus' is none of pass, fail, error, crash, timeout, unavailable, unstable",
    ),
    "cell outcome": ({"outcome": "no-wheel"}, "outcome 'no-wheel' is a cell outcome"),
    "shown only": ({"outcome": "stale"}, "outcome 'stale' is shown only"),
    "no probe": ({"probe": None}, "'probe' is null"),
    "metrics": ({"metrics": []}, "'metrics' is a list"),
    "message": ({"message": 3}, "'message' is a number"),
    "duration": ({"duration": "1.5"}, "'duration' is a string"),
    "boolean duration": ({"duration": True}, "'duration' is a boolean"),
    "checks": (
        {"metrics": {"checks": [{"name": "mul"}, {"name": "add"}, {"nameless": 1}, "x", {"name": "mul"}]}},
        "sweep records two checks named 'mul': a check is found by its name",
    ),
}


def test_a_record_reads_back_as_it_was_written() -> None:
    assert Record.from_json(json.loads(json.dumps(RECORD.to_json()))) == RECORD


@pytest.mark.parametrize(("changes", "reason"), MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_record_is_refused_naming_what_is_wrong(changes: dict[str, Any], reason: str) -> None:
    with pytest.raises(MalformedRecord) as refused:
        Record.from_json(dict(RECORD.to_json(), **changes))
    assert str(refused.value) == reason


def test_checks_without_a_name_or_of_names_of_their_own_are_a_record() -> None:
    checks = [{"name": "mul"}, {"name": "add"}, {"nameless": 1}, {"name": ["mul"]}, {"name": ["mul"]}, "x"]
    assert Record.from_json(dict(RECORD.to_json(), metrics={"checks": checks})).metrics == {"checks": checks}
    assert Record.from_json(dict(RECORD.to_json(), metrics={"checks": "not a list"})).outcome is Outcome.PASS


@pytest.mark.parametrize(("changes", "reason"), MALFORMED.values(), ids=MALFORMED.keys())
def test_the_runner_and_result_files_refuse_a_record_for_one_reason_each_its_own_way(
    changes: dict[str, Any], reason: str, tmp_path: Path
) -> None:
    sent = dict(RECORD.to_json(), read=[], **changes)
    del sent["device"], sent["inputs"]  # what the runner adds
    (made,) = runner._records(Pair(Probe("sweep", tmp_path / "sweep.py"), "cpu"), {"records": [sent]}, time.time())
    assert (made.probe, made.outcome, made.message) == ("sweep", Outcome.ERROR, f"malformed result: {reason}")

    now = results.now_iso()
    data = results.CellResult("m", "torch-2.0.0-py3.10", "2.0.0", "3.10", None, "probe", None, "", (RECORD,),
                              started_at=now, finished_at=now).to_json()  # fmt: skip
    assert results.CellResult.from_json(data).records == (RECORD,)
    data["records"] = [RECORD.to_json(), dict(RECORD.to_json(), device="cuda", **changes)]
    with pytest.raises(ValueError) as refused:
        results.CellResult.from_json(data)
    assert str(refused.value) == f"does not fit schema {results.SCHEMA_VERSION}: records[1]: {reason}"


def test_a_file_the_worker_found_whose_name_is_no_utf8_is_recorded_as_not_there(tmp_path: Path) -> None:
    # a folder named by bytes that are no UTF-8 (a TMPDIR of them) that changed while the pair ran: the worker found it
    # by its name; the record names it with U+FFFD, which names no file, so it must say it is not there, as every check
    # after finds it, or the record is stale at once and every run after runs it again
    folder = tmp_path / "tmp\udcff"
    folder.mkdir()
    entry = f"{folder}{protocol.FILE_THERE}"
    sent = dict(RECORD.to_json(), read=[entry], read_as_found={entry: protocol.asked_digest(entry)})
    del sent["device"], sent["inputs"]
    assert sent["read_as_found"][entry] == "a folder"
    line = json.dumps({"records": [sent]}).encode("ascii")
    (made,) = runner._records(Pair(Probe("sweep", tmp_path / "sweep.py"), "cpu"), runner._parse(line), time.time())
    named = f"{tmp_path}/tmp\ufffd{protocol.FILE_THERE}"
    assert made.inputs["read"] == {named: None}
    assert protocol.asked_digest(named) is None  # as a check finds it now: the record is current


def test_the_outcomes_the_worker_sends_are_those_of_a_record_but_the_one_the_host_makes() -> None:
    made_by_the_host = {Outcome.UNSTABLE}  # repeated runs that disagree (torchmatrix.worker.repeats)
    sent = set(protocol.OUTCOMES_THE_WORKER_MAY_SEND)
    assert sent == {outcome.value for outcome in RECORD_OUTCOMES} - {outcome.value for outcome in made_by_the_host}
    assert set(protocol.OUTCOMES_A_PROBE_MAY_RETURN) <= set(protocol.OUTCOMES_A_CHILD_MAY_SEND) <= sent


def test_the_worker_sends_no_integer_wider_than_a_result_file_holds() -> None:
    assert protocol.MAX_INT_DIGITS == storedjson.MAX_INT_DIGITS


def test_the_worker_names_the_shared_inputs_folder_as_the_sessions_set_it() -> None:
    assert variables.INPUTS.name == protocol.INPUTS_VARIABLE
