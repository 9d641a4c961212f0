"""Environments that cannot be trusted, through real nox, uv and torch: rebuilt before anything is concluded.

A result's labels come from what ran: an environment made by another Python is
rebuilt, not reused; an install stopped halfway leaves an environment that no
run trusts; a good stored result is never replaced by the error a broken local
environment caused.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from torchmatrix.core import Outcome
from torchmatrix.environment import cellenv

from .conftest import Torch, Workspace, read_until, stop

pytestmark = pytest.mark.integration


def torch_file(env: Path, name: str) -> Path:
    (site,) = cellenv.site_packages(env)
    return site / "torch" / name


def started_copying(env: Path, seconds: float = 120) -> None:
    """Wait until the installer has put the first of torch's files into ``env``."""
    deadline = time.monotonic() + seconds
    while not cellenv.holds_torch(env):
        assert time.monotonic() < deadline, f"no torch files appeared in {env}"
        time.sleep(0.02)


@pytest.fixture
def own_envs(tmp_path: Path, suite_cache: Path, warm: None) -> Workspace:
    """A workspace with an envdir of its own: these tests break and rebuild environments."""
    return Workspace(tmp_path, tmp_path / ".nox", suite_cache)


def test_an_environment_made_by_another_python_is_rebuilt_and_the_file_names_the_python_that_ran(
    own_envs: Workspace, torch_other: Torch
) -> None:
    pythons = {"1.9.0": ("3.9", "3.8"), "1.11.0": ("3.10", "3.9")}[torch_other.version]
    for python in pythons:
        own_envs.matrix([Torch(torch_other.version, python)], ["ok"])
        run = own_envs.nox("-s", "probe")
        assert run.returncode == 0, run.output
    assert "rebuilding" in run.output and f"the cell's is {pythons[1]}." in run.output
    result = own_envs.result(f"torch-{torch_other.version}-py{pythons[1]}")
    assert result.environment["python"].startswith(pythons[1] + ".")
    assert [record.outcome for record in result.records] == [Outcome.PASS]


def test_without_a_listing_and_a_pinned_python_the_python_is_not_guessed(
    workspace: Workspace, tmp_path: Path, warm: None
) -> None:
    workspace.matrix([Torch("1.9.0")], ["ok"])
    with workspace.matrix_file.open("a") as matrix:
        matrix.write("index_url: file:///nowhere/simple\n")
    environ = workspace.environ(TORCHMATRIX_CACHE_DIR=str(tmp_path / "empty-cache"))
    run = workspace.nox("-s", "probe", env=environ)
    assert run.returncode == 1, run.output
    assert "cannot choose a Python for torch 1.9.0" in run.output
    assert 'pin one in the matrix: `- {version: 1.9.0, python: ["3.X"]}`' in run.output
    assert not workspace.results_dir.exists()


def test_an_install_stopped_halfway_is_rebuilt_and_never_taken_for_up_to_date(
    own_envs: Workspace, torch_here: Torch
) -> None:
    own_envs.matrix([torch_here], ["ok"])
    first = own_envs.nox("-s", "probe")
    assert first.returncode == 0, first.output
    good = own_envs.result(f"torch-{torch_here.version}-py{torch_here.python}")
    env = own_envs.env(torch_here.version)
    # Ctrl-C a second after uv resolved, while it copies torch's files into a new environment.
    nox = own_envs.start("-s", "probe", "--reuse-venv=never", env=own_envs.environ(UV_LINK_MODE="copy"))
    try:
        read_until(nox, "Resolved")
        started_copying(env)  # uv copies torch's files for some seconds (4 s for torch 2.13.0+cpu here)
        os.killpg(nox.pid, signal.SIGINT)
        nox.wait(timeout=60)
    finally:
        stop(nox)
    assert cellenv.holds_torch(env) and cellenv.built_torch(env) is None

    rerun = own_envs.nox("-s", "probe")
    assert rerun.returncode == 0, rerun.output
    assert "up to date" not in rerun.output
    assert "rebuilding" in rerun.output and "its last install did not finish" in rerun.output
    result = own_envs.result(good.cell_id)
    assert [record.outcome for record in result.records] == [Outcome.PASS]
    assert result.finished_at >= good.finished_at and cellenv.built_torch(env) is not None


def test_a_broken_environment_is_rebuilt_once_and_never_costs_the_good_result(
    own_envs: Workspace, torch_here: Torch
) -> None:
    own_envs.matrix([torch_here], ["ok"])
    assert own_envs.nox("-s", "probe").returncode == 0
    env = own_envs.env(torch_here.version)
    edited = torch_file(env, "_utils_internal.py")
    edited.unlink()  # a file of its own, not the one uv's cache links into every environment, then edited
    edited.write_text("raise ImportError('edited')\n")  # the marker still vouches

    forced = own_envs.nox("-s", "probe", "--", "--force")
    assert forced.returncode == 0, forced.output
    assert "rebuilding" in forced.output and "torch does not import" in forced.output
    result = own_envs.result(f"torch-{torch_here.version}-py{torch_here.python}")
    assert (result.outcome, [record.outcome for record in result.records]) == (None, [Outcome.PASS])
    assert "edited" not in torch_file(env, "_utils_internal.py").read_text()


def test_an_environment_a_file_of_whose_packages_is_gone_is_rebuilt_before_its_pairs_run(
    own_envs: Workspace, torch_here: Torch
) -> None:
    """What a removal stopped halfway leaves (``nox --reuse-venv=never`` clears an environment before torchmatrix's
    code runs): the marker over packages some of whose files are gone, which the installer takes for installed."""
    own_envs.matrix([torch_here], ["ok"])
    assert own_envs.nox("-s", "probe").returncode == 0
    env = own_envs.env(torch_here.version)
    torch_file(env, "_utils_internal.py").unlink()

    forced = own_envs.nox("-s", "probe", "--", "--force")
    assert forced.returncode == 0, forced.output
    assert "torch/_utils_internal.py, which its packages installed, is gone" in forced.output
    assert "torch does not import" not in forced.output  # found before a pair ran
    assert torch_file(env, "_utils_internal.py").exists()
