"""A cell's environment: which Python made it, and whether a finished install vouches for its torch."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from packaging.version import Version

from torchmatrix import identity
from torchmatrix.cellrun import worker_mismatch
from torchmatrix.environment import cellenv
from torchmatrix.interpreters import Interpreter
from torchmatrix.planner import Cell

TORCH_RECORD = """\
torch/__init__.py,sha256=AAAA,100
torch/_C.so,sha256=BBBB,2000
"torch/odd,name.py",sha256=CCCC,10
torch/__pycache__/__init__.cpython-39.pyc,,
../../../bin/torchrun,sha256=DDDD,300
torch-1.9.0.dist-info/METADATA,sha256=EEEE,50
torch-1.9.0.dist-info/INSTALLER,sha256=FFFF,2
torch-1.9.0.dist-info/RECORD,,
"""


def make_env(folder: Path, record: str | None = TORCH_RECORD, version: str = "1.9.0", windows: bool = False) -> Path:
    """An environment holding a torch dist-info (no torch itself: nothing here imports it)."""
    site = folder / ("Lib/site-packages" if windows else "lib/python3.9/site-packages")
    info = site / f"torch-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n")
    if record is not None:
        (info / "RECORD").write_text(record)
    return folder


PYTHON = Interpreter("/usr/bin/python3.9", (3, 9, 18), "", "path")


def made_with(env: Path, version: str, python: str | None = None) -> Path:
    env.mkdir(parents=True, exist_ok=True)
    (env / "pyvenv.cfg").write_text(f"home = /usr/bin\nuv = 0.9.0\nversion_info = {version}\n")
    if python:
        (env / "bin").mkdir()
        (env / "bin" / "python").symlink_to(python)
    return env


def test_an_environment_of_another_python_version_or_executable_is_named(tmp_path: Path) -> None:
    assert cellenv.interpreter_mismatch(tmp_path / "none", PYTHON) == ""
    assert cellenv.interpreter_mismatch(made_with(tmp_path / "same", "3.9.18"), PYTHON) == ""
    assert cellenv.interpreter_mismatch(made_with(tmp_path / "virtualenv", "3.9.18.final.0"), PYTHON) == ""
    other = cellenv.interpreter_mismatch(made_with(tmp_path / "other", "3.12.1"), PYTHON)
    assert other == "it was made with Python 3.12.1, the cell's is 3.9.18 (/usr/bin/python3.9)"
    (tmp_path / "python3.9").touch()
    moved = cellenv.interpreter_mismatch(made_with(tmp_path / "moved", "3.9.18", str(tmp_path / "python3.9")), PYTHON)
    assert moved.startswith(f"its python is {tmp_path}/python3.9, the cell's is ")


def test_only_a_marked_install_of_the_same_build_is_built(tmp_path: Path) -> None:
    env = make_env(tmp_path / "env")
    assert cellenv.holds_torch(env) and cellenv.half_built(env) and cellenv.built_torch(env) is None
    cellenv.mark_built(env, SOURCE, ASKED)
    assert cellenv.built_torch(env) is not None and not cellenv.half_built(env)
    record = next(env.glob("lib/python3.9/site-packages/torch-*.dist-info")) / "RECORD"
    record.write_text(record.read_text().replace("BBBB", "B2B2"))  # another build over the marked one
    assert cellenv.built_torch(env) is None and cellenv.half_built(env)
    cellenv.mark_built(env, SOURCE, ASKED)
    cellenv.unmark_built(env)
    assert cellenv.built_torch(env) is None


SOURCE = identity.build_source("https://pypi.org/simple", [])
ASKED = {"requirements": ["torch==2.2.2"], "constraints": ["numpy<2"], "venv_seed": ["pip==23.2.1"]}


def test_a_torch_built_from_another_index_or_find_links_is_said_to_come_from_elsewhere(tmp_path: Path) -> None:
    env = make_env(tmp_path / "env")
    assert cellenv.source_mismatch(env, SOURCE) == ""  # nothing built yet
    cellenv.mark_built(env, SOURCE, ASKED)
    assert cellenv.source_mismatch(env, SOURCE) == ""
    elsewhere = identity.build_source("https://pypi.org/simple", ["/srv/wheels"])
    assert cellenv.source_mismatch(env, elsewhere) == (
        "its torch was installed from elsewhere; this cell installs from https://pypi.org/simple and /srv/wheels"
    )
    (env / cellenv.MARKER).write_text(cellenv.torch_build(env) + "\n")  # marked before sources were recorded
    assert cellenv.source_mismatch(env, SOURCE).startswith("its torch was installed from elsewhere")
    assert cellenv.built_torch(env) is not None


def test_the_package_set_changes_with_any_installed_version(tmp_path: Path) -> None:
    env = make_env(tmp_path / "env")
    before = cellenv.package_set(env)
    site = next(env.glob("lib/python3.9/site-packages"))
    extra = site / "numpy-1.26.4.dist-info"
    extra.mkdir()
    (extra / "METADATA").write_text("Metadata-Version: 2.1\nName: numpy\nVersion: 1.26.4\n")
    with_numpy = cellenv.package_set(env)
    extra.rename(site / "numpy-2.0.0.dist-info")
    (site / "numpy-2.0.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: numpy\nVersion: 2.0.0\n")
    assert len({before, with_numpy, cellenv.package_set(env)}) == 3
    assert cellenv.package_set(tmp_path / "nothing") is None


def test_the_package_set_changes_with_a_package_installed_again_under_its_version(tmp_path: Path) -> None:
    env = make_env(tmp_path / "env")
    extra = next(env.glob("lib/python3.9/site-packages")) / "mypkg-0.1.0.dist-info"
    extra.mkdir()
    (extra / "METADATA").write_text("Metadata-Version: 2.1\nName: mypkg\nVersion: 0.1.0\n")
    (extra / "RECORD").write_text("mypkg/__init__.py,sha256=AAAA,10\nmypkg/__pycache__/__init__.cpython-39.pyc,,\n")
    before = cellenv.package_set(env)
    (extra / "RECORD").write_text("mypkg/__init__.py,sha256=BBBB,10\nmypkg/__pycache__/__init__.cpython-39.pyc,,\n")
    rebuilt = cellenv.package_set(env)
    (extra / "RECORD").write_text("mypkg/__init__.py,sha256=BBBB,10\n")  # bytecode compiled or not: the same
    assert before != rebuilt == cellenv.package_set(env)


def test_the_package_set_changes_with_a_file_in_a_site_folder_that_no_record_lists(tmp_path: Path) -> None:
    """A module put there by hand, or a package installed without a `RECORD` (a Linux distribution's `.egg-info`
    one, updated under its version): no package's digest covers it, and the pairs' reads leave the site folders
    out. Bytecode Python writes as it imports, and the `.pth` files the pairs' reads count, are no change."""
    env = make_env(tmp_path / "env")
    site = next(env.glob("lib/python3.9/site-packages"))
    before = cellenv.package_set(env)
    (site / "__pycache__").mkdir()
    (site / "__pycache__" / "helper.cpython-39.pyc").write_bytes(b"compiled")
    (site / "extra.pth").write_text("/somewhere\n")
    assert cellenv.package_set(env) == before
    (site / "helper.py").write_text("K = 1\n")
    one = cellenv.package_set(env)
    (site / "helper.py").write_text("K = 2\n")
    two = cellenv.package_set(env)
    info = site / "oldpkg-1.0.egg-info"
    info.mkdir()
    (info / "PKG-INFO").write_text("Metadata-Version: 1.1\nName: oldpkg\nVersion: 1.0\n")
    (site / "oldpkg").mkdir()
    (site / "oldpkg" / "__init__.py").write_text("patched = False\n")
    unpatched = cellenv.package_set(env)
    (site / "oldpkg" / "__init__.py").write_text("patched = True\n")
    assert len({before, one, two, unpatched, cellenv.package_set(env)}) == 5


