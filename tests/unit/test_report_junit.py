"""junit.xml: a test suite per machine and cell, a test case per record, read back by a real JUnit reader."""

from __future__ import annotations

from pathlib import Path
from xml.etree import ElementTree

import junitparser

from torchmatrix.core import Outcome, Record
from torchmatrix.views import junit, model

from .report_data import HOSTILE, assert_golden, cell, hostile, scenario


def test_the_scenario_renders_as_its_golden_junit_xml() -> None:
    assert_golden("junit.xml", junit.render(model.build(scenario())))


def test_a_junit_reader_counts_each_outcome_as_ci_shows_it(tmp_path: Path) -> None:
    report = model.build(scenario())
    path = tmp_path / "junit.xml"
    path.write_text(junit.render(report), encoding="utf-8")
    read = junitparser.JUnitXml.fromfile(str(path))
    suites = list(read)
    assert len(suites) == len(report.results)  # one per machine and cell
    cases = [case for suite in suites for case in suite]
    assert len(cases) == read.tests == sum(suite.tests for suite in suites)
    kinds = {type(result).__name__ for case in cases for result in case.result}
    assert kinds == {"Failure", "Error", "Skipped"}
    failed = next(case for case in cases if any(isinstance(r, junitparser.Failure) for r in case.result))
    (failure,) = failed.result
    assert failure.type == "fail" and failure.message.startswith("fail: y = 2 * dot(x, x)")
    assert failed.name == "autograd_dot[mps]" and failed.classname == "macos-arm64.torch-1.9.0-py3.9"
    no_wheel = [case for suite in suites if suite.name.endswith("torch-2.99.0") for case in suite]
    assert no_wheel and all(case.result[0].type == "no-wheel" for case in no_wheel)  # a case per planned pair


def test_each_outcome_has_its_element() -> None:
    elements = {
        Outcome.PASS: None,
        Outcome.FAIL: "failure",
        Outcome.UNSTABLE: "failure",
        Outcome.ERROR: "error",
        Outcome.CRASH: "error",
        Outcome.TIMEOUT: "error",
        Outcome.UNAVAILABLE: "skipped",
    }
    records = tuple(Record(f"p{n}", "cpu", outcome, {}, "why\nand more", 0.5) for n, outcome in enumerate(elements))
    suite = ElementTree.fromstring(junit.render(model.build([cell("box", "2.2.0", "3.11", records)])))[0]
    shown = {case.get("name"): (case[0].tag if len(case) else None) for case in suite.iter("testcase")}
    assert shown == {f"p{n}[cpu]": element for n, element in enumerate(elements.values())}
    assert suite.get("failures") == "2" and suite.get("errors") == "3" and suite.get("skipped") == "1"
    assert suite.find("testcase/error").text == "why\nand more"  # the whole message, its lines kept


def test_text_from_result_files_cannot_break_the_xml() -> None:
    text = junit.render(model.build(hostile()))
    ElementTree.fromstring(text)  # well formed: no control character, no markup let through
    assert HOSTILE not in text and "\x1b" not in text and "\x00" not in text
