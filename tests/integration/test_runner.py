"""The worker protocol with real processes: every pair gets exactly one record, whatever a probe does.

Each pair runs in a process of its own: forked from the worker on Linux, a new
Python elsewhere (``spawn``, which $TORCHMATRIX_WORKER_START=spawn chooses
here); the tests that depend on the way run both.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from torchmatrix import identity, results
from torchmatrix.bisection import criteria
from torchmatrix.core import Kind, Outcome, Pair, Probe, Record
from torchmatrix.matrix import loader
from torchmatrix.worker import runner

from ..conftest import DATA, FOREGROUND, bare_venv
from ..faults.conftest import kill_all, wait_until_dead

pytestmark = pytest.mark.integration

FAULT_PROBES = Path(__file__).parents[1] / "faults" / "probes"
PROBES = {
    "good": "def run(device):\n    return {'outcome': 'pass', 'metrics': {'x': 1.5}, 'message': 'fine'}\n",
    "wrong": "def run(device):\n    return {'outcome': 'fail', 'metrics': {'observed': 0.0, 'expected': 28.0}}\n",
    "raises": "def run(device):\n    raise ValueError('bad input')\n",
    "interrupts": "def run(device):\n    raise KeyboardInterrupt('from the probe')\n",
    "segfault": "import ctypes\ndef run(device):\n    ctypes.string_at(0)\n",
    "exits": "import os\ndef run(device):\n    os._exit(3)\n",
    "hangs": "import time\ndef run(device):\n    time.sleep(3600)\n",
    "noisy": "import sys\ndef run(device):\n    print('x' * 2000000)\n    sys.stderr.write('y' * 2000000)\n"
    "    return {'outcome': 'pass'}\n",
    "malformed": "def run(device):\n    return ['not', 'a', 'dict']\n",
    "surrogates": "def run(device):\n    return {'outcome': 'fail', 'metrics': {'\\udfff': ['\\ud800']},\n"
    "            'message': '\\ud800 x \\U0001f600'}\n",
    "nan": "def run(device):\n    return {'outcome': 'pass', 'metrics': {'error': float('nan'), 'big': 1e999}}\n",
    "wide": "def run(device):\n"
    "    return {'outcome': 'pass', 'metrics': {'count': 10**25, 'huge': 10**5000, 'ok': -(10**19)}}\n",
    "no_run": "x = 1\n",
    "fork_crash": "import ctypes, os, time\ndef run(device):\n    if os.fork() == 0:\n        time.sleep(60)\n"
    "        os._exit(0)\n    ctypes.string_at(0)\n",
    "huge": "def run(device):\n    return {'outcome': 'pass', 'metrics': {'values': list(range(300000))}}\n",
    "asserts": "import torch\ndef run(device):\n    if device == 'cuda':\n        torch.cuda.device_side_assert()\n"
    "    return {'outcome': 'pass'}\n",
    "uses_cuda": "import torch\ndef run(device):\n    if device == 'cuda':\n        torch.cuda.synchronize()\n"
    "    return {'outcome': 'pass'}\n",
    "changes_state": """
        import os, torch
        def run(device):
            os.environ['TORCHMATRIX_TEST_CHANGED'] = 'yes'
            torch.changed_by_a_probe = True
            os.chdir('/')
            return {'outcome': 'pass'}
        """,
    "sees_state": """
        import os, sys, tempfile, torch
        def run(device):
            temporary = tempfile.gettempdir()
            seen = {'variable': os.environ.get('TORCHMATRIX_TEST_CHANGED'), 'stdin': sys.stdin.read(),
                    'torch': hasattr(torch, 'changed_by_a_probe'), 'cwd': os.getcwd(), 'temporary': temporary,
                    'temporary_listing': os.listdir(temporary), 'tmpdir': os.environ.get('TMPDIR')}
            if os.path.basename(temporary).startswith('torchmatrix-pair-'):  # never the system's own
                tempfile.mkstemp()
            return {'outcome': 'pass', 'metrics': seen}
        """,
    "leaves_processes": (FAULT_PROBES / "leaves_daemons.py").read_text(),  # setsid child and daemon
    "sees_processes": """
        import os
        def alive(pid):
            try:
                with open('/proc/{}/stat'.format(pid)) as stat:
                    return stat.read().rsplit(')', 1)[1].split()[0] not in ('Z', 'X')
            except OSError:
                return False
        def run(device):
            with open(os.environ['TORCHMATRIX_TEST_PIDS']) as pids:
                started = [int(pid) for pid in pids.read().split()]
            return {'outcome': 'pass', 'metrics': {'alive': [pid for pid in started if alive(pid)]}}
        """,
    "hangs_leaving_a_child": """
        import os, subprocess, sys, time
        import tempfile
        def run(device):  # its temporary folder goes to the pids file's .tmp, its worker's pid, its own, its child's
            child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'], start_new_session=True)
            with open(os.environ['TORCHMATRIX_TEST_PIDS'] + '.tmp', 'w') as folder:
                folder.write(tempfile.gettempdir())
            with open(os.environ['TORCHMATRIX_TEST_PIDS'], 'a') as pids:
                pids.write('{} {} {}\\n'.format(os.getppid(), os.getpid(), child.pid))
            time.sleep(3600)
        """,
    "floods_its_answer": """
        import glob, os, tempfile
        def run(device):  # its answer file, beside its temporary folder, gets more than any record, over and after
            for path in glob.glob(os.path.join(os.path.dirname(tempfile.gettempdir()), 'answer-*')):
                for mode in ('r+b', 'ab'):
                    with open(path, mode) as answer:
                        answer.write(b'{' * (20 << 20))
            return {'outcome': 'fail', 'message': 'its own answer'}
        """,
    "reads_options": "import json, os\ndef run(device):\n"
    "    return {'outcome': 'pass', 'metrics': json.loads(os.environ['TORCHMATRIX_PROBE_OPTIONS'])}\n",
}


def run_cell(python: str, pairs, timeout: float, listener=None, **options):
    """The runner's run_cell, with this suite's TORCHMATRIX_* variables passed through, as a matrix's pass_env does;
    the pairs run from the first probe's folder (its tests' root), as the matrix's folder is theirs."""
    environment = identity.pair_environment(python, {}, ["TORCHMATRIX_*"], os.environ)
    options.setdefault("workdir", pairs[0].probe.root or pairs[0].probe.path.parent)
    return runner.run_cell(python, pairs, timeout, listener, variables_seen=environment, **options)


@pytest.fixture
def probes(tmp_path: Path) -> dict[str, Probe]:
    found = {}
    for name, source in PROBES.items():
        path = tmp_path / f"{name}.py"
        path.write_text(textwrap.dedent(source))
        found[name] = Probe(name, path)
    return found


@pytest.fixture(params=["fork", "spawn"])
def start(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """How the worker starts a pair's process: forked (Linux) or a new Python (elsewhere)."""
    if request.param == "fork" and not sys.platform.startswith("linux"):
        pytest.skip("the worker forks on Linux only")
    monkeypatch.setenv("TORCHMATRIX_WORKER_START", request.param)
    return request.param


@pytest.fixture
def stub_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the stand-in torch writes a line for each import and CUDA call: event, pid, parent's pid."""
    path = tmp_path / "stub.log"
    monkeypatch.setenv("TORCHMATRIX_STUB_LOG", str(path))
    return path


def logged(path: Path, event: str) -> list[tuple[int, int]]:
    lines = [line.split() for line in path.read_text().splitlines()] if path.exists() else []
    return [(int(pid), int(parent)) for name, pid, parent in lines if name == event]


def workers(stub_log: Path) -> list[int]:
    """The workers that imported torch: the importing processes this test process started."""
    return [pid for pid, parent in logged(stub_log, "import") if parent == os.getpid()]


@pytest.fixture
def pids_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Where probes write the pids of what they start; whatever of it is alive at the end is killed."""
    path = tmp_path / "pids"
    monkeypatch.setenv("TORCHMATRIX_TEST_PIDS", str(path))
    monkeypatch.setenv("TORCHMATRIX_FAULTS_PIDS", str(path))  # the fault suite's probes write theirs there too
    yield path
    kill_all(_pids(path))


def _pids(path: Path) -> list[int]:
    return [int(pid) for pid in path.read_text().split()] if path.exists() else []


HANG_LIMIT = 5.0
"""The limit where one pair hangs and the others must end within it: seconds to spare on a loaded machine."""


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


def test_a_crash_is_recorded_and_the_other_pairs_run(
    stub_torch_python: str, probes: dict[str, Probe], start: str
) -> None:
    cell, _ = run(stub_torch_python, probes, ["good", "segfault", "exits", "good"])
    assert outcomes(cell) == [
        ("good", Outcome.PASS), ("segfault", Outcome.CRASH), ("exits", Outcome.CRASH), ("good", Outcome.PASS),
    ]  # fmt: skip
    assert cell.records[1].message.startswith("the probe's process died with SIGSEGV while running segfault on cpu")
    assert 'segfault.py", line 3 in run' in cell.records[1].message  # faulthandler's stack
    assert cell.records[1].metrics == {"exit_code": -11}
    assert "exited with code 3 while running exits" in cell.records[2].message


def test_a_crash_or_a_timeout_costs_no_new_worker(
    stub_torch_python: str, probes: dict[str, Probe], start: str, stub_log: Path
) -> None:
    cell, _ = run(stub_torch_python, probes, ["segfault", "hangs", "exits", "good"], timeout=HANG_LIMIT)
    assert [record.outcome for record in cell.records] == [Outcome.CRASH, Outcome.TIMEOUT, Outcome.CRASH, Outcome.PASS]
    assert len(workers(stub_log)) == 1  # the worker itself enforced the limit and outlived the crashes


def test_each_pair_starts_from_the_state_after_import_torch(
    stub_torch_python: str, probes: dict[str, Probe], start: str
) -> None:
    cell, _ = run(stub_torch_python, probes, ["sees_state", "changes_state", "sees_state"])
    assert [record.outcome for record in cell.records] == [Outcome.PASS] * 3
    untouched = {"variable": None, "torch": False, "stdin": ""}
    for seen in (cell.records[0].metrics, cell.records[2].metrics):
        assert {key: seen[key] for key in untouched} == untouched


def test_each_pair_runs_from_the_folder_given_with_an_empty_temporary_folder_of_its_own_removed_afterwards(
    stub_torch_python: str, probes: dict[str, Probe], start: str, tmp_path: Path
) -> None:
    cell, _ = run(stub_torch_python, probes, ["sees_state", "changes_state", "sees_state"])
    seen = [cell.records[0].metrics, cell.records[2].metrics]
    assert [metrics["cwd"] for metrics in seen] == [str(tmp_path)] * 2  # not the / the pair between went to
    folders = [Path(metrics["temporary"]) for metrics in seen]
    assert [metrics["tmpdir"] for metrics in seen] == [str(folder) for folder in folders]  # a subprocess's too
    assert [metrics["temporary_listing"] for metrics in seen] == [[], []]  # what the first made is not there
    assert folders[0] != folders[1]
    assert all(folder.name.startswith("torchmatrix-pair-") for folder in folders)
    assert not any(folder.exists() for folder in folders)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads process states from /proc")
def test_nothing_a_pair_started_outlives_it_even_in_a_session_of_its_own(
    stub_torch_python: str, probes: dict[str, Probe], start: str, pids_file: Path
) -> None:
    cell, _ = run(stub_torch_python, probes, ["leaves_processes", "sees_processes"])
    assert outcomes(cell) == [("leaves_processes", Outcome.PASS), ("sees_processes", Outcome.PASS)]
    assert len(_pids(pids_file)) == 2
    assert cell.records[1].metrics == {"alive": []}  # dead before the next pair started


def test_what_a_process_writes_to_its_answer_file_is_not_its_answer_and_the_next_pair_runs(
    stub_torch_python: str, probes: dict[str, Probe], start: str
) -> None:
    """Its answer is what it stores as it ends, over whatever the file held."""
    cell, _ = run(stub_torch_python, probes, ["floods_its_answer", "good"])
    assert outcomes(cell) == [("floods_its_answer", Outcome.FAIL), ("good", Outcome.PASS)]
    assert cell.records[0].message == "its own answer"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_crash_is_seen_at_once_when_a_forked_child_holds_the_pipes(
    stub_torch_python: str, probes: dict[str, Probe]
) -> None:
    cell, _ = run(stub_torch_python, probes, ["fork_crash", "good"], timeout=20.0)
    assert outcomes(cell) == [("fork_crash", Outcome.CRASH), ("good", Outcome.PASS)]  # not a timeout


def test_a_pair_that_breaks_cuda_breaks_it_for_itself_alone(
    stub_torch_python: str, probes: dict[str, Probe], monkeypatch: pytest.MonkeyPatch, start: str, stub_log: Path
) -> None:
    monkeypatch.setenv("TORCHMATRIX_STUB_CUDA", "1")
    cell, _ = run(stub_torch_python, probes, ["asserts", "uses_cuda", "asserts"], devices=("cpu", "cuda"))
    assert outcomes(cell) == [
        ("asserts", Outcome.PASS), ("asserts", Outcome.ERROR),
        ("uses_cuda", Outcome.PASS), ("uses_cuda", Outcome.PASS),  # not charged with the assert
        ("asserts", Outcome.PASS), ("asserts", Outcome.ERROR),
    ]  # fmt: skip
    assert cell.records[1].message == "RuntimeError: CUDA error: device-side assert triggered"
    assert len(workers(stub_log)) == 1


def test_devices_are_checked_once_per_cell_and_an_absent_one_starts_no_process(
    stub_torch_python: str, probes: dict[str, Probe], monkeypatch: pytest.MonkeyPatch, start: str, stub_log: Path
) -> None:
    monkeypatch.setenv("TORCHMATRIX_STUB_CUDA", "build")  # a CUDA build, no CUDA device
    cell, _ = run(stub_torch_python, probes, ["good", "uses_cuda", "asserts"], devices=("cpu", "cuda"))
    assert [record.outcome for record in cell.records] == [Outcome.PASS, Outcome.UNAVAILABLE] * 3
    assert {record.message for record in cell.records[1::2]} == {
        "torch has CUDA support but this machine has no usable CUDA device"
    }
    assert len({pid for pid, _ in logged(stub_log, "cuda")}) == 1  # the fingerprint's process


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the worker forks on Linux only")
def test_the_worker_that_forks_never_touches_cuda(
    stub_torch_python: str, probes: dict[str, Probe], monkeypatch: pytest.MonkeyPatch, stub_log: Path
) -> None:
    """A forked child cannot use a CUDA context its parent created: checks and fingerprint run in children too."""
    monkeypatch.setenv("TORCHMATRIX_STUB_CUDA", "1")
    cell, _ = run(stub_torch_python, probes, ["uses_cuda", "asserts"], devices=("cuda", "cpu"))
    assert [record.outcome for record in cell.records] == [Outcome.PASS, Outcome.PASS, Outcome.ERROR, Outcome.PASS]
    assert cell.environment["devices"]["cuda"] == ["Stub GPU"]
    (worker,) = workers(stub_log)
    callers = {pid for pid, _ in logged(stub_log, "cuda")}
    assert callers and worker not in callers


@pytest.mark.serial  # wall-clock bounds: a pair of a 1 s limit passes
def test_importing_torch_may_take_longer_than_one_pair_may(
    stub_torch_python: str, probes: dict[str, Probe], monkeypatch: pytest.MonkeyPatch, start: str
) -> None:
    monkeypatch.setenv("TORCHMATRIX_STUB_IMPORT_SECONDS", "1.5")
    cell, _ = run(stub_torch_python, probes, ["good", "hangs"], timeout=1.0)
    assert outcomes(cell) == [("good", Outcome.PASS), ("hangs", Outcome.TIMEOUT)]


@pytest.mark.serial  # wall-clock bounds: stopped within seconds of the limit
def test_a_hang_is_stopped_at_the_limit(stub_torch_python: str, probes: dict[str, Probe], start: str) -> None:
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


def test_a_keyboard_interrupt_a_probe_raises_is_its_error(stub_torch_python: str, probes: dict[str, Probe]) -> None:
    """Not a Ctrl-C: the pair's process has a group of its own, which the terminal's SIGINT does not reach."""
    cell, _ = run(stub_torch_python, probes, ["interrupts", "good"])
    assert outcomes(cell) == [("interrupts", Outcome.ERROR), ("good", Outcome.PASS)]
    assert cell.records[0].message == "KeyboardInterrupt: from the probe"


def test_a_probe_reads_the_options_the_matrix_gives_it_and_none_from_the_shell(
    stub_torch_python: str, probes: dict[str, Probe], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TORCHMATRIX_PROBE_OPTIONS", '{"reads_options": {"from": "the shell"}}')
    plain, _ = run(stub_torch_python, probes, ["reads_options"])
    assert plain.records[0].metrics == {}
    given = dataclasses.replace(probes["reads_options"], options={"ops": "add|mul.*", "samples": 2})
    cell = run_cell(stub_torch_python, [Pair(given, "cpu")], 30.0)
    assert cell.records[0].metrics == {"reads_options": {"ops": "add|mul.*", "samples": 2}}


def test_a_lone_surrogate_a_probe_returns_becomes_the_replacement_character(
    stub_torch_python: str, probes: dict[str, Probe]
) -> None:
    cell, _ = run(stub_torch_python, probes, ["surrogates"])
    (record,) = cell.records
    assert (record.outcome, record.message, record.metrics) == (
        Outcome.FAIL,
        "\ufffd x \U0001f600",
        {"\ufffd": ["\ufffd"]},
    )


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


def test_integers_wider_than_a_result_file_holds_are_kept_as_text(
    stub_torch_python: str, probes: dict[str, Probe], tmp_path: Path
) -> None:
    """A result file holds integers of at most 20 digits: a wider one would make its whole cell unreadable."""
    cell, _ = run(stub_torch_python, probes, ["wide"])
    count, huge, ok = (cell.records[0].metrics[key] for key in ("count", "huge", "ok"))
    assert (count, ok) == (str(10**25), -(10**19))
    # Python 3.11 and newer print no more than 4300 digits
    assert huge == "an integer of 16610 bits" or huge == "1" + "0" * 5000
    now = results.now_iso()
    stored = results.CellResult("m", "torch-2.0.0-py3.10", "2.0.0", "3.10", None, "probe", None, "", cell.records,
                                started_at=now, finished_at=now)  # fmt: skip
    assert results.read(results.write(tmp_path, stored)).records == cell.records


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
import os
import sys
from pathlib import Path
from torchmatrix.core import Probe
from torchmatrix.core import Pair
from torchmatrix import identity
from torchmatrix.worker.runner import run_cell
environment = identity.pair_environment(sys.argv[1], {}, ["TORCHMATRIX_*"], os.environ)
pair = Pair(Probe("hangs", Path(sys.argv[2])), "cpu")
run_cell(sys.argv[1], [pair], 600.0, lambda *_: None, variables_seen=environment, workdir=Path(sys.argv[2]).parent)
"""


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads process states from /proc")
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT], ids=["parent killed", "parent interrupted"])
def test_when_its_parent_ends_the_worker_ends_with_everything_its_pair_started(
    stub_torch_python: str, probes: dict[str, Probe], start: str, pids_file: Path, how: signal.Signals
) -> None:
    """Killed, the parent leaves the worker to notice; interrupted, it stops the worker, letting it clean up first."""
    probe = str(probes["hangs_leaving_a_child"].path)
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, stub_torch_python, probe], stderr=subprocess.DEVNULL, preexec_fn=FOREGROUND
    )  # interrupted, it must raise KeyboardInterrupt even where this suite runs with SIGINT ignored
    try:
        started = _wait_for_pids(pids_file)  # the worker, the pair's process, its child in a session of its own
        parent.send_signal(how)
        parent.wait(timeout=30)
        assert wait_until_dead(started, seconds=10) == []
        assert not _pair_folder(pids_file).exists()
    finally:
        parent.kill()
        parent.wait()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the worker forks on Linux only")
