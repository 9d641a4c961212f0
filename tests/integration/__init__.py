"""Integration tests: real nox, real uv and real torch wheels (network on first run)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from torchmatrix import interpreters
from torchmatrix.interpreters import Interpreter

from ..conftest import ROOT


def nox(tmp_path: Path, matrix: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run this checkout's noxfile on ``matrix``, with its environments in ``tmp_path/.nox``."""
    command, environ = nox_command(tmp_path, matrix, *args)
    return subprocess.run(command, env=environ, capture_output=True, text=True, timeout=1800)


def nox_command(tmp_path: Path, matrix: Path, *args: str) -> tuple[list[str], dict[str, str]]:
    """The command line and the environment :func:`nox` runs, for a test that starts it and reads it as it runs."""
    environ = dict(os.environ, TORCHMATRIX_MATRIX=str(matrix), TORCHMATRIX_MACHINE="ci-box")
    command = [sys.executable, "-m", "nox", "-f", str(ROOT / "noxfile.py"), "--envdir", str(tmp_path / ".nox"), *args]
    return command, environ


def environment_with_torch(folder: Path, minor: str, requirements: Callable[[Interpreter], Sequence[str]]) -> str:
    """The Python of a new environment in ``folder``, of Python ``minor`` (skipped where there is none), with
    ``requirements(interpreter)`` installed by uv outside of torchmatrix (from uv's cache when warm)."""
    found = [each for each in interpreters.discover() if each.minor == minor]
    if not found:
        pytest.skip(f"no Python {minor} here; `uv python install {minor}` gives one")
    uv = [sys.executable, "-m", "uv"]
    subprocess.run([*uv, "venv", "-q", "-p", found[0].path, str(folder)], check=True)
    subprocess.run([*uv, "pip", "install", "-q", "--python", str(folder), *requirements(found[0])], check=True)
    return str(folder / "bin" / "python")
