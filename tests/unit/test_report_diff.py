"""The diff of two result sets: the cells whose outcome changed."""

from __future__ import annotations

from dataclasses import replace

from torchmatrix.core import Outcome
from torchmatrix.views import diff, model

from .report_data import autograd, batched, cell, everywhere, scenario


def test_lists_changed_added_and_removed_cells_only() -> None:
    before = scenario()
    after = [result for result in before if result.torch != "2.99.0"]  # that cell is gone
    mac = next(
        index for index, result in enumerate(after) if result.machine == "macos-arm64" and result.torch == "1.9.0"
    )
    fixed = everywhere(
        {"cpu": (autograd("cpu"), batched("cpu")), "mps": (autograd("mps"), batched("mps", False, 1e-7))}
    )
    after[mac] = replace(after[mac], records=fixed, finished_at="2026-12-01T00:00:00+00:00")
    after.append(cell("linux-x86_64", "2.13.0", "3.13", everywhere({"cpu": (autograd("cpu"), batched("cpu"))})))

    found = diff.changes(model.build(before), model.build(after))
    summary = [(change.probe, change.row.torch, change.column.label, change.before, change.after) for change in found]
    assert ("autograd_dot", "1.9.0", "macos-arm64 · mps", Outcome.FAIL, Outcome.PASS) in summary
    assert ("batched_matmul", "1.9.0", "macos-arm64 · mps", Outcome.PASS, Outcome.WITHIN_TOLERANCE) in summary
    assert ("autograd_dot", "2.13.0", "linux-x86_64 · cpu", None, Outcome.PASS) in summary
    assert ("autograd_dot", "2.99.0", "linux-x86_64 · cpu", Outcome.NO_WHEEL, None) in summary
    assert all(change.before != change.after for change in found)
    # 2 changed on macOS; on linux-x86_64 (cpu its only column shown) 2 probes added on 2.13.0, 2 gone on 2.99.0
    assert len(found) == 2 + 2 + 2


def test_the_terminal_table_names_both_sides() -> None:
    before = [cell("m", "1.9.0", "3.9", everywhere({"cpu": (autograd("cpu"), batched("cpu"))}))]
    after = [replace(before[0], outcome=Outcome.INSTALL_ERROR, records=(), message="x")]
    text = diff.render(diff.changes(model.build(before), model.build(after)), "old/results", "new/results")
    lines = text.splitlines()
    assert lines[0] == "6 cells changed outcome between old/results (before) and new/results (after):"
    assert lines[1].split() == ["probe", "torch", "machine", "·", "device", "before", "after"]
    assert ["autograd_dot", "1.9.0", "m", "·", "cpu", "✓", "pass", "inst-err", "install-error"] in [
        line.split() for line in lines
    ]


def test_no_change_says_so() -> None:
    report = model.build(scenario())
    assert (
        diff.render(diff.changes(report, report), "a", "b")
        == "no cell changed outcome between a (before) and b (after)"
    )
