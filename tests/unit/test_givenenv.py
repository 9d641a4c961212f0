"""What a Python with a torch installed already says of its environment (`torchmatrix.environment.givenenv`)."""

from __future__ import annotations

import contextlib
import io
import site
import subprocess
import sys
from typing import Any

import pytest

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
