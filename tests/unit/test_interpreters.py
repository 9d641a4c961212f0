"""The wheel tags each interpreter accepts (discovery, which asks real interpreters, is an integration test)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from packaging.tags import Tag

from torchmatrix import interpreters
from torchmatrix.interpreters import Interpreter, _seed

LINUX = ["manylinux_2_36_x86_64", "manylinux2014_x86_64", "manylinux1_x86_64", "linux_x86_64"]


def test_tags_follow_the_abi_of_each_version() -> None:
    old = Interpreter("/x/python3.7", (3, 7, 16), "m", "pyenv").tags(LINUX)
    new = Interpreter("/x/python3.9", (3, 9, 18), "", "pyenv").tags(LINUX)
    assert Tag("cp37", "cp37m", "manylinux1_x86_64") in old
    assert Tag("cp39", "cp39", "manylinux1_x86_64") in new
    assert Tag("cp39", "cp39", "manylinux1_x86_64") not in old
    assert Tag("cp39", "none", "macosx_11_0_arm64") in Interpreter("/x", (3, 9, 0), "", "uv").tags(
        ["macosx_11_0_arm64"]
    )


def test_free_threaded_builds_take_their_own_wheels() -> None:
    python = Interpreter("/x/python3.13t", (3, 13, 0), "t", "uv")
    assert python.free_threaded
    assert Tag("cp313", "cp313t", "linux_x86_64") in python.tags(LINUX)
    assert Tag("cp313", "cp313", "linux_x86_64") not in python.tags(LINUX)


def test_the_seed_is_read_from_the_wheels_ensurepip_names() -> None:
    named = ["setuptools-65.5.0-py3-none-any.whl", "pip-23.2.1-py3-none-any.whl", "README.txt"]
    assert _seed(named) == ("pip==23.2.1", "setuptools==65.5.0")
    assert _seed(None) == () and _seed([]) == ()  # no ensurepip, or one that failed: nothing seeded


def asked_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, version: str, stdlib: Path
) -> tuple[Path, dict[str, Any], Callable[[], str | None]]:
    """An interpreter at ``tmp_path/bin/python`` that answers ``version`` and ``stdlib`` when its build is asked:
    its executable, its answer (to change), and its build's digest asked anew each call."""
    executable = tmp_path / "bin" / "python"
    executable.parent.mkdir()
    executable.write_text("")
    answer: dict[str, Any] = {"version": version, "executable": str(executable), "stdlib": [str(stdlib)]}
    monkeypatch.setattr(interpreters, "_ask_build", lambda path: dict(answer))

    def build() -> str | None:
        interpreters.build.cache_clear()
        return interpreters.build(str(executable))

    return executable, answer, build


def test_an_interpreter_patched_in_place_keeps_its_path_and_version_but_not_its_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A distribution's update of one Python version, or a module of its standard library edited: the build's digest
    tells it, by the files' names, sizes and times; its site folders and bytecode are not its build."""
    stdlib = tmp_path / "lib" / "python3.12"
    (stdlib / "json").mkdir(parents=True)
    (stdlib / "colorsys.py").write_text("def rgb_to_hsv(r, g, b):\n    ...\n")
    (stdlib / "json" / "__init__.py").write_text("")
    executable, answer, build = asked_build(tmp_path, monkeypatch, "3.12.1 (main, Jan  5 2024)", stdlib)
    first = build()
    assert first is not None and build() == first
    (stdlib / "site-packages").mkdir()
    (stdlib / "site-packages" / "anything.py").write_text("")
    (stdlib / "__pycache__").mkdir()
    (stdlib / "__pycache__" / "colorsys.cpython-312.pyc").write_bytes(b"\0")
    assert build() == first
    (stdlib / "colorsys.py").write_text("def rgb_to_hsv(r, g, b):\n    return (0.0, 0.0, 0.0)\n")
    patched = build()
    assert patched != first
    answer["version"] = "3.12.1 (main, Mar  1 2024)"  # rebuilt: another build date
    assert build() not in (first, patched)
    executable.unlink()
    assert build() is None  # no interpreter there: nothing to ask


def test_a_folder_of_the_standard_library_that_is_a_link_counts_by_the_files_it_leads_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A package of the standard library kept elsewhere and linked in (``lib/python3.13/tomllib -> /srv/tomllib``):
    python imports its files by the link's path, which the pair's reads leave out as the standard library's, so the
    build counts them; a link that leads back up the tree is walked once."""
    stdlib = tmp_path / "lib" / "python3.13"
    stdlib.mkdir(parents=True)
    elsewhere = tmp_path / "srv" / "tomllib"
    elsewhere.mkdir(parents=True)
    (elsewhere / "_parser.py").write_text("def loads(s):\n    ...\n")
    (stdlib / "tomllib").symlink_to(elsewhere)
    (stdlib / "loop").symlink_to(stdlib)
    _, _, build = asked_build(tmp_path, monkeypatch, "3.13.0", stdlib)
    first = build()
    assert first is not None and build() == first
    (elsewhere / "_parser.py").write_text("def loads(s):\n    raise ValueError(s)\n")
    assert build() != first
