"""What a Python with a torch installed already says of its environment (`torchmatrix.environment.givenenv`)."""

from __future__ import annotations

import contextlib
import io
import site
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from torchmatrix import identity
from torchmatrix.environment import givenenv


def test_what_a_python_prints_as_it_starts_is_not_taken_for_its_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """A `.pth` file or a `sitecustomize` that prints as the Python starts, and an `atexit` one as it ends: the
    environment is still asked, so a package installed there since is a change, not a record that stands on nothing."""

    def started(command: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(command[-1], {})  # what the named Python runs, run here
        return subprocess.CompletedProcess(command, 0, f"startup banner {{\n{printed.getvalue()}bye\n", "")

    monkeypatch.setattr(givenenv.subprocess, "run", started)
    said = givenenv._ask(sys.executable)
    assert said == {"site": site.getsitepackages(), "version": ".".join(map(str, sys.version_info[:3]))}


def test_the_system_site_folder_let_in_is_a_change_though_it_holds_the_same_packages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`include-system-site-packages` switched on, where the system's site folder holds the pip and setuptools the
    environment was seeded with (as a new one is): its `.pth` files now run as the Python starts."""
    own, system = tmp_path / "venv-site", tmp_path / "system-site"
    for folder in (own, system):
        info = folder / "pip-23.0.1.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pip\nVersion: 23.0.1\n")
        (info / "RECORD").write_text("pip/__init__.py,sha256=AAAA,10\n")
    asked: dict[str, Any] = {"site": [str(own)], "version": "3.11.7"}
    monkeypatch.setattr(givenenv, "_ask", lambda python: asked)
    monkeypatch.setattr(givenenv.interpreters, "build", lambda python: "the build")
    before = givenenv.parts(sys.executable)[identity.PACKAGES]
    asked["site"] = [str(own), str(system)]
    assert givenenv.parts(sys.executable)[identity.PACKAGES] != before
