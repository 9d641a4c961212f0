"""A real ``uv pip install`` through a Tee on a terminal: uv draws for a person, the tail keeps its plain lines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .. import standin

pytestmark = pytest.mark.integration

INSTALL = """
import json, subprocess, sys
from torchmatrix.tee import Tee

tails = {}
for requirement in sys.argv[1:]:
    tee = Tee(keep=40)
    with tee as output:
        subprocess.run([sys.executable, "-m", "uv", "pip", "install", "--python", "env", "--no-index",
                        "--find-links", "wheels", requirement], stdout=output, stderr=subprocess.STDOUT)
    tails[requirement] = tee.tail
with open("tails.json", "w") as file:
    json.dump(tails, file)
"""


def on_a_pseudo_terminal(command: list[str], cwd: Path) -> bytes:
    """Run ``command`` with a pseudo-terminal for its standard streams, as a shell in a terminal window would:
    everything it showed there."""
    leader, follower = os.openpty()
    environ = {name: value for name, value in os.environ.items() if name not in ("NO_COLOR", "UV_NO_PROGRESS")}
    environ.update(TERM="xterm-256color", UV_CACHE_DIR=str(cwd / "cache"))
    child = subprocess.Popen(command, cwd=cwd, env=environ, stdin=follower, stdout=follower, stderr=follower)
    os.close(follower)
    shown = bytearray()
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the child and everything it started closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    assert child.wait(timeout=300) == 0, bytes(shown)
    return bytes(shown)


def test_on_a_terminal_uv_draws_its_progress_and_the_tail_keeps_the_lines_it_leaves(tmp_path: Path) -> None:
    standin.wheel(tmp_path / "wheels", "9.0.0", {})
    subprocess.run([sys.executable, "-m", "uv", "venv", "-q", str(tmp_path / "env")], check=True)
    shown = on_a_pseudo_terminal([sys.executable, "-c", INSTALL, "torch", "no-such-package"], tmp_path)

    assert b"\r\x1b[2K" in shown, shown  # uv redrew its progress line, as it does for a person only
    assert b"\x1b[1m1 package\x1b[0m" in shown, shown  # and coloured its summary
    tails = json.loads((tmp_path / "tails.json").read_text())
    installed = tails["torch"].splitlines()
    assert any(line.startswith("Installed 1 package") for line in installed), installed
    assert " + torch==9.0.0" in installed
    failed = tails["no-such-package"].splitlines()
    assert "error: No solution found when resolving dependencies" in failed, failed
    for line in [*installed, *failed]:
        assert "\x1b" not in line and "\r" not in line, line
        assert "Resolving dependencies" not in line and "Preparing packages" not in line, line  # redrawn over
