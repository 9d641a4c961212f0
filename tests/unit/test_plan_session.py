"""`nox -s plan`: each cell's row, and nothing run or built."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from torchmatrix import planner
from torchmatrix.environment import disk, uvcache
from torchmatrix.matrix import PinRule, TorchEntry
from torchmatrix.sessions import plan

from .test_disk import environment, survey, two_releases
from .test_project import project
from .test_uvcache import unpacked

__all__ = ["two_releases"]  # a fixture


def test_the_plan_names_the_library_it_would_build_and_builds_nothing(tmp_path: Path) -> None:
    library = tmp_path / "mylib"
    library.mkdir()  # no pyproject.toml: building it would fail
    here = project(tmp_path, TorchEntry(Version("2.2.0")))
    here = dataclasses.replace(here, matrix=dataclasses.replace(here.matrix, project=library))
    assert "torch==2.2.0 mylib (built)  numpy<2        -       ready" in plan.text(here)  # no name: the folder's
    (library / "pyproject.toml").write_text('[project]\nname = "gauss-tail"\nversion = "1"\n')
    assert "torch==2.2.0 gauss-tail (built)  numpy<2        -       ready" in plan.text(here)  # the one declared


def test_the_plan_names_the_rule_of_each_constraint_in_the_words_a_result_records_and_a_report_says(
    tmp_path: Path,
) -> None:
    known = PinRule(SpecifierSet("<2.3"), (), "built against NumPy 1.x", (Requirement("numpy<2"),))
    here = project(tmp_path, TorchEntry(Version("1.12.1")), TorchEntry(Version("2.2.0")), known=known)
    own = PinRule(SpecifierSet(">=2.2"), (), "the library's CI pins it", (Requirement("numpy<2"),))
    matrix = dataclasses.replace(here.matrix, pins=(own,))
    cells = planner.plan(matrix, here.listing, here.interpreters, here.platforms, here.known_pins)
    said = plan.text(dataclasses.replace(here, matrix=matrix, cells=cells))
    assert (
        "constraints bound a package where a cell installs it, and add none:\n"
        "  numpy<2: a known pin for torch <2.3, because built against NumPy 1.x\n"
        "  numpy<2: the matrix's pin for torch >=2.2, because the library's CI pins it\n"
    ) in said


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


def test_the_plan_says_why_a_cells_python_without_ensurepip_leaves_its_environment_unseeded(tmp_path: Path) -> None:
    here = project(tmp_path, TorchEntry(Version("2.2.0"), pythons=("3.11",)))
    python = here.cells[0].interpreter
    assert python is not None
    assert "has no ensurepip" not in plan.text(here)
    debian = dataclasses.replace(python, seed=(), ensurepip=False)
    here = dataclasses.replace(here, cells=(dataclasses.replace(here.cells[0], interpreter=debian),))
    assert (
        f"note: python3.11 at {debian.path} has no ensurepip (Debian, Ubuntu: apt install python3.11-venv): its "
        "environments are left unseeded, without the pip and setuptools `python -m venv` installs\n"
    ) in plan.text(here)


def test_the_plan_says_what_each_release_keeps_what_several_share_and_the_total(
    two_releases: tuple[Path, Path],
) -> None:
    envdir, cache = two_releases
    found = survey(envdir, cache, "2.1.0", "2.1.1", "2.2.0")
    usage = disk.Usage()
    text = plan.disk_text(found, usage)
    rows = {line.split()[0]: line for line in text.splitlines() if line.startswith("2.")}
    old = found.releases[0]
    assert rows["2.1.0"].startswith(f"2.1.0      2, {disk.human(usage.size(old.environments))}  ")
    assert " 2, " in rows["2.1.0"] and "+ 2 shared" in rows["2.1.0"]  # its two torch wheels; cublas and pytest
    assert rows["2.1.1"].split()[:2] == ["2.1.1", "1,"] and "+ 1 shared" in rows["2.1.1"]
    assert rows["2.2.0"].split()[1:] == ["none", "none", "-"]
    assert "shared by 2.1.0, 2.1.1: 1 wheel(s), " in text and ": nvidia-cublas-cu12 12.1.3.1" in text
    assert "shared by 2.1.0, tests: 1 wheel(s)" in text
    assert "also here, of no release of the matrix: tests: " in text
    wheels = {wheel.archive for holder in found.holders for wheel in holder.wheels}
    everything = [*(path for holder in found.holders for path in holder.built), *wheels]
    assert f"total: {disk.human(usage.size(everything))}, " in text
    assert "`nox -s clean -- RELEASE` removes what a release keeps" in text
    assert "`torchmatrix clean RELEASE`" in plan.disk_text(found, usage, "torchmatrix")


def test_what_environments_of_no_release_share_is_theirs_alone(two_releases: tuple[Path, Path]) -> None:
    envdir, cache = two_releases
    ruff = unpacked(cache, "ruff", "0.1.0")
    environment(envdir / "lint", ruff)
    environment(envdir / "docs", ruff)
    text = plan.disk_text(survey(envdir, cache, "2.1.0", "2.1.1"), disk.Usage())
    assert "also here, of no release of the matrix: docs, lint, tests: " in text
    assert "ruff" not in text and "shared by docs" not in text


def test_the_plan_says_why_the_cached_wheels_are_unknown(tmp_path: Path) -> None:
    nothing = (disk.Holder("2.1.0", (), frozenset()),)
    unknown = disk.Survey(tmp_path / ".nox", uvcache.Cache(None, "uv is not found"), nothing, ())
    text = plan.disk_text(unknown, disk.Usage())
    assert "cached wheels: unknown: uv is not found" in text
    assert text.splitlines()[-2].split() == ["2.1.0", "none", "unknown", "-"]
