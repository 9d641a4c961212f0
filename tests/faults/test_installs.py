"""Installs that cannot happen, through real nox and uv: each is its cell's outcome, with a message that says why."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from torchmatrix.core import Outcome

from .conftest import Torch, Workspace

pytestmark = pytest.mark.integration

DEAD_PROXY = "http://127.0.0.1:9"  # the discard port: nothing listens, every connection is refused at once


@dataclass(frozen=True)
class NoNetwork:
    """How to run a command cut off from the network: in a network namespace of its own, else via a dead proxy."""

    prefix: tuple[str, ...]
    environ: dict[str, str]


def _cut_off(prefix: Sequence[str], environ: dict[str, str]) -> bool:
    probe = "import urllib.request; urllib.request.urlopen('https://pypi.org/simple/', timeout=10)"
    try:
        done = subprocess.run([*prefix, sys.executable, "-c", probe], env=dict(os.environ, **environ), timeout=60,
                              capture_output=True)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode != 0 and b"Traceback" in done.stderr


@pytest.fixture(scope="session")
def no_network() -> NoNetwork:
    """``unshare -n`` (as root) or ``unshare -rn`` (with user namespaces) gives a namespace with no network at all.

    Where neither is allowed (e.g. CI runners that restrict user namespaces), every HTTP(S) request of
    torchmatrix and uv goes to a proxy on a port where nothing listens.
    """
    for prefix in (("unshare", "-n"), ("unshare", "-rn")):
        allowed = shutil.which("unshare") and subprocess.run([*prefix, "true"], capture_output=True).returncode == 0
        if allowed and _cut_off(prefix, {}):
            return NoNetwork(prefix, {})
    proxies = {name: DEAD_PROXY for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")}
    proxies.update({name.lower(): DEAD_PROXY for name in proxies})
    proxies.update(NO_PROXY="", no_proxy="")
    if not _cut_off((), proxies):
        pytest.skip("cannot cut this machine off the network (no unshare, proxies ignored)")
    return NoNetwork((), proxies)


def stale(cache: Path) -> None:
    """Make the cached index listing two days old: it is then fetched again before use."""
    for path in (cache / "index").glob("*.json"):
        data = json.loads(path.read_text())
        data["fetched_at"] = time.time() - 2 * 24 * 3600
        path.write_text(json.dumps(data))


def test_a_release_that_does_not_exist_is_a_matrix_error_naming_the_releases_around_it(
    workspace: Workspace, warm: None
) -> None:
    workspace.matrix([Torch("1.99.0")], ["ok"])
    run = workspace.nox("-s", "probe")
    assert run.returncode == 2, run.output
    expected = "the index lists no torch 1.99.0; the releases around it are 1.13.1 and 2.0.0"
    assert f"{workspace.matrix_file}:2: torch[0]: {expected}" in run.output
    assert not workspace.machine_dir.exists()  # no result file stands for a cell that is no release
    assert not workspace.env("1.99.0").exists()


def test_a_release_with_no_wheel_for_any_python_here_is_no_interpreter(
    workspace: Workspace, tmp_path: Path, warm: None
) -> None:
    """Only this test's own Python (3.10 or newer) is on this 'machine'; torch 1.9.0 needs 3.6-3.9."""
    python = Path(os.path.realpath(sys.executable))
    minor = f"{sys.version_info[0]}.{sys.version_info[1]}"
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / f"python{minor}").symlink_to(python)
    (tmp_path / "none").mkdir()
    workspace.matrix([Torch("1.9.0")], ["ok"])
    environ = workspace.environ(
        PATH=str(tmp_path / "bin"), PYENV_ROOT=str(tmp_path / "none"), UV_PYTHON_INSTALL_DIR=str(tmp_path / "none")
    )
    run = workspace.nox("-s", "probe", env=environ)
    assert run.returncode == 0, run.output
    expected = f"torch 1.9.0 needs Python 3.6–3.9; found {minor}; install one, e.g. `uv python install 3.9`"
    assert f"skipped: no-interpreter: {expected}" in run.output
    result = workspace.result("torch-1.9.0")
    assert result.outcome is Outcome.NO_INTERPRETER and result.message.startswith(expected)


