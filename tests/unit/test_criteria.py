"""What bisect compares in a stored result: the outcome, or a metric's side of a threshold."""

from __future__ import annotations

import hashlib
import math

import pytest

from torchmatrix.bisection.criteria import Criterion, metric_value, observe
from torchmatrix.bisection.search import Observation
from torchmatrix.core import Outcome, Record
from torchmatrix.worker import printed, repeats

from .test_results import result

METRICS = {
    "bit_identical": False,
    "checks": [
        {"name": "float32", "max_abs_diff": 2.0e-7, "error": 0.0},
        {"name": "float64", "max_abs_diff": 3.0e-6, "error": 1.0e-16},
        {"name": "reference", "error": 4.0e-7},
    ],
}


def with_record(outcome: Outcome, metrics: dict | None = None, message: str = "", device: str = "cpu"):
    return result(records=(Record("batched_matmul", device, outcome, metrics or {}, message, 0.1),))


def test_by_outcome_the_category_is_the_outcome() -> None:
    seen = observe(
        with_record(Outcome.FAIL, message="beyond rounding: float32\nmore"), "batched_matmul", "cpu", Criterion()
    )
    assert (seen.category, seen.detail) == ("fail", "fail (beyond rounding: float32)")
    assert observe(with_record(Outcome.CRASH), "batched_matmul", "cpu", Criterion()).category == "crash"


def test_a_plain_metric_name_takes_the_largest_value_stored_under_it_anywhere() -> None:
    assert metric_value(METRICS, "max_abs_diff") == 3.0e-6
    assert metric_value(METRICS, "error") == 4.0e-7
    assert metric_value(METRICS, "bit_identical") is None  # a boolean is not a number
    assert metric_value(METRICS, "missing") is None


def test_a_dotted_metric_name_is_a_path() -> None:
    assert metric_value(METRICS, "checks.0.max_abs_diff") == 2.0e-7
    assert metric_value(METRICS, "checks.2.max_abs_diff") is None
    assert metric_value(METRICS, "checks.9.error") is None


def test_non_finite_values_stored_as_strings_are_numbers_and_nan_is_the_worst() -> None:
    assert metric_value({"checks": [{"e": 1.0}, {"e": "inf"}]}, "e") == math.inf
    assert math.isnan(metric_value({"checks": [{"e": 1.0}, {"e": "nan"}]}, "e"))


@pytest.mark.parametrize(
    ("criterion", "category"),
    [
        (Criterion("max_abs_diff", 1e-6, above=True), "above 1e-06"),
        (Criterion("max_abs_diff", 1e-5, above=True), "not above 1e-05"),
        (Criterion("max_abs_diff", 1e-5, above=False), "below 1e-05"),
        (Criterion("max_abs_diff", 1e-6, above=False), "not below 1e-06"),
    ],
)
def test_by_metric_the_category_is_the_side_of_the_threshold(criterion: Criterion, category: str) -> None:
    seen = observe(with_record(Outcome.PASS, METRICS), "batched_matmul", "cpu", criterion)
    assert seen.category == category
    assert seen.detail == f"max_abs_diff = 3e-06 ({category})"


def test_a_nan_metric_is_its_own_category() -> None:
    seen = observe(with_record(Outcome.FAIL, {"e": "nan"}), "batched_matmul", "cpu", Criterion("e", 1.0))
    assert seen.category == "nan"


def test_what_cannot_be_compared_is_untestable_with_the_reason() -> None:
    by_metric = Criterion("max_abs_diff", 1e-6)
    cases = [
        (result(outcome=Outcome.NO_INTERPRETER, message="needs Python 3.9", records=()), Criterion()),
        (with_record(Outcome.UNAVAILABLE, message="this machine has no MPS device", device="mps"), Criterion()),
        (with_record(Outcome.ERROR, message="RuntimeError: boom"), by_metric),
        (with_record(Outcome.PASS), Criterion()),  # no record on the device asked for
    ]
    devices = ["cpu", "mps", "cpu", "cuda"]
    details = [
        observe(found, "batched_matmul", device, criterion)
        for (found, criterion), device in zip(cases, devices, strict=True)
    ]
    assert [seen.testable for seen in details] == [False] * 4
    assert [seen.detail for seen in details] == [
        "no-interpreter: needs Python 3.9",
        "mps unavailable: this machine has no MPS device",
        "error, no metric 'max_abs_diff' (RuntimeError: boom)",
        "the result holds no record of batched_matmul on cuda",
    ]


