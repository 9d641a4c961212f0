"""What a matrix keeps on disk: each release's environments and cached wheels, what several keep, what removing
one frees."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from nox.sessions import _normalize_path
from packaging.version import Version

from torchmatrix.environment import disk, uvcache

from .test_uvcache import unpacked

CP311 = "cp311-cp311-manylinux1_x86_64"


def environment(env: Path, *archives: Path) -> Path:
    """An environment at ``env`` with the wheels unpacked in ``archives`` installed as uv installs them: each file
    a hard link to the cache's."""
    site = env / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (env / "pyvenv.cfg").write_text("version_info = 3.11.7\n")
    (env / "bin").mkdir()
    (env / "bin" / "python").write_text("#!/bin/sh\n" + "y" * 3000)  # a file of its own, linked from nowhere
    for archive in archives:
        for path in archive.rglob("*"):
            target = site / path.relative_to(archive)
            if path.is_dir():
                target.mkdir(exist_ok=True)
            else:
                os.link(path, target)
    return env


@pytest.fixture
def two_releases(tmp_path: Path) -> tuple[Path, Path]:
    """Torch 2.1.0 and 2.1.1 built in ``.nox``, sharing one CUDA library; 2.1.0 also held on 3.10 by a bisect;
    a ``tests`` environment of another noxfile session beside them, holding pytest. The envdir and the cache."""
    cache, envdir = tmp_path / "uv", tmp_path / ".nox"
    cublas = unpacked(cache, "nvidia-cublas-cu12", "12.1.3.1", "py3-none-manylinux1_x86_64")
    pytest_wheel = unpacked(cache, "pytest", "8.0.0")
    old, new = (unpacked(cache, "torch", version, CP311) for version in ("2.1.0", "2.1.1"))
    old310 = unpacked(cache, "torch", "2.1.0", "cp310-cp310-manylinux1_x86_64")
    environment(disk.environment_of(envdir, "2.1.0"), old, cublas, pytest_wheel)
    environment(disk.environment_of(envdir / "held-python-3.10", "2.1.0"), old310, cublas)
    environment(disk.environment_of(envdir, "2.1.1"), new, cublas)
    environment(envdir / "tests", pytest_wheel)
    return envdir, cache


def survey(envdir: Path, cache: Path, *releases: str) -> disk.Survey:
    folders = [envdir, envdir / "held-python-3.10"]
    return disk.survey(folders, {Version(r): [r] for r in releases}, uvcache.read(cache))


def labels(wheels: tuple[uvcache.CachedWheel, ...]) -> list[str]:
    return [f"{wheel.built} {'-'.join(sorted(str(tag) for tag in wheel.built.tags))}" for wheel in wheels]


def test_a_release_keeps_its_environments_and_the_cached_wheels_they_hold(two_releases: tuple[Path, Path]) -> None:
    envdir, cache = two_releases
    found = survey(envdir, cache, "2.1.0", "2.1.1", "2.2.0")
    old, new, unbuilt = found.releases
    held = envdir / "held-python-3.10"
    assert old.environments == (disk.environment_of(envdir, "2.1.0"), disk.environment_of(held, "2.1.0"))
    assert sorted(str(wheel.built) for wheel in old.wheels) == [
        "nvidia-cublas-cu12 12.1.3.1", "pytest 8.0.0", "torch 2.1.0", "torch 2.1.0"  # one torch a Python
    ]  # fmt: skip
    assert sorted(str(wheel.built) for wheel in new.wheels) == ["nvidia-cublas-cu12 12.1.3.1", "torch 2.1.1"]
    assert (unbuilt.environments, unbuilt.wheels) == ((), frozenset())
    [tests] = found.others
    assert (tests.label, tests.torch) == ("tests", None)
    [cublas] = [wheel for wheel in new.wheels if wheel.built.name == "nvidia-cublas-cu12"]
    assert found.users(cublas) == ["2.1.0", "2.1.1"]


