"""A release installed under a constraint the release beside it was not: its row says which, and why."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from torchmatrix import freshness, identity, planner
from torchmatrix.core import Constraint, Outcome, PinSource, Record
from torchmatrix.matrix import PinRule, TorchEntry, loader
from torchmatrix.project import Project
from torchmatrix.results import CellResult
from torchmatrix.views import markdown, model, page, rst, supported

from .report_data import cell
from .test_project import project
from .test_report_markdown import html, tables

KNOWN = tuple(loader.load_pin_rules(planner.KNOWN_PINS_FILE))
SETUPTOOLS = next(rule for rule in KNOWN if rule.torch == SpecifierSet(">=2.0,<2.3"))


def installed(torch: str, *constraints: str, python: str = "3.10") -> CellResult:
    records = (Record("tests/test_a.py::test_x", "cpu", Outcome.PASS, {}, "", 0.1),)
    inputs = {"devices": ["cpu"], "probes": {"tests/": "0" * 64}, "constraints": list(constraints)}
    return cell("linux-x86_64", torch, python, records, inputs=inputs)


def library() -> list[CellResult]:
    """1.12.1 and 1.13.1 under numpy<2 alone, 2.2.0 under setuptools<70 too (its known pin), 2.4.0 under none."""
    return [
        installed("1.12.1", "numpy<2"),
        installed("1.13.1", "numpy<2"),
        installed("2.2.0", "numpy<2", "setuptools<70"),
        installed("2.4.0"),
    ]


def test_a_row_with_a_constraint_its_neighbour_lacks_says_which_and_the_rule_s_reason() -> None:
    report = model.build(library(), known_pins=KNOWN)
    rows = {row.torch: row for table in report.tables for row in table.rows}
    assert list(report.row_notes) == [rows["2.2.0"]], "1.13.1's neighbours had numpy<2 too; 2.4.0 had nothing more"
    number = report.row_notes[rows["2.2.0"]]
    numpy = next(rule for rule in KNOWN if "numpy<2" in map(str, rule.constrain))
    assert report.notes[number - 1] == (
        f"torch 2.2.0 was installed under the constraint numpy<2, unlike 2.4.0: a known pin for torch {numpy.torch}, "
        f"because {' '.join(numpy.reason.split())}; setuptools<70, unlike 1.13.1 and 2.4.0: a known pin for torch "
        f"{SETUPTOOLS.torch}, because {' '.join(SETUPTOOLS.reason.split())}"
    )
    front_table, *_ = tables(html(markdown.render(report)))
    superscript = str(number).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))
    assert [row[0] for row in front_table[1:]] == ["1.12.1", "1.13.1", "2.2.0" + superscript, "2.4.0"]
    assert f'<th scope="row">2.2.0<sup>{number}</sup></th>' in page.render(report)
    assert f"2.2.0 [{number}]_" in rst.render(report)
    assert "\n\ntorch 2.2.0 was installed under the constraint numpy" in supported.render(report)  # under its table


def test_the_matrix_s_own_pin_is_named_as_such_and_a_constraint_no_rule_gives_is_said_without_why() -> None:
    own = PinRule(SpecifierSet(">=2.2"), (), "the library's CI pins it", (Requirement("setuptools<70"),))
    found = [installed("2.1.2"), installed("2.2.0", "setuptools<70"), installed("2.3.0", "scipy<2")]
    report = model.build(found, matrix_pins=(own,))
    assert [report.notes[number - 1] for number in report.row_notes.values()] == [
        "torch 2.2.0 was installed under the constraint setuptools<70, unlike 2.1.2 and 2.3.0: the matrix's pin for "
        "torch >=2.2, because the library's CI pins it",
        "torch 2.3.0 was installed under the constraint scipy<2, unlike 2.2.0",
    ]
    assert model.build([installed("2.1.2", "numpy<2"), installed("2.2.0", "numpy<2")]).row_notes == {}


def recorded(torch: str, *given: Constraint) -> CellResult:
    """A result of torch ``torch`` that records the rules of its constraints ``given``, as a cell run stores it."""
    made = installed(torch, *(constraint.text for constraint in given))
    return dataclasses.replace(made, constrained_by=given)


def test_the_reason_a_result_recorded_is_said_whatever_todays_rules_say() -> None:
    then = Constraint("numpy<2", PinSource.KNOWN, "<2.3", "the words of its day")
    found = [recorded("2.2.0", then), recorded("2.4.0")]
    said = "torch 2.2.0 was installed under the constraint numpy<2, unlike 2.4.0: a known pin for torch <2.3, because "
    for today in ((), KNOWN):  # a torchmatrix that no longer has the pin; one whose rule says it otherwise
        report = model.build(found, known_pins=today)
        assert [report.notes[number - 1] for number in report.row_notes.values()] == [f"{said}the words of its day"]
    moved = PinRule(SpecifierSet("<2.2.1"), (), "the matrix's own", (Requirement("numpy<2"),))  # a range changed
    report = model.build(found, matrix_pins=(moved,))
    assert [report.notes[number - 1] for number in report.row_notes.values()] == [f"{said}the words of its day"]


def measured(here: Project, torch: str) -> CellResult:
    """The result a run of ``here``'s cell of ``torch`` stores: a record made from its inputs, and its rules."""
    made = here.plan_release(Version(torch))
    inputs = here.inputs(made)
    made_record = Record("autograd_dot", "cpu", Outcome.PASS, {}, "", 0.1, inputs={identity.READ: {}})
    record = here.identified(inputs, made_record)  # it read nothing, as the runner says of every record it makes
    return cell(here.machine, torch, made.python, (record,), inputs=inputs, constrained_by=made.constrained_by)


def test_a_rule_put_in_other_words_makes_no_record_stale_and_its_results_keep_the_words_they_had(
    tmp_path: Path,
) -> None:
    releases = (TorchEntry(Version("2.2.0")), TorchEntry(Version("2.4.0")))
    then = PinRule(SpecifierSet("<2.3"), (), "the words of its day", (Requirement("numpy<2"),))
    stored = [measured(project(tmp_path, *releases, known=then), torch) for torch in ("2.2.0", "2.4.0")]
    now = project(tmp_path, *releases, known=dataclasses.replace(then, reason="better words"))
    assert freshness.marked_stale(stored, now) == stored
    report = model.build(stored, known_pins=now.known_pins)
    assert [report.notes[number - 1] for number in report.row_notes.values()] == [
        "torch 2.2.0 was installed under the constraint numpy<2, unlike 2.4.0: a known pin for torch <2.3, because "
        "the words of its day"
    ]
