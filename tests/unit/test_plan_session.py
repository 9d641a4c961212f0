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


def test_the_plan_says_what_it_assumed_of_a_release_newer_than_its_table(tmp_path: Path) -> None:
    newer = plan.text(project(tmp_path, TorchEntry(Version("2.15.0"))))
    assert "note: torch 2.15.0 is newer than newest_python.yaml, " in newer
    assert "newer than" not in plan.text(project(tmp_path, TorchEntry(Version("2.2.0"))))
    pinned = plan.text(project(tmp_path, TorchEntry(Version("2.15.0"), pythons=("3.12",))))
    assert "newer than" not in pinned  # its Python is the matrix's: nothing was assumed
