"""Atomic writes in a Python process of their own: the file gets the permissions its umask gives (read at import)."""

from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600)])
def test_the_file_gets_the_permissions_of_any_file_the_user_writes(tmp_path: Path, umask: int, mode: int) -> None:
    target = tmp_path / "a.json"
    write = (
        f"import os, pathlib; os.umask({umask}); from torchmatrix.util import atomicfile; "
        f"atomicfile.write_json(pathlib.Path({str(target)!r}), 1)"
    )
    subprocess.run([sys.executable, "-c", write], check=True)
    assert stat.S_IMODE(target.stat().st_mode) == mode
