"""The user's project, with git asked which files are its sources: its wheel is built again exactly when they change."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchmatrix import library

pytestmark = pytest.mark.integration


def project(folder: Path) -> Path:
    for name, text in {"pyproject.toml": "[project]\nname = 'x'\n", "x/__init__.py": "A = 1\n"}.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def test_a_source_change_changes_the_digest_and_build_output_and_results_do_not(tmp_path: Path) -> None:
    folder = project(tmp_path / "p")
    before = library.sources_digest(folder, leave_out=[folder / "reports"])
    for leftover in (
        "reports/results/box/torch-1.9.0.json",
        ".nox/probe/pyvenv.cfg",
        "build/lib/x.py",
        "x.egg-info/PKG",
    ):
        (folder / leftover).parent.mkdir(parents=True, exist_ok=True)
        (folder / leftover).write_text("changes on every run")
    assert library.sources_digest(folder, leave_out=[folder / "reports"]) == before
    (folder / "x" / "__init__.py").write_text("A = 2\n")
    assert library.sources_digest(folder, leave_out=[folder / "reports"]) != before