def test_the_package_set_changes_with_a_sourceless_module_or_a_file_added_to_a_distributions_metadata(
    tmp_path: Path,
) -> None:
    """Python imports a `helper.pyc` beside no source, and pytest registers a plugin an `entry_points.txt` added to a
    distribution's metadata names: the pairs' reads leave the site folders out, so the package set counts them. A
    line of a `RECORD` that leads out of its folder and back (`../site-packages/x.py`) covers nothing."""
    env = make_env(tmp_path / "env")
    site = next(env.glob("lib/python3.9/site-packages"))
    (site / "helper.pyc").write_bytes(b"one")
    one = cellenv.package_set(env)
    (site / "helper.pyc").write_bytes(b"two")
    two = cellenv.package_set(env)
    (site / "torch-1.9.0.dist-info" / "entry_points.txt").write_text("[pytest11]\nx = helper\n")
    plugged = cellenv.package_set(env)
    record = site / "torch-1.9.0.dist-info" / "RECORD"
    record.write_text(record.read_text() + "../site-packages/helper.pyc,sha256=abc,3\n")
    (site / "helper.pyc").write_bytes(b"three")
    assert len({one, two, plugged, cellenv.package_set(env)}) == 4


def test_a_file_a_nameless_distributions_record_lists_counts_by_its_content(tmp_path: Path) -> None:
    """A `.dist-info` whose metadata names no distribution (none, as a stopped install leaves, or no `Name:`) is none
    the package set counts: a file its `RECORD` lists (a `helper.py` put there by hand) still counts by its content,
    as where no `RECORD` lists it, never by nothing."""
    env = make_env(tmp_path / "env")
    site = next(env.glob("lib/python3.9/site-packages"))
    (site / "ghost-1.0.dist-info").mkdir()
    (site / "ghost-1.0.dist-info" / "RECORD").write_text("helper.py,sha256=AAAA,6\n")
    (site / "helper.py").write_text("K = 1\n")
    one = cellenv.package_set(env)
    (site / "helper.py").write_text("K = 2\n")
    assert cellenv.package_set(env) != one


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_in_a_site_folder_counts_by_what_it_is_and_is_never_read(tmp_path: Path) -> None:
    """Opening a pipe no one writes to waits for ever: the package set would never come."""
    env = make_env(tmp_path / "env")
    site = next(env.glob("lib/python3.9/site-packages"))
    before = cellenv.package_set(env)
    os.mkfifo(site / "a_pipe")
    found: list[str | None] = []
    asking = threading.Thread(target=lambda: found.append(cellenv.package_set(env)), daemon=True)
    asking.start()
    asking.join(timeout=30)
    assert found and found[0] != before


