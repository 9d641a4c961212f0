"""The hand-back file: written on every way out of a probe session, read back without trust."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import nox
import pytest
from nox.command import CommandFailed

from torchmatrix import variables
from torchmatrix.errors import TorchmatrixError
from torchmatrix.sessions import handback
from torchmatrix.sessions.handback import HandBack, Stored

SESSION = "probe(1.12.0)"
FINISHED = "2026-03-01T00:00:00+00:00"


def handed_back(folder: Path, data: Any) -> HandBack | None:
    """What ``data``, written as the hand-back of SESSION in ``folder``, reads as."""
    handback.path(folder, SESSION).write_text(json.dumps(data))
    return handback.received(folder, SESSION)


def test_a_hand_back_reads_as_it_was_written(tmp_path: Path) -> None:
    result = tmp_path / "results" / "ci-box" / "torch-1.12.0-py3.10.json"
    for handed in (
        HandBack(SESSION, Stored.WRITTEN, result, FINISHED, "no-wheel: no torch 1.12.0 wheel for Python 3.13"),
        HandBack(SESSION, Stored.UP_TO_DATE, result, FINISHED, "torch-1.12.0-py3.10: every record is up to date"),
        HandBack(SESSION, Stored.NOTHING, None, message="the worker ran Python 3.9, but the cell's is 3.10"),
    ):
        handback.write(tmp_path, handed)
        assert handback.received(tmp_path, SESSION) == handed
    assert handback.received(tmp_path, "probe(1.9.0)") is None  # it handed back nothing


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ([], "not a JSON object"),
        ({"schema": 2}, "schema 2, where this torchmatrix writes 1"),
        ({"schema": 1, "stored": "built"}, "'stored' is 'built', not one of written, up-to-date, nothing"),
        ({"schema": 1, "stored": "written", "result": None}, "'stored' is 'written', and 'result' is null"),
        ({"schema": 1, "stored": "nothing", "result": "x.json"}, "'stored' is 'nothing', and 'result' names a file"),
        ({"schema": 1, "stored": "nothing", "result": None, "session": SESSION}, "no 'message'"),
        ({"schema": 1, "stored": "nothing", "result": None, "session": 1, "message": ""}, "'session' is a number"),
        ({"schema": 1, "stored": "nothing", "result": None, "session": SESSION, "message": ""}, "no 'finished_at'"),
    ],
)
def test_a_file_that_is_no_hand_back_is_refused_with_what_is_wrong(tmp_path: Path, data: Any, reason: str) -> None:
    with pytest.raises(ValueError) as refused:
        handed_back(tmp_path, data)
    assert str(refused.value) == reason


def test_a_file_that_is_not_json_or_is_another_sessions_is_refused(tmp_path: Path) -> None:
    handback.path(tmp_path, SESSION).write_text('{"schema": 1,')
    with pytest.raises(ValueError, match=r"not valid JSON \(Expecting property name"):
        handback.received(tmp_path, SESSION)
    other = HandBack("probe(1.9.0)", Stored.NOTHING, None)
    with pytest.raises(ValueError, match=r"is the hand-back of probe\(1.9.0\), not of probe\(1.12.0\)"):
        handed_back(tmp_path, other.to_json())


def run_body(folder: Path, body: Any) -> HandBack | None:
    """Run ``body(ending)`` as a probe session's body that hands back in ``folder``: what it handed back."""
    try:
        with handback.handing_back(SESSION, {variables.HANDBACK.name: str(folder)}) as ending:
            body(ending)
    except BaseException:  # noqa: BLE001 - a session's body ends in whatever it raises; the hand-back says what
        pass
    return handback.received(folder, SESSION)


def test_every_way_out_of_a_probe_session_is_handed_back_with_its_message(tmp_path: Path) -> None:
    result = tmp_path / "torch-1.12.0-py3.10.json"
    session = cast(nox.Session, None)  # skip and error raise nox's exceptions, whatever the session

    def wrote(ending: handback.ResultFile) -> None:
        ending.written(result, FINISHED)

    def up_to_date(ending: handback.ResultFile) -> None:
        ending.up_to_date(result, FINISHED)
        nox.Session.skip(session, "torch-1.12.0-py3.10: every record is up to date")

    def stored_then_aborted(ending: handback.ResultFile) -> None:
        ending.written(result, FINISHED)
        nox.Session.error(session, "install-error: installing torch==1.12.0 failed")

    def raising(error: BaseException) -> Any:
        def body(ending: handback.ResultFile) -> None:
            raise error

        return body

    assert run_body(tmp_path, wrote) == HandBack(SESSION, Stored.WRITTEN, result, FINISHED)
    assert run_body(tmp_path, up_to_date) == HandBack(
        SESSION, Stored.UP_TO_DATE, result, FINISHED, "torch-1.12.0-py3.10: every record is up to date"
    )
    assert run_body(tmp_path, stored_then_aborted) == HandBack(
        SESSION, Stored.WRITTEN, result, FINISHED, "install-error: installing torch==1.12.0 failed"
    )
    for error, message in (
        (TorchmatrixError("probe(1.12.0) is no longer in the plan of matrix.yaml"), "probe(1.12.0) is no longer"),
        (CommandFailed("Returned code 1"), "Returned code 1"),
        (KeyError("python"), "KeyError: 'python'"),
        (KeyboardInterrupt(), "KeyboardInterrupt"),
    ):
        handed = run_body(tmp_path, raising(error))
        assert handed is not None and (handed.stored, handed.result) == (Stored.NOTHING, None)
        assert handed.message.startswith(message)


def test_a_session_no_one_asked_to_hand_back_writes_nothing(tmp_path: Path) -> None:
    with handback.handing_back(SESSION, {}) as ending:
        ending.written(tmp_path / "torch-1.12.0-py3.10.json", FINISHED)
    assert list(tmp_path.iterdir()) == []


def test_a_hand_back_that_cannot_be_written_is_said_and_leaves_the_session_ending_as_it_did(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder that cannot be made (a file stands in its way; a full disk alike) costs a warning, not a traceback."""
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    asked = {variables.HANDBACK.name: str(blocked / "handback")}
    with pytest.raises(TorchmatrixError, match="the session's own error"), handback.handing_back(SESSION, asked):
        raise TorchmatrixError("the session's own error")
    with handback.handing_back(SESSION, asked) as ending:
        ending.written(tmp_path / "torch-1.12.0-py3.10.json", FINISHED)
    warnings = capsys.readouterr().err.splitlines()
    assert len(warnings) == 2
    assert all(line.startswith(f"torchmatrix: warning: cannot hand back how {SESSION} ended in ") for line in warnings)
