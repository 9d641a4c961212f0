"""Declaring the sessions: what `nox -p` cannot select, and what to type instead."""

from __future__ import annotations

import pytest

from torchmatrix.noxsessions import python_selection_hint


@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        (["-s", "probe"], ""),
        (["-p", "3.10"], "the probe sessions' Pythons are paths, which -p 3.10 does not match: nox -t py3.10"),
        (["--python", "3.10", "3.11", "-s", "probe"], "which -p 3.10 3.11 does not match: nox -t py3.10 py3.11"),
        (["--pythons=3.12"], "nox -t py3.12"),
    ],
)
def test_a_python_asked_with_p_is_told_its_tag(argv: list[str], hint: str) -> None:
    said = python_selection_hint(argv)
    assert said.endswith(hint) if hint else said == ""