def test_a_criterion_describes_itself_for_people_and_for_the_summary() -> None:
    assert Criterion().describe() == "by outcome" and Criterion().to_json() == {"by": "outcome"}
    below = Criterion("error", 1e-7, above=False)
    assert below.describe() == "by error below 1e-07"
    assert below.to_json() == {"by": "metric", "metric": "error", "below": 1e-7}
    assert below.label("not below 1e-07") == "error not below 1e-07" and Criterion().label("pass") == "pass"


SWEEP = {
    "checks": [
        {"name": "add", "observed": "4fe52e3dc70dd38f", "error": 0.02, "tolerance": 1.0, "ok": True},
        {"name": "linalg.eig", "observed": "9266522dbf3d5a3a", "error": 3.2e5, "tolerance": 1.0, "ok": False},
        {"name": "jiterator_unary", "observed": None, "error": None, "ok": False, "raised": "float32: AssertionError"},
    ]
}


def test_a_check_is_one_operator_of_the_sweep_by_its_outcome_or_a_metric_of_it() -> None:
    def seen(criterion: Criterion):
        return observe(with_record(Outcome.PASS, SWEEP), "batched_matmul", "cpu", criterion)

    assert [seen(Criterion(check=name)).category for name in ("add", "linalg.eig", "jiterator_unary")] == [
        "pass", "fail", "error",
    ]  # fmt: skip
    assert seen(Criterion("error", 1.0, True, "add")).category == "not above 1"  # the record's worst is 3.2e5
    assert seen(Criterion("error", 1.0, True, "linalg.eig")).category == "above 1"
    missing = seen(Criterion(check="conv2d"))
    assert not missing.testable and missing.detail == "pass, no check 'conv2d'"


def test_a_metric_without_a_threshold_is_compared_by_its_value() -> None:
    by_value = Criterion("observed", None, check="add")
    seen = observe(with_record(Outcome.PASS, SWEEP), "batched_matmul", "cpu", by_value)
    assert seen.category == '"4fe52e3dc70dd38f"' and seen.detail == 'observed = "4fe52e3dc70dd38f"'
    assert by_value.to_json() == {"by": "value", "metric": "observed", "check": "add"}
    assert by_value.label(seen.category) == 'observed = "4fe52e3dc70dd38f"'
    # No output to compare (the operator raised): untestable, as a record without the metric is.
    raised = observe(
        with_record(Outcome.PASS, SWEEP), "batched_matmul", "cpu", Criterion("observed", None, check="jiterator_unary")
    )
    assert not raised.testable


def repeated(*runs: tuple[Outcome, float]) -> Record:
    """The record of repeated runs of batched_matmul on cpu, each with its outcome and max_abs_diff."""
    return repeats.merge([Record("batched_matmul", "cpu", o, {"max_abs_diff": v}, "", 0.1) for o, v in runs])


def test_repeated_runs_that_agree_are_one_observation_that_counts_them() -> None:
    stable = result(records=(repeated((Outcome.PASS, 1e-7), (Outcome.PASS, 3e-7), (Outcome.PASS, 2e-7)),))
    by_outcome = observe(stable, "batched_matmul", "cpu", Criterion())
    assert (by_outcome.category, by_outcome.runs, by_outcome.unstable) == ("pass", 3, False)
    by_metric = observe(stable, "batched_matmul", "cpu", Criterion("max_abs_diff", 1e-6))
    assert (by_metric.category, by_metric.runs) == ("not above 1e-06", 3)
    assert by_metric.detail == "max_abs_diff = 1e-07 to 3e-07 (not above 1e-06)"


def test_an_unstable_pair_is_untestable_by_outcome_but_may_be_steady_by_a_metric() -> None:
    flaky = result(records=(repeated((Outcome.PASS, 1e-7), (Outcome.FAIL, 2e-6), (Outcome.PASS, 1e-7)),))
    by_outcome = observe(flaky, "batched_matmul", "cpu", Criterion())
    assert (by_outcome.category, by_outcome.unstable, by_outcome.runs) == (None, True, 3)
    assert by_outcome.detail == "unstable: 2 pass, 1 fail"
    split = observe(flaky, "batched_matmul", "cpu", Criterion("max_abs_diff", 1e-6))
    assert (split.category, split.unstable) == (None, True)
    assert split.detail == "unstable: max_abs_diff not above 1e-06 in 2, above 1e-06 in 1 of 3 runs"
    loose = observe(flaky, "batched_matmul", "cpu", Criterion("max_abs_diff", 1e-5))
    assert (loose.category, loose.unstable) == ("not above 1e-05", False)


SEED_OUTPUT = ["tensor(28., grad_fn=<MulBackward0>)", "<MulBackward0 object at 0x…>"]


