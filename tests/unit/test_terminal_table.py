"""The terminal table at the end of a probe run."""

from __future__ import annotations

from torchmatrix.core import Outcome, Record
from torchmatrix.util.safetext import unsafe
from torchmatrix.views.terminal_table import table

from ..conftest import hostile_result
from .test_results import result


def test_rows_are_torch_and_probe_columns_are_devices_with_a_legend() -> None:
    records = (
        Record("autograd_dot", "cpu", Outcome.PASS, {}, "", 0.0),
        Record("autograd_dot", "mps", Outcome.FAIL, {}, "", 0.0),
        Record("batched_matmul", "cpu", Outcome.CRASH, {}, "", 0.0),
        Record("batched_matmul", "mps", Outcome.UNAVAILABLE, {}, "", 0.0),
        Record("flaky", "cpu", Outcome.UNSTABLE, {}, "3 pass, 2 fail", 0.0),
    )
    text = table(
        [result("1.9.0", records=records), result("2.2.0", outcome=Outcome.NO_WHEEL, records=())], ["cpu", "mps"]
    )
    lines = text.splitlines()
    assert lines[0].split() == ["torch", "python", "probe", "cpu", "mps"]
    assert lines[2].split() == ["1.9.0", "3.10", "autograd_dot", "✓", "✗"]
    assert lines[3].split() == ["batched_matmul", "☠", "–"]
    assert lines[4].split() == ["flaky", "±"]
    assert lines[5].split() == ["2.2.0", "3.10", "(all)", "no-whl", "no-whl"]
    assert lines[-1] == "✓ pass  ✗ fail  ☠ crash  – unavailable  ± unstable  no-whl no-wheel"


def test_no_results_says_what_to_do() -> None:
    assert "nox -s probe" in table([], ["cpu"])
    assert table([], ["cpu"], "torchmatrix probe") == "no results yet: run `torchmatrix probe`"  # the command typed


def test_text_from_result_files_is_escaped() -> None:
    text = table([hostile_result()], ["cpu", "cuda"])
    assert not [char for char in text if char != "\n" and unsafe(char)]
    first = text.splitlines()[2]
    assert first.startswith(r"2.0.0\x1b[2J\x1b[H\x1b[31mred\x1b[0m \x1b]0;window title\x07")
    assert r"hostilebell\x07 backspace\x08\x08" in first and first.split()[-2:] == ["✗", "E"]


def test_a_pass_that_is_not_bit_identical_and_a_stale_record_show_as_in_every_other_view() -> None:
    records = (
        Record("batched_matmul", "cpu", Outcome.PASS, {"bit_identical": False}, "", 0.0),
        Record("autograd_dot", "cpu", Outcome.STALE, {}, "was ✓ pass; probe autograd_dot changed", 0.0),
    )
    lines = table([result("1.13.1", records=records)], ["cpu"]).splitlines()
    assert [line.split()[-1] for line in lines[2:4]] == ["≈", "↻"]
    assert lines[-1] == "≈ within-tolerance  ↻ stale"
