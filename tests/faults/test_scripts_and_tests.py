"""Scripts and pytest tests as probes, run by real nox on real torch: each way they can end gets its outcome."""

from __future__ import annotations

import hashlib
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from torchmatrix.core import Kind, Outcome, Record
from torchmatrix.results import CellResult
from torchmatrix.views import escape

from .conftest import Run, Torch, Workspace

pytestmark = pytest.mark.integration

TIMEOUT = 20.0
"""Each pair's limit: a script's own `import torch` (a second or two alone) counts in it, and CI machines are shared."""
SEED_REPORT = """\
import torch
x = torch.arange(4.0)
x.requires_grad_(True)
y = 2 * torch.dot(x, x)
print(y)
"""
SCRIPTS = {
    "seed_report": (SEED_REPORT, Outcome.PASS),
    "prints_its_device": ("import os, torch\nprint(torch.ones(1, device=os.environ['TORCHMATRIX_DEVICE']))\n", None),
    "exits_1": ("import sys, torch\nprint('tensor(0.) on my Mac')\nsys.exit(1)\n", Outcome.FAIL),
    "asserts": ("import torch\nassert torch.arange(4.0).sum() == 7, 'expected 7'\n", Outcome.FAIL),
    "exits_125": ("import sys\nprint('needs torch.backends.mps')\nsys.exit(125)\n", Outcome.UNAVAILABLE),
    "skips": ("import unittest\nraise unittest.SkipTest('no GPU here')\n", Outcome.UNAVAILABLE),
    "raises": ("import torch\ntorch.ones(2) @ torch.ones(3)\n", Outcome.ERROR),
    "segfaults": ("import ctypes, torch\nprint('about to crash', flush=True)\nctypes.string_at(0)\n", Outcome.CRASH),
    "hangs": ("import time, torch\nprint('waiting')\ntime.sleep(3600)\n", Outcome.TIMEOUT),
}
TESTS = """
import ctypes, time
import pytest
import torch

def test_passes(torchmatrix_device):
    assert torch.ones(2, device=torchmatrix_device).sum().item() == 2

def test_fails():
    assert torch.arange(4.0).sum().item() == 7

@pytest.fixture
def model():
    raise RuntimeError("could not build the model")

def test_errors(model):
    pass

def test_skips():
    pytest.skip("needs torch.func")

def test_crashes():
    ctypes.string_at(0)

def test_after_the_crash():
    assert torch.zeros(1).item() == 0

def test_hangs():
    time.sleep(3600)

@pytest.mark.parametrize("size", [1, 3])
def test_after_the_hang(size):
    assert torch.ones(size).sum().item() == size
"""
TEST_OUTCOMES = {
    "test_passes": Outcome.PASS,
    "test_fails": Outcome.FAIL,
    "test_errors": Outcome.ERROR,
    "test_skips": Outcome.UNAVAILABLE,
    "test_crashes": Outcome.CRASH,
    "test_after_the_crash": Outcome.PASS,
    "test_hangs": Outcome.TIMEOUT,
    "test_after_the_hang[1]": Outcome.PASS,
    "test_after_the_hang[3]": Outcome.PASS,
}


@dataclass(frozen=True)
class Probed:
    workspace: Workspace
    run: Run
    result: CellResult

    def record(self, probe: str, device: str = "cpu") -> Record:
        (found,) = [r for r in self.result.records if (r.probe, r.device) == (probe, device)]
        return found


def write_probes(folder: Path) -> str:
    """The scripts and the tests in ``folder``; the matrix's ``probes:`` naming them."""
    (folder / "scripts").mkdir()
    for name, (source, _) in SCRIPTS.items():
        (folder / "scripts" / f"{name}.py").write_text(source)
    (folder / "tests").mkdir()
    (folder / "tests" / "test_outcomes.py").write_text(textwrap.dedent(TESTS))
    return "[" + ", ".join([*(f"scripts/{name}.py" for name in SCRIPTS), "tests/test_outcomes.py"]) + "]"


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory, envdir: Path, suite_cache: Path, torch_here: Torch, warm: None):
    """One cell running every script and the tests on cpu and cuda (absent here)."""
    workspace = Workspace(tmp_path_factory.mktemp("scripts"), envdir, suite_cache)
    probes = write_probes(workspace.folder)
    workspace.matrix_file.write_text(
        f"torch:\n  - {torch_here.entry}\nprobes: {probes}\ndevices: [cpu, cuda]\ntimeout: {TIMEOUT}\noutput: out\n"
    )
    run = workspace.nox("-s", "probe")
    (result,) = workspace.scan().results
    return Probed(workspace, run, result)


