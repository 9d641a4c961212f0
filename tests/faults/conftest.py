"""The fault-injection suite's tools: real nox runs on real torch, a shared env folder, and process checks.

Every test here drives the real command line (``python -m nox -f noxfile.py``)
in its own folder, with probes from ``tests/faults/probes`` copied beside the
matrix file. The torch environments live in one ``--envdir`` shared by the
whole test session (the noxfile reuses them), so each torch release is
installed once per session. The torch used is the one this machine installs
without a download (:func:`local_torch`).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from torchmatrix import interpreters, results
from torchmatrix.environment import disk
from torchmatrix.index.findlinks import pip_find_links

from ..conftest import FOREGROUND

PROBES = Path(__file__).with_name("probes")
INJECT = Path(__file__).with_name("inject")
MACHINE = "faults"
NOX_TIMEOUT = 600


@dataclass(frozen=True)
class Torch:
    """A torch release for the suite's matrices: its version and, when pinned, its Python."""

    version: str
    python: str | None = None

    @property
    def entry(self) -> str:
        """The matrix entry, in YAML flow style."""
        return f'{{version: "{self.version}", python: "{self.python}"}}' if self.python else f'"{self.version}"'

    @property
    def session(self) -> str:
        return f"probe({self.version})"


def local_torch(cache: Path) -> Torch:
    """A torch this machine installs without a download: a wheel in pip's find-links that fits a Python here.

    Without one, torch 1.9.0 from the index (downloaded once, then in uv's cache).
    """
    found = interpreters.discover(cache=cache / "interpreters.json")
    platforms = interpreters.host_platforms()
    for link in pip_find_links():
        for wheel in sorted(Path(link).glob("torch-*.whl")) if Path(link).is_dir() else []:
            try:
                _name, version, _build, tags = parse_wheel_filename(wheel.name)
            except InvalidWheelFilename:
                continue
            for python in found:
                if python.tags(platforms) & tags:
                    return Torch(version.public, python.minor)
    return Torch("1.9.0")


OWN_NOXFILE = "import torchmatrix.noxsessions\n\ntorchmatrix.noxsessions.register(__file__)\n"