def printed_metrics(lines: list[str], whole: str | None = None, **more: object) -> dict[str, object]:
    """A script's metrics as the worker stores them: ``whole`` is all it printed, ``lines`` the end kept."""
    text = ("".join(line + "\n" for line in lines) if whole is None else whole).encode()
    digest = hashlib.sha256(text).hexdigest()
    cut = {"output_truncated": True} if whole is not None else {}
    return {"exit_code": 0, "output": lines, "output_sha256": digest, "output_bytes": len(text), **cut, **more}


def printing(lines: list[str], outcome: Outcome = Outcome.PASS, message: str = "", torch: str = "1.12.1",
             whole: str | None = None, **more: object) -> object:  # fmt: skip
    record = Record("repro", "cpu", outcome, printed_metrics(lines, whole, **more), message, 0.1)
    return result(torch, records=(record,), environment={"torch": f"{torch}+cu102"})


BY_OUTPUT = Criterion(by_output=True)


def test_by_output_the_category_is_how_it_ended_and_the_digest_of_all_it_printed() -> None:
    seen = observe(printing(SEED_OUTPUT), "repro", "cpu", BY_OUTPUT)
    assert seen.category == printed.Printed.of_run("pass", "", printed_metrics(SEED_OUTPUT)).category()
    assert seen.detail == "pass, prints 'tensor(28., grad_fn=<MulBackward0>)' / '<MulBackward0 object at 0x…>'"
    assert observe(printing(SEED_OUTPUT, torch="1.9.0"), "repro", "cpu", BY_OUTPUT).category == seen.category
    zero = observe(printing(["tensor(0., grad_fn=<MulBackward0>)", SEED_OUTPUT[1]]), "repro", "cpu", BY_OUTPUT)
    assert zero.category != seen.category  # a digit that changes is a change
    assert BY_OUTPUT.to_json() == {"by": "output"} and BY_OUTPUT.describe() == "by output"


def test_by_output_a_change_before_the_end_kept_is_a_change_and_is_said_to_be() -> None:
    end = ["…" + "x" * 100]
    old = observe(printing(end, whole="a" + "x" * 70000 + "\n"), "repro", "cpu", BY_OUTPUT)
    new = observe(printing(end, whole="b" + "x" * 70000 + "\n"), "repro", "cpu", BY_OUTPUT)
    assert old.testable and new.testable and old.category != new.category
    assert old.detail.startswith("pass, prints more than 64 KiB, of which the end kept: ")


def test_by_output_an_exception_s_type_and_message_count() -> None:
    def failing(value: str) -> object:
        message = f"AssertionError: {value}"
        return printing([], Outcome.FAIL, message, raised=message, exit_code=None)

    old, new = (observe(failing(value), "repro", "cpu", BY_OUTPUT) for value in ("0.9642857", "0.9642858"))
    assert old.category != new.category
    assert new.detail == "fail: AssertionError: 0.9642858, prints nothing"
    raised = "AttributeError: no attribute 'log_ndtr'"
    error = observe(printing([], Outcome.ERROR, raised, raised=raised), "repro", "cpu", BY_OUTPUT)
    assert error.detail == f"error: {raised}, prints nothing"


def test_by_output_a_line_that_differs_between_runs_is_per_process_and_the_same_in_every_release() -> None:
    def release(*values: str) -> Observation:
        runs = [Record("repro", "cpu", Outcome.PASS, printed_metrics(["x", v]), v, 0.1) for v in values]
        return observe(result(records=(repeats.merge(runs),)), "repro", "cpu", BY_OUTPUT)

    old, new = release("0.1", "0.7", "0.1"), release("0.3", "0.2")
    assert (old.testable, old.runs, new.runs) == (True, 3, 2) and old.category == new.category
    assert old.detail == "pass, prints 'x' / '<differs between runs>' (line 2 per-process: differ between runs)"
    same = release("0.1", "0.1")
    assert (same.testable, same.runs) == (True, 2) and same.category != old.category


def test_by_output_runs_that_differ_otherwise_are_unstable_and_the_line_is_named() -> None:
    runs = [Record("repro", "cpu", Outcome.PASS, printed_metrics(lines), "", 0.1) for lines in (["a"], ["a", "b"])]
    split = observe(result(records=(repeats.merge(runs),)), "repro", "cpu", BY_OUTPUT)
    assert (split.category, split.unstable, split.runs) == (None, True, 2)
    assert split.detail == (
        "unstable: pass, prints 'a' in 1; pass, prints 'a' / 'b' in 1 of 2 runs; "
        "first difference: line 2: nothing → 'b'"
    )


