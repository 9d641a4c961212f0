"""This suite's pytest settings (pyproject.toml), run by real pytest: a misspelt marker or setting fails the run,
and so does any warning but those the settings name."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

pytestmark = pytest.mark.integration

SETTINGS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]


def pytest_run(folder: Path, test: str, **more: object) -> subprocess.CompletedProcess[str]:
    """Real pytest over one test file in ``folder``, under this suite's settings (and ``more`` of them)."""
    settings = {**SETTINGS, "testpaths": ["."], **more}
    lines = ["[tool.pytest.ini_options]", *(f"{key} = {json.dumps(value)}" for key, value in settings.items())]
    (folder / "pyproject.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "test_it.py").write_text(test, encoding="utf-8")
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(folder)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=folder)


def test_a_test_that_passes_passes(tmp_path: Path) -> None:
    done = pytest_run(tmp_path, "import pytest\n\n@pytest.mark.integration\ndef test_ok():\n    pass\n")
    assert done.returncode == 0, done.stdout


def test_a_misspelt_marker_fails_the_run(tmp_path: Path) -> None:
    done = pytest_run(tmp_path, "import pytest\n\n@pytest.mark.integraton\ndef test_ok():\n    pass\n")
    assert done.returncode != 0 and "'integraton' not found in `markers`" in done.stdout, done.stdout


def test_a_misspelt_setting_fails_the_run(tmp_path: Path) -> None:
    done = pytest_run(tmp_path, "def test_ok():\n    pass\n", testpath=["."])
    assert done.returncode != 0 and "testpath" in done.stdout + done.stderr, done.stdout + done.stderr


def test_a_warning_fails_its_test(tmp_path: Path) -> None:
    done = pytest_run(tmp_path, "import warnings\n\ndef test_warns():\n    warnings.warn(DeprecationWarning('old'))\n")
    assert done.returncode != 0 and "DeprecationWarning: old" in done.stdout, done.stdout
