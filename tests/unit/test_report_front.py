"""A library's front table: a matrix of tests as one table of releases, then only the tests that did not pass."""

from __future__ import annotations

import dataclasses

from torchmatrix.core import Outcome, Record
from torchmatrix.results import CellResult
from torchmatrix.views import markdown, model, page, supported
from torchmatrix.views.front import front, is_test

from .report_data import assert_golden, cell
from .test_report_markdown import html, tables

SUITE = "tests/test_ops.py::"
NAMES = ("test_rearrange", "test_reduce", "test_compile", "test_spawn", "test_keras")


def record(name: str, outcome: Outcome = Outcome.PASS, message: str = "") -> Record:
    return Record(SUITE + name, "cpu", outcome, {}, message, 0.01)


def suite_cell(
    torch: str, python: str, *, compiles: bool, request: str | None = None, folder: str = "a1"
) -> CellResult:
    """The suite in one release: compile fails before 2.0, spawn fails in a temporary folder of its own."""
    compile_test = (
        record("test_compile")
        if compiles
        else record("test_compile", Outcome.ERROR, "AttributeError: module 'torch' has no attribute 'compile'")
    )
    spawned = f"CalledProcessError: Command '['python', '/tmp/tmp{folder}/test.py']' returned non-zero exit status 1."
    records = (
        record("test_rearrange"),
        record("test_reduce"),
        compile_test,
        record("test_spawn", Outcome.FAIL, spawned),
        record("test_keras", Outcome.UNAVAILABLE, "Skipped"),
    )
    probes = {SUITE.removesuffix("::").rsplit("/", 1)[0] + "/": "0" * 64}
    return cell(
        "linux-x86_64", torch, python, records, python_request=request, inputs={"devices": ["cpu"], "probes": probes}
    )


def suite() -> list[CellResult]:
    return [
        suite_cell("1.9.0", "3.9", compiles=False, folder="k2j3x9"),
        suite_cell("1.13.1", "3.11", compiles=False, folder="p0q1r2"),
        suite_cell("2.2.0", "3.11", compiles=True, request="3.11", folder="zz8y7w"),
    ]


def test_a_suite_renders_as_its_golden_file() -> None:
    assert_golden("COMPATIBILITY-tests.md", markdown.render(model.build(suite())))


def test_one_front_table_of_releases_says_how_many_pass_and_names_what_did_not() -> None:
    front_table, detail, _legend = tables(html(markdown.render(model.build(suite()))))
    assert front_table[0] == ["torch", "python", "linux-x86_64 · cpu"]
    assert front_table[1] == [
        "1.9.0",
        "3.9",
        "E 2 of 4 pass; error: test_compile; fail: test_spawn; 1 of 5 skipped (unavailable): test_keras",
    ]
    # The Python named once: a pinned row is not `2.2.0 (py3.11) | 3.11`.
    assert front_table[3][:2] == ["2.2.0", "3.11"]
    assert front_table[3][2].startswith("✗ 3 of 4 pass; fail: test_spawn")
    # Then a row per test that did not pass everywhere; those that did are counted.
    assert [row[0] for row in detail] == ["test", "test_compile", "test_keras", "test_spawn"]
    assert detail[0][1:] == ["1.9.0", "1.13.1", "2.2.0"]
    assert detail[1][1:] == ["E¹", "E¹", "✓"]


def test_notes_that_differ_only_by_a_temporary_folder_or_an_address_are_one() -> None:
    report = model.build(suite())
    spawn = [note for note in report.notes if "CalledProcessError" in note]
    assert spawn == ["fail: CalledProcessError: Command '['python', '<tmp>/test.py']' returned non-zero exit status 1."]
    assert model.per_run("<Foo object at 0x7f3a2c1d5e80> in /var/folders/ab/cd/T/pytest-of-me/pytest-3/x.txt") == (
        "<Foo object at 0x…> in <tmp>/x.txt"
    )
    # A folder that only ends in tmp is no temporary folder; a hex number that is no address stays.
    assert model.per_run("/home/me/tmp/x and bits 0x3e99999a") == "/home/me/tmp/x and bits 0x3e99999a"


