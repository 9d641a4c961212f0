"""Declaring the sessions: what `nox -p` cannot select, and what to type instead."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.version import Version

from torchmatrix.matrix import TorchEntry
from torchmatrix.noxsessions import asks_help, python_selection_hint

from .test_project import project


@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        (["-s", "probe"], ""),
        (["-p", "3.11"], "the probe sessions' Pythons are paths, which -p 3.11 does not match: nox -t py3.11"),
        (["--python", "3.11", "3.12", "-s", "probe"], "which -p 3.11 3.12 does not match: nox -t py3.11 py3.12"),
        (["--pythons=3.12"], "nox -t py3.12"),
        (["-p", "probe(2.2.0)"], "which -p probe(2.2.0) does not match: nox -s 'probe(2.2.0)'"),
        (
            ["-p", "3.9"],
            "which -p 3.9 does not match; no probe session is named or has Python 3.9 (their tags: py3.12, py3.11)",
        ),
        (
            ["-p", "probe(1.0.0)", "3.11"],
            "no probe session is named or has Python probe(1.0.0) (their tags: py3.12, py3.11): nox -t py3.11",
        ),
    ],
)
def test_a_python_asked_with_p_is_told_the_tag_or_session_the_matrix_has(
    tmp_path: Path, argv: list[str], hint: str
) -> None:
    here = project(tmp_path, TorchEntry(Version("2.1.0"), pythons=("3.12",)), TorchEntry(Version("2.2.0")))
    assert [tag for tags in here.session_tags() for tag in tags if tag.startswith("py")] == ["py3.12", "py3.11"]
    said = python_selection_hint(argv, here)
    assert said.endswith(hint) if hint else said == ""


def test_while_the_matrix_is_broken_no_session_is_hinted_at() -> None:
    assert python_selection_hint(["-p", "3.11"], None) == ""


@pytest.mark.parametrize(
    ("argv", "asked"),
    [
        (["-s", "probe", "--", "--help"], True),
        (["-s", "probe", "--", "tests", "-h"], True),
        (["-s", "probe", "--help"], False),  # nox's own help, not the sessions'
        (["-s", "probe", "--", "--", "--help"], True),
        (["--not-a-nox-option", "--", "--help"], False),  # not nox's command line: the noxfile loaded elsewhere
    ],
)
def test_what_the_sessions_are_passed_is_asked_of_noxs_own_parser(argv: list[str], asked: bool) -> None:
    assert asks_help(argv) is asked
