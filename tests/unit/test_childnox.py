"""A child nox runs the named sessions of a noxfile, with the variables given; its probe sessions hand back."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import nox
import pytest
from packaging.version import Version

from torchmatrix.matrix import TorchEntry
from torchmatrix.sessions import childnox, handback
from torchmatrix.sessions.handback import HandBack, Stored

from .test_project import project


def test_the_command_names_each_session(tmp_path: Path) -> None:
    noxfile = tmp_path / "noxfile.py"
    assert childnox.command(noxfile, tmp_path, ["probe(1.9.0)", "probe(1.10.0)"])[-3:] == [
        "--sessions",
        "probe(1.9.0)",
        "probe(1.10.0)",
    ]


def run_cells(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, child: Callable[[dict[str, str]], int]
) -> dict[str, HandBack]:
    """What run_cells returns for two cells of a project when the child nox does what ``child`` does with the
    variables it is given, and exits with what ``child`` returns."""
    here = project(tmp_path, TorchEntry(Version("1.11.0")), TorchEntry(Version("1.12.1")))
    session = cast(nox.Session, SimpleNamespace(env_dir=tmp_path / ".nox" / "bisect"))
    monkeypatch.setattr(childnox, "run", lambda noxfile, envdir, sessions, variables, log, arguments: child(variables))
    return childnox.run_cells(here, session, tmp_path / "noxfile.py", here.cells, tmp_path / "cells.log")


def test_what_each_probe_session_handed_back_is_returned_by_its_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = tmp_path / "reports" / "results" / "ci-box" / "torch-1.11.0-py3.10.json"
    written = HandBack("probe(1.11.0)", Stored.WRITTEN, result, "2026-03-01T00:00:00+00:00")

    def child(variables: dict[str, str]) -> int:
        handback.write(Path(variables["TORCHMATRIX_HANDBACK"]), written)
        return 1

    assert run_cells(tmp_path, monkeypatch, child) == {
        "probe(1.11.0)": written,
        "probe(1.12.1)": HandBack(
            "probe(1.12.1)",
            Stored.NOTHING,
            None,
            message="the child nox handed back nothing: it stopped before its probe session began, or could not "
            f"write its hand-back (exit 1); see {tmp_path / 'cells.log'}",
        ),
    }


def test_a_hand_back_that_cannot_be_read_is_said_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def child(variables: dict[str, str]) -> int:
        for session in ("probe(1.11.0)", "probe(1.12.1)"):
            handback.path(Path(variables["TORCHMATRIX_HANDBACK"]), session).write_text("[]")
        return 0

    handed = run_cells(tmp_path, monkeypatch, child)
    assert {back.message for back in handed.values()} == {"its hand-back cannot be read: not a JSON object"}


def test_a_child_killed_by_a_signal_is_said_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    handed = run_cells(tmp_path, monkeypatch, lambda variables: -9)
    assert {back.message.split("(")[1].split(")")[0] for back in handed.values()} == {"killed by SIGKILL"}


def test_cells_on_a_held_python_have_environments_of_their_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    here = project(tmp_path, TorchEntry(Version("1.12.1")))
    session = cast(nox.Session, SimpleNamespace(env_dir=tmp_path / ".nox" / "bisect"))
    used: list[Path] = []
    monkeypatch.setattr(
        childnox, "run", lambda noxfile, envdir, sessions, variables, log, arguments: used.append(envdir) or 0
    )
    childnox.run_cells(here, session, tmp_path / "noxfile.py", here.cells)
    childnox.run_cells(here, session, tmp_path / "noxfile.py", here.cells, settings={"TORCHMATRIX_PYTHON": "3.9"})
    assert used == [(tmp_path / ".nox").resolve(), (tmp_path / ".nox" / "held-python-3.9").resolve()]
