"""uv's cache as laid out on disk: which unpacked wheel an installed distribution is, and forgetting one."""

from __future__ import annotations

import os
from pathlib import Path

from packaging.tags import parse_tag
from packaging.utils import canonicalize_name
from packaging.version import Version

from torchmatrix.environment import uvcache


def unpacked(cache: Path, name: str, version: str, tags: str = "py3-none-any", entry: str | None = None,
             bucket: str = "pypi") -> Path:  # fmt: skip
    """A wheel unpacked in ``cache`` as uv unpacks one, with the bucket entry (``entry``, else its version and tags)
    that points to it and the files uv writes beside an entry: its folder."""
    archive = cache / "archive-v0" / f"{name}-{version}-{tags}-{bucket}".replace(".", "_")
    info = archive / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (archive / name.replace("-", "_")).mkdir()
    (archive / name.replace("-", "_") / "__init__.py").write_text(f"# {name} {version}\n" + "x" * 5000)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    wheel = "".join(f"Tag: {tag}\n" for tag in parse_tag(tags))
    (info / "WHEEL").write_text(f"Wheel-Version: 1.0\nRoot-Is-Purelib: true\n{wheel}")
    link = cache / "wheels-v8" / bucket / canonicalize_name(name) / (entry or f"{version}-{tags}")
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(os.path.relpath(archive, link.parent))
    for suffix in (".http", ".msgpack", ".lock"):
        link.with_name(link.name + suffix).write_text("")
    return archive


def built(name: str, version: str, tags: str = "py3-none-any") -> uvcache.WheelId:
    return uvcache.WheelId(canonicalize_name(name), Version(version), frozenset(parse_tag(tags)))


def test_an_installed_distribution_is_the_unpacked_wheel_of_its_name_version_and_tags(tmp_path: Path) -> None:
    cp311 = unpacked(tmp_path, "torch", "2.1.0", "cp311-cp311-manylinux1_x86_64")
    unpacked(tmp_path, "torch", "2.1.0", "cp310-cp310-manylinux1_x86_64")
    unpacked(tmp_path, "torch", "2.2.0", "cp311-cp311-manylinux1_x86_64")
    cache = uvcache.read(tmp_path)
    assert cache.unknown == ""
    [wheel] = cache.wheels_of(built("torch", "2.1.0", "cp311-cp311-manylinux1_x86_64"))
    assert wheel.archive == cp311.resolve()
    assert wheel.entries == (tmp_path / "wheels-v8" / "pypi" / "torch" / "2.1.0-cp311-cp311-manylinux1_x86_64",)
    assert len(cache.wheels_named(canonicalize_name("torch"))) == 3


def test_what_a_wheel_is_is_read_from_its_folder_not_from_its_entrys_name(tmp_path: Path) -> None:
    """uv names an entry of many tags by a digest: the folder's WHEEL file says its tags."""
    many = "cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64"
    unpacked(tmp_path, "charset-normalizer", "3.5.3", many, entry="3.5.3-baa3a7bf3040eaa4")
    [wheel] = uvcache.read(tmp_path).wheels_of(built("charset_normalizer", "3.5.3", many))
    assert str(wheel.built) == "charset-normalizer 3.5.3"


def test_one_folder_two_entries_point_to_is_one_wheel(tmp_path: Path) -> None:
    archive = unpacked(tmp_path, "numpy", "1.26.4")
    second = tmp_path / "wheels-v8" / "index" / "0123abcd" / "numpy" / "1.26.4-py3-none-any"
    second.parent.mkdir(parents=True)
    second.symlink_to(archive)
    [wheel] = uvcache.read(tmp_path).wheels_of(built("numpy", "1.26.4"))
    assert len(wheel.entries) == 2


def test_a_cache_not_made_yet_is_empty_and_one_laid_out_otherwise_is_unknown(tmp_path: Path) -> None:
    assert uvcache.read(tmp_path / "nowhere") == uvcache.Cache(tmp_path / "nowhere")
    (tmp_path / "archive-v0" / "abc").mkdir(parents=True)
    (tmp_path / "wheels-v9" / "pypi" / "torch").mkdir(parents=True)  # entries that are no links: another layout
    found = uvcache.read(tmp_path)
    assert "no entry of a wheel bucket (wheels-v*) points to one" in found.unknown
    assert found.wheels_named(canonicalize_name("torch")) == []


def test_forgetting_a_wheel_removes_its_entries_and_what_describes_them_but_not_their_lock(tmp_path: Path) -> None:
    archive = unpacked(tmp_path, "torch", "2.1.0")
    [wheel] = uvcache.read(tmp_path).wheels_of(built("torch", "2.1.0"))
    removed = uvcache.forget(wheel)
    folder = tmp_path / "wheels-v8" / "pypi" / "torch"
    entry = "2.1.0-py3-none-any"
    assert sorted(path.name for path in removed) == [entry, f"{entry}.http", f"{entry}.msgpack"]
    assert [path.name for path in folder.iterdir()] == ["2.1.0-py3-none-any.lock"]
    assert archive.is_dir()  # uv's prune frees it: nothing points to it now
    assert uvcache.read(tmp_path).wheels_of(built("torch", "2.1.0")) == []