def test_by_output_a_record_without_output_or_its_digest_is_untestable() -> None:
    module = observe(with_record(Outcome.PASS), "batched_matmul", "cpu", BY_OUTPUT)
    assert not module.testable and "a run(device) probe's record keeps what run() returned" in module.detail
    older = observe(with_record(Outcome.PASS, {"exit_code": 0, "output": ["x"]}), "batched_matmul", "cpu", BY_OUTPUT)
    assert not older.testable and "run it again" in older.detail


def test_a_script_that_exits_125_is_skipped_by_its_own_word_not_an_unavailable_device() -> None:
    skipped = result(records=(Record("repro", "cpu", Outcome.UNAVAILABLE, {"exit_code": 125}, "", 0.1),))
    seen = observe(skipped, "repro", "cpu", Criterion())
    assert not seen.testable
    assert seen.detail == (
        "skipped: the script exited with 125 (as for git bisect run: it does not apply to this release)"
    )


ENDED_EARLY = {"pytest_exit": 4, "before_tests": True}
"""The metrics of a test's record where pytest ended before it ran a test, exit code 4: it refused the command."""
CONFTEST_FAILED = {**ENDED_EARLY, "conftest_failed": "/x/conftest.py"}
"""The same where pytest's hook saw a conftest.py fail to import."""


def test_a_test_pytest_refused_as_given_is_an_error_it_refused() -> None:
    """A typo'd node id, or one a later release's parameters hold (`test_y[d1]`, a dtype torch 2.0 has): pytest
    refuses it (exit code 4, `ERROR: not found: …`), an error like any, bisected against a release that holds it; a
    release that refuses it is marked so, which the answer words where both ends refuse it."""
    message = "pytest exited with code 4 before running a test: ERROR: not found: /x/t.py::test_nope\nthe log"
    refused = result(records=(Record("t.py::test_nope", "cpu", Outcome.ERROR, ENDED_EARLY, message, 0.1),))
    for criterion in (Criterion(), Criterion(by_output=True)):
        seen = observe(refused, "t.py::test_nope", "cpu", criterion)
        assert seen.refused and seen.testable
        assert (
            seen.detail
            == "error (pytest exited with code 4 before running a test: ERROR: not found: /x/t.py::test_nope)"
        )
    assert observe(refused, "t.py::test_nope", "cpu", Criterion()).category == "error"


def test_by_output_a_test_pytest_refused_at_one_end_is_compared_with_what_the_other_printed() -> None:
    """`bisect t.py::test_y[float16] --by-output`, a case a later release's parameters hold: the release that refuses
    it printed nothing, no test's output, and ended in pytest's error; compared with the output of a release that
    ran it, it differs, and the answer reads it, never a traceback."""
    message = "pytest exited with code 4 before running a test: ERROR: not found: /x/t.py::test_y\nthe log"
    refused = result(records=(Record("t.py::test_y[float16]", "cpu", Outcome.ERROR, ENDED_EARLY, message, 0.1),))
    ran = result(records=(Record("t.py::test_y[float16]", "cpu", Outcome.PASS, printed_metrics(["ok"]), "", 0.1),))
    criterion = Criterion(by_output=True)
    old = observe(refused, "t.py::test_y[float16]", "cpu", criterion)
    new = observe(ran, "t.py::test_y[float16]", "cpu", criterion)
    assert old.refused and old.category is not None and new.category is not None
    assert not criterion.same(old.category, new.category) and criterion.same(old.category, old.category)
    assert criterion.label(old.category) == (
        "error: pytest exited with code 4 before running a test: ERROR: not found: /x/t.py::test_y, prints nothing"
    )
    failed = result(records=(Record("t.py::test_a", "cpu", Outcome.ERROR, {"pytest_exit": 1}, "boom", 0.1),))
    assert not observe(failed, "t.py::test_a", "cpu", Criterion()).refused


def test_by_output_runs_of_one_release_that_a_hook_ended_in_other_words_are_unstable_never_one_release() -> None:
    """`--repeat 2 --by-output` where a conftest.py's hook raised before a test, with a time in its message: the two
    runs of one release ended in other words, each process's own; the release is unstable, never the first run's
    words, which another release's runs would differ from and a bisect blame torch for."""
    ended = {"pytest_exit": 3, "before_tests": True}
    said = "pytest exited with code 3 before running a test: RuntimeError: gave up at {}:\nthe log"
    times = ("1796689056.39", "1796689062.3")
    runs = [Record("t.py", "cpu", Outcome.ERROR, ended, said.format(at), 0.1) for at in times]
    seen = observe(result(records=(repeats.merge(runs),)), "t.py", "cpu", Criterion(by_output=True))
    assert seen.category is None and seen.unstable, seen
    alike = observe(result(records=(repeats.merge(runs[:1] * 2),)), "t.py", "cpu", Criterion(by_output=True))
    assert alike.category is not None and not alike.unstable