def test_a_hung_worker_is_stopped_and_a_new_one_runs_the_rest(
    stub_torch_python: str, probes: dict[str, Probe], pids_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runner, "GRACE_SECONDS", 1.0)
    monkeypatch.setattr(runner, "STOP_SECONDS", 1.0)
    pairs = [Pair(probes["hangs_leaving_a_child"], "cpu"), Pair(probes["good"], "cpu")]

    def hang_the_worker(event: str, pair: Pair, _record: object) -> None:
        if event == "start" and pair.probe.name == "hangs_leaving_a_child":
            worker = _wait_for_pids(pids_file)[0]
            os.kill(worker, signal.SIGSTOP)  # it no longer answers, nor stops the pair at the limit

    output = probes["good"].path.parent / "out"
    (output / "results").mkdir(parents=True)
    (output / "results" / "torch-2.1.0-py3.11.json").write_text("{}")  # written after the pair, by this side
    cell = run_cell(stub_torch_python, pairs, 1.0, hang_the_worker, own_output=output)
    assert [record.outcome for record in cell.records] == [Outcome.TIMEOUT, Outcome.PASS]
    assert cell.records[0].message == "stopped after 2 s: the worker hung instead of stopping it at 1 s"
    hung_read = cell.records[0].inputs[identity.READ]
    assert str(probes["good"].path) in hung_read  # every file of the probe's folder, but torchmatrix's own output
    assert not [path for path in hung_read if path.startswith(str(output))], hung_read
    worker, pair_process, _ = _pids(pids_file)
    assert wait_until_dead([worker, pair_process]) == []  # the pair's process dies with its worker
    assert not _pair_folder(pids_file).exists()  # removed by this side, as the worker could not


def test_a_pair_the_worker_answered_while_this_side_was_stopped_keeps_its_answer(
    stub_torch_python: str, probes: dict[str, Probe], monkeypatch: pytest.MonkeyPatch
) -> None:
    """This side stopped past the pair's limit (Ctrl-Z on nox, ``kill -STOP``; a terminal paused with Ctrl-S or a
    pager not read, where it prints): the worker, in a process group of its own, ran on and answered. Its answer
    is read, not taken for a hung worker's silence: the pair passed, as by hand."""
    monkeypatch.setattr(runner, "GRACE_SECONDS", 1.0)
    pairs = [Pair(probes["good"], "cpu"), Pair(probes["wrong"], "cpu")]

    def stop_this_side(event: str, pair: Pair, _record: object) -> None:
        if event == "start" and pair.probe.name == "good":
            time.sleep(4)  # nothing here watches the worker meanwhile, as in a process stopped

    cell = run_cell(stub_torch_python, pairs, 1.0, stop_this_side)
    assert [(record.outcome, record.message) for record in cell.records] == [
        (Outcome.PASS, "fine"),
        (Outcome.FAIL, ""),
    ]


def _pair_folder(pids_file: Path) -> Path:
    """The temporary folder of the pair that wrote ``pids_file``."""
    return Path(Path(f"{pids_file}.tmp").read_text())


def _wait_for_pids(path: Path, seconds: float = 120.0) -> list[int]:  # a loaded machine starts Pythons slowly
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().endswith("\n"):
            return _pids(path)
        time.sleep(0.02)
    raise AssertionError(f"no pids in {path}")


def test_bytecode_goes_to_the_pycache_prefix(stub_torch_python: str, probes: dict[str, Probe], tmp_path: Path) -> None:
    prefix = tmp_path / "pycache"
    pairs = [Pair(probes["good"], "cpu")]
    cell = run_cell(stub_torch_python, pairs, 30.0, pycache_prefix=prefix)
    assert outcomes(cell) == [("good", Outcome.PASS)]
    compiled = [path.name for path in prefix.rglob("*.pyc")]
    assert not any(name.startswith("good.") for name in compiled)  # the probe is compiled from its file each time
    assert any(name.startswith("__init__.") for name in compiled)  # the (stub) torch package
    assert not (probes["good"].path.parent / "__pycache__").exists()


# --- scripts: run as `python script.py` would run them; the exit decides, as with `git bisect run` ---------------

SCRIPTS = {
    "prints": "import sys, torch\nprint('first')\nprint('second')\nprint('last')\n",
    "exits_1": "import sys\nprint('wrong answer')\nsys.exit(1)\n",
    "exits_3": "import sys\nsys.exit(3)\n",
    "exits_200": "import sys\nsys.exit(200)\n",
    "exits_message": "import sys\nsys.exit('no good')\n",
    "skips_125": "import sys\nprint('not for this release')\nsys.exit(125)\n",
    "leaves_125": "import os\nos._exit(125)\n",
    "leaves_0": "import os\nprint('done', flush=True)\nos._exit(0)\n",
    "asserts": "x = 1\nassert x == 2, 'x is not 2'\n",
    "skip_test": "import unittest\nraise unittest.SkipTest('needs a GPU')\n",
    "raises": "import json\njson.loads('{')\n",
    "segfaults": "import ctypes\nprint('before the crash', flush=True)\nctypes.string_at(0)\n",
    "hangs": "import time\nprint('waiting')\ntime.sleep(3600)\n",
    "floods": "for n in range(200000):\n    print('line', n)\n",
    "one_long_line": "print('x' * 70000)\n",
    "prints_addresses_and_bits": """
        import torch
        print(object(), hex(0x3e99999a))
        print(object.__repr__(print))
        print(torch.__version__, '10.0.0.0')
        """,
    "prints_its_folders": """
        import os, sys, tempfile, weakref
        class A: pass
        kept = A()
        print(tempfile.gettempdir())
        print(sys.executable, os.environ['VIRTUAL_ENV'])
        print(os.path.join(sys.prefix, 'lib'))
        print(weakref.ref(kept))
        print(compile('1', 'f', 'eval'))
        """,
    "as_main": """
        import os, sys
        import sibling
        assert __name__ == '__main__' and sys.modules['__main__'].__file__ == __file__
        assert sys.argv == [__file__] and sys.path[0] == os.path.dirname(__file__)
        print(sibling.WORD, os.environ['TORCHMATRIX_DEVICE'])
        """,
}


@pytest.fixture
def scripts(tmp_path: Path) -> dict[str, Probe]:
    folder = tmp_path / "scripts"
    folder.mkdir()
    (folder / "sibling.py").write_text("WORD = 'beside'\n")
    found = {}
    for name, source in SCRIPTS.items():
        (folder / f"{name}.py").write_text(textwrap.dedent(source))
        found[name] = dataclasses.replace(loader.probe_at(folder / f"{name}.py", tmp_path, kind=Kind.SCRIPT), name=name)
    return found


def test_a_script_s_exit_decides_its_outcome_and_its_last_lines_are_the_message(
    stub_torch_python: str, scripts: dict[str, Probe], start: str
) -> None:
    cell, _ = run(
        stub_torch_python, scripts, ["prints", "exits_1", "exits_3", "exits_200", "exits_message", "leaves_0"]
    )
    assert outcomes(cell) == [
        ("prints", Outcome.PASS), ("exits_1", Outcome.FAIL), ("exits_3", Outcome.FAIL), ("exits_200", Outcome.ERROR),
        ("exits_message", Outcome.FAIL), ("leaves_0", Outcome.PASS),
    ]  # fmt: skip
    printed = cell.records[0]
    assert printed.message == "first\nsecond\nlast"
    digest = hashlib.sha256(b"first\nsecond\nlast\n").hexdigest()
    assert printed.metrics == {"exit_code": 0, "output": ["first", "second", "last"], "output_sha256": digest,
                               "output_bytes": 18}  # fmt: skip
    assert cell.records[1].message == "wrong answer"
    assert cell.records[2].message == "exited with code 3" and cell.records[3].metrics["exit_code"] == 200
    assert cell.records[4].message == "no good"  # sys.exit("no good"): what python prints
    assert cell.records[4].metrics["raised"] == "no good" and "raised" not in cell.records[1].metrics
    assert cell.records[5].metrics["output"] == ["done"]  # it left by os._exit: its exit code still counts


