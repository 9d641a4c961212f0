"""A child nox runs the named sessions of a noxfile, with the variables given, into a log or through."""

from __future__ import annotations

from pathlib import Path

from torchmatrix.sessions import childnox


def test_the_command_names_each_session(tmp_path: Path) -> None:
    noxfile = tmp_path / "noxfile.py"
    assert childnox.command(noxfile, tmp_path, ["probe(1.9.0)", "probe(1.10.0)"])[-3:] == [
        "--sessions",
        "probe(1.9.0)",
        "probe(1.10.0)",
    ]


def test_the_line_that_says_why_a_child_stopped_is_found_in_its_log(tmp_path: Path) -> None:
    log = tmp_path / "cell.log"
    log.write_text(
        "$ nox -s probe(1.9.0)\nnox > Running session probe(1.9.0)\n"
        "torchmatrix: error: probe(1.9.0) is no longer in the plan\nnox > Session probe(1.9.0) failed.\n"
    )
    assert childnox.last_error(log) == "probe(1.9.0) is no longer in the plan"
    log.write_text("nox > Session probe(1.9.0) aborted: cannot write x.json: its lock x/.lock cannot be opened\n")
    assert childnox.last_error(log) == "probe(1.9.0) aborted: cannot write x.json: its lock x/.lock cannot be opened"
    log.write_text("nox > Session probe(1.9.0) was successful in 1 second.\n")
    assert childnox.last_error(log) == "" and childnox.last_error(tmp_path / "missing.log") == ""
