"""`nox -s "probe(<release>)" -- …`: the arguments a probe session takes, and nothing else."""

from __future__ import annotations

import pytest

from torchmatrix.errors import UsageError
from torchmatrix.sessions.probe import ProbeRequest, parse


def test_force_and_repeat_come_from_the_session_arguments() -> None:
    assert parse([]) == ProbeRequest()
    assert parse(["--force"]) == ProbeRequest(force=True)
    assert parse(["--repeat", "5"]) == ProbeRequest(repeat=5)
    assert parse(["--repeat=3", "--force"]) == ProbeRequest(True, 3)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--froce"], "unrecognized arguments: --froce"),
        (["--repeat", "0"], "argument --repeat: '0' is not a number of runs from 1 to 1000"),
        (["--repeat", "many"], "'many' is not a number of runs"),
        (["--rep", "2"], "unrecognized arguments: --rep 2"),
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
