"""Real nox and uv over stand-in wheels whose Pythons differ by release: a bisect varies torch alone.

Probe ``pyver`` fails on Python 3.11 and later whatever the torch; ``alpha`` fails from torch 7.2.0 on,
whatever the Python. In the 7.x releases the planner alone would give 7.0.0 Python 3.10, 7.1.0 and 7.2.0
3.11, 7.3.0 3.12: a bisect that let the Python follow would blame 7.1.0 for ``pyver``. All of them have
wheels for 3.10, which the bisect holds. The 6.x releases share no Python (6.0.0 and 6.1.0 have 3.9 alone,
6.2.0 and 6.3.0 3.10 alone): the one change of Python is named where an answer falls on it.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from packaging.version import Version

from torchmatrix import interpreters, results

from .. import standin
from . import nox

pytestmark = pytest.mark.integration

WHEELS = {
    "7.0.0": ("3.10",),
    "7.1.0": ("3.10", "3.11"),
    "7.2.0": ("3.10", "3.11"),
    "7.3.0": ("3.10", "3.11", "3.12"),
    "6.0.0": ("3.9",),
    "6.1.0": ("3.9",),
    "6.2.0": ("3.10",),
    "6.3.0": ("3.10",),
}
PYVER = """\
import sys


def run(device):
    return {"outcome": "pass" if sys.version_info < (3, 11) else "fail", "metrics": {}, "message": sys.version}
"""
MATRIX = """
torch: [7.0.0]
probes: [pyver.py, alpha.py]
devices: [cpu]
timeout: 60
output: out
find_links: [wheels]
"""
SPLIT = """
torch: [6.0.0]
probes: [split.py]
devices: [cpu]
timeout: 60
output: out-split
find_links: [wheels]
"""
HELD = """
torch: [7.0.0, 7.3.0]
probes: [alpha.py]
devices: [cpu]
timeout: 60
output: out-held
find_links: [wheels]
"""
SPLIT_PROBE = PYVER.replace("(3, 11)", "(3, 10)")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    here = {python.minor for python in interpreters.discover()}
    missing = {"3.9", "3.10", "3.11", "3.12"} - here
    if missing:
        pytest.skip(f"needs Python {', '.join(sorted(missing))} here; `uv python install` gives them")
    path = tmp_path_factory.mktemp("bisect-python")
    for version, pythons in WHEELS.items():
        alpha = "fail" if Version(version) >= Version("7.2.0") else "pass"
        for python in pythons:
            standin.wheel(path / "wheels", version, {"alpha": alpha}, python)
    (path / "pyver.py").write_text(PYVER)
    (path / "split.py").write_text(SPLIT_PROBE)
    standin.probe(path, "alpha")
    (path / "matrix.yaml").write_text(textwrap.dedent(MATRIX))
    (path / "split.yaml").write_text(textwrap.dedent(SPLIT))
    (path / "held.yaml").write_text(textwrap.dedent(HELD))
    return path


def output(run) -> str:
    return run.stdout + run.stderr


def test_every_release_runs_on_the_python_all_have_so_only_torchs_change_is_found(folder: Path) -> None:
    run = nox(folder, folder / "matrix.yaml", "-s", "bisect", "--", "--all", "--from", "7.0.0", "--to", "7.3.0")
    text = output(run)
    assert run.returncode == 0, text
    assert "on Python 3.10 throughout" in text
    rows = [line.split() for line in run.stdout.splitlines() if line.startswith(("alpha.py ", "pyver.py "))]
    assert rows == [["alpha.py", "cpu", "pass", "→", "fail", "7.2.0", "7.1.0", "1"]], text
    stored = results.scan(folder / "out" / "results").results
    assert stored and {result.python for result in stored} == {"3.10"}
    assert "the Python changes here too" not in text


def test_where_no_python_has_wheels_of_both_sides_the_answer_says_the_python_changed_there(folder: Path) -> None:
    run = nox(folder, folder / "split.yaml", "-s", "bisect", "--", "split.py", "--from", "6.0.0", "--to", "6.3.0")
    text = output(run)
    assert run.returncode == 0, text
    assert "no Python here installs every release: Python 3.9 for 6.0.0–6.1.0, then 3.10 for 6.2.0–6.3.0" in text
    assert "first release with NEW's outcome (fail): torch 6.2.0 (1 run)" in text
    assert (
        "the Python changes here too: torch 6.1.0 ran on Python 3.9, 6.2.0 on 3.10, so the change may be Python's, "
        "not torch's; no Python has wheels of both, so no run tells torch's change from Python's" in text
    )


def environments(envdir: Path) -> dict[str, str]:
    """Each environment's pyvenv.cfg in ``envdir`` by its folder (nox names a folder by a digest of the session's
    name where its path would be too long for a script's first line)."""
    return {path.parent.name: path.read_text() for path in envdir.glob("*/pyvenv.cfg")}


def test_a_bisect_holding_a_python_leaves_the_matrixs_environment_of_that_release_as_it_was(folder: Path) -> None:
    envdir = folder / "held-envs"
    matrix = folder / "held.yaml"
    first = nox(envdir, matrix, "-s", "probe(7.3.0)")
    assert first.returncode == 0, output(first)
    made = environments(envdir / ".nox")
    assert len(made) == 1 and "version_info = 3.12" in next(iter(made.values()))  # the planner's Python for 7.3.0

    run = nox(envdir, matrix, "-s", "bisect", "--", "alpha.py", "--from", "7.0.0", "--to", "7.3.0")
    assert run.returncode == 0, output(run)
    assert "on Python 3.10 throughout" in output(run)
    after = environments(envdir / ".nox")
    assert {name: after.get(name) for name in made} == made  # 7.0.0's, on the Python the bisect holds, beside it
    held = environments(envdir / ".nox" / "held-python-3.10")
    assert held and all("version_info = 3.10" in config for config in held.values())

    again = nox(envdir, matrix, "-s", "probe(7.3.0)")
    assert again.returncode == 0, output(again)
    assert "rebuilding" not in output(again), output(again)