def test_removing_a_release_leaves_the_wheels_another_keeps(two_releases: tuple[Path, Path]) -> None:
    envdir, cache = two_releases
    found = survey(envdir, cache, "2.1.0", "2.1.1")
    removal = found.removal(["2.1.0"])
    assert removal.environments == found.releases[0].environments
    assert labels(removal.wheels) == [
        "torch 2.1.0 cp310-cp310-manylinux1_x86_64",
        f"torch 2.1.0 {CP311}",
    ]  # cublas is 2.1.1's too, pytest the tests environment's
    assert sorted(str(wheel.built) for wheel in removal.shared) == ["nvidia-cublas-cu12 12.1.3.1", "pytest 8.0.0"]
    both = found.removal(["2.1.0", "2.1.1"])
    assert sorted(str(wheel.built) for wheel in both.wheels) == [
        "nvidia-cublas-cu12 12.1.3.1", "torch 2.1.0", "torch 2.1.0", "torch 2.1.1"
    ]  # fmt: skip


def test_a_release_outside_the_matrix_is_another_environment_that_says_its_torch(
    two_releases: tuple[Path, Path],
) -> None:
    envdir, cache = two_releases
    found = survey(envdir, cache, "2.1.0")
    outside = disk.environment_of(envdir, "2.1.1").name  # probe-2-1-1, or its digest where the path is long
    assert sorted((holder.label, holder.torch) for holder in found.others) == [(outside, "2.1.1"), ("tests", None)]
    assert labels(found.removal(["2.1.0"]).wheels) == [
        "torch 2.1.0 cp310-cp310-manylinux1_x86_64", f"torch 2.1.0 {CP311}"
    ]  # cublas stays: an environment here holds it  # fmt: skip


def test_a_releases_cached_torch_is_its_own_when_no_environment_of_it_is_left(tmp_path: Path) -> None:
    unpacked(tmp_path / "uv", "torch", "2.1.0+cpu", CP311)
    unpacked(tmp_path / "uv", "torch", "2.1.1", CP311)
    found = disk.survey([tmp_path / ".nox"], {Version("2.1.0"): ["2.1.0"]}, uvcache.read(tmp_path / "uv"))
    assert [str(wheel.built) for wheel in found.releases[0].wheels] == ["torch 2.1.0+cpu"]


def test_sizes_count_a_file_linked_from_two_folders_once_and_it_is_freed_when_both_go(tmp_path: Path) -> None:
    (tmp_path / "env").mkdir()
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "torch.py").write_text("t" * 10000)
    os.link(tmp_path / "cache" / "torch.py", tmp_path / "env" / "torch.py")  # as uv installs from its cache
    (tmp_path / "env" / "own.py").write_text("o" * 5000)
    env, cache, linked = tmp_path / "env", tmp_path / "cache", os.lstat(tmp_path / "cache" / "torch.py")
    usage = disk.Usage()
    assert usage.size([env, cache]) == usage.size([env]) + usage.size([cache]) - linked.st_blocks * 512
    assert usage.frees([env]) == usage.size([env]) - linked.st_blocks * 512  # the cache still holds it
    assert usage.frees([env, cache]) == usage.size([env, cache])


def test_removing_a_release_frees_its_own_files_not_those_another_holds(two_releases: tuple[Path, Path]) -> None:
    envdir, cache = two_releases
    found = survey(envdir, cache, "2.1.0", "2.1.1")
    usage = disk.Usage()
    removal = found.removal(["2.1.1"])
    [cublas] = removal.shared
    [env] = removal.environments
    linked_in = usage.size([env]) + usage.size([cublas.archive]) - usage.size([env, cublas.archive])
    assert linked_in > 0  # the env's files of the CUDA library 2.1.0 holds too
    assert usage.frees(removal.paths) == usage.size(removal.paths) - linked_in


def test_an_environment_is_where_nox_puts_it_a_long_path_as_a_digest() -> None:
    assert disk.environment_of(Path("/p/.nox"), "2.1.0") == Path("/p/.nox/probe-2-1-0")
    deep = Path("/" + "x" * 79)
    assert disk.environment_of(deep, "2.1.0-py3.10") == Path(_normalize_path(str(deep), "probe(2.1.0-py3.10)"))
    assert disk.environment_of(deep, "2.1.0-py3.10").name != "probe-2-1-0-py3-10"  # a digest: the path is too long


def test_sizes_read_as_uv_says_them() -> None:
    assert [disk.human(size) for size in (0, 1023, 1024, 5 * 2**20, 3 * 2**30 + 2**29, 2**45)] == [
        "0 B", "1023 B", "1.0 KiB", "5.0 MiB", "3.5 GiB", "32768.0 GiB"
    ]  # fmt: skip
