"""The user's project, built by its own backend: the wheel is built again exactly when what it packs changes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from torchmatrix.environment import library
from torchmatrix.errors import UsageError

pytestmark = pytest.mark.integration

SETUP = {
    "pyproject.toml": '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n\n'
    '[project]\nname = "x"\nversion = "0.1.0"\n\n[tool.setuptools]\npackages = ["x"]\n\n'
    '[tool.setuptools.package-data]\nx = ["*.txt"]\n',
    "x/__init__.py": "A = 1\n",
    "x/generated.txt": "made by a build step\n",
    ".gitignore": "x/generated.txt\n",
}


def project(folder: Path) -> Path:
    for name, text in SETUP.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    return folder


def test_what_the_backend_packs_decides_a_build_and_the_build_leaves_the_tree_as_it_was(tmp_path: Path) -> None:
    folder = project(tmp_path / "p")
    cache = tmp_path / "cache"
    before = sorted(path.relative_to(folder) for path in folder.rglob("*") if ".git" not in path.parts)
    first = library.build(folder, cache)
    after = sorted(path.relative_to(folder) for path in folder.rglob("*") if ".git" not in path.parts)
    assert after == before, "no build/, no *.egg-info left in the project"

    for leftover in ("matrix.yaml", "reports/results/box/torch-1.9.0.json", ".nox/probe/pyvenv.cfg"):
        (folder / leftover).parent.mkdir(parents=True, exist_ok=True)
        (folder / leftover).write_text("changes on every run")
    assert library.build(folder, cache) == first  # nothing it packs changed: the wheel in the cache
    assert len(list(cache.glob("*/x-0.1.0-*.whl"))) == 1

    (folder / "x" / "generated.txt").write_text("generated again, differently\n")  # ignored by git, packed
    regenerated = library.build(folder, cache)
    assert regenerated.contents != first.contents
    (folder / "x" / "__init__.py").write_text("A = 2\n")
    assert library.build(folder, cache).contents not in (first.contents, regenerated.contents)


def test_a_project_that_does_not_build_says_so_with_the_builders_words(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\nversion = 'not a version'\n")
    with pytest.raises(UsageError, match="building .* into a wheel failed"):
        library.build(tmp_path, tmp_path / "cache")
