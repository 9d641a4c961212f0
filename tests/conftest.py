"""Shared fixtures. Unit tests may not touch the network nor start a process: autouse fixtures make any attempt fail.

A test that needs either is an integration test: it lives in tests/integration (or tests/faults) and is
marked ``integration``; tests/unit stays the fast tier.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from torchmatrix import identity
from torchmatrix.core import Outcome, Record
from torchmatrix.results import CellResult
from torchmatrix.util import storedjson

from .faults.probes import hostile

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"


def stored_content(path: Path) -> dict[str, Any]:
    """The stored JSON object at ``path`` as a torchmatrix before seals wrote it: no seal, and no resource limits,
    which only a torchmatrix that seals records."""
    data = unsealed_content(path)
    for item in [data, *(data.get("records") or [])]:
        if isinstance(item, dict) and isinstance(item.get("inputs"), dict):
            item["inputs"].pop(identity.LIMITS, None)
    return data


def unsealed_content(path: Path) -> dict[str, Any]:
    """The stored JSON object at ``path`` less its seal."""
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return {key: value for key, value in data.items() if key != storedjson.SEAL}


def rewrite(path: Path, change: Callable[[dict[str, Any]], Any], *, seal: bool = True) -> None:
    """Rewrite the stored JSON at ``path`` with ``change`` (which edits its content in place), sealed anew as the
    torchmatrix that wrote it would have, or a forger could (``seal=False``: as a torchmatrix before seals wrote it)."""
    data = unsealed_content(path) if seal else stored_content(path)
    change(data)
    path.write_text(json.dumps(storedjson.sealed(data) if seal else data), encoding="utf-8")


def default_signals() -> None:
    """``preexec_fn`` for a process a test signals: SIGINT, SIGTERM and SIGHUP as a foreground job gets them.

    A job a shell starts in the background (``cmd &``, a CI runner's wrapper) inherits SIGINT ignored, and one
    ``nohup`` starts SIGHUP, and so would every process the suite starts: a Python that starts with SIGINT ignored
    installs no KeyboardInterrupt handler, so a test's Ctrl-C would not reach it, nor its SIGHUP end it. The test
    sets what it relies on.
    """
    for signum in SIGNALLED:
        signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, set(SIGNALLED))


SIGNALLED = (signal.SIGINT, signal.SIGTERM, *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else []))


FOREGROUND = None if sys.platform == "win32" else default_signals
"""``preexec_fn=FOREGROUND`` for a process a test signals: Windows has no preexec_fn, nor these dispositions."""


@pytest.fixture(autouse=True)
def no_network_in_unit_tests(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if request.node.get_closest_marker("integration"):
        return

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a unit test tried to open a network connection; mark it @pytest.mark.integration")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.fixture(autouse=True)
def no_processes_in_unit_tests(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker, nox, a venv or git started by a unit test would make the fast tier slow: refused."""
    if request.node.get_closest_marker("integration"):
        return

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a unit test tried to start a process; move it to tests/integration, marked integration")

    monkeypatch.setattr(subprocess.Popen, "_execute_child", refuse)  # every subprocess function comes here
    for name in ("fork", "forkpty", "posix_spawn", "posix_spawnp"):
        if hasattr(os, name):
            monkeypatch.setattr(os, name, refuse)


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test gets its own torchmatrix cache, so no test sees another's (or the user's) listing."""
    cache = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("TORCHMATRIX_CACHE_DIR", str(cache))
    return cache


CAN_BUILD_LIBRARIES = shutil.which("cc") is not None and sys.platform != "win32"
"""Whether :func:`build_library` can build here: a C compiler, and an OS whose shared libraries it makes."""


def build_library(folder: Path, value: int) -> Path:
    """``libvalue.so`` in ``folder``, built from C with the machine's compiler: its ``value()`` returns ``value``."""
    (folder / "value.c").write_text(f"int value(void) {{ return {value}; }}\n")
    library = folder / "libvalue.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(library), str(folder / "value.c")], check=True)
    return library


def bare_venv(folder: Path, base: str = sys.executable) -> tuple[str, Path]:
    """A venv of ``base`` without pip (made offline in milliseconds): its python and its site-packages."""
    subprocess.run([base, "-m", "venv", "--without-pip", str(folder)], check=True)
    python = folder / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return str(python), Path(purelib)


@pytest.fixture(scope="session")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A Python with nothing installed: `import torch` fails in it."""
    return bare_venv(tmp_path_factory.mktemp("bare-venv"))[0]


@pytest.fixture(scope="session")
def stub_torch_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A Python whose `import torch` finds a stub: real worker processes, no torch download."""
    python, site_packages = bare_venv(tmp_path_factory.mktemp("stub-venv"))
    (site_packages / "torch.pth").write_text(str(DATA / "stub_torch") + "\n")
    return python


def hostile_result(machine: str = "hostile", torch: str = "2.0.0") -> CellResult:
    """A valid result whose every free text is hostile (tests/faults/probes/hostile.py): for every output.

    The torch, Python and probe names carry terminal controls, as a crafted or corrupted file from
    another machine could; the messages and metrics are what the hostile probe returns. Renderers
    must show all of it inert: escaped for a terminal, HTML, Markdown or CSV.
    """
    records = (
        Record(f"hostile{hostile.CONTROL}", "cpu", Outcome.FAIL, {"checks": [hostile.HTML]}, hostile.MESSAGE, 0.1),
        Record(f"hostile{hostile.CONTROL}", "cuda", Outcome.ERROR, {}, f"RuntimeError: {hostile.MESSAGE}", 0.1),
    )
    return CellResult(
        machine=machine,
        cell_id=f"torch-{torch}-py3.11",
        torch=f"{torch}{hostile.ANSI}",
        python=f"3.11{hostile.MARKDOWN}",
        python_request="3.11",
        session=f"probe({torch})",
        outcome=None,
        message=hostile.MESSAGE,
        records=records,
        environment={"torch": hostile.HTML, "os": hostile.CSV},
        started_at="2026-01-01T00:00:00+00:00",
        finished_at="2026-01-01T00:00:00+00:00",
    )
