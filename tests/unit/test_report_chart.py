"""The SVG pictures: error over tolerance per torch release and device, valid XML, drawn only with data."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ElementTree

from torchmatrix.core import Outcome, Record
from torchmatrix.views import chart, model

from .report_data import assert_golden, cell, hostile, scenario

SVG = "{http://www.w3.org/2000/svg}"


def test_the_scenario_renders_as_its_golden_file() -> None:
    assert_golden("compatibility-batched_matmul.svg", chart.charts(model.build(scenario()))["batched_matmul"])


def test_one_marker_per_cell_with_a_ratio_and_hollow_when_not_bit_identical() -> None:
    report = model.build(scenario())
    root = ElementTree.fromstring(chart.charts(report)["batched_matmul"])
    markers = [element for element in root.iter() if element is not root and element.find(f"{SVG}title") is not None]
    with_ratio = [
        entry for (_, column), entry in report.tables[1].entries.items()
        if column in report.columns and entry.ratio is not None
    ]  # fmt: skip
    assert len(markers) == len(with_ratio)
    hollow = [marker for marker in markers if marker.get("fill") == "#ffffff"]
    assert len(hollow) == 2  # H200 cuda and macOS mps on 2.2.0
    assert all("not bit-identical" in (marker.findtext(f"{SVG}title") or "") for marker in hollow)


def test_a_failed_exact_check_sits_on_the_band_above_the_scale() -> None:
    svg = chart.charts(model.build(scenario()))["autograd_dot"]
    assert "torch 1.9.0, macos-arm64 · mps: an exact check failed" in svg
    assert ">exact check failed<" in svg and ">tolerance<" in svg


def test_no_picture_for_a_probe_without_a_tolerance_or_for_hostile_names_unescaped() -> None:
    exact = {"checks": [{"name": "x", "observed": 1, "expected": 1, "error": 0.0, "tolerance": 0.0, "ok": True}]}
    only_exact = [cell("m", "1.9.0", "3.9", (Record("exact", "cpu", Outcome.PASS, exact, "", 0.0),))]
    assert chart.charts(model.build(only_exact)) == {}
    assert chart.charts(model.build(hostile())) == {}  # its checks have no tolerance; the names are tested below


def test_hostile_labels_are_text_in_valid_xml() -> None:
    name = "<b>&\"'"
    checks = {"checks": [{"error": 1e-7, "tolerance": 1e-6, "ok": True}]}
    found = [cell(name, name, "3.9", (Record(name, name, Outcome.PASS, checks, "", 0.0),))]
    svg = chart.charts(model.build(found))[name]
    root = ElementTree.fromstring(svg)
    assert name in "".join(root.itertext())
    assert chart.file_name(name) == "compatibility-b.svg"  # a file name, whatever the probe is called


def test_the_scale_spans_the_values_and_the_tolerance() -> None:
    checks = {"checks": [{"error": 5e-9, "tolerance": 1e-3, "ok": True}]}
    found = [cell("m", "1.9.0", "3.9", (Record("p", "cpu", Outcome.PASS, checks, "", 0.0),))]
    svg = chart.charts(model.build(found))["p"]
    exponent = math.floor(math.log10(5e-9 / 1e-3)) - 1
    assert f">1e{exponent}<" in svg and ">1e0<" in svg and ">1e1<" in svg


def test_a_cell_that_passed_though_a_check_is_beyond_tolerance_is_not_plotted_above_the_line() -> None:
    # The operator sweep's record passes when the sweep ran; an operator beyond tolerance is its check's outcome.
    swept = {"checks": [{"error": 1e-7, "tolerance": 1e-6, "ok": True}, {"error": 2e5, "tolerance": 1.0, "ok": False}]}
    found = [
        cell("m", "1.9.0", "3.9", (Record("sweep", "cpu", Outcome.PASS, swept, "1 beyond tolerance", 0.0),)),
        cell("m", "2.0.0", "3.9", (Record("sweep", "cpu", Outcome.FAIL, swept, "1 beyond tolerance", 0.0),)),
    ]
    svg = chart.charts(model.build(found))["sweep"]
    assert "torch 2.0.0, m · cpu: 2e+05 of the tolerance" in svg  # a failed cell: its worst check says why
    assert "torch 1.9.0, m · cpu" not in svg  # the passed cell: no marker
    only_passed = [found[0]]
    assert chart.charts(model.build(only_passed)) == {}
