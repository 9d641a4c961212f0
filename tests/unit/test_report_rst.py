"""COMPATIBILITY.rst: reStructuredText that docutils (and so Sphinx) reads without a warning."""

from __future__ import annotations

import docutils.core
from docutils.utils import SystemMessage

from torchmatrix.views import model, rst

from .report_data import assert_golden, hostile, scenario

CHARTS = {"batched_matmul": "compatibility-batched_matmul.svg"}


def to_html(source: str) -> str:
    """Docutils' HTML; a warning or an error raises SystemMessage."""
    settings = {"report_level": 5, "halt_level": 2, "output_encoding": "unicode"}
    return docutils.core.publish_parts(source, writer="html5", settings_overrides=settings)["body"]


def test_the_scenario_renders_as_its_golden_file() -> None:
    assert_golden("COMPATIBILITY.rst", rst.render(model.build(scenario()), CHARTS))


def test_docutils_reads_it_without_a_warning_and_links_cells_to_notes() -> None:
    body = to_html(rst.render(model.build(scenario()), CHARTS))
    assert body.count("<table") == 2
    assert 'href="#footnote-1"' in body and 'id="footnote-1" role="doc-footnote"' in body
    assert '<img alt="batched_matmul: worst error ÷ tolerance' in body
    assert "observed 0.0, expected 28.0" in body


def test_hostile_text_makes_no_markup_and_no_warning() -> None:
    try:
        body = to_html(rst.render(model.build(hostile())))
    except SystemMessage as message:  # pragma: no cover - the failure this test exists for
        raise AssertionError(f"docutils complained: {message}") from None
    assert "<script" not in body and "javascript:" not in body.replace("(javascript:alert(1))", "")
    assert 'href="javascript' not in body