@dataclass(frozen=True)
class Run:
    """A finished nox command."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


class Workspace:
    """A repository of the user's own: a matrix file, the suite's probes in its probes/ (named by their names, as a
    repository's own probes are) and the two-line noxfile of docs/own-repository.md; runs nox on it."""

    def __init__(self, folder: Path, envdir: Path, cache: Path) -> None:
        self.folder = folder
        self.envdir = envdir
        self.cache = cache
        shutil.copytree(PROBES, folder / "probes", ignore=shutil.ignore_patterns("__pycache__"))
        self.matrix_file = folder / "matrix.yaml"
        self.noxfile = folder / "noxfile.py"
        self.noxfile.write_text(OWN_NOXFILE, encoding="utf-8")

    @property
    def results_dir(self) -> Path:
        return self.folder / "out" / "results"

    @property
    def machine_dir(self) -> Path:
        return self.results_dir / MACHINE

    def env(self, version: str) -> Path:
        """Where nox keeps the environment of ``probe(<version>)``: nox names one whose path is long by a digest."""
        return disk.environment_of(self.envdir, version)

    def matrix(
        self, torch: Sequence[Torch], probes: Sequence[str], timeout: float = 60, devices: str = "[cpu]"
    ) -> Path:
        """Write the matrix: ``probes`` are names of files in tests/faults/probes."""
        self.matrix_file.write_text(
            "torch:\n"
            + "".join(f"  - {release.entry}\n" for release in torch)
            + f"probes: [{', '.join(f'probes/{name}.py' for name in probes)}]\n"
            + f"devices: {devices}\ntimeout: {timeout}\noutput: out\n"
            + "pass_env: [TORCHMATRIX_FAULTS_*]\n",  # the suite's probes read their instructions there
            encoding="utf-8",
        )
        return self.matrix_file

    def environ(self, **extra: str) -> dict[str, str]:
        environ = dict(
            os.environ,
            TORCHMATRIX_MATRIX=str(self.matrix_file),
            TORCHMATRIX_MACHINE=MACHINE,
            TORCHMATRIX_CACHE_DIR=str(self.cache),
        )
        environ.update(extra)
        return environ

    def command(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "nox", "-f", str(self.noxfile), "--envdir", str(self.envdir), *args]

    def nox(
        self, *args: str, prefix: Sequence[str] = (), env: dict[str, str] | None = None, timeout: float = NOX_TIMEOUT
    ) -> Run:
        """Run nox to its end; subprocess.TimeoutExpired after ``timeout`` seconds."""
        done = subprocess.run(
            [*prefix, *self.command(*args)],
            env=env or self.environ(),
            capture_output=True,
            text=True,
            errors="backslashreplace",
            timeout=timeout,
            cwd=self.folder,
            preexec_fn=FOREGROUND,  # a test may interrupt it (tests/faults/inject)
        )
        return Run(done.returncode, done.stdout, done.stderr)

    def start(self, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        """Start nox in its own session, as a shell starts a foreground job, output merged, line by line.

        As a foreground job's, its SIGINT and SIGTERM do what they do by default, even when this suite was
        started in the background with them ignored: the tests interrupt it.
        """
        return subprocess.Popen(
            self.command(*args),
            env=env or self.environ(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="backslashreplace",
            cwd=self.folder,
            start_new_session=True,
            preexec_fn=FOREGROUND,
        )

    def scan(self) -> results.Scan:
        return results.scan(self.results_dir)

    def result(self, cell_id: str) -> results.CellResult:
        return results.read(results.result_path(self.results_dir, MACHINE, cell_id))


def read_until(process: subprocess.Popen[str], marker: str, *, count: int = 1, timeout: float = 300) -> str:
    """Read ``process``'s output until ``marker`` has appeared ``count`` times; what was read."""
    assert process.stdout is not None
    seen = []
    deadline = time.monotonic() + timeout
    for line in process.stdout:
        seen.append(line)
        if sum(marker in text for text in seen) >= count:
            return "".join(seen)
        if time.monotonic() > deadline:
            break
    stop(process)
    raise AssertionError(f"{marker!r} did not appear {count} time(s); output:\n{''.join(seen)}")


def stop(process: subprocess.Popen[str]) -> None:
    """Kill a process started by :meth:`Workspace.start`, and its session; leaving, Popen closes its output."""
    with process:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)


def alive(pid: int) -> bool:
    """Whether ``pid`` runs; a zombie (dead, not yet reaped by a parent that never will) counts as dead."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def wait_until_dead(pids: Sequence[int], seconds: float = 15.0) -> list[int]:
    """The pids still alive after waiting up to ``seconds`` for all of them to end."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(alive(pid) for pid in pids):
            return []
        time.sleep(0.1)
    return [pid for pid in pids if alive(pid)]


def wait_for_pids(path: Path, seconds: float = 120.0) -> list[int]:
    """The pids a probe recorded in ``path`` ($TORCHMATRIX_FAULTS_PIDS), once it has written them."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().endswith("\n"):
            return [int(pid) for pid in path.read_text().split()]
        time.sleep(0.05)
    raise AssertionError(f"no pids in {path}")


def kill_all(pids: Sequence[int]) -> None:
    """Clean up after a failed test: no probe process may outlive the suite."""
    for pid in pids:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture(scope="session")
def suite_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("faults")


@pytest.fixture(scope="session")
def suite_cache(suite_dir: Path) -> Path:
    """torchmatrix's cache (index listing, interpreters) shared by the suite's nox runs."""
    return suite_dir / "cache"


@pytest.fixture(scope="session")
def envdir(suite_dir: Path) -> Path:
    """nox's env folder shared by the suite: each torch release is installed once per test session."""
    return suite_dir / ".nox"


@pytest.fixture(scope="session")
def torch_here(suite_cache: Path) -> Torch:
    """The torch release the suite's cells run: one this machine installs without a download."""
    return local_torch(suite_cache)


@pytest.fixture(scope="session")
def torch_other(torch_here: Torch) -> Torch:
    """A second release, for matrices of two cells."""
    return Torch("1.11.0") if torch_here.version == "1.9.0" else Torch("1.9.0")


@pytest.fixture(scope="session")
def warm(suite_dir: Path, envdir: Path, suite_cache: Path, torch_here: Torch, torch_other: Torch) -> None:
    """Install both releases once (online), so the index listing, uv's cache and the envs are warm."""
    workspace = Workspace(suite_dir / "warm", envdir, suite_cache)
    workspace.matrix([torch_other, torch_here], ["ok"])
    run = workspace.nox("-s", "probe")
    assert run.returncode == 0, run.output


@pytest.fixture
def workspace(tmp_path: Path, envdir: Path, suite_cache: Path) -> Workspace:
    return Workspace(tmp_path, envdir, suite_cache)


@pytest.fixture
def pids_file(tmp_path: Path) -> Iterator[Path]:
    """Where the hang probe records its pids; whatever is still alive at the end is killed."""
    path = tmp_path / "pids"
    yield path
    if path.exists():
        kill_all([int(pid) for pid in path.read_text().split()])
