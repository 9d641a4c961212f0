"""A real ``uv pip install`` through a Tee on a terminal: uv draws for a person, the tail keeps its plain lines."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import http.server
import json
import os
import re
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import pytest

from .. import standin

pytestmark = pytest.mark.integration

INSTALL = """
import json, subprocess, sys
from torchmatrix.util.tee import Tee

tails = {}
where, requirements = sys.argv[1:3], sys.argv[3:]
for requirement in requirements:
    tee = Tee(keep=40)
    with tee as output:
        subprocess.run([sys.executable, "-m", "uv", "pip", "install", "--python", "env", *where, requirement],
                       stdout=output, stderr=subprocess.STDOUT)
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
    install = [sys.executable, "-c", INSTALL, "--no-index", "--find-links=wheels"]
    shown = on_a_pseudo_terminal([*install, "torch", "no-such-package"], tmp_path)

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


def big_wheel(folder: Path, megabytes: int) -> Path:
    """``big-1.0-py3-none-any.whl`` in ``folder``, ``megabytes`` of random bytes (stored, not compressed)."""
    files = {"big/__init__.py": b"", "big/blob": os.urandom(megabytes << 20),
             "big-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: big\nVersion: 1.0\n",
             "big-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}  # fmt: skip
    digests = [f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},"
               f"{len(data)}" for name, data in files.items()]  # fmt: skip
    files["big-1.0.dist-info/RECORD"] = "\n".join([*digests, "big-1.0.dist-info/RECORD,,", ""]).encode()
    path = folder / "big-1.0-py3-none-any.whl"
    folder.mkdir(parents=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return path


class _Slow(http.server.SimpleHTTPRequestHandler):
    """Serves a file a MiB at a time, as a slow link does, so that uv is seen downloading."""

    def copyfile(self, source: BinaryIO, destination: BinaryIO) -> None:  # type: ignore[override]
        while chunk := source.read(1 << 20):
            destination.write(chunk)
            time.sleep(0.1)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the name http.server gives it
        pass


@contextlib.contextmanager
def slow_index(wheel: Path) -> Iterator[str]:
    """A PEP 503 index of ``wheel`` on this machine, served slowly, while the block runs: its URL."""
    page = wheel.parent / "simple" / "big" / "index.html"
    page.parent.mkdir(parents=True)
    page.write_text(f'<a href="/{wheel.name}">{wheel.name}</a>\n')
    with standin.serving(wheel.parent, _Slow) as url:
        yield f"{url}/simple"


def test_on_a_terminal_a_download_shows_uvs_bar_with_bytes_of_total(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "uv", "venv", "-q", str(tmp_path / "env")], check=True)
    with slow_index(big_wheel(tmp_path / "served", 20)) as url:
        shown = on_a_pseudo_terminal([sys.executable, "-c", INSTALL, "--index-url", url, "big"], tmp_path)

    assert re.search(rb"\d+(\.\d+)? [KM]iB/20\.00 MiB", shown), shown  # uv's own bar: bytes of total
    installed = json.loads((tmp_path / "tails.json").read_text())["big"].splitlines()
    assert installed[-1] == " + big==1.0", installed
    said = [line.split(" in ")[0] for line in installed if line.startswith(("Resolved", "Prepared", "Installed"))]
    assert said == ["Resolved 1 package", "Prepared 1 package", "Installed 1 package"], installed
    assert not [line for line in installed if "MiB" in line or "\x1b" in line], installed  # the bar left nothing
