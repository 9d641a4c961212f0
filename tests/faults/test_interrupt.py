"""Interrupting real nox runs: finished cells keep their results, nothing half-written is read, no process lingers.

An interrupted cell stores nothing, whichever step it was in (seeding its environment, installing, running its
pairs, writing its result), and nox runs no later session; an installer a signal stopped was interrupted, not
failed. Those tests run a stand-in torch (tests/standin.py) from an index on this machine whose wheel's download,
once begun, is held until the test lets it go: the install is in uv's hands for as long as the test needs.
"""

from __future__ import annotations

import contextlib
import http.server
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import pytest

from torchmatrix import interpreters
from torchmatrix.environment import cellenv

from .. import standin
from .conftest import INJECT, MACHINE, Torch, Workspace, read_until, stop, wait_for_pids, wait_until_dead

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not Path("/proc").is_dir(), reason="process checks read /proc"),
]

# (signal, sent to nox's whole process group as a terminal's Ctrl-C is, nox's exit status)
INTERRUPTIONS = [
    pytest.param(signal.SIGINT, False, 130, id="SIGINT"),
    pytest.param(signal.SIGINT, True, 130, id="ctrl-c"),
    pytest.param(signal.SIGTERM, False, -signal.SIGTERM, id="SIGTERM"),
    pytest.param(signal.SIGKILL, False, -signal.SIGKILL, id="SIGKILL"),
]


def leftovers(workspace: Workspace) -> list[str]:
    return sorted(path.name for path in workspace.machine_dir.glob(".*.tmp"))


@pytest.mark.parametrize(("signum", "group", "status"), INTERRUPTIONS)
def test_interrupted_in_the_middle_of_a_cell(
    workspace: Workspace,
    torch_here: Torch,
    torch_other: Torch,
    pids_file: Path,
    warm: None,
    signum: signal.Signals,
    group: bool,
    status: int,
) -> None:
    workspace.matrix([torch_other, torch_here], ["ok", "hang"], timeout=600)
    environ = workspace.environ(TORCHMATRIX_FAULTS_HANG=torch_here.version, TORCHMATRIX_FAULTS_PIDS=str(pids_file))
    nox = workspace.start("-s", "probe", env=environ)
    try:
        read_until(nox, "hang on cpu ...", count=2)  # the first cell's hang passes; the second's hangs
        pids = wait_for_pids(pids_file)
        (os.killpg if group else os.kill)(nox.pid, signum)
        assert nox.wait(timeout=60) == status
    finally:
        stop(nox)

    assert wait_until_dead(pids) == []  # the worker and the process its probe started
    scan = workspace.scan()
    assert scan.warnings == ()
    (finished,) = scan.results  # the first cell's, whole; nothing of the interrupted one
    assert finished.torch == torch_other.version and len(finished.records) == 2
    assert leftovers(workspace) == []

    rerun = workspace.nox("-s", "probe", env=workspace.environ(TORCHMATRIX_FAULTS_HANG="never"))
    assert rerun.returncode == 0, rerun.output
    assert sorted(result.torch for result in workspace.scan().results) == sorted(
        [torch_other.version, torch_here.version]
    )


@pytest.mark.parametrize(
    ("signum", "status"),
    [pytest.param(signal.SIGKILL, -signal.SIGKILL, id="SIGKILL"), pytest.param(signal.SIGINT, 130, id="SIGINT")],
)
def test_interrupted_while_writing_a_result(
    workspace: Workspace, torch_here: Torch, warm: None, signum: signal.Signals, status: int
) -> None:
    workspace.matrix([torch_here], ["ok"])
    first = workspace.nox("-s", "probe")
    assert first.returncode == 0, first.output
    (path,) = workspace.machine_dir.glob("*.json")
    before = path.read_bytes()

    environ = workspace.environ(
        PYTHONPATH=str(INJECT),
        TORCHMATRIX_FAULTS_SIGNAL_AT_RENAME=signum.name,
        TORCHMATRIX_FAULTS_RESULTS=str(workspace.results_dir),
    )
    interrupted = workspace.nox("-s", "probe", "--", "--force", env=environ)  # up to date: force a new write
    assert interrupted.returncode == status, interrupted.output
    assert "written to" not in interrupted.output

    assert path.read_bytes() == before  # the old result, whole
    if signum == signal.SIGKILL:
        (leftover,) = leftovers(workspace)  # the new one, complete under its temporary name: never read
        assert leftover.startswith(f".{path.name}.")
    else:
        assert leftovers(workspace) == []  # an interrupted write removes its temporary file
    report = workspace.nox("-s", "report")
    assert report.returncode == 0 and "skipping" not in report.output and ".tmp" not in report.output

    rerun = workspace.nox("-s", "probe")
    assert rerun.returncode == 0, rerun.output
    assert "up to date" in rerun.output and path.read_bytes() == before  # the old result still stands for the cell
    assert [result.machine for result in workspace.scan().results] == [MACHINE]