def test_exit_125_and_skiptest_say_the_script_does_not_apply(
    stub_torch_python: str, scripts: dict[str, Probe], start: str
) -> None:
    cell, _ = run(stub_torch_python, scripts, ["skips_125", "leaves_125", "skip_test"])
    assert outcomes(cell) == [
        ("skips_125", Outcome.UNAVAILABLE), ("leaves_125", Outcome.UNAVAILABLE), ("skip_test", Outcome.UNAVAILABLE),
    ]  # fmt: skip
    assert [record.message for record in cell.records] == [
        "not for this release",
        "exited with code 125",
        "needs a GPU",
    ]


def test_an_assertion_fails_a_script_and_any_other_exception_is_an_error(
    stub_torch_python: str, scripts: dict[str, Probe], start: str
) -> None:
    cell, _ = run(stub_torch_python, scripts, ["asserts", "raises"])
    assert outcomes(cell) == [("asserts", Outcome.FAIL), ("raises", Outcome.ERROR)]
    assert cell.records[0].message == cell.records[0].metrics["raised"] == "AssertionError: x is not 2"
    assert cell.records[1].message.startswith("JSONDecodeError: Expecting property name")
    traceback = cell.records[1].metrics["traceback"]
    assert traceback.startswith("Traceback (most recent call last):\n  File ") and "raises.py" in traceback
    assert "runpy" not in traceback and "worker.py" not in traceback  # the script's own story


def test_a_script_that_crashes_or_hangs_keeps_what_it_printed(
    stub_torch_python: str, scripts: dict[str, Probe], start: str
) -> None:
    cell, _ = run(stub_torch_python, scripts, ["segfaults", "hangs", "prints"], timeout=HANG_LIMIT)
    assert outcomes(cell) == [("segfaults", Outcome.CRASH), ("hangs", Outcome.TIMEOUT), ("prints", Outcome.PASS)]
    assert cell.records[0].message.startswith("the probe's process died with SIGSEGV while running segfaults")
    assert cell.records[0].metrics["output"] == ["before the crash"]
    assert cell.records[1].metrics["output"] == ["waiting"]
    assert cell.records[1].message == f"stopped after {HANG_LIMIT:g} s"


def test_a_script_runs_as_its_own_main_beside_its_folder_with_its_device_in_the_environment(
    stub_torch_python: str, scripts: dict[str, Probe], start: str
) -> None:
    cell, _ = run(stub_torch_python, scripts, ["as_main"])
    assert outcomes(cell) == [("as_main", Outcome.PASS)], cell.records[0].message
    assert cell.records[0].message == "beside cpu"


def test_a_script_s_record_keeps_the_end_of_a_long_output(stub_torch_python: str, scripts: dict[str, Probe]) -> None:
    cell, _ = run(stub_torch_python, scripts, ["floods"])
    record = cell.records[0]
    assert record.outcome is Outcome.PASS and record.metrics["output_truncated"] is True
    assert record.metrics["output"][-1] == "line 199999" and record.metrics["output"][0].startswith("…")
    assert len("\n".join(record.metrics["output"])) <= 64 << 10
    assert record.message == "line 199997\nline 199998\nline 199999"
    assert record.metrics["output_bytes"] == sum(len(f"line {n}\n") for n in range(200000))


def test_a_script_s_whole_output_has_a_digest_even_where_its_record_keeps_only_the_end(
    stub_torch_python: str, scripts: dict[str, Probe]
) -> None:
    cell, _ = run(stub_torch_python, scripts, ["one_long_line", "prints"])
    cut, whole = cell.records[0].metrics, cell.records[1].metrics
    printed = ("x" * 70000 + "\n").encode()
    assert cut["output_sha256"] == hashlib.sha256(printed).hexdigest() and cut["output_bytes"] == len(printed)
    assert cut["output_truncated"] is True and cut["output"] == ["…" + "x" * 65535]  # the end of its one line
    assert whole["output_sha256"] == hashlib.sha256(b"first\nsecond\nlast\n").hexdigest()
    assert "output_truncated" not in whole


def test_a_script_s_output_loses_only_what_is_per_process(stub_torch_python: str, scripts: dict[str, Probe]) -> None:
    cell, _ = run(stub_torch_python, scripts, ["prints_addresses_and_bits", "prints_addresses_and_bits"])
    first, second = (record.metrics for record in cell.records)
    assert first["output"] == [
        "<object object at 0x…> 0x3e99999a", "<builtin_function_or_method object at 0x…>", "<torch version> 10.0.0.0"
    ]  # fmt: skip
    assert first["output_sha256"] == second["output_sha256"]


def test_a_script_s_own_folders_and_any_repr_s_addresses_are_normalised(
    stub_torch_python: str, scripts: dict[str, Probe], start: str
) -> None:
    cell, _ = run(stub_torch_python, scripts, ["prints_its_folders"])
    assert cell.records[0].metrics["output"] == [
        "<pair folder>",
        "<cell environment>/bin/python <cell environment>",
        "<cell environment>/lib",
        "<weakref at 0x…; to 'A' at 0x…>",
        '<code object <module> at 0x…, file "f", line 1>',
    ]


def test_a_script_s_process_is_a_new_python_whose_torch_its_own_import_loads(
    stub_torch_python: str, scripts: dict[str, Probe], stub_log: Path
) -> None:
    cell, _ = run(stub_torch_python, scripts, ["prints", "prints"])
    assert outcomes(cell) == [("prints", Outcome.PASS)] * 2
    imports = logged(stub_log, "import")  # (pid, parent's pid) of each process that imported torch
    worker = imports[0][0]
    assert len(imports) == 3 and len(set(imports)) == 3, imports  # the worker's, then each script's own
    assert all(parent == worker for _, parent in imports[1:]), imports


IMPORTS_AS_BY_HAND = """\
import sys

before = [name for name in ("json", "random", "threading", "torch", "torchmatrix_worker") if name in sys.modules]
import json
import random

print(before, json.WHERE, random.random() == random.Random(0).random())
"""


