"""`nox -s verify`: its arguments, and which cells `--run` runs first."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from torchmatrix import identity, results
from torchmatrix.core import Kind, Outcome, Probe, Record
from torchmatrix.errors import UsageError
from torchmatrix.matrix import Expectation, TorchEntry
from torchmatrix.sessions import childnox
from torchmatrix.sessions.handback import HandBack, Stored
from torchmatrix.sessions.verify import VerifyRequest, misnamed, parse, run, stale_cells

from .test_bisect_session import Session, SessionError
from .test_project import project
from .test_results import result

READ = {identity.READ: {}}
"""What the runner says a record's pair read, where it read no file: every record it makes says it."""


def test_the_arguments() -> None:
    assert parse([]) == VerifyRequest()
    assert parse(["--run", "--machine", "a", "--machine", "b"]) == VerifyRequest(True, ("a", "b"))
    with pytest.raises(UsageError, match=r"unknown option --rnu: did you mean '--run'\?\n  usage: nox -s verify"):
        parse(["--rnu"])


def test_run_takes_the_covered_cells_without_an_up_to_date_result_here(tmp_path: Path) -> None:
    expect = (
        Expectation("autograd_dot", "cpu", SpecifierSet("<1.12"), Outcome.PASS),
        Expectation("batched_matmul", "cpu", SpecifierSet("==1.12.1"), Outcome.PASS),
        Expectation("batched_matmul", "cpu", SpecifierSet("==2.2.0"), Outcome.PASS, machine="a-mac"),  # not here
    )
    here = project(tmp_path, *(TorchEntry(Version(v)) for v in ("1.9.0", "1.11.0", "1.12.1", "2.2.0")), expect=expect)
    cell_9, cell_11, cell_12, _not_covered = here.cells

    def stored(cell, inputs=None, **changes):
        inputs = inputs or here.inputs(cell)
        records = [Record(probe, "cpu", Outcome.PASS, {}, "", 0.1, {**identity.record_inputs(inputs, probe), **READ})
                   for probe in ("autograd_dot", "batched_matmul")]  # fmt: skip
        fields = dict(cell_id=cell.id, python=cell.python, machine="ci-box", inputs=inputs, records=tuple(records))
        return result(str(cell.torch), **dict(fields, **changes))

    assert stale_cells(here, []) == [cell_9, cell_11, cell_12]
    up_to_date = [stored(cell_9), stored(cell_11), stored(cell_12)]
    assert stale_cells(here, up_to_date) == []
    changed_probe = dict(here.inputs(cell_12), probes={"batched_matmul": "edited since"})
    elsewhere = stored(cell_11, machine="laptop")
    assert stale_cells(here, [stored(cell_9), elsewhere, stored(cell_12, inputs=changed_probe)]) == [cell_11, cell_12]


def test_run_leaves_out_a_covered_cell_that_cannot_run_here(tmp_path: Path) -> None:
    expect = (Expectation("autograd_dot", "cpu", SpecifierSet(">=1.9"), Outcome.PASS),)
    here = project(tmp_path, TorchEntry(Version("1.9.0")), TorchEntry(Version("1.10.5")), expect=expect)
    runnable, no_wheel = here.cells
    assert no_wheel.outcome is Outcome.NO_WHEEL
    assert stale_cells(here, []) == [runnable]


def test_run_takes_a_cell_whose_records_name_every_case_of_a_parametrized_tests_base_id_as_up_to_date(
    tmp_path: Path,
) -> None:
    expect = (Expectation("test_dot.py::test_grad", "cpu", SpecifierSet(">=1.9"), Outcome.PASS),)
    here = project(tmp_path, TorchEntry(Version("1.9.0")), expect=expect)
    (tmp_path / "test_dot.py").write_text("import pytest\n")
    tests = Probe("test_dot.py", tmp_path / "test_dot.py", kind=Kind.PYTEST, root=tmp_path)
    here = dataclasses.replace(here, matrix=dataclasses.replace(here.matrix, probes=(tests,)))
    (cell,) = here.cells
    inputs = here.inputs(cell)
    cases = tuple(
        here.identified(inputs, Record(f"test_dot.py::test_grad[{kind}]", "cpu", Outcome.PASS, {}, "", 0.1, READ))
        for kind in ("a", "b")
    )
    stored = result(str(cell.torch), cell_id=cell.id, python=cell.python, machine="ci-box", inputs=inputs,
                    records=cases)  # fmt: skip
    assert stale_cells(here, [stored]) == []  # `--run` would change nothing: it is no cell to run