def test_a_stale_note_names_the_file_that_changed_in_its_temporary_folder_as_it_is() -> None:
    """What changed is no run's own: ``<tmp>/helper.py changed`` would hide which of /tmp's files it was."""
    record = Record("t", "cpu", Outcome.STALE, {"was": "pass"}, "was ✓ pass; /tmp/work/extra/helper.py changed", 0.1)
    note = model.note_text(model.Entry(Outcome.STALE, cell("box", "2.2.0", "3.11", (record,)), record))
    assert note == "stale: was ✓ pass; /tmp/work/extra/helper.py changed"


def test_the_page_shows_the_front_table_first_and_keeps_every_tests_table() -> None:
    rendered = page.render(model.build(suite()))
    assert rendered.index('<section id="tests">') < rendered.index('<section class="probe"')
    assert "E 2 of 4 pass; error: test_compile; fail: test_spawn" in rendered
    assert rendered.count('<section class="probe"') == len(NAMES)


def test_a_report_without_tests_has_no_front_table() -> None:
    from .report_data import scenario

    assert front(model.build(scenario())) is None
    assert "## Tests" not in markdown.render(model.build(scenario()))
    assert is_test(SUITE + "test_x[1-2]") and not is_test("autograd_dot")


def test_supported_names_the_python_once_too() -> None:
    rendered = supported.render(model.build(suite()))
    assert "| 2.2.0 | 3.11 |" in rendered and "(py3.11)" not in rendered


def test_a_file_that_did_not_collect_is_said_so_not_counted_as_a_test() -> None:
    """Where the suite's module does not import, pytest's record is of the file: no test among the tests it holds."""
    error = "ImportError: cannot import name 'vmap' from 'torch'"
    uncollected = Record(SUITE.removesuffix("::"), "cpu", Outcome.ERROR, {}, error, 0.0)
    probes = {"tests/": "0" * 64}
    broken = cell("linux-x86_64", "1.9.0", "3.9", (uncollected,), inputs={"devices": ["cpu"], "probes": probes})
    report = model.build([broken, suite_cell("2.2.0", "3.11", compiles=True)])
    tests = front(report)
    assert tests is not None
    row, column = tests.rows[0], report.columns[0]
    assert tests.summary(row, column, quote=str) == f"E tests/test_ops.py: not collected (error: {error})"
    assert "passed in every cell" not in tests.passed_everywhere()  # none ran in 1.9.0
    assert [tests.entry(table, (row, column)).mark for table in tests.not_passing()] == [Outcome.ERROR] * 5
    shown = supported.render(report)
    said = "| 1.9.0 | 3.9 | E tests/test\\_ops.py: not collected (error: ImportError: cannot import name 'vmap' from "
    assert said in shown
    assert "0 of 1 pass" not in shown


def test_a_file_whose_pytest_run_failed_after_its_tests_passed_is_said_so_not_said_uncollected() -> None:
    """pytest's run failed though none of its tests did (a conftest.py's check at the session's end): the file's
    record beside its tests says so, never that the file did not collect."""
    why = "pytest ended with exit code 3 though none of its tests failed: leak check failed"
    ended = Record(SUITE.removesuffix("::"), "cpu", Outcome.ERROR, {"pytest_exit": 3, "after_tests": True}, why, 0.0)
    records = (record("test_rearrange"), ended)
    probes = {"tests/": "0" * 64}
    failed = cell("linux-x86_64", "2.2.0", "3.11", records, inputs={"devices": ["cpu"], "probes": probes})
    report = model.build([failed])
    tests = front(report)
    assert tests is not None
    said = tests.summary(tests.rows[0], report.columns[0], quote=str)
    assert said == f"✓ pass; E tests/test_ops.py: pytest's run failed after its tests (error: {why})"