def test_a_script_imports_what_python_had_not_imported_as_it_started_and_a_module_beside_it_shadows_it(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """By hand a script's Python has imported neither torch nor the modules torchmatrix's worker uses (``json``),
    so a ``json.py`` beside the script is its ``json``; ``random`` is seeded all the same."""
    folder = tmp_path / "shadows"
    folder.mkdir()
    (folder / "json.py").write_text("WHERE = 'beside'\n")
    (folder / "imports.py").write_text(IMPORTS_AS_BY_HAND)
    probe = dataclasses.replace(loader.probe_at(folder / "imports.py", tmp_path, kind=Kind.SCRIPT), name="imports")
    cell, _ = run(stub_torch_python, {"imports": probe}, ["imports"])
    assert outcomes(cell) == [("imports", Outcome.PASS)], cell.records[0].message
    assert cell.records[0].metrics["output"] == ["[] beside True"]


def by_hand(python: str, script: Path) -> tuple[int, list[str]]:
    """How ``python script.py`` ends from the script's folder, and the lines it prints; what it makes in the temporary
    folder (``tempfile.mkdtemp()``) is made in one of its own, removed after."""
    with tempfile.TemporaryDirectory() as temporary:
        environ = dict(os.environ, TMPDIR=temporary)
        done = subprocess.run(
            [python, script.name], cwd=script.parent, env=environ, capture_output=True, text=True, timeout=60
        )
    return done.returncode, done.stdout.splitlines()


def exit_status(record: results.Record) -> int:
    """The exit status of a script's record: as it says, or python's for an uncaught exception, which is 1."""
    return record.metrics.get("exit_code", 1)


def run_script_as_a_pair(python: str, script: Path, tmp_path: Path):
    """The record of ``script`` run as the cpu pair of a matrix in ``tmp_path``."""
    probe = dataclasses.replace(loader.probe_at(script, tmp_path, kind=Kind.SCRIPT), name=script.stem)
    cell, _ = run(python, {script.stem: probe}, [script.stem])
    return cell.records[0]


CLOSES_WHAT_IT_DID_NOT_OPEN = """\
import os, sys
os.closerange(3, 1024)
mine = [os.open(os.path.join(sys.argv[0] + "-{}".format(n)), os.O_WRONLY | os.O_CREAT) for n in range(OPENS)]
print('ran')
"""


@pytest.mark.parametrize("opens", [0, 16])
def test_a_script_that_closes_every_descriptor_it_did_not_open_ends_as_by_hand(
    stub_torch_python: str, tmp_path: Path, start: str, opens: int
) -> None:
    """The pair's answer goes to a file its process mapped before the script: in no descriptor the script could close
    (which would fail the pair), nor in one it reopens as its own file (which would take it)."""
    script = tmp_path / "closes.py"
    script.write_text(CLOSES_WHAT_IT_DID_NOT_OPEN.replace("OPENS", str(opens)))
    record = run_script_as_a_pair(stub_torch_python, script, tmp_path)
    assert (record.outcome, record.metrics["exit_code"], record.metrics["output"]) == (Outcome.PASS, 0, ["ran"])
    assert [path.read_bytes() for path in tmp_path.glob("closes.py-*")] == [b""] * opens
    assert by_hand(stub_torch_python, script) == (0, ["ran"])


BROKEN_STREAM = """\
import sys

class Broken:
    def write(self, text):
        return len(text)

    def flush(self):
        raise OSError("cannot flush")

class Unwritable(Broken):
    def write(self, text):
        raise OSError("cannot write")

"""


@pytest.mark.parametrize(
    "ending",
    [
        "sys.stdout = None",
        "sys.stdout.close()",
        "sys.stderr = Broken()",
        "sys.stdout = Broken()",
        "sys.stdout, sys.stderr = Unwritable(), None",
    ],
)
def test_a_script_s_streams_are_flushed_as_python_exits_and_its_status_is_python_s(
    stub_torch_python: str, tmp_path: Path, ending: str
) -> None:
    """Python flushes stdout and stderr as it exits, each that is neither None nor closed, and exits 120 where
    either fails."""
    script = tmp_path / "streams.py"
    script.write_text(BROKEN_STREAM + ending + "\n")
    record = run_script_as_a_pair(stub_torch_python, script, tmp_path)
    assert record.metrics["exit_code"] == by_hand(stub_torch_python, script)[0], record.message


def test_what_a_script_s_finalisers_print_as_python_ends_is_its_output(stub_torch_python: str, tmp_path: Path) -> None:
    """Python puts its own ``sys.stdout`` back before it lets go of the script's module, and flushes it again."""
    script = tmp_path / "late.py"
    script.write_text(
        "import sys\nclass Late:\n    def __del__(self):\n        sys.stdout.write('late\\n')\n"
        "sys.stdout = open('/dev/full', 'w')\nlate = Late()\n"
    )
    record = run_script_as_a_pair(stub_torch_python, script, tmp_path)
    ended = (record.metrics["exit_code"], record.metrics["output"])
    assert ended == by_hand(stub_torch_python, script) == (0, ["late"])


FORKS = """\
import os, sys
pid = os.fork()
if pid == 0:
    CHILD
_, status = os.waitpid(pid, 0)
print(os.WIFSIGNALED(status) and os.WTERMSIG(status), os.WIFEXITED(status) and os.WEXITSTATUS(status))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks")
@pytest.mark.parametrize("child", ["sys.exit(5)", "raise ValueError('child')", "raise KeyboardInterrupt", "pass"])
def test_a_child_a_script_forks_ends_with_its_own_status_as_by_hand(
    stub_torch_python: str, tmp_path: Path, child: str
) -> None:
    script = tmp_path / "forks.py"
    script.write_text(FORKS.replace("CHILD", child))
    record = run_script_as_a_pair(stub_torch_python, script, tmp_path)
    assert (record.metrics["exit_code"], record.metrics["output"]) == by_hand(stub_torch_python, script)


def test_a_script_that_raises_keyboard_interrupt_dies_of_sigint_as_python_does(
    stub_torch_python: str, tmp_path: Path
) -> None:
    script = tmp_path / "interrupted.py"
    script.write_text("print('before')\nraise KeyboardInterrupt\n")
    record = run_script_as_a_pair(stub_torch_python, script, tmp_path)
    assert by_hand(stub_torch_python, script) == (-signal.SIGINT, ["before"])
    assert (record.outcome, record.metrics["exit_code"], record.metrics["output"]) == (
        Outcome.CRASH, -signal.SIGINT, ["before"],
    ), record.message  # fmt: skip


@pytest.mark.parametrize(
    "telling",
    [
        "class Interrupt(KeyboardInterrupt):\n    pass\nraise Interrupt",
        "sys.stderr = None\nraise ValueError('v')",
        "def hook(*arguments):\n    raise RuntimeError('hook')\nsys.excepthook = hook\nraise ValueError('v')",
        "sys.excepthook = None\nraise ValueError('v')",
        "def hook(*arguments):\n    raise KeyboardInterrupt\nsys.excepthook = hook\nraise ValueError('v')",
    ],
)
def test_a_script_s_uncaught_exception_is_told_of_and_ends_it_as_python_does(
    stub_torch_python: str, tmp_path: Path, telling: str
) -> None:
    """Whatever its ``sys.stderr`` and ``sys.excepthook``, the script's exit handlers run and it exits with 1."""
    script = tmp_path / "raises.py"
    script.write_text("import atexit, sys\natexit.register(lambda: print('atexit ran'))\n" + telling + "\n")
    record = run_script_as_a_pair(stub_torch_python, script, tmp_path)
    assert by_hand(stub_torch_python, script) == (1, ["atexit ran"])
    assert record.metrics["output"] == ["atexit ran"] and record.outcome is Outcome.ERROR, record.message
    assert not record.message.startswith("torchmatrix's worker failed"), record.message


@pytest.mark.parametrize(
    "script_text, printed",
    [
        ("import sys\ndel sys.modules['__main__']\nprint('ok')\n", (0, ["ok"])),
        (
            "import atexit, sys\natexit.register(lambda: print('last', getattr(sys, 'last_value', None)))\n"
            "raise ValueError('v')\n",
            (1, ["last v"]),
        ),
    ],
)
def test_what_a_script_leaves_in_sys_is_as_python_leaves_it_for_its_end(
    stub_torch_python: str, tmp_path: Path, script_text: str, printed: tuple[int, list[str]]
) -> None:
    """A script that took itself out of ``sys.modules`` ends as python ends it; an uncaught exception is in
    ``sys.last_value`` for the exit handlers."""
    script = tmp_path / "leaves.py"
    script.write_text(script_text)
    record = run_script_as_a_pair(stub_torch_python, script, tmp_path)
    assert by_hand(stub_torch_python, script) == printed
    assert record.metrics["output"] == printed[1], record.message
    assert not record.message.startswith("torchmatrix's worker failed"), record.message


@pytest.mark.parametrize(
    "ending",
    [
        "class Unsaid(Exception):\n    def __str__(self):\n        return 'bad %s' % self.value\nraise Unsaid()",
        "class Why:\n    def __str__(self):\n        raise ValueError('no str')\nsys.exit(Why())",
        "sys.stderr = None\nsys.exit('bye')",
        "sys.stderr.close()\nsys.exit('bye')",
    ],
)
def test_a_script_whose_end_cannot_be_told_ends_as_python_ends_it(
    stub_torch_python: str, tmp_path: Path, ending: str
) -> None:
    """An exception or exit code whose ``str()`` raises, an exit code with no ``sys.stderr`` to be printed on: python
    passes over what it cannot print, on its own stderr where the script's is None, runs the exit handlers and exits
    with 1."""
    script = tmp_path / "untold.py"
    script.write_text("import atexit, sys\natexit.register(lambda: print('atexit ran'))\n" + ending + "\n")
    record = run_script_as_a_pair(stub_torch_python, script, tmp_path)
    assert by_hand(stub_torch_python, script) == (1, ["atexit ran"])
    assert (exit_status(record), record.metrics["output"]) == (1, ["atexit ran"]), record.message
    assert not record.message.startswith("torchmatrix's worker failed"), record.message


REFUSES_WRITES = """\
import os, signal, sys
def refuse(event, arguments):
    if event == "open" and isinstance(arguments[0], str) and (arguments[1] or "r") != "r":
        raise PermissionError("read-only")
    if event == "open" and isinstance(arguments[0], str) and arguments[1] is None and arguments[2] & 3:
        raise PermissionError("read-only")
sys.addaudithook(refuse)
"""

READS = {
    "a module whose lookups raise": (
        "import sys, types\nclass Lazy(types.ModuleType):\n    def __getattr__(self, name):\n"
        "        raise ImportError('lazy ' + name)\nsys.modules['lazy'] = Lazy('lazy')\n"
        "print(open('data.txt').read())\n"
    ),
    "a working folder removed": (
        "import os, tempfile\nhere = os.path.dirname(os.path.abspath(__file__))\n"
        "with tempfile.TemporaryDirectory() as folder:\n    os.chdir(folder)\n"
        "print(open(os.path.join(here, 'data.txt')).read())\n"
    ),
    "a forked child's read, journal writes refused": REFUSES_WRITES
    + "pid = os.fork()\nif pid == 0:\n    print(open('data.txt').read())\n    os._exit(0)\nos.waitpid(pid, 0)\n",
    "read, then os._exit, journal writes refused": REFUSES_WRITES + "print(open('data.txt').read())\nos._exit(0)\n",
    "read, then killed, journal writes refused": REFUSES_WRITES
    + "print(open('data.txt').read())\nsys.stdout.flush()\nos.kill(os.getpid(), signal.SIGKILL)\n",
}


@pytest.mark.parametrize("reading", sorted(READS))
def test_a_file_a_script_read_is_an_input_whatever_it_did_after(
    stub_torch_python: str, tmp_path: Path, start: str, reading: str
) -> None:
    """Modules whose lookups raise, a working folder gone, a journal its own audit hook refuses to have written (by
    a process that ends without telling what it read, or a child it forked): the file it read is an input."""
    script = tmp_path / "reads.py"
    script.write_text(READS[reading])
    (tmp_path / "data.txt").write_text("DATA\n")
    record = run_script_as_a_pair(stub_torch_python, script, tmp_path)
    assert (exit_status(record), record.metrics["output"]) == by_hand(stub_torch_python, script), record.message
    assert str(tmp_path / "data.txt") in record.inputs[identity.READ], record.message


def test_what_a_script_read_beyond_the_room_it_has_to_tell_it_and_its_journal_is_not_said_to_be_all_it_read(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """More files read than the room a process has to tell them at its end (16 MiB), its journal cut short by the
    file size limit it set: the record does not say what its pair read (it is never current); with room enough
    for the journal, every file is told."""
    folder = tmp_path.joinpath(*["d" * 240] * 3)
    folder.mkdir(parents=True)
    for index in range(22000):
        (folder / f"{index:05d}{'f' * 200}").touch()
    script = tmp_path / "reads_many.py"
    script.write_text(
        "import os, resource\nresource.setrlimit(resource.RLIMIT_FSIZE, (4 << 20, resource.RLIM_INFINITY))\n"
        f"for name in sorted(os.listdir({str(folder)!r})):\n"
        f"    open(os.path.join({str(folder)!r}, name)).close()\nprint('read')\n"
    )
    record = run_script_as_a_pair(stub_torch_python, script, tmp_path)
    assert (exit_status(record), record.metrics["output"]) == (0, ["read"]), record.message
    assert record.inputs[identity.READ] is None
    script.write_text(script.read_text().replace("4 << 20", "resource.RLIM_INFINITY"))
    record = run_script_as_a_pair(stub_torch_python, script, tmp_path)
    assert len([path for path in record.inputs[identity.READ] if Path(path).parent == folder]) == 22000


@pytest.mark.skipif(not hasattr(os, "posix_fallocate"), reason="a file size limit stops the answer file's room here")
def test_a_pair_the_worker_could_not_begin_is_its_error_never_the_scripts_outcome(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """A file size limit under the room of a pair's answer file, as a full temporary folder would: the worker's own
    code fails in the pair's process before the script runs, where by hand it prints and passes. Its record is the
    worker's error, with why, never the script's fail (``exited with code 70``)."""
    import resource

    script = tmp_path / "hello.py"
    script.write_text("print('hello')\n")
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (8 << 20, hard))
    try:
        assert by_hand(stub_torch_python, script) == (0, ["hello"])
        record = run_script_as_a_pair(stub_torch_python, script, tmp_path)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert record.outcome is Outcome.ERROR, (record.outcome, record.message)
    assert record.message.startswith("torchmatrix's worker failed in the pair's process before the pair began"), (
        record.message
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_pipe_or_a_device_a_script_opens_to_read_and_write_is_no_file_and_nothing_waits_on_it(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """``O_RDWR`` on a named pipe (an open that waits for no other end), ``/dev/zero`` mapped as memory: what the pair
    opens to change is hashed first where it is a file of content alone, which a pipe or a device never ends."""
    os.mkfifo(tmp_path / "pipe")
    script = tmp_path / "pipes.py"
    script.write_text(
        "import mmap, os\nfd = os.open('pipe', os.O_RDWR)\nos.write(fd, b'hi')\nprint(os.read(fd, 2).decode())\n"
        "with open('/dev/zero', 'r+b') as zero:\n    print(mmap.mmap(zero.fileno(), 8)[:2])\n"
    )
    record = run_script_as_a_pair(stub_torch_python, script, tmp_path)
    assert by_hand(stub_torch_python, script) == (0, ["hi", "b'\\x00\\x00'"])
    assert (exit_status(record), record.metrics.get("output")) == (0, ["hi", "b'\\x00\\x00'"]), record.message
    assert str(tmp_path / "pipe") not in record.inputs[identity.READ]


def test_a_large_file_a_script_changes_in_place_is_not_hashed_as_it_waits(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """A disk image or a data set opened to update (here 200 GiB, sparse): the pair runs as by hand, and a file it
    read, changed by it, counts as such, never current."""
    big = tmp_path / "big.img"
    with big.open("wb") as image:
        image.truncate(200 << 30)
    script = tmp_path / "updates.py"
    script.write_text("with open('big.img', 'r+b') as f:\n    f.write(b'x')\n    f.seek(0)\n    print(f.read(1))\n")
    record = run_script_as_a_pair(stub_torch_python, script, tmp_path)
    assert (exit_status(record), record.metrics.get("output")) == by_hand(stub_torch_python, script), record.message
    assert record.inputs[identity.READ][str(big)] == "changed by the pair, too large to hash first"


def test_a_script_that_moves_or_touches_many_large_files_runs_as_by_hand(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """A data set moved file by file (2000 files of 250 MiB, sparse), then touched: what the pair hashes before it
    changes a file is bounded, in all, and a file only moved or touched is no file it wrote."""
    data = tmp_path / "set"
    data.mkdir()
    for index in range(2000):
        with (data / f"{index:04d}.bin").open("wb") as part:
            part.truncate(250 << 20)
    script = tmp_path / "moves.py"
    script.write_text(
        "import os\nos.mkdir('sorted')\nfor name in sorted(os.listdir('set')):\n"
        "    os.rename(os.path.join('set', name), os.path.join('sorted', name))\n"
        "    os.utime(os.path.join('sorted', name))\nprint(len(os.listdir('sorted')))\n"
        "for name in sorted(os.listdir('sorted')):\n"
        "    os.rename(os.path.join('sorted', name), os.path.join('set', name))\nos.rmdir('sorted')\n"
        "print(open(os.path.join('set', '1999.bin'), 'rb').read(4))\n"
    )
    last = data / "1999.bin"
    with last.open("r+b") as part:
        part.write(b"last")
    record = run_script_as_a_pair(stub_torch_python, script, tmp_path)
    assert (exit_status(record), record.metrics.get("output")) == (0, ["2000", "b'last'"]), record.message
    assert by_hand(stub_torch_python, script) == (0, ["2000", "b'last'"])
    assert record.inputs[identity.READ][str(last)] == identity.file_digest(last)  # hashed as the pair ended


def test_a_large_file_the_script_touched_then_changed_and_read_is_never_current(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """Made runnable (not hashed: past what the pair hashes as it waits), then appended to and read: it was the
    pair's input, which the pair changed."""
    big = tmp_path / "big.bin"
    with big.open("wb") as image:
        image.truncate(300 << 20)
    script = tmp_path / "appends.py"
    script.write_text("import os\nos.chmod('big.bin', 0o644)\nopen('big.bin', 'ab').write(b'x')\n"
                      "print(os.path.getsize('big.bin'), open('big.bin', 'rb').read()[-1:])\n")  # fmt: skip
    record = run_script_as_a_pair(stub_torch_python, script, tmp_path)
    assert (exit_status(record), record.metrics.get("output")) == (0, [f"{(300 << 20) + 1} b'x'"]), record.message
    assert record.inputs[identity.READ][str(big)] == "changed by the pair, too large to hash first"


OPENINGS = {
    "open() with an opener relative to a dir_fd": (
        "fd = os.open('sub', os.O_RDONLY)\n"
        "print(open('data.txt', opener=lambda name, flags: os.open(name, flags, dir_fd=fd)).read())\n",
        ["sub/data.txt", "data.txt"],  # open() tells its name before the opener opens: counted from here too
    ),
    "open() with os.open partly applied as its opener": (
        "import functools\nfd = os.open('sub', os.O_RDONLY)\n"
        "print(open('data.txt', opener=functools.partial(os.open, dir_fd=fd)).read())\n",
        ["sub/data.txt", "data.txt"],
    ),
    "open(), then os.open relative to a dir_fd": (
        "print(open('data.txt').read())\nfd = os.open('sub', os.O_RDONLY)\n"
        "os.close(os.open('data.txt', os.O_RDONLY, dir_fd=fd))\n",
        ["data.txt", "sub/data.txt"],
    ),
    "os.open and os.stat relative to AT_FDCWD": (
        "os.close(os.open('data.txt', os.O_RDONLY, dir_fd=-100))\nprint(os.stat('name.txt', dir_fd=-100).st_size)\n",
        ["data.txt", "name.txt (what os.stat says of it)"],
    ),
    "a path whose __fspath__ reads a file, opened relative to a dir_fd": (
        "class Named:\n    def __fspath__(self):\n        return open('name.txt').read().strip()\n"
        "fd = os.open('sub', os.O_RDONLY)\nprint(os.read(os.open(Named(), os.O_RDONLY, dir_fd=fd), 99))\n",
        ["name.txt", "sub/data.txt"],
    ),
    "a file looked for in what is a file": (
        "try:\n    open('cfg/settings.ini')\nexcept OSError as error:\n    print(type(error).__name__)\n",
        ["cfg/settings.ini"],
    ),
    "os.open with O_EXCL and no O_CREAT, which makes nothing": (
        "print(os.read(os.open('data.txt', os.O_RDWR | os.O_EXCL), 99))\n",
        ["data.txt"],
    ),
    "a file of its own, replaced by another, read": (
        "open('out.txt', 'w').close()\nos.replace('data.txt', 'out.txt')\nprint(open('out.txt').read())\n"
        "os.replace('out.txt', 'data.txt')\n",
        ["data.txt"],
    ),
    "a file of its own, removed, made a link to another, read": (
        "open('latest', 'w').close()\nos.remove('latest')\nos.symlink('data.txt', 'latest')\n"
        "print(open('latest').read())\nos.remove('latest')\n",
        ["latest"],
    ),
    "a write, a truncation and a move that fail, then a read": (
        "for fails in (lambda: open('data.txt/', 'w'), lambda: os.truncate('data.txt/', 0),\n"
        "              lambda: os.rename(open('out.txt', 'w').name, 'data.txt/')):\n"
        "    try:\n        fails()\n    except OSError as error:\n        print(type(error).__name__)\n"
        "os.remove('out.txt')\nprint(open('data.txt').read())\n",
        ["data.txt"],
    ),
    "a folder of its own moved away, another moved in its place, read": (
        "os.mkdir('d')\nopen('d/data.txt', 'w').write('mine')\nos.rename('d', 'mine')\nos.rename('sub', 'd')\n"
        "print(open('d/data.txt').read())\nos.rename('d', 'sub')\nos.remove('mine/data.txt')\nos.rmdir('mine')\n",
        ["sub/data.txt"],
    ),
    "a hard link that fails, then the link there read": (
        "import tempfile\nt = tempfile.mkdtemp()\nopen(t + '/a', 'w').write('own')\n"
        "os.symlink(os.path.abspath('data.txt'), t + '/b')\ntry:\n    os.link(t + '/a', t + '/b')\n"
        "except OSError as error:\n    print(type(error).__name__)\nprint(open(t + '/b').read())\n",
        ["data.txt"],
    ),
    "a write that fails for want of its folder, then the folder moved in by a program": (
        "import subprocess\ntry:\n    open('missing/data.txt', 'w')\nexcept OSError as error:\n"
        "    print(type(error).__name__)\nsubprocess.run(['mv', 'sub', 'missing'], check=True)\n"
        "print(open('missing/data.txt').read())\nos.rename('missing', 'sub')\n",
        ["missing/data.txt"],
    ),
    "a file of its own by a link's path, replaced by an input's link": (
        "os.symlink('sub', 'lnk')\nopen('lnk/out.txt', 'w').write('mine')\nos.remove('sub/out.txt')\n"
        "os.link('data.txt', 'sub/out.txt')\nprint(open('lnk/out.txt').read())\nos.remove('sub/out.txt')\n"
        "os.remove('lnk')\n",
        ["data.txt"],  # read through the link's folder where the pair linked it: by the path it took it from
    ),
    "os.fstat by its keyword, and os's functions called wrong": (
        "print(os.fstat(fd=os.open('data.txt', os.O_RDONLY)).st_size)\n"
        "for function in (os.open, os.stat, os.lstat, os.access, os.readlink, os.fstat):\n"
        "    try:\n        function()\n    except TypeError as error:\n        print(error)\n",
        ["data.txt", "data.txt (what os.stat says of it)"],
    ),
}


@pytest.mark.parametrize("opening", sorted(OPENINGS))
def test_a_file_opened_is_read_where_python_opened_it(stub_torch_python: str, tmp_path: Path, opening: str) -> None:
    """Relative to a ``dir_fd`` (``AT_FDCWD`` too), through an ``os.PathLike``, under a file: the script ends as by
    hand, and what it opened counts where it was opened; an ``open()`` with an opener counts its name from the
    working folder too, which Python tells before the opener opens."""
    script = tmp_path / "opens.py"
    text, read = OPENINGS[opening]
    script.write_text("import os\n" + text)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "data.txt").write_text("inner\n")
    (tmp_path / "data.txt").write_text("outer\n")
    (tmp_path / "name.txt").write_text("data.txt\n")
    (tmp_path / "cfg").write_text("")
    record = run_script_as_a_pair(stub_torch_python, script, tmp_path)
    assert (exit_status(record), record.metrics["output"]) == by_hand(stub_torch_python, script), record.message
    here = [
        str(Path(path).relative_to(tmp_path)) for path in record.inputs[identity.READ] if path.startswith(str(tmp_path))
    ]
    assert sorted(name for name in here if not name.startswith("opens.py") and not name.endswith(".*")) == sorted(read)


def test_a_script_run_with_a_safe_path_finds_no_module_beside_it(stub_torch_python: str, tmp_path: Path) -> None:
    """``PYTHONSAFEPATH`` (``python -P``) in the matrix's ``env:`` puts no folder first on ``sys.path``, the script's
    nor the worker's."""
    script = tmp_path / "safe.py"
    script.write_text("try:\n    import helper\n    print('helper')\nexcept ImportError:\n    print('no helper')\n")
    (tmp_path / "helper.py").write_text("")
    probe = dataclasses.replace(loader.probe_at(script, tmp_path, kind=Kind.SCRIPT), name="safe")
    seen = identity.pair_environment(stub_torch_python, {"PYTHONSAFEPATH": "1"}, ["TORCHMATRIX_*"], os.environ)
    cell = runner.run_cell(stub_torch_python, [Pair(probe, "cpu")], 30.0, variables_seen=seen, workdir=tmp_path)
    safe = dict(os.environ, PYTHONSAFEPATH="1")
    done = subprocess.run([stub_torch_python, script.name], cwd=tmp_path, env=safe, capture_output=True, text=True)
    assert done.stdout.splitlines() == ["no helper"]
    assert [record.metrics.get("output") for record in cell.records] == [["no helper"]], cell


def test_a_script_s_globals_are_python_s_in_python_s_order(stub_torch_python: str, tmp_path: Path) -> None:
    script = tmp_path / "globals.py"
    script.write_text("print([name for name in globals() if name != '__file__'])\n")
    record = run_script_as_a_pair(stub_torch_python, script, tmp_path)
    assert (exit_status(record), record.metrics["output"]) == by_hand(stub_torch_python, script)


def test_a_module_imported_from_a_zip_file_is_read_as_the_zip_file(stub_torch_python: str, tmp_path: Path) -> None:
    script = tmp_path / "zipped.py"
    script.write_text("import os, sys\nsys.path.insert(0, os.path.abspath('lib.zip'))\nimport zmod\nprint(zmod.X)\n")
    with zipfile.ZipFile(tmp_path / "lib.zip", "w") as archive:
        archive.writestr("zmod.py", "X = 3\n")
    record = run_script_as_a_pair(stub_torch_python, script, tmp_path)
    assert (exit_status(record), record.metrics["output"]) == by_hand(stub_torch_python, script) == (0, ["3"])
    listed = record.inputs[identity.READ]
    assert str(tmp_path / "lib.zip") in listed and not [path for path in listed if "lib.zip/" in path]


def test_where_a_module_was_looked_for_is_where_it_was_then(stub_torch_python: str, tmp_path: Path) -> None:
    """A relative folder on ``sys.path`` is looked in from the working folder of the import: a later ``chdir`` moves
    nothing of it."""
    script = tmp_path / "looks.py"
    script.write_text("import os, sys\nsys.path.insert(0, 'lib')\nimport helper\nos.chdir('sub')\nprint(helper.X)\n")
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "helper.py").write_text("X = 2\n")
    (tmp_path / "helper.py").write_text("X = 1\n")
    (tmp_path / "sub").mkdir()
    record = run_script_as_a_pair(stub_torch_python, script, tmp_path)
    assert (exit_status(record), record.metrics["output"]) == by_hand(stub_torch_python, script) == (0, ["2"])
    read = record.inputs[identity.READ]
    assert str(tmp_path / "lib" / "helper.*") in read and str(tmp_path / "lib" / "helper.py") in read
    assert not [path for path in read if "sub" in Path(path).parts or path == str(tmp_path / "helper.*")]


def test_a_module_a_script_imports_lazily_is_not_loaded_by_the_worker(stub_torch_python: str, tmp_path: Path) -> None:
    """``importlib.util.LazyLoader`` loads a module at its first attribute looked up: the worker looks up none."""
    script = tmp_path / "lazy.py"
    script.write_text(
        "import importlib.util, sys\nspec = importlib.util.find_spec('heavy')\n"
        "spec.loader = importlib.util.LazyLoader(spec.loader)\nmodule = importlib.util.module_from_spec(spec)\n"
        "sys.modules['heavy'] = module\nspec.loader.exec_module(module)\nprint('done')\n"
    )
    (tmp_path / "heavy.py").write_text("print('heavy loaded')\nimport colorsys\n")
    record = run_script_as_a_pair(stub_torch_python, script, tmp_path)
    assert (exit_status(record), record.metrics["output"]) == by_hand(stub_torch_python, script) == (0, ["done"])
    assert not [path for path in record.inputs[identity.READ] if "colorsys" in path]


WATCHES = """\
import atexit, os, sys
def watch(frame, event, argument):
    if event == "call":
        os.write(1, "{} {}\\n".format(event, frame.f_code.co_name).encode())
def at_exit():
    pass
atexit.register(at_exit)
sys.SETWATCH(watch)
print("watching")
ENDING
"""


@pytest.mark.parametrize("setwatch", ["settrace", "setprofile"])
@pytest.mark.parametrize("ending", ["", "raise SystemExit(3)"])
def test_a_script_s_trace_and_profile_functions_see_python_s_end_not_the_worker_s(
    stub_torch_python: str, tmp_path: Path, setwatch: str, ending: str
) -> None:
    """What a trace or profile function prints of the calls after the script is what python calls as it ends (the
    exit handlers), never the worker's code. (How python prints a traceback, in C or in Python, is its version's.)"""
    script = tmp_path / "watches.py"
    script.write_text(WATCHES.replace("SETWATCH", setwatch).replace("ENDING", ending))
    record = run_script_as_a_pair(stub_torch_python, script, tmp_path)
    ended, printed = by_hand(stub_torch_python, script)
    assert "call at_exit" in printed
    assert (exit_status(record), record.metrics["output"]) == (ended, printed), record.message


LEAVES_SET = {
    "an audit hook that refuses every open": (
        "import sys\ndef refuse(event, arguments):\n    if event == 'open':\n"
        "        raise PermissionError('no opens')\nsys.addaudithook(refuse)\n"
    ),
    "builtins.open and os.open replaced": (
        "import builtins, os, sys\nreal_open, real_os_open = builtins.open, os.open\n"
        "def spy(path, *arguments, **options):\n    os.write(1, 'opened {}\\n'.format(path).encode())\n"
        "    return real_open(path, *arguments, **options)\n"
        "def spy_os(path, *arguments, **options):\n    os.write(1, 'os.open {}\\n'.format(path).encode())\n"
        "    return real_os_open(path, *arguments, **options)\nbuiltins.open, os.open = spy, spy_os\n"
    ),
    "a file size limit of nothing": (
        "import resource\nhard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (0, hard))\n"
    ),
}


@pytest.mark.parametrize("left", sorted(LEAVES_SET))
@pytest.mark.parametrize("ending", ["raise SystemExit(4)", "raise ValueError('after')", "import json"])
def test_what_a_script_leaves_set_in_its_process_changes_nothing_of_its_record(
    stub_torch_python: str, tmp_path: Path, start: str, left: str, ending: str
) -> None:
    """Its answer is stored in memory mapped before it ran, what it read is worked out by the worker, and the
    worker's code after it opens nothing: it ends as by hand, with what it read (the module it imported last); where
    a file size limit kept a read from its journal, the record says it does not know what its pair read."""
    script = tmp_path / "leaves_set.py"
    script.write_text(LEAVES_SET[left] + ending + "\n")
    (tmp_path / "json.py").write_text("")
    record = run_script_as_a_pair(stub_torch_python, script, tmp_path)
    ended, printed = by_hand(stub_torch_python, script)
    assert (exit_status(record), record.metrics["output"]) == (ended, printed), record.message
    assert not record.message.startswith("torchmatrix's worker failed"), record.message
    read = record.inputs[identity.READ]
    if read is None:  # what it read after the limit could not be written down
        assert left == "a file size limit of nothing"
    else:
        assert (str(tmp_path / "json.py") in read) is (ending == "import json")


@pytest.mark.parametrize(
    "beside, imports, printed",
    [
        (
            {
                "random.py": "def seed(*arguments, **options):\n    print('random.seed was called')\n",
                "torch.py": "def manual_seed(seed):\n    print('torch.manual_seed was called')\n",
            },
            "import random, torch\nprint(random.__name__, torch.__name__)\n",
            "random torch",
        ),
        (
            {"math.py": "WHERE = 'beside'\n", "zlib.py": "WHERE = 'beside'\n"},
            "import math, zlib\nprint(math.WHERE, zlib.WHERE)\n",
            "beside beside",
        ),
    ],
)
def test_a_module_beside_a_script_is_the_one_its_import_finds_as_by_hand(
    stub_torch_python: str, tmp_path: Path, beside: dict[str, str], imports: str, printed: str
) -> None:
    """``random.py`` and ``torch.py`` beside a script are its own: a pair seeds and hides devices in the
    environment's modules alone, and calls nothing of the script's. ``math`` and ``zlib``, extension modules the
    worker's own code loaded, are looked up again by the script's import."""
    folder = tmp_path / "own"
    folder.mkdir()
    for name, source in beside.items():
        (folder / name).write_text(source)
    script = folder / "imports.py"
    script.write_text(imports)
    record = run_script_as_a_pair(stub_torch_python, script, tmp_path)
    ended = (record.metrics["exit_code"], record.metrics["output"])
    assert ended == by_hand(stub_torch_python, script) == (0, [printed]), record.message


# --- pytest tests: a record per test; a test that crashes or hangs loses none of the others ------------------------

TESTS = """
import ctypes, os, time
import pytest

def test_passes(torchmatrix_device):
    assert torchmatrix_device == os.environ["TORCHMATRIX_DEVICE"] == "cpu"

def test_fails():
    assert 2 + 2 == 5

@pytest.fixture
def broken():
    raise RuntimeError("the fixture broke")

def test_errors(broken):
    pass

def test_skips():
    pytest.skip("needs a GPU")

@pytest.mark.xfail(reason="known bug")
def test_known_bug():
    assert False

def test_crashes():
    ctypes.string_at(0)

def test_after_the_crash():
    pass

def test_hangs():
    time.sleep(3600)

@pytest.mark.parametrize("n", [1, 2])
def test_after_the_hang(n):
    assert n == 1
"""


@pytest.fixture(scope="session")
def pytest_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A Python with the stand-in torch and this environment's pytest."""
    python, site_packages = bare_venv(tmp_path_factory.mktemp("pytest-venv"))
    (site_packages / "torch.pth").write_text(str(DATA / "stub_torch") + "\n")
    (site_packages / "pytest.pth").write_text(str(Path(pytest.__file__).parent.parent) + "\n")
    return python


def sample_tests(root: Path, source: str, entry: str = "tests/test_sample.py") -> Probe:
    (root / "tests").mkdir(exist_ok=True)
    (root / "tests" / "test_sample.py").write_text(textwrap.dedent(source))
    target, _, select = entry.partition("::")
    return loader.probe_at(root / target, root, select)


PYTEST_LIMIT = 10.0
"""A pair of tests' limit, which holds each of its pytest processes' start too: seconds on a loaded machine."""


def test_each_test_is_a_record_with_pytest_s_verdict_mapped(pytest_python: str, tmp_path: Path, start: str) -> None:
    probe = sample_tests(tmp_path, TESTS)
    cell = run_cell(pytest_python, [Pair(probe, "cpu"), Pair(probe, "mps")], PYTEST_LIMIT)
    got = {record.probe.split("::")[1]: record for record in cell.records if record.device == "cpu"}
    assert {name: record.outcome for name, record in got.items()} == {
        "test_passes": Outcome.PASS, "test_fails": Outcome.FAIL, "test_errors": Outcome.ERROR,
        "test_skips": Outcome.UNAVAILABLE, "test_known_bug": Outcome.FAIL, "test_crashes": Outcome.CRASH,
        "test_after_the_crash": Outcome.PASS, "test_hangs": Outcome.TIMEOUT,
        "test_after_the_hang[1]": Outcome.PASS, "test_after_the_hang[2]": Outcome.FAIL,
    }  # fmt: skip
    assert cell.records[0].probe == "tests/test_sample.py::test_passes"
    assert got["test_fails"].message == "assert (2 + 2) == 5"
    assert got["test_errors"].message == "RuntimeError: the fixture broke"
    assert got["test_skips"].message == "needs a GPU"
    assert got["test_known_bug"].message == "xfail: expected to fail: known bug"
    assert got["test_crashes"].message.startswith(
        "the probe's process died with SIGSEGV while running tests/test_sample.py::test_crashes on cpu"
    )
    assert got["test_hangs"].message == f"stopped after {PYTEST_LIMIT:g} s"
    mps = [record for record in cell.records if record.device == "mps"]  # the same tests, none of them run
    assert [record.probe for record in mps] == [record.probe for record in cell.records if record.device == "cpu"]
    assert {record.outcome for record in mps} == {Outcome.UNAVAILABLE}


PRINTING_TESTS = """
import tempfile

def test_prints(tmp_path):
    print("in", tempfile.gettempdir())  # the pair's own, which differs from one run to the next
    print(f"saved to {tmp_path}.")

def test_raises():
    print("before")
    raise RuntimeError("All tensors must have the same dtype")

def test_asserts():
    assert 2 + 2 == 5
"""


def test_a_test_s_record_keeps_what_it_printed_and_raised_normalised_as_a_script_s(
    pytest_python: str, tmp_path: Path
) -> None:
    cell = run_cell(pytest_python, [Pair(sample_tests(tmp_path, PRINTING_TESTS), "cpu")], 60.0)
    got = {record.probe.split("::")[1]: record.metrics for record in cell.records}
    assert got["test_prints"]["output"] == ["in <pair folder>", "saved to <pair folder>/pytest/test_prints0."]
    assert "raised" not in got["test_prints"]
    assert got["test_raises"]["output"] == ["before"]
    assert got["test_raises"]["output_sha256"] == hashlib.sha256(b"before\n").hexdigest()
    assert got["test_raises"]["raised"] == "RuntimeError: All tensors must have the same dtype"
    assert got["test_asserts"]["raised"].startswith("AssertionError: assert (2 + 2) == 5")
    assert "test_sample.py" not in got["test_raises"]["raised"]  # its type and message: no traceback's path


def test_each_test_gets_the_time_limit_of_its_own(
    pytest_python: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runner, "GRACE_SECONDS", 0.5)  # the worker must say it is alive, or this side stops it
    # Each test takes half the limit; together, more than the limit. The first takes no time: its limit holds
    # pytest's start too, seconds on a loaded machine.
    slow = "import time\n\ndef test_0():\n    pass\n" + "".join(
        f"def test_{n}():\n    time.sleep({PYTEST_LIMIT / 2})\n" for n in range(1, 4)
    )
    cell = run_cell(pytest_python, [Pair(sample_tests(tmp_path, slow), "cpu")], PYTEST_LIMIT)
    assert [record.outcome for record in cell.records] == [Outcome.PASS] * 4
    assert sum(record.duration for record in cell.records) > PYTEST_LIMIT


def test_a_node_id_runs_that_test_alone(pytest_python: str, tmp_path: Path) -> None:
    probe = sample_tests(tmp_path, TESTS, "tests/test_sample.py::test_after_the_hang")
    cell = run_cell(pytest_python, [Pair(probe, "cpu")], 10.0)
    assert outcomes(cell) == [
        ("tests/test_sample.py::test_after_the_hang[1]", Outcome.PASS),
        ("tests/test_sample.py::test_after_the_hang[2]", Outcome.FAIL),
    ]


def test_a_node_id_pytest_does_not_find_says_so_on_its_records_first_line(pytest_python: str, tmp_path: Path) -> None:
    probe = sample_tests(tmp_path, TESTS, "tests/test_sample.py::test_nope")  # a typo of the user's
    (record,) = run_cell(pytest_python, [Pair(probe, "cpu")], 10.0).records
    assert record.outcome is Outcome.ERROR
    first = record.message.splitlines()[0]
    assert first.startswith("pytest exited with code 4 before running a test: ERROR: not found: "), first
    assert first.rstrip(":").endswith("tests/test_sample.py::test_nope"), first  # the colon opens the log below
    assert record.metrics["pytest_exit"] == criteria.PYTEST_USAGE_ERROR  # a bisect says to correct it (test_criteria)


def test_a_file_that_cannot_be_collected_is_an_error_of_its_own_and_the_rest_run(
    pytest_python: str, tmp_path: Path
) -> None:
    sample_tests(tmp_path, "def test_fine():\n    pass\n")
    (tmp_path / "tests" / "test_broken.py").write_text("import no_such_module\n\ndef test_never():\n    pass\n")
    (tmp_path / "tests" / "test_skipped.py").write_text(
        "import pytest\npytest.skip('old torch', allow_module_level=True)\n"
    )
    cell = run_cell(pytest_python, [Pair(loader.probe_at(tmp_path / "tests", tmp_path), "cpu")], 10.0)
    assert outcomes(cell) == [
        ("tests/test_broken.py", Outcome.ERROR),
        ("tests/test_skipped.py", Outcome.UNAVAILABLE),
        ("tests/test_sample.py::test_fine", Outcome.PASS),
    ]
    assert "No module named 'no_such_module'" in cell.records[0].message
    assert cell.records[1].message == "old torch"


SHARED_CHECKS = "def test_dot():\n    assert 2 * 14 == 27, 'two dots make 27'\n"
BASE_CASE = "import unittest\n\nclass DotChecks(unittest.TestCase):\n    def test_dot(self):\n        assert 28 == 27\n"
SUBCLASS = "import base_case\n\nclass MyDot(base_case.DotChecks):\n    pass\n"  # a TestCase by its base alone
ASKED = {  # what pytest collects tests from, though no text of the file says so (pytest on each: failed)
    "test_star.py": ("from shared_checks import *\n", "test_star.py::test_dot"),
    "test_case.py": (SUBCLASS, "test_case.py::MyDot::test_dot"),
    "check_dot.py": ("def test_dot():\n    assert 2 * 14 == 27\n", "check_dot.py::test_dot"),  # named, not test_*.py
}


def test_a_file_is_tests_when_pytest_collects_tests_from_it_and_a_script_when_it_collects_none(
    pytest_python: str, stub_torch_python: str, tmp_path: Path
) -> None:
    (tmp_path / "shared_checks.py").write_text(SHARED_CHECKS)
    (tmp_path / "base_case.py").write_text(BASE_CASE)
    (tmp_path / "skipped.py").write_text("import pytest\npytest.skip('old torch', allow_module_level=True)\n")
    (tmp_path / "repro.py").write_text("print('2 * torch.dot(x, x) =', 28)\n")
    for name, (text, _) in ASKED.items():
        (tmp_path / name).write_text(text)
    probes = [loader.probe_at(tmp_path / name, tmp_path) for name in [*ASKED, "skipped.py", "repro.py"]]
    assert {probe.kind for probe in probes} == {Kind.SCRIPT_OR_TESTS}
    cell = run_cell(pytest_python, [Pair(probe, "cpu") for probe in probes], 10.0)
    no_test = "pytest collected no test from it"
    assert [(r.probe, r.outcome, r.kind, r.kind_reason) for r in cell.records] == [
        *((test, Outcome.FAIL, Kind.PYTEST, "pytest collected 1 test from it") for _, test in ASKED.values()),
        ("skipped.py", Outcome.UNAVAILABLE, Kind.SCRIPT, no_test),  # no test: a script, whose skip pytest's is
        ("repro.py", Outcome.PASS, Kind.SCRIPT, no_test),
    ]
    assert cell.records[0].message == "AssertionError: two dots make 27"
    assert cell.records[-2].message == "old torch"
    assert cell.records[-1].metrics["output"] == ["2 * torch.dot(x, x) = 28"]  # printed once: by the script's run
    (alone,) = run_cell(stub_torch_python, [Pair(probes[-1], "cpu")], 10.0).records
    assert (alone.outcome, alone.kind) == (Outcome.PASS, Kind.SCRIPT)
    assert alone.kind_reason.startswith("pytest could not run: pytest does not import in this cell")


def test_a_file_that_hangs_as_pytest_collects_it_then_as_a_script_is_stopped_at_its_limit_each_time(
    pytest_python: str, tmp_path: Path
) -> None:
    """pytest imports a file to collect it: one that hangs so is stopped at the limit, then runs as a script, with the
    limit afresh, and is stopped again; never taken for a hung worker (a limit longer than the worker's grace)."""
    (tmp_path / "repro.py").write_text("import time\nprint('waiting', flush=True)\ntime.sleep(3600)\n")
    limit = runner.GRACE_SECONDS + 2
    (record,) = run_cell(pytest_python, [Pair(loader.probe_at(tmp_path / "repro.py", tmp_path), "cpu")], limit).records
    assert (record.outcome, record.kind, record.message) == (Outcome.TIMEOUT, Kind.SCRIPT, f"stopped after {limit:g} s")
    assert record.metrics["output"] == ["waiting"]


COULD_NOT_RUN = {  # pytest on each, by hand, fails; none is a script that passes
    "badparam/test_param.py": (
        "import pytest\n\n@pytest.mark.parametrize('dtype', ['float32'])\ndef test_cast(dtyp):\n    assert False\n"
    ),
    "conftest_fails/test_dot.py": "def test_dot():\n    assert 2 * 14 == 27\n",
    "conftest_fails/conftest.py": "import no_such_module\n",
    "subtests/test_sub.py": (
        "import unittest\n\nclass T(unittest.TestCase):\n    def test_sub(self):\n        for i in range(2):\n"
        "            with self.subTest(i=i):\n                if i == 0:\n                    self.skipTest('one')\n"
        "                self.assertEqual(i, 0)\n"
    ),
    "exits/test_exit.py": "import pytest\n\ndef test_a():\n    pass\n\ndef test_z():\n    pytest.exit('giving up')\n",
    "raises/repro.py": "raise RuntimeError('the bug')\n",  # no test module by its name: a script, which raises
    "typo/check_dtype.py": (  # no test module by its name, which imports: pytest cannot collect the test it defines
        "import pytest\n\n@pytest.mark.parametrize('dtype', ['float32'])\ndef test_sum(dtyp):\n    pass\n"
    ),
    "configure_fails/test_one.py": "def test_one():\n    assert 1 == 2\n",
    "configure_fails/conftest.py": "def pytest_configure(config):\n    raise RuntimeError('no CUDA toolkit')\n",
    "exits0/test_exit0.py": (
        "import pytest\n\ndef test_a():\n    pytest.exit('done', returncode=0)\n\ndef test_b():\n    assert False\n"
    ),
}


def each_alone(python: str, root: Path, files: Mapping[str, str], names: Sequence[str]) -> list[Record]:
    """``files`` (path under ``root`` -> text) written, the records of each of ``names`` run alone on the cpu."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return [
        record
        for name in names
        for record in run_cell(python, [Pair(loader.probe_at(root / name, root), "cpu")], 20.0).records
    ]


def test_tests_pytest_cannot_run_fail_as_by_hand_and_never_pass_as_a_script(pytest_python: str, tmp_path: Path) -> None:
    named = ["badparam/test_param.py", "conftest_fails/test_dot.py", "subtests/test_sub.py", "exits/test_exit.py",
             "raises/repro.py", "typo/check_dtype.py", "exits0/test_exit0.py",
             "configure_fails/test_one.py"]  # fmt: skip
    records = each_alone(pytest_python, tmp_path, COULD_NOT_RUN, named)
    assert [(r.probe, r.outcome, r.kind, r.kind_reason) for r in records] == [
        (
            "badparam/test_param.py",
            Outcome.ERROR,
            Kind.PYTEST,
            "pytest could not collect it, a test module by its name",
        ),
        (
            "conftest_fails/test_dot.py",
            Outcome.ERROR,
            Kind.PYTEST,
            "pytest ended with exit code 4 before collecting it",
        ),
        ("subtests/test_sub.py::T::test_sub", Outcome.FAIL, Kind.PYTEST, "pytest collected 1 test from it"),
        ("exits/test_exit.py::test_a", Outcome.PASS, Kind.PYTEST, "pytest collected 2 tests from it"),
        ("exits/test_exit.py::test_z", Outcome.ERROR, Kind.PYTEST, "pytest collected 2 tests from it"),
        ("raises/repro.py", Outcome.ERROR, Kind.SCRIPT, "pytest collected no test from it"),
        (
            "typo/check_dtype.py",
            Outcome.ERROR,
            Kind.PYTEST,
            "pytest could not collect it, the tests it defines, once it imported",
        ),
        # by hand: exit status 0, the run green, test_b never run
        ("exits0/test_exit0.py::test_a", Outcome.PASS, Kind.PYTEST, "pytest collected 2 tests from it"),
        ("exits0/test_exit0.py::test_b", Outcome.UNAVAILABLE, Kind.PYTEST, "pytest collected 2 tests from it"),
        (
            "configure_fails/test_one.py",
            Outcome.ERROR,
            Kind.PYTEST,
            "pytest ended with exit code 3 before collecting it",
        ),
    ]
    assert "no_such_module" in records[1].message
    assert records[1].metrics[criteria.CONFTEST_FAILED] == str(tmp_path / "conftest_fails" / "conftest.py")
    assert records[1].metrics[criteria.BEFORE_TESTS] is True  # pytest's hook said it: no name a bisect says to correct
    assert records[4].message == "pytest ended while it ran (exit code 2): Exit: giving up"
    assert records[5].message == "RuntimeError: the bug"


ENDED_AS_PYTEST_BEGAN = {  # pytest on each, by hand, fails; none is a script whose failing test nobody calls
    "conftest_exits/test_dot.py": "def test_dot():\n    assert 2 * 14 == 27\n",
    "conftest_exits/conftest.py": "import sys\nsys.exit('needs CUDA')\n",
    "conftest_dies/test_dot.py": "def test_dot():\n    assert 2 * 14 == 27\n",
    "conftest_dies/conftest.py": "import os\nos._exit(1)\n",
    "module_exits/test_dot.py": "def test_dot():\n    assert 2 * 14 == 27\n\nimport sys\nsys.exit(0)\n",
}


def test_a_test_module_whose_pytest_run_ends_before_it_collected_a_test_fails_and_never_passes_as_a_script(
    pytest_python: str, tmp_path: Path
) -> None:
    """By hand ``pytest test_dot.py`` exits 1 where its conftest.py calls ``sys.exit('needs CUDA')`` or
    ``os._exit(1)`` at its import, and 3 where the module itself raises ``SystemExit`` as pytest imports it: a run
    that fails, never a script whose failing test nobody calls passing."""
    records = each_alone(
        pytest_python,
        tmp_path,
        ENDED_AS_PYTEST_BEGAN,
        ("conftest_exits/test_dot.py", "conftest_dies/test_dot.py", "module_exits/test_dot.py"),
    )
    assert [(r.probe, r.outcome, r.kind, r.kind_reason) for r in records] == [
        (
            "conftest_exits/test_dot.py",
            Outcome.ERROR,
            Kind.PYTEST,
            "pytest ended with exit code 1 before collecting it",
        ),
        (
            "conftest_dies/test_dot.py",
            Outcome.CRASH,
            Kind.PYTEST,
            "pytest's process exited with code 1 before collecting it",
        ),
        (
            "module_exits/test_dot.py",
            Outcome.ERROR,
            Kind.PYTEST,
            "pytest ended with exit code 3 as it collected it, a test module by its name",
        ),
    ]
    assert "needs CUDA" in records[0].message
    assert "SystemExit" in records[2].message


RAISED_AS_PYTEST_BEGAN = {  # by hand, python prints the traceback: pytest exits 1, or dies of Ctrl-C's SIGINT (130)
    "conftest_option/test_dot.py": "def test_dot():\n    assert 2 * 14 == 27\n",
    "conftest_option/conftest.py": "def pytest_addoption(parser):\n    raise RuntimeError('no such toolkit')\n",
    "conftest_interrupts/test_dot.py": "def test_dot():\n    assert 2 * 14 == 27\n",
    "conftest_interrupts/conftest.py": "raise KeyboardInterrupt\n",
}


def test_a_conftest_whose_exception_pytest_lets_through_as_it_begins_is_pytest_ending_never_the_worker_failing(
    pytest_python: str, tmp_path: Path
) -> None:
    """A conftest.py whose ``pytest_addoption`` raises, or which raises ``KeyboardInterrupt`` at its import: pytest
    does not catch either, and by hand python prints the traceback and ``pytest test_dot.py`` exits 1 (130, by
    SIGINT); a run that ended before a test, never torchmatrix's worker failing or a crash while a test ran."""
    records = each_alone(
        pytest_python,
        tmp_path,
        RAISED_AS_PYTEST_BEGAN,
        ("conftest_option/test_dot.py", "conftest_interrupts/test_dot.py"),
    )
    assert [(r.probe, r.outcome, r.kind, r.kind_reason) for r in records] == [
        (
            "conftest_option/test_dot.py",
            Outcome.ERROR,
            Kind.PYTEST,
            "pytest ended with exit code 1 before collecting it",
        ),
        (
            "conftest_interrupts/test_dot.py",
            Outcome.ERROR,
            Kind.PYTEST,
            "pytest ended with exit code 130 before collecting it",
        ),
    ]
    assert "RuntimeError: no such toolkit" in records[0].message and "worker" not in records[0].message
    assert records[0].message.splitlines()[0].endswith("before running a test: RuntimeError: no such toolkit:")
    assert "KeyboardInterrupt" in records[1].message
    assert all(record.metrics[criteria.BEFORE_TESTS] is True for record in records)


ENDED_SILENTLY = {  # pytest on each, by hand, exits 0 and prints nothing: its failing test never ran
    "conftest_leaves/test_dot.py": "def test_dot():\n    assert 2 * 14 == 27\n",
    "conftest_leaves/conftest.py": "import sys\nsys.exit(0)\n",
    "module_leaves/test_dot.py": "import os\nos._exit(0)\n\ndef test_dot():\n    assert 2 * 14 == 27\n",
}


def test_a_test_module_whose_pytest_run_ends_with_0_before_a_test_ran_is_tests_that_did_not_run(
    pytest_python: str, tmp_path: Path
) -> None:
    """By hand ``pytest test_dot.py`` exits 0 and says nothing where its conftest.py calls ``sys.exit(0)``, or the
    module ``os._exit(0)``, as pytest imports it: its test never ran, as where the conftest.py calls ``os._exit(0)``;
    never a script that passes."""
    records = each_alone(
        pytest_python, tmp_path, ENDED_SILENTLY, ("conftest_leaves/test_dot.py", "module_leaves/test_dot.py")
    )
    assert [(r.probe, r.outcome, r.kind, r.kind_reason) for r in records] == [
        (
            "conftest_leaves/test_dot.py",
            Outcome.ERROR,
            Kind.PYTEST,
            "pytest ended with exit code 0 before collecting it",
        ),
        (
            "module_leaves/test_dot.py",
            Outcome.CRASH,
            Kind.PYTEST,
            "pytest's process exited with code 0 as it collected it, a test module by its name",
        ),
    ]


@pytest.mark.parametrize(
    ("hook", "reason"),
    [
        ("pytest_sessionstart", "pytest ended with exit code 0 before collecting it"),
        ("pytest_collection", "pytest ended with exit code 0 as it collected it, a test module by its name"),
    ],
)
def test_where_a_conftest_ends_pytest_with_0_a_test_module_did_not_run_and_a_script_is_the_script_it_is(
    pytest_python: str, tmp_path: Path, hook: str, reason: str
) -> None:
    """A ``conftest.py`` whose ``pytest_sessionstart``, or ``pytest_collection``, ends every pytest run with exit code
    0 (nothing to test on this machine): by hand ``pytest test_dot.py`` exits 0 and runs nothing, so its test did not
    run, never a script whose function nobody calls passing; ``repro.py`` beside it, which pytest never said is
    tests, is the script ``python repro.py`` runs, and fails as it does."""
    files = {
        "conftest.py": f"import pytest\n\ndef {hook}(session):\n    pytest.exit('nothing to test', returncode=0)\n",
        "repro.py": "print('2 * 14 =', 2 * 14)\nassert 2 * 14 == 27, 'not 27'\n",
        "test_dot.py": "def test_dot():\n    assert 2 * 14 == 27\n",
    }
    records = each_alone(pytest_python, tmp_path, files, ("repro.py", "test_dot.py"))
    assert [(r.probe, r.outcome, r.kind) for r in records] == [
        ("repro.py", Outcome.FAIL, Kind.SCRIPT),
        ("test_dot.py", Outcome.ERROR, Kind.PYTEST),
    ]
    assert "not 27" in records[0].message
    assert records[1].kind_reason == reason


ALIKE_CONFTEST = """
import pytest

def pytest_pycollect_makeitem(collector, name, obj):
    if name.startswith("check_") and callable(obj):
        return [pytest.Function.from_parent(collector, name="check", callobj=obj)]
"""


def test_tests_that_share_a_node_id_are_one_record_that_fails_where_one_of_them_fails(
    pytest_python: str, tmp_path: Path
) -> None:
    """pytest runs two items of one node id (a conftest.py's collector named them alike), and by hand the run
    fails where one fails: one record, failing, and a result file that can be read back."""
    (tmp_path / "alike").mkdir()
    (tmp_path / "alike" / "conftest.py").write_text(ALIKE_CONFTEST)
    (tmp_path / "alike" / "test_alike.py").write_text(
        "def check_a():\n    assert False, 'check_a fails'\n\ndef check_b():\n    pass\n"
    )
    cell = run_cell(pytest_python, [Pair(loader.probe_at(tmp_path / "alike" / "test_alike.py", tmp_path), "cpu")], 20.0)
    assert [(r.probe, r.outcome) for r in cell.records] == [("alike/test_alike.py::check", Outcome.FAIL)]
    assert cell.records[0].message.startswith("pytest ran 2 tests of this node id, 1 of them failed: ")
    assert "check_a fails" in cell.records[0].message


SESSION_FAILS_CONFTEST = """
import pytest

@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    print("leak check: 1 tensor left on the device")
    session.exitstatus = 3
"""


def test_a_pytest_run_that_fails_though_its_tests_pass_has_a_record_that_says_so(
    pytest_python: str, tmp_path: Path
) -> None:
    """By hand, ``pytest test_leaks.py`` exits 3 (a conftest.py's check at the session's end): no record of it
    passes alone."""
    (tmp_path / "leaks").mkdir()
    (tmp_path / "leaks" / "conftest.py").write_text(SESSION_FAILS_CONFTEST)
    (tmp_path / "leaks" / "test_leaks.py").write_text("def test_fine():\n    pass\n")
    (tmp_path / "fine").mkdir()
    (tmp_path / "fine" / "test_fine.py").write_text("def test_fine():\n    pass\n")
    pairs = [Pair(loader.probe_at(tmp_path / name, tmp_path), "cpu") for name in ("leaks/test_leaks.py", "fine")]
    cell = run_cell(pytest_python, pairs, 20.0)
    assert [(r.probe, r.outcome) for r in cell.records] == [
        ("leaks/test_leaks.py::test_fine", Outcome.PASS),
        ("leaks/test_leaks.py", Outcome.ERROR),
        ("fine/test_fine.py::test_fine", Outcome.PASS),
    ]
    assert cell.records[1].message.startswith("pytest ended with exit code 3 though none of its tests failed: ")
    assert "leak check: 1 tensor left on the device" in cell.records[1].message
    named = Pair(loader.probe_at(tmp_path / "leaks" / "test_leaks.py", tmp_path, "test_fine"), "cpu")
    [alone] = run_cell(pytest_python, [named], 20.0).records
    assert (alone.probe, alone.outcome) == ("leaks/test_leaks.py::test_fine", Outcome.ERROR)  # its node id's record
    assert alone.message.startswith("pytest ended with exit code 3 though none of its tests failed: ")


def test_a_pytest_run_whose_tests_pass_and_that_ends_as_if_none_ran_has_a_record_that_says_so(
    pytest_python: str, tmp_path: Path
) -> None:
    """A ``conftest.py`` sets exit status 5 (no tests collected) after a test passed: by hand ``pytest`` fails,
    exit code 5, so no record of it passes alone; a run whose options deselected every test has none."""
    (tmp_path / "conftest.py").write_text(
        SESSION_FAILS_CONFTEST.replace("session.exitstatus = 3", "session.exitstatus = 5")
    )
    (tmp_path / "test_five.py").write_text("def test_fine():\n    pass\n")
    cell = run_cell(pytest_python, [Pair(loader.probe_at(tmp_path / "test_five.py", tmp_path), "cpu")], 20.0)
    assert [(r.probe, r.outcome) for r in cell.records] == [
        ("test_five.py::test_fine", Outcome.PASS),
        ("test_five.py", Outcome.ERROR),
    ]
    assert cell.records[1].message.startswith("pytest ended with exit code 5 though none of its tests failed: ")


def test_tests_pytest_xdist_runs_are_tests_whose_every_file_beside_them_counts(
    pytest_python: str, tmp_path: Path
) -> None:
    """``-n 2`` in ``addopts``: pytest-xdist collects and runs the tests in processes of its own. A file of tests
    that all pass is tests, not a script; and the helper they import there, which the pair's process never reads,
    is an input of their records, as every file of their folder is."""
    pytest.importorskip("xdist")
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -n 2\n")
    (tmp_path / "helper.py").write_text("VALUE = 1\n")
    (tmp_path / "test_spread.py").write_text("from helper import VALUE\n\ndef test_value():\n    assert VALUE == 1\n")
    cell = run_cell(pytest_python, [Pair(loader.probe_at(tmp_path / "test_spread.py", tmp_path), "cpu")], 60.0)
    assert [(r.probe, r.outcome, r.kind, r.kind_reason) for r in cell.records] == [
        ("test_spread.py::test_value", Outcome.PASS, Kind.PYTEST, "pytest collected 1 test from it")
    ]
    assert str(tmp_path / "helper.py") in cell.records[0].inputs[identity.READ]


def test_a_failing_test_pytest_xdist_ran_keeps_what_it_raised(pytest_python: str, tmp_path: Path) -> None:
    """pytest-xdist runs the test in a process of its own, where it raised: its record keeps what it raised, which
    ``bisect --by-output`` compares, as a test run in the pair's process does."""
    pytest.importorskip("xdist")
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -n 2\n")
    (tmp_path / "test_raises.py").write_text("def test_value():\n    raise ValueError('the value is 5')\n")
    cell = run_cell(pytest_python, [Pair(loader.probe_at(tmp_path / "test_raises.py", tmp_path), "cpu")], 60.0)
    assert [(r.probe, r.outcome) for r in cell.records] == [("test_raises.py::test_value", Outcome.FAIL)]
    assert cell.records[0].metrics["raised"] == "ValueError: the value is 5"


def test_a_test_whose_pytest_xdist_process_died_fails_as_pytest_says_never_said_not_run(
    pytest_python: str, tmp_path: Path
) -> None:
    """pytest-xdist's process died running a test (``os._exit``): by hand pytest fails it, ``worker 'gw0' crashed
    while running``, and runs the rest in a new process; its record says so, not that pytest never ran it."""
    pytest.importorskip("xdist")
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -n 2\n")
    dies = "import os\n\ndef test_dies():\n    os._exit(3)\n\ndef test_ok():\n    pass\n"
    (tmp_path / "test_dies.py").write_text(dies)
    cell = run_cell(pytest_python, [Pair(loader.probe_at(tmp_path / "test_dies.py", tmp_path), "cpu")], 60.0)
    assert sorted((r.probe, r.outcome) for r in cell.records) == [
        ("test_dies.py::test_dies", Outcome.FAIL),
        ("test_dies.py::test_ok", Outcome.PASS),
    ]
    died = next(record for record in cell.records if record.probe == "test_dies.py::test_dies")
    assert "crashed while running 'test_dies.py::test_dies'" in died.message


AS_BY_HAND = {  # `pytest tests/test_by_hand.py` typed in m/, `pytest test_slow.py` in slow/: as each passes or not
    "setup.py": "from setuptools import setup\nsetup()\n",  # pytest's root, by hand, is the folder above the matrix's
    "conftest.py": "import pytest\n\n@pytest.fixture\ndef value():\n    return 2\n",
    "m/tests/test_by_hand.py": (
        "def test_root_conftest(value):\n    assert value == 2\n\n"
        "def test_cache(cache):\n    cache.set('k', 1)\n    assert cache.get('k', None) == 1\n"
    ),
    "slow/pytest.ini": '[pytest]\naddopts = -m "not slow"\nmarkers = slow: slow tests\n',
    "slow/test_slow.py": "import pytest\n\n@pytest.mark.slow\ndef test_big():\n    assert 1 == 2\n",
}


def test_tests_run_as_pytest_typed_in_the_matrixs_folder_runs_them(pytest_python: str, tmp_path: Path) -> None:
    """pytest's own root (a setup.py above the matrix's folder) decides which conftest.py it loads; the cache
    fixture works; a test the options deselect does not run, and a file all of whose tests they deselect is tests."""
    for name, text in AS_BY_HAND.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "linked").symlink_to("m")  # the matrix's folder reached by a link: the tests' ids are the same
    by_hand, linked = (loader.probe_at(tmp_path / name / "tests" / "test_by_hand.py", tmp_path / name)
                       for name in ("m", "linked"))  # fmt: skip
    slow = loader.probe_at(tmp_path / "slow" / "test_slow.py", tmp_path / "slow")
    cells = [run_cell(pytest_python, [Pair(probe, "cpu")], 20.0) for probe in (by_hand, linked, slow)]
    records = [record for cell in cells for record in cell.records]
    two = "pytest collected 2 tests from it"
    assert [(r.probe, r.outcome, r.kind, r.kind_reason, r.message) for r in records] == [
        ("tests/test_by_hand.py::test_root_conftest", Outcome.PASS, Kind.PYTEST, two, ""),
        ("tests/test_by_hand.py::test_cache", Outcome.PASS, Kind.PYTEST, two, ""),
        ("tests/test_by_hand.py::test_root_conftest", Outcome.PASS, Kind.PYTEST, two, ""),
        ("tests/test_by_hand.py::test_cache", Outcome.PASS, Kind.PYTEST, two, ""),
        ("test_slow.py::test_big", Outcome.UNAVAILABLE, Kind.PYTEST, "pytest collected 1 test from it, 1 deselected",
         "deselected by pytest's options (-m 'not slow')"),
    ]  # fmt: skip
    assert str(tmp_path / "conftest.py") in records[0].inputs[identity.READ]
    assert sorted(path.name for path in (tmp_path / "m").rglob("*")) == ["test_by_hand.py", "tests"]


DROPPED_BY_A_HOOK = {  # a conftest.py that narrows pytest's list itself, without pytest_deselected
    "conftest.py": (
        "def pytest_collection_modifyitems(config, items):\n"
        "    items[:] = [item for item in items if 'cuda' not in item.name]\n"
    ),
    "test_cuda_ops.py": "def test_cuda_matmul():\n    assert False\n\ndef test_cuda_wrong():\n    assert False\n",
    "test_mixed.py": "def test_cpu():\n    pass\n\ndef test_cuda():\n    assert False\n",
}


def test_tests_a_conftest_hook_removes_are_left_out_not_a_script_that_passes(
    pytest_python: str, tmp_path: Path
) -> None:
    """By hand, `pytest test_cuda_ops.py` runs no test (exit code 5): its file is tests none of which ran, never a
    script that passes; in a file that keeps some, those removed are left out, as if deselected."""
    for name, text in DROPPED_BY_A_HOOK.items():
        (tmp_path / name).write_text(text)
    pairs = [Pair(loader.probe_at(tmp_path / name, tmp_path), "cpu") for name in ("test_cuda_ops.py", "test_mixed.py")]
    records = run_cell(pytest_python, pairs, 20.0).records
    removed = ("deselected by pytest's options "
               "(a pytest_collection_modifyitems hook of a conftest.py or plugin, which removed it)")  # fmt: skip
    assert [(r.probe, r.outcome, r.kind, r.kind_reason, r.message) for r in records] == [
        ("test_cuda_ops.py::test_cuda_matmul", Outcome.UNAVAILABLE, Kind.PYTEST,
         "pytest collected 2 tests from it, 2 deselected", removed),
        ("test_cuda_ops.py::test_cuda_wrong", Outcome.UNAVAILABLE, Kind.PYTEST,
         "pytest collected 2 tests from it, 2 deselected", removed),
        ("test_mixed.py::test_cuda", Outcome.UNAVAILABLE, Kind.PYTEST,
         "pytest collected 2 tests from it, 1 deselected", removed),
        ("test_mixed.py::test_cpu", Outcome.PASS, Kind.PYTEST, "pytest collected 2 tests from it, 1 deselected", ""),
    ]  # fmt: skip


def test_tests_without_pytest_or_without_tests_say_so(
    stub_torch_python: str, pytest_python: str, tmp_path: Path
) -> None:
    sample_tests(tmp_path, "def helper():\n    pass\n")
    probe = loader.probe_at(tmp_path / "tests", tmp_path)
    (missing,) = run_cell(stub_torch_python, [Pair(probe, "cpu")], 10.0).records
    assert (missing.outcome, missing.probe) == (Outcome.ERROR, "tests/")
    assert missing.message.startswith("pytest does not import in this cell: No module named 'pytest'")
    (empty,) = run_cell(pytest_python, [Pair(probe, "cpu")], 10.0).records
    assert (empty.outcome, empty.message.splitlines()[0]) == (
        Outcome.ERROR,
        "pytest collected no tests in tests/ (it collects test_*.py files and their test_* functions; "
        "list run() probes and scripts one by one):",
    )


def test_a_file_named_as_tests_where_pytest_does_not_import_is_an_error_and_a_script_still_runs(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """pytest cannot be asked where it does not import (an environment broken halfway, a Python with its own torch
    and no pytest): a test module by pytest's default names is tests that cannot run, as `pytest FILE` by hand
    fails, never a script whose tests nobody calls passing; a file named otherwise runs as the script it may be."""
    (tmp_path / "test_only.py").write_text("def test_x():\n    assert False\n")
    (tmp_path / "repro.py").write_text("print('ran')\n")
    pairs = [Pair(loader.probe_at(tmp_path / name, tmp_path), "cpu") for name in ("test_only.py", "repro.py")]
    tests, script = run_cell(stub_torch_python, pairs, 20.0).records
    assert (tests.probe, tests.outcome, tests.kind) == ("test_only.py", Outcome.ERROR, Kind.PYTEST)
    assert tests.message.startswith("pytest does not import in this cell: No module named 'pytest'")
    assert tests.kind_reason.startswith("pytest could not run: pytest does not import in this cell")
    assert (script.probe, script.outcome, script.kind) == ("repro.py", Outcome.PASS, Kind.SCRIPT)


def test_the_tests_leave_nothing_in_their_folder(pytest_python: str, tmp_path: Path) -> None:
    probe = sample_tests(tmp_path, "def test_fine():\n    assert True\n")
    cell = run_cell(pytest_python, [Pair(probe, "cpu")], 10.0)
    assert outcomes(cell) == [("tests/test_sample.py::test_fine", Outcome.PASS)]
    assert sorted(path.name for path in tmp_path.rglob("*")) == ["test_sample.py", "tests"]  # no cache, no bytecode


def test_a_test_pytest_never_reached_is_said_to_be_so(pytest_python: str, tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -x\n")  # the repository's own options count
    probe = sample_tests(tmp_path, "def test_first():\n    assert False\n\ndef test_second():\n    pass\n")
    cell = run_cell(pytest_python, [Pair(probe, "cpu")], 10.0)
    assert outcomes(cell) == [
        ("tests/test_sample.py::test_first", Outcome.FAIL),
        ("tests/test_sample.py::test_second", Outcome.ERROR),
    ]
    assert cell.records[1].message == "pytest ended (exit code 1) without running it"


def test_a_conftest_that_skips_at_import_makes_its_tests_unavailable_saying_why_not_a_crash(
    pytest_python: str, tmp_path: Path
) -> None:
    sample_tests(tmp_path, "def test_a():\n    pass\n")
    probe = loader.probe_at(tmp_path / "tests", tmp_path)
    (tmp_path / "tests" / "conftest.py").write_text(
        'import pytest\n\npytest.skip("needs a GPU", allow_module_level=True)\n'
    )
    cell = run_cell(pytest_python, [Pair(probe, "cpu")], 10.0)
    assert [(record.outcome, record.message) for record in cell.records] == [
        (Outcome.UNAVAILABLE, "tests/conftest.py skipped every test at its import: needs a GPU")
    ]


@pytest.mark.parametrize(
    ("ini", "module", "script"),
    [
        ("", "test_kernels.py", "repro.py"),
        ("[pytest]\npython_files = check_*.py\n", "check_kernels.py", "test_repro.py"),
    ],
    ids=["default-names", "python_files"],
)
def test_a_test_module_whose_conftest_skips_at_import_is_unavailable_never_a_script_that_passes(
    pytest_python: str, tmp_path: Path, ini: str, module: str, script: str
) -> None:
    """``tests/cuda/test_kernels.py`` named alone, whose ``conftest.py`` skips where there is no GPU: by hand its
    tests are skipped; run as a script, its failing test would be a pass nobody saw. A test module is one by the
    project's ``python_files`` (``check_*.py``) where it sets them; a file of another name whose conftest.py skipped
    it is still the script it may be."""
    if ini:
        (tmp_path / "pytest.ini").write_text(ini)
    (tmp_path / "gpu").mkdir()
    (tmp_path / "gpu" / "conftest.py").write_text(
        'import pytest\n\npytest.skip("needs a GPU", allow_module_level=True)\n'
    )
    (tmp_path / "gpu" / module).write_text("def test_kernel():\n    assert False\n")
    (tmp_path / "gpu" / script).write_text("print('ran')\n")
    pairs = [Pair(loader.probe_at(tmp_path / "gpu" / name, tmp_path), "cpu") for name in (module, script)]
    tests, ran = run_cell(pytest_python, pairs, 20.0).records
    assert (tests.probe, tests.outcome, tests.kind) == (f"gpu/{module}", Outcome.UNAVAILABLE, Kind.PYTEST)
    assert tests.message == "gpu/conftest.py skipped every test at its import: needs a GPU"
    assert (ran.probe, ran.outcome, ran.kind) == (f"gpu/{script}", Outcome.PASS, Kind.SCRIPT)


def test_a_failing_test_keeps_what_pytest_shows_it_printed_a_subprocess_s_stderr_included(
    pytest_python: str, tmp_path: Path
) -> None:
    probe = sample_tests(
        tmp_path,
        """
        import subprocess, sys

        def test_runs_a_broken_helper():
            print("before the helper")
            subprocess.run([sys.executable, "-c", "import sys; sys.exit('the helper broke')"], check=True)

        def test_fails_quietly():
            assert 1 == 2
        """,
    )
    broken, quiet = run_cell(pytest_python, [Pair(probe, "cpu")], 30.0).records
    assert broken.outcome is Outcome.FAIL
    line, *shown = broken.message.splitlines()
    assert "CalledProcessError" in line and shown == ["Captured stderr:", "the helper broke"]
    assert (broken.metrics["captured_stderr"], broken.metrics["output"]) == (
        "the helper broke\n",
        ["before the helper"],
    )
    assert (quiet.message, "captured_stderr" in quiet.metrics) == ("assert 1 == 2", False)
