"""The user's project: which files are its sources, so that its wheel is built again exactly when they change."""

from __future__ import annotations

from pathlib import Path

from torchmatrix.environment import library


def test_requires_python_is_read_from_pyproject_without_building(tmp_path: Path) -> None:
    assert library.requires_python(None) is None
    assert library.requires_python(tmp_path) is None  # setup.py alone: its build speaks for it
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "mylib"\nrequires-python = ">= 3.9"\n')
    assert str(library.requires_python(tmp_path)) == ">=3.9"
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "mylib"\nrequires-python = "three"\n')
    assert library.requires_python(tmp_path) is None
    (tmp_path / "pyproject.toml").write_text("[project\n")
    assert library.requires_python(tmp_path) is None