def test_a_test_id_its_file_does_not_hold_is_said_with_the_closest_before_any_run_is_suggested(tmp_path: Path) -> None:
    typo = Expectation(
        "test_dot.py::test_gard", "cpu", SpecifierSet(">=1.9"), Outcome.PASS, where="matrix.yaml:9 expect[0]"
    )
    here = project(tmp_path, TorchEntry(Version("1.9.0")), expect=(typo,))
    (tmp_path / "test_dot.py").write_text("import pytest\n")
    tests = Probe("test_dot.py", tmp_path / "test_dot.py", kind=Kind.PYTEST, root=tmp_path)
    here = dataclasses.replace(here, matrix=dataclasses.replace(here.matrix, probes=(tests,)))
    (cell,) = here.cells
    inputs = here.inputs(cell)
    held = tuple(
        here.identified(inputs, Record(f"test_dot.py::{name}", "cpu", Outcome.PASS, {}, "", 0.1, READ))
        for name in ("test_grad", "test_sum")
    )
    stored = result(str(cell.torch), cell_id=cell.id, python=cell.python, machine="ci-box", inputs=inputs,
                    records=held)  # fmt: skip
    assert stale_cells(here, [stored]) == [], "its file's records stand: running it again makes no such test"
    said = "matrix.yaml:9 expect[0]: probe(1.9.0) holds no test 'test_dot.py::test_gard' on cpu; did you mean "
    assert misnamed(here, [stored]) == [said + "'test_dot.py::test_grad'?"]
    far = dataclasses.replace(typo, probe="test_dot.py::test_unrelated_name")
    elsewhere = dataclasses.replace(here, matrix=dataclasses.replace(here.matrix, expect=(far,)))
    assert misnamed(elsewhere, [stored]) == [
        "matrix.yaml:9 expect[0]: probe(1.9.0) holds no test 'test_dot.py::test_unrelated_name' on cpu; "
        "it holds test_dot.py::test_grad, test_dot.py::test_sum"
    ]
    assert misnamed(here, []) == [], "no result yet: what it holds is not known, and --run is what to do"

    results.write(here.results_dir, stored)
    session = Session()
    with pytest.raises(SessionError, match="0 of 1 expectations hold"):
        run(here, session, tmp_path / "noxfile.py")
    assert said + "'test_dot.py::test_grad'?" in session.said
    assert not any("--run" in line for line in session.said)


def test_a_cell_run_that_stored_nothing_is_named_with_what_its_probe_session_handed_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expect = (Expectation("autograd_dot", "cpu", SpecifierSet(">=1.9"), Outcome.PASS),)
    here = project(tmp_path, TorchEntry(Version("1.9.0")), expect=expect)
    said = (
        "the child nox handed back nothing: it stopped before its probe session began, or could not write its "
        "hand-back (exit 1); its output is above"
    )

    def child(project, session, noxfile, cells) -> dict[str, HandBack]:
        return {cell.session: HandBack(cell.session, Stored.NOTHING, None, message=said) for cell in cells}

    monkeypatch.setattr(childnox, "run_cells", child)
    session = Session("--run")
    with pytest.raises(SessionError):  # the expectation holds nowhere: nothing tested it
        run(here, session, tmp_path / "noxfile.py")
    assert f"ran probe(1.9.0), and they stored no up-to-date result on ci-box; probe(1.9.0): {said}" in session.said


@pytest.mark.parametrize(
    ("command", "typed"), [(None, "nox -s verify -- --run"), ("torchmatrix", "torchmatrix verify --run")]
)
def test_a_stale_cell_is_said_with_the_command_that_runs_it_first(
    tmp_path: Path, command: str | None, typed: str
) -> None:
    """The hint names the command that started the session: nox's, or the one that runs the sessions itself."""
    expect = (Expectation("autograd_dot", "cpu", SpecifierSet(">=1.9"), Outcome.PASS),)
    here = project(tmp_path, TorchEntry(Version("1.9.0")), expect=expect)
    session = Session()
    with pytest.raises(SessionError):  # no result: the expectation holds nowhere
        run(here, session, tmp_path / "noxfile.py", command)
    assert f"no up-to-date result on ci-box for probe(1.9.0); `{typed}` runs them first" in session.said
    assert command is None or not any("nox -s" in line for line in session.said), session.said