def many_skipped(device_reason: bool = False) -> list[CellResult]:
    """A suite of 2 tests that pass and 9 that pytest skipped; with ``device_reason``, a CUDA column its torch
    lacks too (and a release that has it)."""
    skips = tuple(record(f"test_skip_{number}", Outcome.UNAVAILABLE, "needs scipy") for number in range(9))
    passes = (record("test_rearrange"), record("test_reduce"))
    lacking = (
        tuple(
            Record(one.probe, "cuda", Outcome.UNAVAILABLE, {}, "this torch build has no CUDA support", 0.0)
            for one in passes
        )
        if device_reason
        else ()
    )
    found = [cell("linux-x86_64", "2.2.0", "3.11", (*passes, *skips, *lacking))]
    if device_reason:
        on_cuda = tuple(dataclasses.replace(one, device="cuda") for one in passes)
        environment = {"torch": "2.3.0", "devices": {"cpu": "Test CPU", "cuda": ["Test GPU"]}}
        found.append(cell("linux-x86_64", "2.3.0", "3.11", (*passes, *on_cuda), environment=environment))
    return found


def test_a_long_list_of_names_shows_the_first_few_and_keeps_the_rest_behind_a_click() -> None:
    report = model.build(many_skipped())
    rendered = page.render(report)
    front_table = rendered[rendered.index('<table class="front">') : rendered.index("</table>")]
    shown = ", ".join(f"test_skip_{number}" for number in range(5))
    assert f"9 of 11 skipped (unavailable): {shown} <details><summary>and 4 more</summary>test_skip_5," in front_table
    assert "✓ all 2 pass" in front_table
    markdown_text = supported.render(report)
    assert r"test\_skip\_4 and 4 more" in markdown_text and r"test\_skip\_5" not in markdown_text  # counted


def test_the_legend_tells_a_skip_from_a_device_the_torch_lacks() -> None:
    skipped_only = page.render(model.build(many_skipped()))
    legend = skipped_only[skipped_only.index('<section id="legend">') : skipped_only.index("</section>")]
    assert "<b>skipped</b>: the device was there, but pytest skipped the test" in legend
    assert "no such device" not in legend
    assert 'title="torch 2.2.0 · linux-x86_64 · cpu: skipped — needs scipy"' in skipped_only
    both = page.render(model.build(many_skipped(device_reason=True)))
    legend = both[both.index('<section id="legend">') : both.index("</section>")]
    assert "<b>skipped</b>" in legend and "<b>unavailable</b>: this torch build or machine has no such device" in legend
    assert "cuda: unavailable — this torch build has no CUDA support" in both
    assert "| – | skipped | the device was there, but pytest skipped" in markdown.render(model.build(many_skipped()))


def test_every_release_is_a_row_of_the_front_table_one_where_no_module_imported_with_why() -> None:
    """A library whose every module failed to import in two releases (a dependency it did not declare): those rows
    are in the front table, its files named together under their one cause, and no test passed in every cell."""
    cause = "E   ModuleNotFoundError: No module named 'pkg_resources'"  # pytest's line, as the record keeps it
    files = ("tests/test_a.py", "tests/test_b.py")
    probes = {"tests/": "0" * 64}

    def broken(torch: str) -> CellResult:
        records = tuple(Record(name, "cpu", Outcome.ERROR, {}, cause, 0.0) for name in files)
        return cell("linux-x86_64", torch, "3.10", records, inputs={"devices": ["cpu"], "probes": probes})

    tests = (Record(f"{name}::test_{n}", "cpu", Outcome.PASS, {}, "", 0.1) for name in files for n in range(3))
    works = cell("linux-x86_64", "2.2.0", "3.10", tuple(tests), inputs={"devices": ["cpu"], "probes": probes})
    report = model.build([broken("1.12.1"), broken("1.13.1"), works])
    front_table, detail, *_ = tables(html(markdown.render(report)))
    why = "ModuleNotFoundError: No module named 'pkg_resources'"
    said = f"E tests/test_a.py, tests/test_b.py: not collected (error: {why})"
    assert front_table[1:] == [["1.12.1", "3.10", said], ["1.13.1", "3.10", said], ["2.2.0", "3.10", "✓ all 6 pass"]]
    assert len(detail) == 7 and "passed in every cell" not in markdown.render(report)