STANDIN = "9.0.0"


@dataclass
class Hold:
    """A wheel's download the stand-in index holds: ``begun`` once uv has half of it, the rest sent once ``let_go``."""

    begun: threading.Event = field(default_factory=threading.Event)
    let_go: threading.Event = field(default_factory=threading.Event)

    def handler(self) -> type[http.server.SimpleHTTPRequestHandler]:
        hold = self

        class Holding(http.server.SimpleHTTPRequestHandler):
            def copyfile(self, source: BinaryIO, destination: BinaryIO) -> None:  # type: ignore[override]
                if not self.path.endswith(".whl"):
                    super().copyfile(source, destination)
                    return
                wheel = source.read()
                with contextlib.suppress(OSError):  # the installer was stopped halfway: its connection is gone
                    destination.write(wheel[: len(wheel) // 2])
                    destination.flush()
                    hold.begun.set()
                    hold.let_go.wait()
                    destination.write(wheel[len(wheel) // 2 :])

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the name http.server gives it
                pass

        return Holding


@dataclass
class Cell:
    """A cell of the stand-in torch on Python ``python`` in a workspace of its own, from the index at ``url``."""

    workspace: Workspace
    python: str
    url: str
    environ: dict[str, str]
    hold: Hold

    @property
    def id(self) -> str:
        return f"torch-{STANDIN}-py{self.python}"

    def matrix(self, probe: str) -> None:
        """Write the matrix: the cell runs ``probe`` (a name of tests/faults/probes or the stand-in's ``alpha``)."""
        self.workspace.matrix([Torch(STANDIN, self.python)], [probe])
        with self.workspace.matrix_file.open("a") as matrix:
            matrix.write(f"index_url: {self.url}\n")

    @property
    def env(self) -> Path:
        return self.workspace.env(STANDIN)

    @property
    def result(self) -> Path:
        return self.workspace.machine_dir / f"{self.id}.json"

    def start(self, *args: str, **extra: str) -> Watched:
        return Watched(self.workspace.start("-s", "probe", *args, env={**self.environ, **extra}))


@pytest.fixture
def standin_cell(tmp_path: Path, suite_cache: Path) -> Iterator[Cell]:
    """A matrix of one cell, the stand-in torch on a Python here running the stand-in's probe ``alpha``, its
    environments and uv's cache its own; its index holds the wheel's download until ``hold.let_go``."""
    workspace = Workspace(tmp_path, tmp_path / ".nox", suite_cache)
    standin.wheel(tmp_path / "wheels", STANDIN, {"alpha": "pass"})
    standin.probe(workspace.folder / "probes", "alpha")
    python = interpreters.discover(cache=suite_cache / "interpreters.json")[0].minor
    hold = Hold()
    with standin.index(tmp_path / "wheels", hold.handler()) as url:
        cell = Cell(workspace, python, url, workspace.environ(UV_CACHE_DIR=str(tmp_path / "uv-cache")), hold)
        cell.matrix("alpha")
        try:
            yield cell
        finally:
            hold.let_go.set()


class Watched:
    """A nox started by :meth:`Workspace.start`, its output read as it comes (so that it never waits on a full
    pipe) while the test waits for something else."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self._lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.append(line)

    @property
    def output(self) -> str:
        return "".join(self._lines)

    def wait_for_line(self, text: str, seconds: float = 300) -> None:
        deadline = time.monotonic() + seconds
        while text not in self.output:
            assert time.monotonic() < deadline and self.process.poll() is None, f"no {text!r} in:\n{self.output}"
            time.sleep(0.02)

    def child(self, word: str, seconds: float = 120, parent: int | None = None) -> int:
        """The pid of the child of ``parent`` (nox by default) whose command line holds ``word`` (``ensurepip``,
        ``install``), once it exists."""
        parent = self.process.pid if parent is None else parent
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for stat in Path("/proc").glob("[0-9]*/stat"):
                try:
                    its_parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
                    argv = (stat.parent / "cmdline").read_bytes().split(b"\0")
                except (OSError, ValueError, IndexError):  # it ended while being read
                    continue
                if its_parent == parent and word.encode() in argv:
                    return int(stat.parent.name)
            time.sleep(0.02)
        raise AssertionError(f"process {parent} started no {word!r}; nox's output:\n{self.output}")

    def finish(self) -> int:
        """nox's exit status, once it has ended (killed with its session after 60 s)."""
        try:
            return self.process.wait(timeout=60)
        finally:
            stop(self.process)
            self._reader.join(timeout=10)


def interrupt(nox: Watched, signum: signal.Signals, whom: str) -> None:
    """Send ``signum`` to nox's whole process group, as a terminal's Ctrl-C does (``whom`` is ``"group"``), or to
    nox's child ``whom`` alone (``ensurepip``, ``install``: what a signal sent to the installer alone does)."""
    if whom == "group":
        os.killpg(nox.process.pid, signum)
        return
    pid = nox.child(whom)
    if whom == "ensurepip":
        # A Python interrupted while it starts up exits 1 ("Could not import runpy module"), not as interrupted;
        # on a loaded machine that start takes long. ensurepip at work runs pip in a process of its own.
        nox.child("-c", parent=pid)
    os.kill(pid, signum)


def assert_stored_nothing(cell: Cell, nox: Watched, status: int) -> None:
    """nox ended with ``status``, said so (unless a signal killed it), stored nothing and ran no later session."""
    assert nox.finish() == status, nox.output
    if status == 130:
        assert f"interrupted: nothing stored for {cell.id}" in nox.output, nox.output
    assert "install-error" not in nox.output and not cell.workspace.results_dir.exists(), nox.output
    assert "Running session report" not in nox.output and not (cell.workspace.folder / "out").exists(), nox.output


SEED_INTERRUPTIONS = [
    pytest.param("group", id="ctrl-c"),
    pytest.param("ensurepip", id="SIGINT-to-ensurepip-alone"),
]


@pytest.mark.parametrize("whom", SEED_INTERRUPTIONS)
def test_interrupted_while_its_environment_is_seeded_a_cell_stores_nothing(standin_cell: Cell, whom: str) -> None:
    nox = standin_cell.start()
    nox.wait_for_line("-m ensurepip")
    interrupt(nox, signal.SIGINT, whom)
    assert_stored_nothing(standin_cell, nox, 130)
    assert "uv pip install" not in nox.output  # stopped in the seed, which takes seconds, not after it
    assert cellenv.built_torch(standin_cell.env) is None


INSTALL_INTERRUPTIONS = [
    pytest.param(signal.SIGINT, "group", 130, id="ctrl-c"),
    pytest.param(signal.SIGINT, "install", 130, id="SIGINT-to-uv-alone"),
    pytest.param(signal.SIGTERM, "install", 130, id="SIGTERM-to-uv-alone"),
    pytest.param(signal.SIGTERM, "group", -signal.SIGTERM, id="SIGTERM"),
]


@pytest.mark.parametrize(("signum", "whom", "status"), INSTALL_INTERRUPTIONS)
def test_interrupted_while_uv_installs_a_cell_stores_nothing_and_the_next_run_finishes_the_install(
    standin_cell: Cell, signum: signal.Signals, whom: str, status: int
) -> None:
    nox = standin_cell.start()
    assert standin_cell.hold.begun.wait(300), nox.output  # uv has half of torch's wheel, and waits for the rest
    interrupt(nox, signum, whom)
    assert_stored_nothing(standin_cell, nox, status)
    assert cellenv.built_torch(standin_cell.env) is None  # nothing vouches for the environment

    standin_cell.hold.let_go.set()
    rerun = standin_cell.workspace.nox("-s", "probe", env=standin_cell.environ)
    assert rerun.returncode == 0, rerun.output
    assert [record.outcome.value for record in standin_cell.workspace.result(standin_cell.id).records] == ["pass"]
    assert cellenv.built_torch(standin_cell.env) is not None


def test_interrupted_while_its_pairs_run_a_cell_stores_nothing(standin_cell: Cell, pids_file: Path) -> None:
    standin_cell.hold.let_go.set()
    standin_cell.matrix("hang")
    nox = standin_cell.start(TORCHMATRIX_FAULTS_PIDS=str(pids_file))
    pids = wait_for_pids(pids_file)  # the probe hangs, with a child of its own
    interrupt(nox, signal.SIGINT, "group")
    assert_stored_nothing(standin_cell, nox, 130)
    assert wait_until_dead(pids) == []
    assert cellenv.built_torch(standin_cell.env) is not None  # torch imported there: the environment is sound


def test_interrupted_while_its_result_is_written_a_cell_keeps_the_one_it_had(standin_cell: Cell) -> None:
    standin_cell.hold.let_go.set()
    first = standin_cell.workspace.nox("-s", "probe", env=standin_cell.environ)
    assert first.returncode == 0, first.output
    before = standin_cell.result.read_bytes()
    report = standin_cell.workspace.folder / "out" / "COMPATIBILITY.md"
    report.unlink()  # the report that followed the first run

    at_rename = dict(
        PYTHONPATH=str(INJECT),
        TORCHMATRIX_FAULTS_SIGNAL_AT_RENAME="SIGINT",
        TORCHMATRIX_FAULTS_RESULTS=str(standin_cell.workspace.results_dir),
    )
    nox = standin_cell.start("--", "--force", **at_rename)  # up to date: forced to write again
    assert nox.finish() == 130, nox.output
    assert f"interrupted: nothing stored for {standin_cell.id}" in nox.output, nox.output
    assert "Running session report" not in nox.output and not report.exists(), nox.output
    assert standin_cell.result.read_bytes() == before and leftovers(standin_cell.workspace) == []
