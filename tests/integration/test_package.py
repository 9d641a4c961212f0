"""The package a user installs: the wheel built from this checkout works alone, from an empty folder.

Built as a release is (sdist, then the wheel from it), checked as PyPI checks it (``twine check --strict``),
installed in a new environment with nothing of this checkout, and run where there is nothing but a bug
report's script: it answers ``--version`` and bisects the script over stand-in wheels.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import torchmatrix

from .. import standin
from ..conftest import ROOT
from .test_cli import STANDIN_REPRO

pytestmark = pytest.mark.integration

UV = [sys.executable, "-m", "uv"]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bin folder of a new environment with the built wheel installed, and nothing else of this checkout."""
    folder = tmp_path_factory.mktemp("package")
    subprocess.run([*UV, "build", "-q", "--out-dir", str(folder / "dist"), str(ROOT)], check=True)
    (wheel,) = (folder / "dist").glob("torchmatrix-*.whl")
    (sdist,) = (folder / "dist").glob("torchmatrix-*.tar.gz")
    subprocess.run([*UV, "venv", "-q", "-p", sys.executable, str(folder / "env")], check=True)
    python = folder / "env" / "bin" / "python"
    subprocess.run([*UV, "pip", "install", "-q", "--python", str(python), str(wheel), "twine"], check=True)
    check = subprocess.run(
        [str(python), "-m", "twine", "check", "--strict", str(wheel), str(sdist)], capture_output=True, text=True
    )
    assert check.returncode == 0, check.stdout + check.stderr
    return python.parent


def environ() -> dict[str, str]:
    """The caller's environment without this checkout: no PYTHONPATH, no torchmatrix variables."""
    kept = {name: value for name, value in os.environ.items() if not name.startswith(("TORCHMATRIX_", "PYTHONPATH"))}
    return {**kept, "TORCHMATRIX_MACHINE": "ci-box"}


def test_the_installed_command_answers_its_version_from_an_empty_folder(installed: Path, tmp_path: Path) -> None:
    run = subprocess.run(
        [str(installed / "torchmatrix"), "--version"], cwd=tmp_path, env=environ(), capture_output=True, text=True
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert torchmatrix.__version__ in run.stdout
    assert not any(tmp_path.iterdir())  # asking writes nothing


def test_the_installed_command_bisects_a_script_alone_in_an_empty_folder(installed: Path, tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    for version in ("9.0.0", "9.1.0", "9.2.0"):
        standin.wheel(wheels, version, {"dot": "pass" if version >= "9.1" else "fail"})
    folder = tmp_path / "report"
    folder.mkdir()
    (folder / "repro.py").write_text(STANDIN_REPRO)
    (folder / "behaviour.txt").write_text("dot\n")  # read beside it, as `python repro.py` run there would
    command = [str(installed / "torchmatrix"), "bisect", "repro.py", "--from", "9.0.0", "--to", "9.2.0"]
    run = subprocess.run(
        [*command, "--find-links", str(wheels)], cwd=folder, env=environ(), capture_output=True, text=True, timeout=900
    )
    text = run.stdout + run.stderr
    assert run.returncode == 0, text
    assert "first release with NEW's outcome (pass): torch 9.1.0" in text
    assert str(ROOT) not in text  # nothing of this checkout ran
