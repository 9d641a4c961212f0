"""Probes that misbehave, run by real nox on real torch: each pair gets exactly its outcome, the rest still run."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from torchmatrix.core import Outcome
from torchmatrix.results import CellResult
from torchmatrix.util.safetext import unsafe

from .conftest import Run, Torch, Workspace, kill_all, wait_until_dead
from .probes import hostile

pytestmark = pytest.mark.integration

TIMEOUT = 5.0
SLOW = 2.5
EXPECTED = {
    "ok": Outcome.PASS,
    "segfault": Outcome.CRASH,
    "hang": Outcome.TIMEOUT,
    "exit_halfway": Outcome.CRASH,
    "noisy": Outcome.PASS,
    "raises": Outcome.ERROR,
    "malformed_type": Outcome.ERROR,
    "malformed_outcome": Outcome.ERROR,
    "malformed_metrics": Outcome.ERROR,
    "huge_metrics": Outcome.ERROR,
    "slow": Outcome.PASS,
    "fork_then_crash": Outcome.CRASH,
    "hostile": Outcome.FAIL,
}


@dataclass(frozen=True)
class Probed:
    workspace: Workspace
    run: Run
    result: CellResult
    pids: list[int]

    def record(self, probe: str, device: str = "cpu"):
        (found,) = [r for r in self.result.records if (r.probe, r.device) == (probe, device)]
        return found


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory, envdir: Path, suite_cache: Path, torch_here: Torch, warm: None):
    """One cell running every misbehaving probe on cpu and cuda (absent here: each cuda pair is `unavailable`)."""
    workspace = Workspace(tmp_path_factory.mktemp("probes"), envdir, suite_cache)
    workspace.matrix([torch_here], list(EXPECTED), timeout=TIMEOUT, devices="[cpu, cuda]")
    pids_file = workspace.folder / "pids"
    run = workspace.nox(
        "-s", "probe", env=workspace.environ(TORCHMATRIX_FAULTS_PIDS=str(pids_file), TORCHMATRIX_FAULTS_SLOW=str(SLOW))
    )
    pids = [int(pid) for pid in pids_file.read_text().split()] if pids_file.exists() else []
    try:
        (result,) = workspace.scan().results
        yield Probed(workspace, run, result, pids)
    finally:
        kill_all(pids)


def test_the_run_succeeds_and_every_pair_gets_exactly_its_outcome(probed: Probed) -> None:
    assert probed.run.returncode == 0, probed.run.output
    assert probed.result.outcome is None
    got = [(record.probe, record.device, record.outcome) for record in probed.result.records]
    assert got == [
        (probe, device, outcome if device == "cpu" else Outcome.UNAVAILABLE)
        for probe, outcome in EXPECTED.items()
        for device in ("cpu", "cuda")
    ]
    assert probed.workspace.scan().warnings == ()


def test_crashes_name_the_signal_or_exit_code_and_where_the_probe_was(probed: Probed) -> None:
    segfault = probed.record("segfault")
    assert segfault.message.startswith("the probe's process died with SIGSEGV while running segfault on cpu")
    assert segfault.metrics["exit_code"] == -11
    assert "segfault.py" in segfault.message  # the Python stack at the crash, from faulthandler
    exited = probed.record("exit_halfway")
    assert exited.message.startswith("the probe's process exited with code 3 while running exit_halfway on cpu")


def test_a_crash_is_seen_even_when_a_forked_child_keeps_the_pipes_open(probed: Probed) -> None:
    crash = probed.record("fork_then_crash")  # not a timeout: its death is noticed without waiting for EOF
    assert crash.message.startswith("the probe's process died with SIGSEGV while running fork_then_crash on cpu")


def test_a_hang_is_stopped_at_the_limit_and_a_slow_probe_within_it_passes(probed: Probed) -> None:
    hang = probed.record("hang")
    assert hang.message == f"stopped after {TIMEOUT:g} s" and hang.duration >= TIMEOUT
    slow = probed.record("slow")
    assert slow.message == "slow but in time" and slow.duration >= SLOW


def test_errors_say_what_the_probe_did_wrong(probed: Probed) -> None:
    assert probed.record("raises").message == "RuntimeError: probe failed on purpose\nsecond line of the message"
    assert "Traceback" in probed.record("raises").metrics["traceback"]
    assert probed.record("malformed_type").message == "malformed result: run() returned list instead of a dict"
    assert "outcome 'crash'; expected 'pass' or 'fail'" in probed.record("malformed_outcome").message
    assert "not plain data" in probed.record("malformed_metrics").message
    huge = probed.record("huge_metrics")
    assert huge.message.startswith("malformed result: run() returned") and "the limit is 1 MB" in huge.message
    assert huge.metrics == {}


def test_garbage_on_stdout_and_stderr_does_not_reach_the_results(probed: Probed) -> None:
    noisy = probed.record("noisy")
    assert (noisy.outcome, noisy.message, noisy.metrics) == (Outcome.PASS, "noisy but fine", {})


def test_no_process_a_probe_started_outlives_the_run(probed: Probed) -> None:
    assert len(probed.pids) == 3  # the hanging pair's process, its child, the forked child of fork_then_crash
    assert wait_until_dead(probed.pids) == []


def test_hostile_text_is_stored_as_it_was(probed: Probed) -> None:
    record = probed.record("hostile")
    assert record.message == hostile.MESSAGE
    assert record.metrics[hostile.FIRST_LINE] == hostile.MARKDOWN_TABLE


def test_hostile_text_reaches_the_terminal_escaped(probed: Probed) -> None:
    output = probed.run.output
    assert {char for char in output if char != "\n" and unsafe(char)} == set()
    (line,) = [line for line in output.splitlines() if "<script>" in line]
    assert r"\x1b[2J\x1b[H\x1b[31mred\x1b[0m \x1b]0;window title\x07" in line
    assert hostile.HTML in line and hostile.MARKDOWN in line  # inert on a terminal: shown as they are
    assert r"bell\x07 backspace\x08\x08 NUL\x00 DEL\x7f csi\x9b2J bidi\u202eevil\u202c" in line
    assert r"alm\u061c lrm\u200e rlm\u200f isolate\u2067evil\u2069 shy\xad zwj\u200d bom\ufeff" in line
    assert r"note\ufff9a\ufffab\ufffb tag\U000e0041 private\ue000 nonchar\U0010ffff" in line
    assert line.endswith(" cr")  # the first line ends at the carriage return
    assert not any(line.startswith(hostile.FORGED_LOG) for line in output.splitlines())
    # The message's later lines show indented under its first, each a line of nox's own: none forges a row.
    forged = [line for line in output.splitlines() if "| forged | row |" in line]
    assert all(line.startswith("nox >     ") for line in forged), forged
