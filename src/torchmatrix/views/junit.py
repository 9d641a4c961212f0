"""The report for CI's test readers: JUnit XML, a test suite per machine and cell, a test case per record.

GitHub's, GitLab's and Jenkins's test reporters read this format. A (probe,
device) record is a test case named ``probe[device]`` in the suite of its
machine and cell; how it went decides its element:

- ``pass`` and ``within-tolerance`` are a plain test case;
- ``fail`` and ``unstable`` (repeated runs disagreed) are a ``<failure>``;
- ``error``, ``crash``, ``timeout`` and a cell's ``install-error`` are an ``<error>``;
- ``unavailable``, ``stale`` (made from what has changed since: it vouches
  for nothing now), ``no-wheel`` and ``no-interpreter`` are ``<skipped>``,
  with why.

A cell that ran no probe has a test case for each probe and device it was
planned for, as the data files do. Each element's ``type`` is the outcome, its
``message`` the table's note, and its text the record's whole message.
"""

from __future__ import annotations

import itertools
from typing import Any
from xml.etree import ElementTree

from ..core import Outcome
from ..util import safetext
from .export import rows
from .model import Report

_FAILURE = frozenset({Outcome.FAIL, Outcome.UNSTABLE})
_ERROR = frozenset({Outcome.ERROR, Outcome.CRASH, Outcome.TIMEOUT, Outcome.INSTALL_ERROR})
_SKIPPED = frozenset({Outcome.UNAVAILABLE, Outcome.STALE, Outcome.NO_WHEEL, Outcome.NO_INTERPRETER})
_COUNTED = {"failures": _FAILURE, "errors": _ERROR, "skipped": _SKIPPED}


def render(report: Report) -> str:
    """junit.xml: ``<testsuites>`` with a ``<testsuite>`` per machine and cell, by machine, then by release."""
    flat = rows(report)
    suites = ElementTree.Element("testsuites", name="torchmatrix")
    ordered = sorted(flat, key=lambda row: row["machine"])  # stable: each machine's cells in release order
    for (machine, cell_id), cases in itertools.groupby(ordered, key=lambda row: (row["machine"], row["cell_id"])):
        suites.append(_suite(machine, cell_id, list(cases)))
    _count(suites, flat)
    ElementTree.indent(suites)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ElementTree.tostring(suites, encoding="unicode") + "\n"


def _suite(machine: str, cell_id: str, cases: list[dict[str, Any]]) -> ElementTree.Element:
    first = cases[0]
    suite = ElementTree.Element(
        "testsuite", name=_text(f"{machine}/{cell_id}"), hostname=_text(machine), timestamp=_text(first["finished_at"])
    )
    properties = ElementTree.SubElement(suite, "properties")
    for name in ("torch", "python", "torch_build", "result_file"):
        if first[name] is not None:
            ElementTree.SubElement(properties, "property", name=name, value=_text(first[name]))
    for case in cases:
        suite.append(_case(machine, case))
    _count(suite, cases)
    return suite


def _case(machine: str, row: dict[str, Any]) -> ElementTree.Element:
    case = ElementTree.Element(
        "testcase",
        name=_text(f"{row['probe']}[{row['device']}]"),
        classname=_text(f"{machine}.{row['cell_id']}"),
        time=f"{row['duration_s'] or 0:.3f}",
    )
    outcome = Outcome(row["mark"])
    tag = "failure" if outcome in _FAILURE else "error" if outcome in _ERROR else "skipped"
    if outcome in _FAILURE | _ERROR | _SKIPPED:
        said = ElementTree.SubElement(case, tag, type=outcome.value, message=_text(row["note"] or outcome.value))
        said.text = safetext.report_lines(row["message"] or "") or None
    return case


def _count(element: ElementTree.Element, cases: list[dict[str, Any]]) -> None:
    """Set the counts JUnit readers show: tests, failures, errors, skipped."""
    element.set("tests", str(len(cases)))
    for name, outcomes in _COUNTED.items():
        element.set(name, str(sum(Outcome(case["mark"]) in outcomes for case in cases)))


def _text(value: object) -> str:
    """An attribute's value: one line, without the characters XML 1.0 cannot hold."""
    return safetext.report_line(value)
