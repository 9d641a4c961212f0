"""Expectations against stored results: what holds, what is violated, and what nothing tested."""

from __future__ import annotations

from packaging.specifiers import SpecifierSet

from torchmatrix import results
from torchmatrix.core import Kind, Outcome, Record
from torchmatrix.expectations import all_hold, check, not_allowed, report, tally
from torchmatrix.matrix import Expectation
from torchmatrix.matrix.loader import load_matrix

from ..conftest import ROOT
from .test_results import result


def expect(torch: str, outcome: Outcome, device: str = "mps", **fields) -> Expectation:
    return Expectation("autograd_dot", device, SpecifierSet(torch), outcome, where="matrix.yaml:9 expect[0]", **fields)


def cell(torch: str, python: str = "3.9", machine: str = "darwin-arm64", **outcomes: Outcome):
    records = tuple(Record("autograd_dot", device, outcome, {}, "", 0.0) for device, outcome in outcomes.items())
    return result(torch, cell_id=f"torch-{torch}-py{python}", python=python, machine=machine, records=records)


MAC = [
    cell("1.9.0", mps=Outcome.UNAVAILABLE, cpu=Outcome.PASS),  # 1.9.0 has no MPS backend
    cell("1.11.0", mps=Outcome.UNAVAILABLE, cpu=Outcome.PASS),
    cell("1.12.1", "3.10", mps=Outcome.PASS, cpu=Outcome.PASS),
    cell("2.2.0", "3.12", mps=Outcome.PASS, cpu=Outcome.PASS),
]


def test_expectations_that_hold_say_for_which_cells() -> None:
    checks = check([expect(">=1.12", Outcome.PASS), expect("", Outcome.PASS, device="cpu")], MAC)
    assert all_hold(checks)
    assert report(checks) == [
        "✓ autograd_dot on mps, torch >=1.12: pass: holds for torch-1.12.1-py3.10 [darwin-arm64], "
        "torch-2.2.0-py3.12 [darwin-arm64]",
        "✓ autograd_dot on cpu, torch (any): pass: holds for torch-1.9.0-py3.9 [darwin-arm64], "
        "torch-1.11.0-py3.9 [darwin-arm64], torch-1.12.1-py3.10 [darwin-arm64], torch-2.2.0-py3.12 [darwin-arm64]",
    ]
    assert tally(checks) == "2 of 2 expectations hold; 0 violated, 0 not tested by any result"


def test_each_violation_is_one_line_with_probe_cell_device_expected_and_got() -> None:
    broken = [*MAC, cell("2.3.0", "3.12", mps=Outcome.FAIL)]
    checks = check([expect(">=1.12", Outcome.PASS, reason="fixed in 1.12")], broken)
    assert not all_hold(checks)
    assert report(checks) == [
        "✗ autograd_dot torch-2.3.0-py3.12 mps: expected pass, got fail [darwin-arm64] "
        "(matrix.yaml:9 expect[0]: fixed in 1.12)"
    ]
    assert tally(checks) == "0 of 1 expectations hold; 1 violated, 0 not tested by any result"


def test_an_expectation_no_result_tested_is_reported_not_passed() -> None:
    checks = check([expect("<1.12", Outcome.FAIL), expect(">=3", Outcome.PASS)], MAC)
    assert not all_hold(checks)
    lines = report(checks)
    assert lines[0] == (
        "? autograd_dot on mps, torch <1.12: fail: no stored result tested it "
        "(torch-1.9.0-py3.9 [darwin-arm64]: unavailable; torch-1.11.0-py3.9 [darwin-arm64]: unavailable) "
        "(matrix.yaml:9 expect[0])"
    )
    assert lines[1] == "? autograd_dot on mps, torch >=3: pass: no stored result tested it (matrix.yaml:9 expect[0])"
    assert tally(checks) == "0 of 2 expectations hold; 0 violated, 2 not tested by any result"


def test_an_unavailable_device_or_a_cell_that_did_not_run_is_no_test_unless_expected() -> None:
    linux = [
        cell("1.12.1", "3.10", "linux-x86_64", mps=Outcome.UNAVAILABLE),
        result("1.13.1", python=None, machine="linux-x86_64", outcome=Outcome.NO_INTERPRETER, records=()),
    ]
    assert [c.tested for c in check([expect(">=1.12", Outcome.PASS)], linux)] == [()]
    (unavailable,) = check([expect("==1.12.1", Outcome.UNAVAILABLE)], linux)
    assert unavailable.holds


def test_python_narrows_an_expectation_to_cells_of_that_python() -> None:
    (only_310,) = check([expect("", Outcome.PASS, device="cpu", python="3.10")], MAC)
    assert [finding.result.cell_id for finding in only_310.tested] == ["torch-1.12.1-py3.10"]


