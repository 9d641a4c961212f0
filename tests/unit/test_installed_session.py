"""The arguments of `nox -s probe-installed`: the Pythons to probe, each an executable."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from torchmatrix.errors import UsageError
from torchmatrix.sessions.installed import parse


def test_the_pythons_named_are_kept_in_order() -> None:
    other = str(Path(sys.executable).resolve())
    assert parse([sys.executable, other]) == [sys.executable, other]


def test_no_python_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="required: PYTHON") as error:
        parse([])
    assert "usage: nox -s probe-installed -- PYTHON [PYTHON ...]" in str(error.value)


def test_a_path_that_is_no_program_says_so(tmp_path: Path) -> None:
    text = tmp_path / "python"
    text.write_text("not a program")
    for path in (str(tmp_path / "missing"), str(text), str(tmp_path)):
        with pytest.raises(UsageError, match="not an executable file; name a Python"):
            parse([path])
