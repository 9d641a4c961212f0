"""A probe's checks: found by name, so two of one name are refused, naming the probe and the name."""

from __future__ import annotations

import time
from pathlib import Path

from torchmatrix.core import Outcome, Pair, Probe
from torchmatrix.worker import runner


def test_a_record_with_two_checks_of_one_name_is_refused_with_the_probe_and_the_name(tmp_path: Path) -> None:
    pair = Pair(Probe("sweep", tmp_path / "sweep.py"), "cpu")
    metrics = {"checks": [{"name": "mul", "ok": True}, {"name": "mul", "ok": False}]}
    sent = {"probe": "sweep", "outcome": "pass", "metrics": metrics, "message": "", "duration": 0.1, "read": []}
    (record,) = runner._records(pair, {"records": [sent]}, time.time())
    assert record.outcome is Outcome.ERROR
    assert record.message == "malformed result: sweep records two checks named 'mul': a check is found by its name"
    assert record.metrics == {"refused_checks": metrics["checks"]}  # kept for the file's reader, read by no view