def test_a_test_file_or_a_parametrized_tests_base_id_is_not_one_test_and_says_which_it_holds() -> None:
    cases = tuple(
        Record(f"tests/test_dot.py::test_grad[{kind}]", "cpu", Outcome.PASS, {}, "", 0.1)
        for kind in ("float32", "float64", "int8", "int16")
    )
    found = result(records=(*cases, Record("tests/test_dot.py::test_gradient", "cpu", Outcome.PASS, {}, "", 0.1)))
    seen = observe(found, "tests/test_dot.py::test_grad", "cpu", Criterion())
    assert not seen.testable
    assert seen.detail == (
        "tests/test_dot.py::test_grad is not one test but holds 4 (tests/test_dot.py::test_grad[float32], "
        "tests/test_dot.py::test_grad[float64], tests/test_dot.py::test_grad[int8], … 4 in all): "
        "name one of them"
    )
    assert "holds 5" in observe(found, "tests/test_dot.py", "cpu", Criterion()).detail
    assert "holds 5" in observe(found, "tests/", "cpu", Criterion()).detail


def test_a_conftest_that_failed_to_import_is_an_error_not_a_name_pytest_refused() -> None:
    """pytest ends with exit code 4 where a conftest.py fails to import (`import torch.nn.attention` on a torch without
    it), as where it refuses a node id: the name is right, and a release whose torch has the module may hold it."""
    message = (
        "pytest exited with code 4 before running a test: ImportError while loading conftest '/x/conftest.py'. "
        "ModuleNotFoundError: No module named 'torch.nope'\nthe log"
    )
    failed = result(records=(Record("t.py::test_a", "cpu", Outcome.ERROR, CONFTEST_FAILED, message, 0.1),))
    seen = observe(failed, "t.py::test_a", "cpu", Criterion())
    assert (seen.category, seen.refused) == ("error", False)


def test_by_output_a_conftest_that_failed_only_at_one_end_is_compared_with_what_the_other_printed() -> None:
    """`bisect t.py::test_a --by-output` where the conftest.py fails to import on an older torch (exit code 4) or
    calls `sys.exit(1)` there: that release printed nothing, no test's output, and ended in pytest's error, which
    differs from a release that ran the test; never untestable as a run(device) probe's record."""
    ran = result(records=(Record("t.py::test_a", "cpu", Outcome.PASS, printed_metrics(["ok"]), "", 0.1),))
    criterion = Criterion(by_output=True)
    new = observe(ran, "t.py::test_a", "cpu", criterion)
    for code, said in (
        (4, "ImportError while loading conftest '/x/conftest.py'. ModuleNotFoundError: No module named 'torch.nope'"),
        (1, "the log's last line"),
    ):
        message = f"pytest exited with code {code} before running a test: {said}\nthe log"
        metrics = CONFTEST_FAILED if code == 4 else {**ENDED_EARLY, "pytest_exit": code}
        failed = result(records=(Record("t.py::test_a", "cpu", Outcome.ERROR, metrics, message, 0.1),))
        old = observe(failed, "t.py::test_a", "cpu", criterion)
        assert old.testable and not old.refused and old.category is not None and new.category is not None
        assert not criterion.same(old.category, new.category) and criterion.same(old.category, old.category)
        label = criterion.label(old.category)
        assert label.startswith(f"error: pytest exited with code {code} before running a test: ")
        assert label.endswith(", prints nothing")


def test_a_conftest_that_failed_is_no_refusal_whatever_the_log_kept() -> None:
    """A conftest.py whose long traceback the record's log cut before `ImportError while loading conftest` ended with
    exit code 4 too: pytest's hook said which conftest.py failed, so it is an error, never a name to correct; an
    exit code 4 before a test without it is pytest refusing the command as given."""
    for said in ("ModuleNotFoundError: No module named 'torch.newthing'", ""):
        message = f"pytest exited with code 4 before running a test: {said}".rstrip(": ") + ":\n…the log"
        failed = result(records=(Record("t.py::test_a", "cpu", Outcome.ERROR, CONFTEST_FAILED, message, 0.1),))
        seen = observe(failed, "t.py::test_a", "cpu", Criterion())
        assert (seen.category, seen.refused) == ("error", False)
        refused = result(records=(Record("t.py::test_a", "cpu", Outcome.ERROR, ENDED_EARLY, message, 0.1),))
        assert observe(refused, "t.py::test_a", "cpu", Criterion()).refused