def test_a_file_of_a_site_folder_whose_name_is_not_utf8_counts(tmp_path: Path) -> None:
    """A name in Latin-1 (`café.txt`): the file system holds bytes, and the package set is asked all the same."""
    env = make_env(tmp_path / "env")
    site = next(env.glob("lib/python3.9/site-packages"))
    before = cellenv.package_set(env)
    (site / os.fsdecode(b"caf\xe9.txt")).write_text("data\n")
    assert cellenv.package_set(env) not in {None, before}


def test_an_environment_without_torch_is_not_half_built(tmp_path: Path) -> None:
    (tmp_path / "env" / "lib" / "python3.9" / "site-packages").mkdir(parents=True)
    assert not cellenv.holds_torch(tmp_path / "env") and not cellenv.half_built(tmp_path / "env")


def test_the_worker_must_report_the_cells_python_and_torch() -> None:
    cell = Cell(Version("2.2.0"), None, PYTHON, ("torch==2.2.0",), "2.2.0")
    assert worker_mismatch(cell, {"python": "3.9.18", "torch": "2.2.0"}) == ""
    assert worker_mismatch(cell, {"python": "3.9.18", "torch": "2.2.0+cpu"}) == ""
    assert (
        worker_mismatch(cell, {"python": "3.12.1", "torch": "2.2.0"})
        == "the worker ran Python 3.12.1, but the cell's is 3.9.18"
    )
    assert (
        worker_mismatch(cell, {"python": "3.9.18", "torch": "2.2.1"})
        == "the worker imported torch 2.2.1, but the cell is torch 2.2.0"
    )
    assert worker_mismatch(cell, {"python": "3.9.18", "torch": "not a version"}).startswith(
        "the worker imported torch not a"
    )


# --- the torch build --------------------------------------------------------------


def test_the_build_is_read_from_the_record_without_torch(tmp_path: Path) -> None:
    build = cellenv.torch_build(make_env(tmp_path / "env"))
    assert build is not None and build.startswith("1.9.0 sha256:")


