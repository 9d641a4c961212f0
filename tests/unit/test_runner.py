"""The worker protocol with real processes: every pair gets exactly one record, whatever a probe does."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from torchmatrix.config import Probe
from torchmatrix.outcomes import Outcome
from torchmatrix.runner import Pair, run_cell

PROBES = {
    "good": "def run(device):\n    return {'outcome': 'pass', 'metrics': {'x': 1.5}, 'message': 'fine'}\n",
    "wrong": "def run(device):\n    return {'outcome': 'fail', 'metrics': {'observed': 0.0, 'expected': 28.0}}\n",
    "raises": "def run(device):\n    raise ValueError('bad input')\n",
    "segfault": "import ctypes\ndef run(device):\n    ctypes.string_at(0)\n",
    "exits": "import os\ndef run(device):\n    os._exit(3)\n",
    "hangs": "import time\ndef run(device):\n    time.sleep(3600)\n",
    "noisy": "import sys\ndef run(device):\n    print('x' * 2000000)\n    sys.stderr.write('y' * 2000000)\n"
    "    return {'outcome': 'pass'}\n",
    "malformed": "def run(device):\n    return ['not', 'a', 'dict']\n",
    "nan": "def run(device):\n    return {'outcome': 'pass', 'metrics': {'error': float('nan'), 'big': 1e999}}\n",
    "no_run": "x = 1\n",
}


@pytest.fixture
def probes(tmp_path: Path) -> dict[str, Probe]:
    found = {}
    for name, source in PROBES.items():
        path = tmp_path / f"{name}.py"
        path.write_text(textwrap.dedent(source))
        found[name] = Probe(name, path)
    return found


def run(python: str, probes: dict[str, Probe], names: list[str], devices=("cpu",), timeout: float = 30.0):
    pairs = [Pair(probes[name], device) for name in names for device in devices]
    events: list[tuple[str, str]] = []
    cell = run_cell(python, pairs, timeout, lambda event, pair, record: events.append((event, pair.probe.name)))
    return cell, events


def outcomes(cell) -> list[tuple[str, Outcome]]:
    return [(record.probe, record.outcome) for record in cell.records]


def test_each_pair_is_announced_then_recorded(stub_torch_python: str, probes: dict[str, Probe]) -> None:
    cell, events = run(stub_torch_python, probes, ["good", "wrong"])
    assert events == [("start", "good"), ("record", "good"), ("start", "wrong"), ("record", "wrong")]
    assert outcomes(cell) == [("good", Outcome.PASS), ("wrong", Outcome.FAIL)]
    assert cell.records[0].metrics == {"x": 1.5} and cell.records[0].message == "fine"
    assert cell.environment["torch"] == "0.0.0+stub"


def test_a_crash_is_recorded_and_a_new_worker_runs_the_rest(stub_torch_python: str, probes: dict[str, Probe]) -> None:
    cell, _ = run(stub_torch_python, probes, ["good", "segfault", "exits", "good"])
    assert outcomes(cell) == [
        ("good", Outcome.PASS), ("segfault", Outcome.CRASH), ("exits", Outcome.CRASH), ("good", Outcome.PASS),
    ]  # fmt: skip
    assert "SIGSEGV while running segfault on cpu" in cell.records[1].message
    assert "exited with code 3 while running exits" in cell.records[2].message


def test_a_hang_is_stopped_at_the_limit(stub_torch_python: str, probes: dict[str, Probe]) -> None:
    cell, _ = run(stub_torch_python, probes, ["hangs", "good"], timeout=2.0)
    assert outcomes(cell) == [("hangs", Outcome.TIMEOUT), ("good", Outcome.PASS)]
    assert 2.0 <= cell.records[0].duration < 10.0


def test_exceptions_and_malformed_results_are_errors(stub_torch_python: str, probes: dict[str, Probe]) -> None:
    cell, _ = run(stub_torch_python, probes, ["raises", "malformed", "no_run", "good"])
    assert outcomes(cell) == [
        ("raises", Outcome.ERROR), ("malformed", Outcome.ERROR), ("no_run", Outcome.ERROR), ("good", Outcome.PASS),
    ]  # fmt: skip
    assert cell.records[0].message == "ValueError: bad input"
    assert "malformed result" in cell.records[1].message
    assert "no run(device)" in cell.records[2].message


def test_megabytes_of_output_neither_block_nor_corrupt(stub_torch_python: str, probes: dict[str, Probe]) -> None:
    cell, _ = run(stub_torch_python, probes, ["noisy", "good"])
    assert outcomes(cell) == [("noisy", Outcome.PASS), ("good", Outcome.PASS)]


def test_non_finite_numbers_are_kept_as_text(stub_torch_python: str, probes: dict[str, Probe]) -> None:
    cell, _ = run(stub_torch_python, probes, ["nan"])
    assert cell.records[0].metrics == {"error": "nan", "big": "inf"}


def test_absent_devices_are_unavailable_not_failures(stub_torch_python: str, probes: dict[str, Probe]) -> None:
    cell, _ = run(stub_torch_python, probes, ["good"], devices=("cpu", "cuda", "mps"))
    assert [record.outcome for record in cell.records] == [Outcome.PASS, Outcome.UNAVAILABLE, Outcome.UNAVAILABLE]
    assert "no CUDA support" in cell.records[1].message


def test_a_python_without_torch_crashes_every_pair_once(bare_python: str, probes: dict[str, Probe]) -> None:
    cell, events = run(bare_python, probes, ["good", "wrong"])
    assert outcomes(cell) == [("good", Outcome.CRASH), ("wrong", Outcome.CRASH)]
    assert "before running a probe" in cell.records[0].message
    assert "ModuleNotFoundError" in cell.records[0].message or "ImportError" in cell.records[0].message
    assert events == [("record", "good"), ("record", "wrong")]


def test_bytecode_goes_to_the_pycache_prefix(stub_torch_python: str, probes: dict[str, Probe], tmp_path: Path) -> None:
    prefix = tmp_path / "pycache"
    pairs = [Pair(probes["good"], "cpu")]
    cell = run_cell(stub_torch_python, pairs, 30.0, pycache_prefix=prefix)
    assert outcomes(cell) == [("good", Outcome.PASS)]
    compiled = [path.name for path in prefix.rglob("*.pyc")]
    assert any(name.startswith("good.") for name in compiled)  # the probe, imported from its file
    assert any(name.startswith("__init__.") for name in compiled)  # the (stub) torch package
    assert not (probes["good"].path.parent / "__pycache__").exists()