@pytest.mark.parametrize("listing", ["fresh", "stale"])
def test_without_network_a_warm_cache_is_enough(
    workspace: Workspace, tmp_path: Path, torch_here: Torch, no_network: NoNetwork, warm: None, listing: str
) -> None:
    """uv's cache and the index listing hold what the cell needs; a new env is built from them offline.

    A fresh listing is used without asking the index, so only the failed install shows the network is down;
    a stale one is fetched first, and that failure says so before the install.
    """
    cache = tmp_path / "cache"
    shutil.copytree(workspace.cache, cache, ignore=shutil.ignore_patterns("interpreters.json"))
    if listing == "stale":
        stale(cache)
    workspace.matrix([torch_here], ["ok"])
    environ = workspace.environ(
        TORCHMATRIX_CACHE_DIR=str(cache),
        UV_HTTP_RETRIES="0",  # uv gives up on a dead network at once instead of after 10 s of retries
        **no_network.environ,
    )
    run = workspace.nox("--envdir", str(tmp_path / ".nox"), "-s", "probe", prefix=no_network.prefix, env=environ)

    assert run.returncode == 0, run.output
    assert "--offline" in run.output
    if listing == "fresh":
        assert "cannot reach https://pypi.org/simple: installing from uv's cache alone (--offline)" in run.output
    else:
        assert "cannot read https://pypi.org/simple/torch/" in run.output and "using the listing cached" in run.output
    (result,) = workspace.scan().results
    assert [(record.probe, record.outcome) for record in result.records] == [("ok", Outcome.PASS)]


def test_without_network_a_cold_cache_is_a_clear_install_error(
    workspace: Workspace, tmp_path: Path, torch_here: Torch, no_network: NoNetwork
) -> None:
    workspace.matrix([torch_here], ["ok"])
    environ = workspace.environ(
        TORCHMATRIX_CACHE_DIR=str(tmp_path / "cold-torchmatrix-cache"),
        UV_CACHE_DIR=str(tmp_path / "cold-uv-cache"),
        **no_network.environ,
    )
    run = workspace.nox("--envdir", str(tmp_path / ".nox"), "-s", "probe", prefix=no_network.prefix, env=environ)

    assert run.returncode == 1, run.output
    assert "Traceback" not in run.output
    result = workspace.result(f"torch-{torch_here.version}" + (f"-py{torch_here.python}" if torch_here.python else ""))
    assert result.outcome is Outcome.INSTALL_ERROR and result.records == ()
    summary, hint, *installer = result.message.splitlines()
    assert summary.startswith(f"installing torch=={torch_here.version}")
    assert " offline failed: " in summary
    assert hint == (
        "hint: https://pypi.org/simple cannot be reached and uv's cache lacks something this cell needs; "
        "run once with a network to fill the cache, or put the wheels in a find_links folder"
    )
    assert installer  # uv's own last lines
    assert f"install-error: {summary}" in run.output
    assert "inst-err" in run.stdout  # the table


def test_a_probes_own_requirements_are_installed_beside_torch(
    workspace: Workspace, torch_here: Torch, warm: None
) -> None:
    workspace.matrix([torch_here], ["ok", "needs_six"])
    run = workspace.nox("-s", "probe")
    assert run.returncode == 0, run.output
    assert f"uv pip install torch=={torch_here.version}" in run.output and " six " in run.output
    result = workspace.result(f"torch-{torch_here.version}-py{torch_here.python}")
    assert [(record.probe, record.outcome) for record in result.records] == [
        ("ok", Outcome.PASS),
        ("needs_six", Outcome.PASS),
    ]
    # Every record depends on every probe's own requirements: they share the cell's environment.
    assert result.inputs["requirements"] == [f"torch=={torch_here.version}", "six"]


def test_a_requirement_no_index_has_names_the_probe_that_asks_for_it(
    tmp_path: Path, suite_cache: Path, torch_here: Torch, warm: None
) -> None:
    workspace = Workspace(tmp_path, tmp_path / ".nox", suite_cache)  # its failed installs break no shared env
    workspace.matrix([torch_here], ["ok"])
    script = workspace.folder / "probes" / "asks_for_nothing_real.py"
    script.write_text('# /// script\n# dependencies = ["torchmatrix-no-such-package==1.0"]\n# ///\nprint("hi")\n')
    run = workspace.nox("-s", "probe", env=workspace.environ(TORCHMATRIX_PROBES=str(script)))
    assert run.returncode == 1, run.output
    assert "note: of these, the probes ask for asks_for_nothing_real (torchmatrix-no-such-package==1.0)" in run.output
