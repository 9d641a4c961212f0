"""Real nox and uv over stand-in wheels, in a uv cache of the test's own: what plan says each release keeps, and
clean removing one release's environments and cached wheels while the other's stay and still run."""

from __future__ import annotations

import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest
from nox.sessions import _normalize_path

from torchmatrix.environment import cellenv, disk

from .. import standin
from . import nox, nox_command

pytestmark = pytest.mark.integration

MATRIX = """
torch: [8.0.0, 8.1.0]
requires: [torchmatrix-standin-cuda]   # both releases install it: one wheel of the cache, shared
probes: [alpha.py]
devices: [cpu]
timeout: 60
output: out
find_links: [wheels]
"""


def du(*paths: Path) -> str:
    """What ``du`` says ``paths`` take together (a file linked from two of them counted once), as plan says it."""
    found = [str(path) for path in paths if path.exists()]
    said = subprocess.run(["du", "-skc", *found], capture_output=True, text=True, check=True).stdout
    return disk.human(int(said.splitlines()[-1].split()[0]) * 1024)


def unpacked(cache: Path) -> set[str]:
    """The wheels unpacked in uv's cache, by their .dist-info."""
    return {info.name for info in cache.glob("archive-v*/*/*.dist-info")}


@pytest.mark.skipif(shutil.which("du") is None, reason="sizes are checked against du")
def test_plan_says_what_each_release_keeps_and_clean_removes_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for version in ("8.0.0", "8.1.0"):
        standin.wheel(tmp_path / "wheels", version, {"alpha": "pass"})
    standin.package(tmp_path / "wheels", "torchmatrix-standin-cuda", "1.0", size=300_000)
    standin.probe(tmp_path, "alpha")
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(textwrap.dedent(MATRIX))
    cache = tmp_path / "uv-cache"
    monkeypatch.setenv("UV_CACHE_DIR", str(cache))  # never the cache of the machine: the test removes from it
    built = nox(tmp_path, matrix, "-s", "probe")
    assert built.returncode == 0, built.stdout + built.stderr
    envdir = tmp_path / ".nox"
    old, new = (Path(_normalize_path(str(envdir), f"probe({version})")) for version in ("8.0.0", "8.1.0"))
    assert old.is_dir() and new.is_dir()
    shared, old_torch, new_torch = ("torchmatrix_standin_cuda-1.0.dist-info", "torch-8.0.0.dist-info",
                                    "torch-8.1.0.dist-info")  # fmt: skip
    assert unpacked(cache) == {shared, old_torch, new_torch}

    plan = nox(tmp_path, matrix, "-s", "plan")
    assert plan.returncode == 0, plan.stdout + plan.stderr
    assert f"kept on disk: environments in {envdir}, wheels in uv's cache {cache}" in plan.stdout
    rows = {line.split()[0]: line.split("  ") for line in plan.stdout.splitlines() if line.startswith("8.")}
    for release, env in (("8.0.0", old), ("8.1.0", new)):
        columns = [column.strip() for column in rows[release] if column.strip()]
        torch = next(cache.glob(f"archive-v*/*/torch-{release}.dist-info")).parent
        assert columns[1] == f"1, {du(env, *cellenv.bytecode_of(env))}"
        assert columns[2] == f"1, {du(torch)} + 1 shared"
    shared_folder = next(cache.glob(f"archive-v*/*/{shared}")).parent
    assert f"shared by 8.0.0, 8.1.0: 1 wheel(s), {du(shared_folder)}: torchmatrix-standin-cuda 1.0" in plan.stdout
    everything = [old, new, *cellenv.bytecode_of(old), *cellenv.bytecode_of(new), *cache.glob("archive-v*/*")]
    assert f"total: {du(*everything)}, " in plan.stdout

    refused = nox(tmp_path, matrix, "-s", "clean", "--", "8.2.0")
    assert refused.returncode == 2
    assert "8.2.0 is no torch release of" in refused.stderr and "hint: did you mean '8.1.0'?" in refused.stderr

    dry = nox(tmp_path, matrix, "-s", "clean", "--", "8.0.0", "--dry-run")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert "torch 8.0.0: would remove 1 environment(s) and their bytecode, " in dry.stdout
    assert "torch 8.0.0: would remove 1 cached wheel(s) nothing else here keeps, " in dry.stdout
    assert "kept: 1 cached wheel(s) that 8.1.0 also keep" in dry.stdout
    assert old.is_dir() and unpacked(cache) == {shared, old_torch, new_torch}

    command, environ = nox_command(tmp_path, matrix, "-s", "clean", "--", "8.0.0")
    with cellenv.locked(old):  # as a probe session of 8.0.0 holds it while it runs
        cleaning = subprocess.Popen(command, env=environ, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert cleaning.stdout is not None
        before = []
        for line in cleaning.stdout:
            before.append(line)
            if line.startswith(f"waiting for the run that uses {old} to end"):
                break
        assert old.is_dir(), "".join(before)  # it waits for that run, and removes nothing meanwhile
    output = "".join(before) + cleaning.stdout.read()
    cleaning.stdout.close()
    assert cleaning.wait(timeout=600) == 0, output
    assert f"waiting for the run that uses {old} to end" in output
    assert "uv cache prune: Removed " in output
    assert not old.exists() and not cellenv.bytecode_of(old)
    assert new.is_dir() and unpacked(cache) == {shared, new_torch}
    stored = sorted(path.name.split("-py")[0] for path in (tmp_path / "out" / "results" / "ci-box").glob("*.json"))
    assert stored == ["torch-8.0.0", "torch-8.1.0"]  # results stay
    shown = nox(tmp_path, matrix, "-s", "report")  # and stand as they were: nothing of a removed env is asked
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "stale" not in shown.stdout, (tmp_path / "out" / "COMPATIBILITY.md").read_text(encoding="utf-8")

    again = nox(tmp_path, matrix, "-s", "probe(8.1.0)", "--", "--force")
    assert again.returncode == 0, again.stdout + again.stderr
    after = nox(tmp_path, matrix, "-s", "plan")
    assert [line.split()[1:] for line in after.stdout.splitlines() if line.startswith("8.0.0")] == [
        ["none", "none", "-"]
    ]
