"""A cell's environment: which Python made it, and whether a finished install vouches for its torch."""

from __future__ import annotations

from pathlib import Path

from packaging.version import Version

from torchmatrix import cellenv
from torchmatrix.interpreters import Interpreter
from torchmatrix.plan import Cell
from torchmatrix.sessions.probe import mislabelled

from .test_freshness import make_env

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
    cellenv.mark_built(env)
    assert cellenv.built_torch(env) is not None and not cellenv.half_built(env)
    record = next(env.glob("lib/python3.9/site-packages/torch-*.dist-info")) / "RECORD"
    record.write_text(record.read_text().replace("BBBB", "B2B2"))  # another build over the marked one
    assert cellenv.built_torch(env) is None and cellenv.half_built(env)
    cellenv.mark_built(env)
    cellenv.unmark_built(env)
    assert cellenv.built_torch(env) is None


def test_an_environment_without_torch_is_not_half_built(tmp_path: Path) -> None:
    (tmp_path / "env" / "lib" / "python3.9" / "site-packages").mkdir(parents=True)
    assert not cellenv.holds_torch(tmp_path / "env") and not cellenv.half_built(tmp_path / "env")


def test_the_worker_must_report_the_cells_python_and_torch() -> None:
    cell = Cell(Version("2.2.0"), None, PYTHON, ("torch==2.2.0",), "2.2.0")
    assert mislabelled(cell, {"python": "3.9.18", "torch": "2.2.0"}) == ""
    assert mislabelled(cell, {"python": "3.9.18", "torch": "2.2.0+cpu"}) == ""
    assert (
        mislabelled(cell, {"python": "3.12.1", "torch": "2.2.0"})
        == "the worker ran Python 3.12.1, but the cell's is 3.9.18"
    )
    assert (
        mislabelled(cell, {"python": "3.9.18", "torch": "2.2.1"})
        == "the worker imported torch 2.2.1, but the cell is torch 2.2.0"
    )
    assert mislabelled(cell, {"python": "3.9.18", "torch": "not a version"}).startswith(
        "the worker imported torch not a"
    )
