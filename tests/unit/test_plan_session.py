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
    assert "torch==2.2.0 mylib (built)  numpy<2        -       ready" in plan.text(here)  # no name: the folder's
    (library / "pyproject.toml").write_text('[project]\nname = "gauss-tail"\nversion = "1"\n')
    assert "torch==2.2.0 gauss-tail (built)  numpy<2        -       ready" in plan.text(here)  # the one declared


def test_the_plan_says_what_it_assumed_of_a_release_newer_than_its_table(tmp_path: Path) -> None:
    newer = plan.text(project(tmp_path, TorchEntry(Version("2.15.0"))))
    assert "note: torch 2.15.0 is newer than newest_python.yaml, " in newer
    assert "newer than" not in plan.text(project(tmp_path, TorchEntry(Version("2.2.0"))))
    pinned = plan.text(project(tmp_path, TorchEntry(Version("2.15.0"), pythons=("3.12",))))
    assert "newer than" not in pinned  # its Python is the matrix's: nothing was assumed


def test_the_plan_names_the_shells_variables_no_pair_sees(tmp_path: Path) -> None:
    """Whatever a variable steers, one the matrix neither takes nor sets is said to stay out, never dropped silently."""
    here = project(tmp_path, TorchEntry(Version("2.2.0")))
    shell = {"ATEN_CPU_CAPABILITY": "default", "HOME": "/home/me", "NVPL_BLAS_DEBUG_CPU_TYPE": "x", "MY_KEY": "k"}
    here = dataclasses.replace(here, caller=shell, matrix=dataclasses.replace(here.matrix, pass_env=("MY_*",)))
    assert "not passed to the pairs: NVPL_BLAS_DEBUG_CPU_TYPE (`pass_env:` passes one)\n" in plan.text(here)
    assert "not passed to the pairs" not in plan.text(dataclasses.replace(here, caller={"HOME": "/home/me"}))