def test_installer_details_do_not_change_the_build(tmp_path: Path) -> None:
    """Scripts (their first line names the env), bytecode and installer files differ between equal installs."""
    other = TORCH_RECORD.replace("DDDD", "XXXX").replace("FFFF", "YYYY")
    other += "torch/__pycache__/functional.cpython-39.pyc,sha256=ZZZZ,5\ntorch-1.9.0.dist-info/direct_url.json,,\n"
    build = cellenv.torch_build(make_env(tmp_path / "a"))
    assert build is not None and build == cellenv.torch_build(make_env(tmp_path / "b", other))


def test_a_different_file_is_a_different_build(tmp_path: Path) -> None:
    rebuilt = TORCH_RECORD.replace("BBBB", "B2B2")
    assert cellenv.torch_build(make_env(tmp_path / "a")) != cellenv.torch_build(make_env(tmp_path / "b", rebuilt))


def test_windows_layout_is_read_too(tmp_path: Path) -> None:
    posix = cellenv.torch_build(make_env(tmp_path / "a"))
    assert posix is not None and cellenv.torch_build(make_env(tmp_path / "b", windows=True)) == posix


def test_no_build_without_torch_or_without_its_record(tmp_path: Path) -> None:
    empty = tmp_path / "empty" / "lib" / "python3.9" / "site-packages"
    empty.mkdir(parents=True)
    assert cellenv.torch_build(tmp_path / "empty") is None
    assert cellenv.torch_build(tmp_path / "missing") is None
    assert cellenv.torch_build(make_env(tmp_path / "unrecorded", record=None)) is None


def test_installed_versions_are_read_without_importing_and_a_broken_dist_info_names_nothing(tmp_path: Path) -> None:
    env = make_env(tmp_path / "env")
    (cellenv.site_packages(env)[0] / "broken-1.0.dist-info").mkdir()  # no METADATA: a stopped install's leftover
    assert cellenv.installed_versions(env, ["Torch", "broken", "absent"]) == {
        "Torch": "1.9.0", "broken": None, "absent": None,
    }  # fmt: skip


def test_a_new_environment_lacks_its_seed_and_one_that_holds_it_is_left_as_it_is(tmp_path: Path) -> None:
    env = make_env(tmp_path / "env")
    seed = ("pip==23.2.1", "setuptools==65.5.0")
    assert cellenv.unseeded(env, seed) == ["pip", "setuptools"]
    site = next(env.glob("lib/python3.9/site-packages"))
    for name, version in (("pip", "23.2.1"), ("setuptools", "72.0.0")):  # a constraint may have moved one since
        info = site / f"{name}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    assert cellenv.unseeded(env, seed) == []


def test_the_constraints_are_written_one_a_line_for_the_installer(tmp_path: Path) -> None:
    path = cellenv.constraints_file(tmp_path, ["numpy<2", "setuptools<70"])
    assert path.parent == tmp_path and path.read_text() == "numpy<2\nsetuptools<70\n"


def test_an_environment_built_for_other_packages_is_said_to_be(tmp_path: Path) -> None:
    env = make_env(tmp_path / "env")
    assert cellenv.asked_mismatch(env, ASKED) == ""  # nothing built yet
    cellenv.mark_built(env, SOURCE, ASKED)
    assert cellenv.asked_mismatch(env, ASKED) == ""
    # The known pin was a requirement once: numpy stays where an install put it, and a new environment has none.
    with_numpy = {**ASKED, "requirements": ["torch==2.2.2", "numpy<2"], "constraints": []}
    assert cellenv.asked_mismatch(env, with_numpy).startswith("it was built for other requirements")
    (env / cellenv.MARKER).write_text(f"{cellenv.torch_build(env)}\n{cellenv.source_digest(SOURCE)}\n")
    assert cellenv.asked_mismatch(env, ASKED) != ""  # marked before what it was asked for was recorded


def test_an_environments_bytecode_is_where_its_pythons_pycache_prefix_mirrors_it(tmp_path: Path) -> None:
    env = tmp_path / ".nox" / "probe-2-1-0"
    env.mkdir(parents=True)
    assert cellenv.bytecode_of(env) == []  # its Python never ran
    mirror = cellenv.pycache_prefix(env) / env.relative_to(env.anchor)
    (mirror / "lib").mkdir(parents=True)
    assert cellenv.bytecode_of(env) == [mirror]
    assert cellenv.bytecode_of(tmp_path / ".nox" / "probe-2-1-1") == []
