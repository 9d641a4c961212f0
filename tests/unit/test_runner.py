"""The worker protocol with real processes: every pair gets exactly one record, whatever a probe does."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from torchmatrix.core import Outcome, Pair, Probe
from torchmatrix.runner import run_cell

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
    "fork_crash": "import ctypes, os, time\ndef run(device):\n    if os.fork() == 0:\n        time.sleep(60)\n"
    "        os._exit(0)\n    ctypes.string_at(0)\n",
    "huge": "def run(device):\n    return {'outcome': 'pass', 'metrics': {'values': list(range(300000))}}\n",
    "asserts": "import torch\ndef run(device):\n    if device == 'cuda':\n        torch.cuda.device_side_assert()\n"
    "    return {'outcome': 'pass'}\n",
    "uses_cuda": "import torch\ndef run(device):\n    if device == 'cuda':\n        torch.cuda.synchronize()\n"
    "    return {'outcome': 'pass'}\n",
    "reads_options": "import json, os\ndef run(device):\n"
    "    return {'outcome': 'pass', 'metrics': json.loads(os.environ['TORCHMATRIX_PROBE_OPTIONS'])}\n",
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
    assert 0 < cell.environment["import_seconds"] < 30


def test_a_crash_is_recorded_and_a_new_worker_runs_the_rest(stub_torch_python: str, probes: dict[str, Probe]) -> None:
    cell, _ = run(stub_torch_python, probes, ["good", "segfault", "exits", "good"])
    assert outcomes(cell) == [
        ("good", Outcome.PASS), ("segfault", Outcome.CRASH), ("exits", Outcome.CRASH), ("good", Outcome.PASS),
    ]  # fmt: skip
    assert "SIGSEGV while running segfault on cpu" in cell.records[1].message
    assert 'segfault.py", line 3 in run' in cell.records[1].message  # faulthandler's stack
    assert "exited with code 3 while running exits" in cell.records[2].message


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_crash_is_seen_at_once_when_a_forked_child_holds_the_pipes(
    stub_torch_python: str, probes: dict[str, Probe]
) -> None:
    cell, _ = run(stub_torch_python, probes, ["fork_crash", "good"], timeout=20.0)
    assert outcomes(cell) == [("fork_crash", Outcome.CRASH), ("good", Outcome.PASS)]  # not a timeout


def test_a_pair_that_breaks_cuda_hands_the_rest_to_a_new_worker(
    stub_torch_python: str, probes: dict[str, Probe], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TORCHMATRIX_STUB_CUDA", "1")
    cell, _ = run(stub_torch_python, probes, ["raises", "asserts", "uses_cuda"], devices=("cpu", "cuda"))
    assert outcomes(cell) == [
        ("raises", Outcome.ERROR), ("raises", Outcome.ERROR),
        ("asserts", Outcome.PASS), ("asserts", Outcome.ERROR),
        ("uses_cuda", Outcome.PASS), ("uses_cuda", Outcome.PASS),  # not charged with the assert
    ]  # fmt: skip
    asserted = cell.records[3].message
    assert "device-side assert triggered" in asserted and "the next pairs run in a new worker" in asserted
    assert "new worker" not in cell.records[1].message  # an ordinary error leaves CUDA as it was


def test_importing_torch_may_take_longer_than_one_pair_may(
    stub_torch_python: str, probes: dict[str, Probe], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TORCHMATRIX_STUB_IMPORT_SECONDS", "1.5")
    cell, _ = run(stub_torch_python, probes, ["good", "hangs"], timeout=1.0)
    assert outcomes(cell) == [("good", Outcome.PASS), ("hangs", Outcome.TIMEOUT)]


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


def test_a_probe_reads_the_options_the_matrix_gives_it_and_none_from_the_shell(
    stub_torch_python: str, probes: dict[str, Probe], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TORCHMATRIX_PROBE_OPTIONS", '{"reads_options": {"from": "the shell"}}')
    plain, _ = run(stub_torch_python, probes, ["reads_options"])
    assert plain.records[0].metrics == {}
    given = dataclasses.replace(probes["reads_options"], options={"ops": "add|mul.*", "samples": 2})
    cell = run_cell(stub_torch_python, [Pair(given, "cpu")], 30.0)
    assert cell.records[0].metrics == {"reads_options": {"ops": "add|mul.*", "samples": 2}}


def test_megabytes_of_metrics_are_refused(stub_torch_python: str, probes: dict[str, Probe]) -> None:
    cell, _ = run(stub_torch_python, probes, ["huge", "good"])
    assert outcomes(cell) == [("huge", Outcome.ERROR), ("good", Outcome.PASS)]
    assert cell.records[0].message.startswith("malformed result: run() returned 2.2 MB of metrics; the limit is 1 MB")


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


def test_a_python_where_torch_does_not_import_runs_nothing(bare_python: str, probes: dict[str, Probe]) -> None:
    cell, events = run(bare_python, probes, ["good", "wrong"])
    assert cell.records == () and events == []
    assert cell.import_failure.startswith("the worker exited with code 1 while importing torch")
    assert "No module named 'torch'" in cell.import_failure


PARENT = """
import sys
from pathlib import Path
from torchmatrix.core import Probe
from torchmatrix.core import Pair
from torchmatrix.runner import run_cell
run_cell(sys.argv[1], [Pair(Probe("hangs", Path(sys.argv[2])), "cpu")], 600.0, lambda *_: print(flush=True))
"""


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads process states from /proc")
def test_a_worker_ends_itself_when_its_parent_is_killed(stub_torch_python: str, probes: dict[str, Probe]) -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, stub_torch_python, str(probes["hangs"].path)], stdout=subprocess.PIPE
    )
    assert parent.stdout is not None
    parent.stdout.readline()  # the hanging pair has started
    (worker,) = [int(pid) for pid in Path(f"/proc/{parent.pid}/task/{parent.pid}/children").read_text().split()]
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 10
    while _alive(worker) and time.monotonic() < deadline:
        time.sleep(0.05)
    if _alive(worker):
        os.kill(worker, signal.SIGKILL)
        pytest.fail("the worker outlived its parent")


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


def test_bytecode_goes_to_the_pycache_prefix(stub_torch_python: str, probes: dict[str, Probe], tmp_path: Path) -> None:
    prefix = tmp_path / "pycache"
    pairs = [Pair(probes["good"], "cpu")]
    cell = run_cell(stub_torch_python, pairs, 30.0, pycache_prefix=prefix)
    assert outcomes(cell) == [("good", Outcome.PASS)]
    compiled = [path.name for path in prefix.rglob("*.pyc")]
    assert any(name.startswith("good.") for name in compiled)  # the probe, imported from its file
    assert any(name.startswith("__init__.") for name in compiled)  # the (stub) torch package
    assert not (probes["good"].path.parent / "__pycache__").exists()