def test_machine_narrows_an_expectation_to_that_machines_results() -> None:
    merged = [*MAC, cell("1.9.0", machine="H200_rack_3", cpu=Outcome.FAIL)]
    (checked,) = check([expect("<1.12", Outcome.FAIL, device="cpu", machine="H200 / rack 3")], merged)
    assert [(f.result.cell_id, f.result.machine) for f in checked.tested] == [("torch-1.9.0-py3.9", "H200_rack_3")]
    assert checked.holds, "the Mac's passing 1.9.0 and 1.11.0 are another machine's: not counted"
    assert "machine H200 / rack 3" in checked.expectation.describe()


def test_pre_releases_are_in_a_range() -> None:
    (checked,) = check([expect(">=2.2", Outcome.PASS)], [cell("2.3.0rc1", "3.12", mps=Outcome.FAIL)])
    assert [finding.got for finding in checked.violations] == [Outcome.FAIL]


def test_an_expectation_of_a_machine_no_result_comes_from_is_out_of_reach_not_failed() -> None:
    linux = [
        cell("1.9.0", machine="linux-x86_64", cpu=Outcome.PASS, mps=Outcome.UNAVAILABLE),
        cell("1.12.1", "3.10", machine="linux-x86_64", cpu=Outcome.PASS, mps=Outcome.UNAVAILABLE),
    ]
    apple = expect("<1.12", Outcome.FAIL, device="cpu", machine="darwin-arm64")
    checks = check([apple, expect(">=1.12", Outcome.PASS, device="cpu")], linux)
    assert all_hold(checks)
    assert report(checks)[0] == (
        "– autograd_dot on cpu, torch <1.12, machine darwin-arm64: fail: no result here can test it: "
        "no result of machine darwin-arm64 here; run verify there, or copy its results folder in "
        "(matrix.yaml:9 expect[0])"
    )
    assert tally(checks) == (
        "1 of 2 expectations hold; 0 violated, 0 not tested by any result, 1 out of reach here (no result of "
        "their machine)"
    )
    assert not all_hold(check([apple], linux)), "nothing verified is no pass"
    # With a result of that machine, it is tested as any other: there, a run could have tested it.
    mac = [*linux, cell("1.12.1", "3.10", cpu=Outcome.PASS)]
    assert not check([apple], mac)[0].out_of_reach and not all_hold(check([apple], mac))


def test_the_default_matrix_verifies_the_apple_silicon_fix_on_the_committed_results_and_names_what_it_cannot() -> None:
    """`nox -s verify` on a fresh clone: the fix holds on the committed results; the Mac's bug is out of reach."""
    matrix = load_matrix(ROOT / "matrix.yaml", ROOT / "probes")
    checks = check(matrix.expect, results.latest(results.scan(ROOT / "reports" / "results").results))
    assert all_hold(checks), report(checks)
    reach = {(item.expectation.device, str(item.expectation.torch)): item.out_of_reach for item in checks}
    assert reach == {
        ("cpu", "<1.12"): "no result of machine darwin-arm64 here",
        ("cpu", ">=1.12"): "",
        ("mps", ">=1.12"): "no result of machine darwin-arm64 here",
    }


def test_a_stale_record_neither_holds_nor_violates_and_is_counted_as_skipped() -> None:
    stale = [cell("1.12.1", "3.10", mps=Outcome.STALE), cell("2.2.0", "3.12", mps=Outcome.STALE)]
    checks = check([expect(">=1.12", Outcome.PASS)], stale)
    assert not all_hold(checks) and not checks[0].violations
    assert tally(checks) == (
        "0 of 1 expectations hold; 0 violated, 1 not tested by any result; 2 stale records skipped (re-run them: --run)"
    )
    assert all_hold(check([expect(">=1.12", Outcome.PASS)], [*stale, cell("2.3.0", "3.12", mps=Outcome.PASS)]))


def grad_cases(torch: str, **outcomes: Outcome):
    """A result of the cases of test_grad (``float32=Outcome.PASS``…), or of the module's error (``module=``)."""
    names = {kind: f"tests/test_dot.py::test_grad[{kind}]" for kind in outcomes}
    names["module"] = "tests/test_dot.py"
    records = tuple(Record(names[kind], "cpu", outcome, {}, "", 0.0) for kind, outcome in outcomes.items())
    return result(torch, cell_id=f"torch-{torch}-py3.10", python="3.10", machine="ci-box", records=records)


def test_a_parametrized_tests_base_id_speaks_of_every_case() -> None:
    grad = Expectation("tests/test_dot.py::test_grad", "cpu", SpecifierSet(">=2"), Outcome.PASS, where="m:3")
    holding = [grad_cases("2.0.0", float32=Outcome.PASS, float64=Outcome.PASS)]
    assert report(check([grad], holding)) == [
        "✓ tests/test_dot.py::test_grad on cpu, torch >=2: pass: holds for torch-2.0.0-py3.10 [ci-box]"
    ]
    broken = [*holding, grad_cases("2.1.0", float32=Outcome.PASS, float64=Outcome.FAIL, int8=Outcome.UNAVAILABLE)]
    assert report(check([grad], broken)) == [
        "✗ tests/test_dot.py::test_grad torch-2.1.0-py3.10 cpu: expected pass, got fail "
        "(tests/test_dot.py::test_grad[float64]) [ci-box] (m:3)"
    ]


