"""`nox -s plan`: each cell's row, and nothing run or built."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from packaging.version import Version

from torchmatrix.matrix import TorchEntry
from torchmatrix.sessions import plan

from .test_project import project


def test_the_plan_names_the_library_it_would_build_and_builds_nothing(tmp_path: Path) -> None:
    library = tmp_path / "mylib"
    library.mkdir()  # no pyproject.toml: building it would fail
    here = project(tmp_path, TorchEntry(Version("2.2.0")))
    here = dataclasses.replace(here, matrix=dataclasses.replace(here.matrix, project=library))
    text = plan.text(here)
    assert f"torch==2.2.0 numpy<2 {library} (built)  ready" in text
