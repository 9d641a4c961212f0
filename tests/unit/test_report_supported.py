"""SUPPORTED.md: a library's "supported torch versions", a row per release, ready to paste into its docs."""

from __future__ import annotations

from markdown_it import MarkdownIt

from torchmatrix.core import Outcome, Record
from torchmatrix.views import model, supported

from .report_data import HOSTILE, assert_golden, cell, hostile, scenario
from .test_report_markdown import tables

TESTS = "tests/test_log_cdf.py::"


def a_test(name: str, outcome: Outcome = Outcome.PASS, device: str = "cpu") -> Record:
    return Record(TESTS + name, device, outcome, {}, "", 0.01, {"entry": "tests/test_log_cdf.py"})


def library() -> list:
    """A library's tests on one machine: failing before torch 1.12, passing since, a release without a wheel."""
    every = ("test_centre", "test_far_tail", "test_gradient")

    def run(torch: str, python: str, *failing: str, crash: str = "") -> object:
        records = [a_test(name, Outcome.FAIL if name in failing else Outcome.PASS) for name in every]
        records += [a_test(crash, Outcome.CRASH)] if crash else []
        records += [a_test(name, Outcome.UNAVAILABLE, "cuda") for name in every]
        return cell("linux-x86_64", torch, python, tuple(records))

    return [
        run("1.9.0", "3.9", "test_far_tail", "test_gradient", crash="test_huge"),
        run("1.11.0", "3.10", "test_far_tail"),
        run("1.12.1", "3.10"),
        cell("linux-x86_64", "2.99.0", None, outcome=Outcome.NO_WHEEL, message="no wheel"),
    ]


def render(found: list) -> list[list[str]]:
    (table,) = tables(MarkdownIt("commonmark").enable("table").render(supported.render(model.build(found))))
    return table


def test_the_library_s_table_renders_as_its_golden_file() -> None:
    assert_golden("SUPPORTED.md", supported.render(model.build(library())))


def test_a_row_per_release_newest_first_with_its_python_and_how_its_tests_went() -> None:
    assert render(library()) == [
        ["torch", "Python", "cpu"],
        ["2.99.0", "-", "no-wheel"],
        ["1.12.1", "3.10", "✓ all 3 pass"],
        ["1.11.0", "3.10", "✗ 2 of 3 pass; fail: test_far_tail"],
        ["1.9.0", "3.9", "☠ 1 of 4 pass; crash: test_huge; fail: test_far_tail, test_gradient"],
    ]  # the cuda column, all unavailable, is not shown


def test_several_machines_are_columns_of_their_own() -> None:
    header, *rows = render(scenario())
    assert header[:4] == ["torch", "Python", "H200 · cpu", "H200 · cuda"]
    assert rows[-1][:3] == ["1.9.0", "3.9", "install-error"]


def test_hostile_names_stay_inert() -> None:
    text = supported.render(model.build(hostile()))
    assert "<script>" not in text and "\x1b" not in text and HOSTILE not in text


def test_skipped_tests_are_counted_not_left_out() -> None:
    records = (a_test("test_a"), a_test("test_b", Outcome.FAIL), a_test("test_c", Outcome.UNAVAILABLE),
               a_test("test_d", Outcome.UNAVAILABLE), a_test("test_e", Outcome.PASS, "mps"))  # fmt: skip
    skipped = (a_test("test_a"), a_test("test_b", Outcome.UNAVAILABLE))
    rows = render([cell("linux-x86_64", "1.12.1", "3.10", records), cell("linux-x86_64", "1.11.0", "3.10", skipped)])
    assert rows[1][2] == "✗ 1 of 2 pass; fail: test_b; 2 of 4 skipped (unavailable): test_c, test_d"
    assert rows[2][2] == "✓ pass; 1 of 2 skipped (unavailable): test_b"


def test_every_outcome_a_record_can_have_gets_a_cell_unstable_and_stale_included() -> None:
    for outcome in Outcome:
        if outcome.is_cell_outcome:
            continue
        records = (a_test("test_a"), a_test("test_b", outcome))
        (_, row) = render([cell("linux-x86_64", "1.12.1", "3.10", records)])
        shown = "✓" if outcome in (*supported.PASSING, Outcome.UNAVAILABLE) else outcome.symbol
        assert row[2].startswith(shown), (outcome, row)
    unstable = (a_test("test_a", Outcome.UNSTABLE), a_test("test_b", Outcome.FAIL))
    (_, row) = render([cell("linux-x86_64", "1.12.1", "3.10", unstable)])
    assert row[2] == "✗ 0 of 2 pass; fail: test_b; unstable: test_a"


def test_a_script_beside_the_tests_is_named_with_its_outcome_not_counted_as_a_test() -> None:
    records = (a_test("test_a"), a_test("test_b", Outcome.FAIL), Record("repro.py", "cpu", Outcome.PASS, {}, "", 0.1))
    failing = (a_test("test_a"), a_test("test_b"), Record("repro.py", "cpu", Outcome.FAIL, {}, "exit 1", 0.1))
    rows = render([cell("linux-x86_64", "1.12.1", "3.10", records), cell("linux-x86_64", "1.11.0", "3.10", failing)])
    assert rows[1][2] == "✗ 1 of 2 pass; fail: test_b; ✓ repro.py: pass"
    assert rows[2][2] == "✓ all 2 pass; ✗ repro.py: fail"
    alone = (Record("repro.py", "cpu", Outcome.PASS, {}, "", 0.1), Record("other.py", "cpu", Outcome.FAIL, {}, "", 0.1))
    assert render([cell("linux-x86_64", "1.12.1", "3.10", alone)])[1][2] == "✗ 1 of 2 pass; fail: other.py", (
        "a matrix of scripts alone: its probes are what is counted"
    )