def test_every_script_gets_the_outcome_its_exit_gives(probed: Probed) -> None:
    assert probed.run.returncode == 0, probed.run.output
    scripts = [(record.probe, record.outcome) for record in probed.result.records if "::" not in record.probe]
    expected = [(f"scripts/{name}.py", outcome) for name, (_, outcome) in SCRIPTS.items() if outcome is not None]
    assert [pair for pair in scripts if pair[0] != "scripts/prints_its_device.py"] == expected


def test_the_seed_report_s_script_runs_unedited_and_keeps_what_it_printed(probed: Probed) -> None:
    record = probed.record("scripts/seed_report.py")
    assert record.message == "tensor(28., grad_fn=<MulBackward0>)"
    printed = b"tensor(28., grad_fn=<MulBackward0>)\n"
    digest = hashlib.sha256(printed).hexdigest()
    assert record.metrics == {"exit_code": 0, "output": [printed.decode().strip()], "output_sha256": digest,
                              "output_bytes": len(printed)}  # fmt: skip


def test_a_script_runs_on_other_devices_only_when_it_reads_its_device(probed: Probed) -> None:
    devices = {(record.probe, record.device) for record in probed.result.records if "::" not in record.probe}
    assert ("scripts/seed_report.py", "cuda") not in devices
    cuda = probed.record("scripts/prints_its_device.py", "cuda")
    assert cuda.outcome is Outcome.UNAVAILABLE
    assert probed.record("scripts/prints_its_device.py").message == "tensor([1.])"


def test_what_a_failing_crashing_or_hanging_script_said_is_kept(probed: Probed) -> None:
    assert probed.record("scripts/exits_1.py").message == "tensor(0.) on my Mac"
    assert probed.record("scripts/asserts.py").message == "AssertionError: expected 7"
    assert probed.record("scripts/exits_125.py").message == "needs torch.backends.mps"
    assert probed.record("scripts/skips.py").message == "no GPU here"
    raised = probed.record("scripts/raises.py")
    assert raised.message.startswith("RuntimeError:") and "scripts/raises.py" in raised.metrics["traceback"]
    crashed = probed.record("scripts/segfaults.py")
    assert crashed.message.startswith("the probe's process died with SIGSEGV while running scripts/segfaults.py on cpu")
    assert crashed.metrics["output"] == ["about to crash"]
    hung = probed.record("scripts/hangs.py")
    assert (hung.message, hung.metrics["output"]) == (f"stopped after {TIMEOUT:g} s", ["waiting"])


def test_each_test_is_a_record_and_a_crash_or_hang_loses_none_of_the_others(probed: Probed) -> None:
    tests = {
        record.probe.split("::", 1)[1]: record.outcome
        for record in probed.result.records
        if record.probe.startswith("tests/test_outcomes.py::") and record.device == "cpu"
    }
    assert tests == TEST_OUTCOMES
    assert probed.record("tests/test_outcomes.py::test_skips").message == "needs torch.func"
    assert probed.record("tests/test_outcomes.py::test_errors").message == "RuntimeError: could not build the model"
    assert probed.record("tests/test_outcomes.py::test_hangs").message == f"stopped after {TIMEOUT:g} s"
    cuda = [record for record in probed.result.records if record.probe.startswith("tests/") and record.device == "cuda"]
    assert len(cuda) == len(TEST_OUTCOMES) and {record.outcome for record in cuda} == {Outcome.UNAVAILABLE}


def test_every_test_is_in_the_report(probed: Probed) -> None:
    """COMPATIBILITY.md: the tests' front table, and a row per test that did not pass; the page: every test."""
    report = (probed.workspace.folder / "out" / "COMPATIBILITY.md").read_text()
    page = (probed.workspace.folder / "out" / "compatibility.html").read_text()
    for name, outcome in TEST_OUTCOMES.items():
        assert f"tests/test_outcomes.py::{name}" in page, name
        assert (f"| {escape.markdown(name)} | {outcome.symbol}" in report) is (outcome is not Outcome.PASS), name
    assert "4 of 9 tests passed in every cell" in report


