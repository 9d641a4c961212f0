"""The arguments of `nox -s probe-installed`: the Pythons to probe, each an executable."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from torchmatrix.errors import UsageError
from torchmatrix.sessions.installed import parse


def test_the_pythons_named_are_kept_in_order() -> None:
    other = str(Path(sys.executable).resolve())
    assert parse([sys.executable, other], Path("/")) == [sys.executable, other]


def test_no_python_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="required: PYTHON") as error:
        parse([], Path("/"))
    assert "usage: nox -s probe-installed -- PYTHON [PYTHON ...]" in str(error.value)


def test_a_path_that_is_no_program_says_so(tmp_path: Path) -> None:
    text = tmp_path / "python"
    text.write_text("not a program")
    for path in (str(tmp_path / "missing"), str(text), str(tmp_path)):
        with pytest.raises(UsageError, match=rf"not an executable file \(looked at {path}\); name a Python"):
            parse([path], Path("/"))
    with pytest.raises(UsageError, match=r"no-such-python-here: not an executable file \(not on PATH\)"):
        parse(["no-such-python-here"], Path("/"))


def test_a_relative_path_is_from_where_nox_was_started(tmp_path: Path) -> None:
    (tmp_path / "env" / "bin").mkdir(parents=True)
    (tmp_path / "env" / "bin" / "python").symlink_to(sys.executable)
    assert parse(["env/bin/python"], tmp_path) == [str(tmp_path / "env" / "bin" / "python")]
