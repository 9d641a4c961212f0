"""`nox -s "probe(<release>)" -- …`: the arguments a probe session takes, and nothing else; what an interrupt says."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.version import Version

from torchmatrix.errors import UsageError
from torchmatrix.interpreters import Interpreter
from torchmatrix.planner import Cell
from torchmatrix.sessions.probe import ProbeRequest, _saying_what_an_interrupt_left, parse


def test_force_and_repeat_come_from_the_session_arguments() -> None:
    assert parse([]) == ProbeRequest()
    assert parse(["--force"]) == ProbeRequest(force=True)
    assert parse(["--repeat", "5"]) == ProbeRequest(repeat=5)
    assert parse(["--repeat=3", "--force"]) == ProbeRequest(True, 3)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--froce"], "unknown option --froce: did you mean '--force'?"),
        (["--repeat", "0"], "argument --repeat: '0' is not a number of runs from 1 to 1000"),
        (["--repeat", "many"], "'many' is not a number of runs"),
        (["--rep", "2"], "unknown option --rep: did you mean '--repeat'?"),
    ],
)
def test_anything_else_is_refused_rather_than_ignored(argv: list[str], message: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse(argv)
    assert message in str(caught.value)
    assert str(caught.value).endswith('usage: nox -s "probe(<release>)" -- [--force] [--repeat N] [--strict]')
    with pytest.raises(UsageError) as typed:  # from the torchmatrix command, its own words
        parse(argv, "torchmatrix")
    assert str(typed.value).endswith(
        "usage: torchmatrix probe [SCRIPT …] [--torch V[,V…]] [--force] [--repeat N] [--strict]"
    )


class _Session:
    """What the interrupt's words are said to: a nox session's warnings."""

    def __init__(self) -> None:
        self.warnings: list[str] = []

    def warn(self, text: str) -> None:
        self.warnings.append(text)


CELL = Cell(Version("2.2.0"), None, Interpreter("/usr/bin/python3.11", (3, 11, 7), "", "path"), ("torch==2.2.0",),
            "2.2.0")  # fmt: skip


def test_an_interrupt_says_nothing_is_stored_and_goes_on_to_nox(tmp_path: Path) -> None:
    session, result = _Session(), tmp_path / "torch-2.2.0-py3.11.json"
    result.write_text("{}")  # what an earlier run stored: not this run's
    with pytest.raises(KeyboardInterrupt), _saying_what_an_interrupt_left(session, CELL.id, result):  # type: ignore[arg-type]
        raise KeyboardInterrupt
    assert session.warnings == [f"interrupted: nothing stored for {CELL.id}"]


def test_an_interrupt_after_the_result_was_written_says_where(tmp_path: Path) -> None:
    session, result = _Session(), tmp_path / "torch-2.2.0-py3.11.json"
    with pytest.raises(KeyboardInterrupt), _saying_what_an_interrupt_left(session, CELL.id, result):  # type: ignore[arg-type]
        result.write_text("{}")
        raise KeyboardInterrupt
    assert session.warnings == [f"interrupted: {CELL.id}'s result was written to {result} before"]


def test_a_session_that_is_not_interrupted_says_nothing_of_it(tmp_path: Path) -> None:
    session = _Session()
    with _saying_what_an_interrupt_left(session, CELL.id, tmp_path / "result.json"):  # type: ignore[arg-type]
        pass
    assert session.warnings == []
