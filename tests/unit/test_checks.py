"""A probe's checks: found by name, so two of one name are refused, naming the probe and the name."""

from __future__ import annotations

from pathlib import Path

from torchmatrix import checks, runner
from torchmatrix.core import Outcome, Pair, Probe


def test_a_name_two_checks_share_is_found() -> None:
    assert checks.duplicated({"checks": [{"name": "mul"}, {"name": "add"}, {"name": "mul"}]}) == "mul"
    assert checks.duplicated({"checks": [{"name": "mul"}, {"name": "add"}, {"nameless": 1}, "x"]}) is None
    assert checks.duplicated({"checks": "not a list"}) is None


def test_a_record_with_two_checks_of_one_name_is_refused_with_the_probe_and_the_name() -> None:
    pair = Pair(Probe("sweep", Path("sweep.py")), "cpu")
    metrics = {"checks": [{"name": "mul", "ok": True}, {"name": "mul", "ok": False}]}
    (record,) = runner._records(pair, {"records": [{"outcome": "pass", "metrics": metrics, "message": ""}]})
    assert record.outcome is Outcome.ERROR
    assert record.message == "malformed result: sweep records two checks named 'mul': a check is found by its name"
    assert record.metrics == {"refused_checks": metrics["checks"]}  # kept for the file's reader, read by no view