def test_a_test_whose_module_did_not_import_in_a_covered_release_violates_its_expectation() -> None:
    grad = Expectation("tests/test_dot.py::test_grad[float32]", "cpu", SpecifierSet(">=2"), Outcome.PASS, where="m:3")
    found = [grad_cases("2.0.0", float32=Outcome.PASS), grad_cases("2.1.0", module=Outcome.ERROR)]
    checks = check([grad], found)
    assert not all_hold(checks)
    assert report(checks) == [
        "✗ tests/test_dot.py::test_grad[float32] torch-2.1.0-py3.10 cpu: expected pass, got error "
        "(tests/test_dot.py) [ci-box] (m:3)"
    ]


def test_strict_names_each_gated_outcome_no_expectation_of_its_cell_allows() -> None:
    broken = cell("1.9.0", mps=Outcome.FAIL, cpu=Outcome.CRASH, cuda=Outcome.UNAVAILABLE)
    assert not_allowed(broken, []) == [
        "✗ autograd_dot on mps: fail (no message)",
        "✗ autograd_dot on cpu: crash (no message)",
    ]
    allowed = [expect("<1.12", Outcome.FAIL), expect("<1.12", Outcome.CRASH, device="cpu")]
    assert not_allowed(broken, allowed) == []
    elsewhere = [expect(">=1.12", Outcome.FAIL), expect("<1.12", Outcome.PASS, device="cpu")]  # another range, outcome
    assert len(not_allowed(broken, elsewhere)) == 2


def test_strict_allows_a_test_by_the_file_or_test_an_expectation_names() -> None:
    records = tuple(Record(f"tests/test_x.py::test_{n}", "cpu", Outcome.FAIL, {}, "assert 0\nmore", 0.0) for n in "ab")
    failing = result("2.2.0", cell_id="torch-2.2.0-py3.11", python="3.11", records=records)
    by_file = Expectation("tests/test_x.py", "cpu", SpecifierSet(), Outcome.FAIL)
    by_test = Expectation("tests/test_x.py::test_a", "cpu", SpecifierSet(), Outcome.FAIL)
    assert not_allowed(failing, [by_file]) == []
    assert not_allowed(failing, [by_test]) == ["✗ tests/test_x.py::test_b on cpu: fail (assert 0)"]


def test_strict_gates_a_cell_that_could_not_install_but_not_one_without_a_wheel() -> None:
    broken = result("1.9.0", cell_id="torch-1.9.0-py3.9", outcome=Outcome.INSTALL_ERROR, message="uv failed")
    missing = result("1.9.0", cell_id="torch-1.9.0", outcome=Outcome.NO_WHEEL, message="no wheel")
    unrunnable = result("1.9.0", cell_id="torch-1.9.0-py3.9", outcome=Outcome.NO_INTERPRETER, message="no Python 3.9")
    assert not_allowed(broken, []) == ["✗ torch-1.9.0-py3.9: install-error (uv failed)"]
    assert not_allowed(missing, []) == []
    assert not_allowed(unrunnable, []) == ["✗ torch-1.9.0-py3.9: no-interpreter (no Python 3.9)"]
    assert not_allowed(unrunnable, [expect("<1.12", Outcome.NO_INTERPRETER)]) == []


def test_strict_gates_a_pair_that_passed_in_only_some_of_its_runs() -> None:
    flaky = cell("1.9.0", cpu=Outcome.UNSTABLE)
    assert not_allowed(flaky, []) == ["✗ autograd_dot on cpu: unstable (no message)"]
    assert not_allowed(flaky, [expect("<1.12", Outcome.UNSTABLE, device="cpu")]) == []


def test_a_file_that_ran_as_a_script_answers_for_none_of_its_tests() -> None:
    """pytest collected no test from it in that release (its tests are defined only on newer torch): no test of it
    has an outcome there, whatever the script's."""
    nested = Expectation("test_nt.py::test_nt", "cpu", SpecifierSet("<1.13"), Outcome.PASS, where="m:3")
    script = Record("test_nt.py", "cpu", Outcome.PASS, {}, "", 0.0, kind=Kind.SCRIPT)
    found = [result("1.12.1", cell_id="torch-1.12.1-py3.10", python="3.10", machine="ci-box", records=(script,))]
    assert report(check([nested], found)) == [
        "? test_nt.py::test_nt on cpu, torch <1.13: pass: no stored result tested it (m:3)"
    ]
