"""The code that runs inside cell environments (the worker and the probes) must work on Python 3.6 and newer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from torchmatrix.core import Kind, Outcome, Pair, Probe
from torchmatrix.envside.torchmatrix_worker import isolation, pairs, reply
from torchmatrix.envside.torchmatrix_worker.reply import read_reply
from torchmatrix.interpreters import discover
from torchmatrix.worker.runner import WORKER_FILES, run_cell

from ..conftest import DATA, ROOT, bare_venv

pytestmark = pytest.mark.integration

PYTHONS = {python.minor: python for python in discover()}
ENVSIDE = [*WORKER_FILES, *sorted((ROOT / "probes").glob("*.py"))]


@pytest.mark.parametrize("minor", sorted(PYTHONS))
def test_the_worker_and_every_probe_compile(minor: str) -> None:
    script = "import sys\nfor path in sys.argv[1:]:\n    compile(open(path).read(), path, 'exec')\n"
    completed = subprocess.run([PYTHONS[minor].path, "-c", script, *map(str, ENVSIDE)], capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr


@pytest.mark.parametrize("start", ["fork", "spawn"])
def test_the_worker_protocol_runs_on_the_oldest_python_here(
    tmp_path: Path, start: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """3.6 where a machine has it (pyenv builds it); CI has the oldest CPython uv offers (workflows/checks.yml)."""
    monkeypatch.setenv("TORCHMATRIX_WORKER_START", start)  # fork: on Linux; spawn: elsewhere
    oldest = min(PYTHONS.values(), key=lambda python: python.version)
    python, site_packages = bare_venv(tmp_path / "venv", base=oldest.path)
    (site_packages / "torch.pth").write_text(str(DATA / "stub_torch") + "\n")
    probe = tmp_path / "p.py"
    probe.write_text("def run(device):\n    return {'outcome': 'fail', 'metrics': {'checks': []}, 'message': 'm'}\n")
    hang = tmp_path / "hang.py"
    hang.write_text("import time\ndef run(device):\n    time.sleep(60)\n")
    script = tmp_path / "script.py"
    script.write_text("import sys\nprint('printed')\nsys.exit(1)\n")
    pairs = [Pair(Probe("p", probe), "cpu"), Pair(Probe("hang", hang), "cpu"), Pair(Probe("p", probe), "mps")]
    pairs.append(Pair(Probe("script", script, kind=Kind.SCRIPT), "cpu"))
    cell = run_cell(python, pairs, 2.0, workdir=tmp_path)
    assert [record.outcome for record in cell.records] == [
        Outcome.FAIL, Outcome.TIMEOUT, Outcome.UNAVAILABLE, Outcome.FAIL,
    ]  # fmt: skip
    assert cell.records[-1].metrics["exit_code"] == 1 and cell.records[-1].metrics["output"] == ["printed"]
    assert cell.environment["python"].startswith(oldest.minor)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_a_workers_children_are_found_by_either_way_of_reading_proc() -> None:
    sleepers = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) for _ in range(2)]
    try:
        started = {sleeper.pid for sleeper in sleepers}
        assert started <= set(isolation.own_children(os.getpid()))
        assert started <= set(isolation.children_by_scan(os.getpid()))
        assert set(isolation.own_children(sleepers[0].pid)) == set(isolation.children_by_scan(sleepers[0].pid)) == set()
    finally:
        for sleeper in sleepers:
            sleeper.kill()
            sleeper.wait()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks")
def test_the_workers_own_failure_in_a_pairs_process_is_an_error_that_says_so(tmp_path: Path) -> None:
    """Not the script's exit: a script's record would read the status 70 of a failed worker as its own failure."""
    script = tmp_path / "script.py"
    script.write_text("print('never runs')\n")
    output = str(tmp_path / "no-folder" / "output")
    answer = tmp_path / "answer"
    answer.touch()
    job = {"job": "script", "device": "cpu", "path": str(script), "output": output, "scratch": str(tmp_path)}
    pid = os.fork()
    if pid == 0:  # the pair's process: it ends in child_main, whatever happens
        sys.path.insert(0, str(DATA / "stub_torch"))
        pairs.child_main(dict(job, answer=str(answer)))
    _, status = os.waitpid(pid, 0)
    sent = json.loads(read_reply(str(answer))[0])
    assert os.waitstatus_to_exitcode(status) == 0
    assert sent["outcome"] == "error"
    assert sent["message"].startswith("torchmatrix's worker failed in this pair's process: FileNotFoundError")


def test_what_was_read_that_does_not_fit_beside_the_answer_is_said_untold(tmp_path: Path) -> None:
    """A reply whose list of what was read outgrows the answer file's room: cut, and said not all told."""
    answer = tmp_path / "answer"
    fits, outgrows = reply.Reply(str(answer)), b"x" * (reply.ROOM + 1)
    fits.store(b"{}", b"")
    assert read_reply(str(answer)) == (b"{}", b"", False)
    fits.store(b"{}", outgrows)
    assert read_reply(str(answer))[2] is True