def test_nothing_changed_runs_nothing_and_an_edited_test_file_runs_the_tests_again(probed: Probed) -> None:
    again = probed.workspace.nox("-s", "probe")
    assert again.returncode == 0 and ") skipped: torch-" in again.output, again.output
    tests = probed.workspace.folder / "tests" / "test_outcomes.py"
    tests.write_text(tests.read_text().replace("def test_hangs():\n    time.sleep(3600)\n", ""))
    edited = probed.workspace.nox("-s", "probe")
    assert "2 of 12 pairs: probe tests/test_outcomes.py changed" in edited.output, edited.output
    (result,) = probed.workspace.scan().results
    names = {record.probe for record in result.records}
    assert "tests/test_outcomes.py::test_hangs" not in names  # a test that is gone leaves the table
    assert "tests/test_outcomes.py::test_after_the_crash" in names and "scripts/seed_report.py" in names


DOT = "(2 * torch.dot(torch.arange(4.0), torch.arange(4.0))).item()"
ASKED = {  # files whose tests no text of theirs shows, each failing under `pytest FILE`; and two repro.py
    "shared_checks.py": f"import torch\n\ndef test_dot():\n    assert {DOT} == 27, 'expected 27'\n",
    "base_case.py": f"import torch, unittest\n\nclass DotChecks(unittest.TestCase):\n"
    f"    def test_dot(self):\n        self.assertEqual({DOT}, 27)\n",
    "test_star.py": "from shared_checks import *\n",
    "test_case.py": "import base_case\n\nclass MyDot(base_case.DotChecks):\n    pass\n",
    "check_dot.py": f"import torch\n\ndef test_dot():\n    assert {DOT} == 27\n",  # not test_*.py: named, it counts
    "repro.py": f"import torch\nprint('first', {DOT})\n",
    "sub/repro.py": f"import torch\nprint('second', {DOT} / 2)\n",
}


@pytest.fixture(scope="module")
def asked(tmp_path_factory: pytest.TempPathFactory, envdir: Path, suite_cache: Path, torch_here: Torch, warm: None):
    """One cell running the files whose kind pytest says, and two scripts of one name in two folders."""
    workspace = Workspace(tmp_path_factory.mktemp("asked"), envdir, suite_cache)
    for name, source in ASKED.items():
        (workspace.folder / name).parent.mkdir(exist_ok=True)
        (workspace.folder / name).write_text(source)
    probes = "[test_star.py, test_case.py, check_dot.py, repro.py, sub/repro.py]"
    workspace.matrix_file.write_text(f"torch:\n  - {torch_here.entry}\nprobes: {probes}\ndevices: [cpu]\noutput: out\n")
    run = workspace.nox("-s", "probe")
    (result,) = workspace.scan().results
    return Probed(workspace, run, result)


def test_a_file_pytest_collects_tests_from_is_tests_that_fail_not_a_script_that_passes(asked: Probed) -> None:
    assert asked.run.returncode == 0, asked.run.output
    tests = {"test_star.py::test_dot", "test_case.py::MyDot::test_dot", "check_dot.py::test_dot"}
    for name in tests:
        record = asked.record(name)
        assert (record.outcome, record.kind, record.kind_reason) == (
            Outcome.FAIL, Kind.PYTEST, "pytest collected 1 test from it"
        ), record  # fmt: skip
    assert asked.record("test_star.py::test_dot").message == "AssertionError: expected 27"


def test_two_scripts_of_one_name_in_two_folders_are_two_probes_with_a_record_each(asked: Probed) -> None:
    first, second = asked.record("repro.py"), asked.record("sub/repro.py")
    assert (first.outcome, first.message, first.kind) == (Outcome.PASS, "first 28.0", Kind.SCRIPT)
    assert (second.outcome, second.message, second.kind) == (Outcome.PASS, "second 14.0", Kind.SCRIPT)
    assert first.kind_reason == second.kind_reason == "pytest collected no test from it"
    rows = [line.split() for line in asked.run.output.splitlines() if line.rstrip().endswith("✓")]
    assert [row[-2] for row in rows if row[-2].endswith("repro.py")] == ["repro.py", "sub/repro.py"], asked.run.output
