"""`nox -s report`'s own rules: a bisection's answer is stale when a record it rests on is stale for its question;
the cells shown are the matrix's as the run has it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from packaging.version import Version

from torchmatrix import freshness, identity, variables
from torchmatrix import project as projects
from torchmatrix.bisection.standing import answers_marked_stale
from torchmatrix.bisection.summaries import Summary
from torchmatrix.core import Outcome, Record
from torchmatrix.matrix import TorchEntry, pep723
from torchmatrix.project import Project
from torchmatrix.results import CellResult
from torchmatrix.sessions.report import AsRan, _matrix_cells, _probe_sources
from torchmatrix.views import model

from ..conftest import ROOT
from .test_project import project
from .test_results import result
from .test_summaries import summary_json

READ = {identity.READ: {}}
"""What the runner says a record's pair read, where it read no file."""

ENDS = ("1.11.0", "1.12.0")
"""The releases the answer autograd_dot on cpu rests on (test_summaries.FOUND)."""


def stored_ends(
    here: Project, repeat: int, index_url: str, outcomes: tuple[Outcome, ...] = (Outcome.FAIL, Outcome.PASS)
) -> list[CellResult]:
    """The two ends' results as the bisection stored them (OLD failed, NEW passed: test_summaries.FOUND): made from
    what it asked, on this project's machine."""
    asked = here.with_repeat(repeat).with_sources(index_url, ())
    made = []
    for torch, outcome in zip(ENDS, outcomes, strict=True):
        cell = asked.plan_release(Version(torch))
        read = {identity.READ: {}}  # as the runner says of every record it makes
        record = asked.identified(asked.inputs(cell), Record("autograd_dot", "cpu", outcome, {}, "", 0.1, read))
        made.append(result(torch, machine=here.machine, records=(record,)))
    return made


def answer(repeat: int, index_url: str) -> Summary:
    steps = [{"version": torch, "cell": f"torch-{torch}-py3.10"} for torch in ENDS]  # as test_results.result files it
    data = summary_json(machine="ci-box", repeat=repeat, index_url=index_url, find_links=[], steps=steps)
    found = Summary.from_json(data)
    assert found is not None
    return found


def staleness(here: Project, summary: Summary, stored: list[CellResult]) -> list[bool]:
    (marked,) = answers_marked_stale(here, [summary], stored)
    return [change.stale for change in marked.changes if change.probe == "autograd_dot"]


def test_an_answer_is_current_while_its_records_are_for_its_own_runs_and_source(tmp_path: Path) -> None:
    """Five runs per pair from another index: not the matrix's, and still no change since."""
    here = project(tmp_path, TorchEntry(Version("1.12.1")))
    stored = stored_ends(here, 5, "https://mirror.example/simple")
    assert staleness(here, answer(5, "https://mirror.example/simple"), stored) == [False]
    assert staleness(here, answer(1, "https://pypi.org/simple"), stored) == [True]  # another question's records


def test_the_report_of_probe_sessions_of_their_own_runs_per_pair_judges_the_cells_they_ran_by_them(
    tmp_path: Path,
) -> None:
    """``probe --repeat 2`` of one release: its records are current in the report it queues, those of a cell it did
    not run are judged by the matrix's runs per pair, and a later report, of the matrix's, says what changed."""
    here = project(tmp_path, TorchEntry(Version("1.12.1")))
    stored = stored_ends(here, 2, here.matrix.index_url)
    ran = AsRan(here, here.with_repeat(2), (stored[0].session,), here.matrix.probes)
    assert [result.records[0].outcome for result in freshness.marked_stale(stored, ran)] == [
        Outcome.FAIL,
        Outcome.STALE,
    ]
    [later, _] = freshness.marked_stale(stored, here)
    assert later.records[0].outcome is Outcome.STALE and "the runs per pair changed: 2 → 1" in later.records[0].message


def test_an_answer_is_stale_once_what_its_records_were_made_from_changes(tmp_path: Path) -> None:
    """Not only its probe: a requirement the matrix added since makes its records, and so the answer, stale."""
    here = project(tmp_path, TorchEntry(Version("1.12.1")))
    stored = stored_ends(here, 5, "https://pypi.org/simple")
    summary = answer(5, "https://pypi.org/simple")
    assert staleness(here, summary, stored) == [False]
    probe = dataclasses.replace(here.matrix.probes[0], requires=("scipy==1.11.4",))
    pinned = dataclasses.replace(here, matrix=dataclasses.replace(here.matrix, probes=(probe, *here.matrix.probes[1:])))
    assert staleness(pinned, summary, stored) == [True]


def test_an_answer_is_stale_once_a_record_it_rests_on_is_replaced_by_one_that_shows_otherwise(tmp_path: Path) -> None:
    """The release it says failed, run again since (its helper file edited back, another bisection of it), current,
    and passing: the change it says that release shows is not what is stored."""
    here = project(tmp_path, TorchEntry(Version("1.12.1")))
    summary = answer(5, "https://pypi.org/simple")
    assert staleness(here, summary, stored_ends(here, 5, "https://pypi.org/simple")) == [False]
    rerun = stored_ends(here, 5, "https://pypi.org/simple", (Outcome.PASS, Outcome.PASS))
    assert staleness(here, summary, rerun) == [True]
    untestable = stored_ends(here, 5, "https://pypi.org/simple", (Outcome.FAIL, Outcome.UNAVAILABLE))
    assert staleness(here, summary, untestable) == [True]
    assert staleness(here, summary, stored_ends(here, 5, "https://pypi.org/simple")[1:]) == [True]  # one end gone


