"""Integration tests: real nox, real uv and real torch wheels (network on first run)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ..conftest import ROOT


def nox(tmp_path: Path, matrix: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run this checkout's noxfile on ``matrix``, with its environments in ``tmp_path/.nox``."""
    environ = dict(os.environ, TORCHMATRIX_MATRIX=str(matrix), TORCHMATRIX_MACHINE="ci-box")
    command = [sys.executable, "-m", "nox", "-f", str(ROOT / "noxfile.py"), "--envdir", str(tmp_path / ".nox"), *args]
    return subprocess.run(command, env=environ, capture_output=True, text=True, timeout=1800)
