"""The table printed at the end of a probe run: torch release × device, one line per probe."""

from __future__ import annotations

from collections.abc import Sequence

from tabulate import tabulate

from ..core import Outcome
from ..results import CellResult
from ..util.safetext import for_terminal


def table(cells: Sequence[CellResult], devices: Sequence[str], probe: str = "nox -s probe") -> str:
    """A plain-text table of ``cells`` (already one per cell, in order) with a legend of the symbols used;
    with none, the ``probe`` command that makes some.

    Its text comes from result files, which may come from other machines: it is escaped for the terminal.
    """
    if not cells:
        return f"no results yet: run `{probe}`"
    rows: list[list[str]] = []
    used: set[Outcome] = set()
    for cell in cells:
        label = [for_terminal(cell.torch, keep_newlines=False), for_terminal(cell.python or "-", keep_newlines=False)]
        if cell.outcome:
            used.add(cell.outcome)
            rows.append([*label, "(all)", *[cell.outcome.symbol] * len(devices)])
            continue
        by_pair = {(record.probe, record.device): record.shown for record in cell.records}
        for index, probe in enumerate(dict.fromkeys(record.probe for record in cell.records)):
            outcomes = [by_pair.get((probe, device)) for device in devices]
            used.update(outcome for outcome in outcomes if outcome)
            symbols = [outcome.symbol if outcome else "" for outcome in outcomes]
            rows.append([*(label if index == 0 else ["", ""]), for_terminal(probe, keep_newlines=False), *symbols])
    text = tabulate(rows, headers=["torch", "python", "probe", *devices], tablefmt="simple", disable_numparse=True)
    return f"{text}\n\n{legend(used)}"


def legend(used: set[Outcome]) -> str:
    return "  ".join(f"{outcome.symbol} {outcome.value}" for outcome in Outcome if outcome in used)