def test_an_answer_rests_on_the_cells_its_bisection_ran_and_no_other_python_s(tmp_path: Path) -> None:
    """Another matrix sharing the output ran a release it names on another Python, where it fails otherwise: that
    is another cell, and another question."""
    here = project(tmp_path, TorchEntry(Version("1.12.1")))
    stored = stored_ends(here, 5, "https://pypi.org/simple")
    other = [dataclasses.replace(each, cell_id=each.cell_id.replace("3.10", "3.12"), python="3.12") for each in stored]
    flipped = [
        dataclasses.replace(each, records=tuple(dataclasses.replace(r, outcome=Outcome.ERROR) for r in each.records))
        for each in other
    ]
    assert staleness(here, answer(5, "https://pypi.org/simple"), stored + flipped) == [False]


def test_the_table_after_a_run_of_chosen_releases_is_of_those_and_a_bisects_child_keeps_the_matrixs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`torchmatrix probe --torch 1.11.0` shows what it ran; the child nox of a bisect, which runs one release with
    the same variable and a hand-back folder, reports the matrix its file names."""
    chosen = {variables.TORCH.name: "1.11.0"}
    ran = dataclasses.replace(project(tmp_path, TorchEntry(Version("1.11.0"))), caller=chosen)
    built = result("1.11.0", machine=ran.machine)
    assert _matrix_cells(ran).why_not(built) == ""
    listed = project(tmp_path, TorchEntry(Version("1.12.1")))
    monkeypatch.setattr(projects, "load", lambda root, environ: listed)  # the matrix as its file says
    child = dataclasses.replace(ran, caller={**chosen, variables.HANDBACK.name: str(tmp_path)})
    assert _matrix_cells(child).why_not(built) == "torch 1.11.0 is not among the matrix's releases"


def test_the_probes_whose_records_ask_for_repro_scripts_are_read_from_the_matrix_or_probes_beside_it(
    tmp_path: Path,
) -> None:
    """A probe of the matrix from its file; one it no longer has from probes/ beside it; one that asks none, or
    that no probe's name names, gets none."""
    here = project(tmp_path, TorchEntry(Version("1.12.1")))
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "opsweep.py").write_text((ROOT / "probes" / "opsweep.py").read_text("utf-8"), "utf-8")
    asking = {"repro": {"function": "reproduce", "arguments": {}}}
    records = [Record(name, "cpu", Outcome.PASS, dict(asking), "", 0.1) for name in ("autograd_dot", "opsweep", "../x")]
    records.append(Record("batched_matmul", "cpu", Outcome.PASS, {}, "", 0.1))
    found = _probe_sources(here, model.build([result("1.12.1", records=tuple(records))]))
    assert sorted(found) == ["autograd_dot", "opsweep"]
    assert found["autograd_dot"].probe_folder == tmp_path and found["autograd_dot"].source.startswith("# autograd_dot")
    sweep = found["opsweep"]
    assert (sweep.probe_folder, sweep.scripts, sweep.folder) == (tmp_path / "probes", tmp_path / "reports" / "repro",
                                                                 "reports/repro")  # fmt: skip
    assert sweep.dependencies == pep723.dependencies(ROOT / "probes" / "opsweep.py")


def test_the_report_of_probe_sessions_of_their_own_runs_per_pair_judges_a_record_they_left_by_the_matrixs(
    tmp_path: Path,
) -> None:
    """``probe a.py --repeat 2`` of a cell that holds b.py's record of one run per pair, left as it was: b.py's
    record is current by the matrix's runs per pair, which made it, and a.py's by the run's."""
    here = project(tmp_path, TorchEntry(Version("1.12.1")))
    (cell,) = here.cells
    taken, left = here.with_repeat(2), here
    records = (
        taken.identified(taken.inputs(cell), Record("autograd_dot", "cpu", Outcome.PASS, {}, "", 0.1, READ)),
        left.identified(left.inputs(cell), Record("batched_matmul", "cpu", Outcome.PASS, {}, "", 0.1, READ)),
    )
    stored = result(str(cell.torch), cell_id=cell.id, python=cell.python, machine=here.machine, records=records)
    (marked,) = freshness.marked_stale([stored], AsRan(here, taken, (stored.session,), here.matrix.probes))
    assert [(record.probe, record.outcome) for record in marked.records] == [
        ("autograd_dot", Outcome.PASS),
        ("batched_matmul", Outcome.PASS),
    ], marked.records


def test_a_record_of_a_probe_the_run_was_not_given_is_judged_by_the_matrix_whatever_runs_per_pair_made_it(
    tmp_path: Path,
) -> None:
    """``probe a.py --repeat 2`` of a cell that holds b.py's record, made by an earlier ``--repeat 2`` of b.py: b.py's
    record is stale by the matrix's one run per pair, as the report before said; a.py's is current by the run's."""
    here = project(tmp_path, TorchEntry(Version("1.12.1")))
    (cell,) = here.cells
    taken = here.with_repeat(2)
    records = tuple(
        taken.identified(taken.inputs(cell), Record(name, "cpu", Outcome.PASS, {}, "", 0.1, READ))
        for name in ("autograd_dot", "batched_matmul")
    )
    stored = result(str(cell.torch), cell_id=cell.id, python=cell.python, machine=here.machine, records=records)
    given = tuple(probe for probe in here.matrix.probes if probe.name == "autograd_dot")
    (marked,) = freshness.marked_stale([stored], AsRan(here, taken, (stored.session,), given))
    assert [(record.probe, record.outcome) for record in marked.records] == [
        ("autograd_dot", Outcome.PASS),
        ("batched_matmul", Outcome.STALE),
    ], marked.records
