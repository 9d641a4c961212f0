"""The operator sweep where it cannot run: each a recorded error saying why, not a crash (a stand-in torch)."""

from __future__ import annotations

import dataclasses

import pytest

from torchmatrix.core import Outcome, Pair, Probe
from torchmatrix.worker.runner import run_cell

from ..conftest import ROOT

pytestmark = pytest.mark.integration

SWEEP = Probe("opsweep", ROOT / "probes" / "opsweep.py")


def sweep(python: str, **options: object):
    probe = dataclasses.replace(SWEEP, options=options)
    [record] = run_cell(python, [Pair(probe, "cpu")], 60.0, workdir=ROOT).records
    return record


def test_a_torch_without_its_operator_database_is_an_error_with_the_reason(stub_torch_python: str) -> None:
    record = sweep(stub_torch_python)
    assert record.outcome is Outcome.ERROR
    assert record.message.startswith("RuntimeError: torch's operator database cannot be imported here: ")
    assert "ModuleNotFoundError" in record.message


def test_an_option_it_does_not_take_is_an_error_naming_those_it_takes(stub_torch_python: str) -> None:
    record = sweep(stub_torch_python, operators="add")
    assert record.outcome is Outcome.ERROR
    assert record.message == "ValueError: unknown option 'operators' of opsweep; it takes ops, samples, seed, store"
    assert "whole number" in sweep(stub_torch_python, samples=0).message
    assert "regular expression or a list of names" in sweep(stub_torch_python, ops=3).message
