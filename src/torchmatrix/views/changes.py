"""CHECK-CHANGES.md: for every probe with checks, which checks changed from one release to the next.

For each machine and device: a table of what could be compared between each
release and the next (checks in both, checks and samples with the same
inputs, checks that changed), then a table of only the checks that changed,
a column per release. For the operator sweep these are the operators whose
float32 output changed.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from . import escape, repro
from .history import SHOWN_CHANGES, CheckInRelease, History, SincePrevious, stale_left_out
from .model import Column, Report

TITLE = "Checks that changed between releases"
INTRO = (
    "A check is compared with the same check in the previous release of its machine and device that has it, "
    "on the same inputs only: a check that records its samples' input and output digests (the operator sweep) "
    "sample by sample where the input digests are equal; any other check by its observed value, where both "
    "records come from the same probe file. A sample one release raised on and the other took is refused: "
    "counted, neither compared nor a change. Where torch's view of the machine differs between the two records "
    "(the CPU capability it dispatches to, its BLAS, the GPU), the table says so: a change there may be the "
    "dispatch's, not the code's."
)


def render(report: Report, found: Sequence[History], scripts: Collection[str] = ()) -> str:
    """CHECK-CHANGES.md from the report's histories (:func:`torchmatrix.views.history.histories`).

    ``scripts``: the repro scripts written beside it (:mod:`.repro`), each changed sample's linked where it has one.
    """
    lines = [f"# {TITLE}", "", INTRO, ""]
    left_out = stale_left_out(report)
    if left_out:
        lines += [left_out, ""]
    if not found:
        lines += ["No stored record holds checks yet: run nox -s probe.", ""]
    for history in found:
        for column in history.columns:
            lines += _section(history, column, scripts)
    if found:
        lines += ["## Legend", "", "| mark | meaning |", "| :-: | --- |"]
        lines += [f"| {change.symbol} | {change.meaning} |" for change in SHOWN_CHANGES]
        lines += ["| – | the release has no such check |", ""]
        lines += [
            "In a cell, `● 2/3`: 2 of the 3 samples compared changed. (random): the operator draws random "
            "numbers, each sample from a seed of its own, the same in every release.",
            "",
        ]
    if report.updated:
        lines += [f"From the results finished by {escape.markdown(report.updated)}.", ""]
    return "\n".join(lines)


def _section(history: History, column: Column, scripts: Collection[str] = ()) -> list[str]:
    title = escape.markdown(f"{history.probe} · {column.label}")
    lines = [f"## {title}", ""]
    transitions = [transition for transition in history.transitions if transition.column == column]
    if not transitions:
        release = history.releases[column][0].label
        return [*lines, f"One release only ({escape.markdown(release)}): nothing to compare.", ""]
    sampled = any(transition.samples_from for transition in transitions)  # a sweep: its samples' source too
    lines += [
        f"| from | to | checks in both | compared (same inputs) | samples compared |{' samples from |' * sampled}"
        " refused | changed | machine |",
        f"| :-- | :-- | --: | --: | --: |{' :-- |' * sampled} --: | --: | :-- |",
    ]
    for transition in transitions:
        source = f" {escape.markdown(transition.samples_from) or '–'} |" if sampled else ""
        lines.append(
            f"| {escape.markdown(transition.before.label)} | {escape.markdown(transition.after.label)} "
            f"| {transition.in_both} | {transition.compared} "
            f"| {_share(transition.samples_compared, transition.samples)} |{source} {transition.refused} "
            f"| {len(transition.changed)} | {escape.markdown('; '.join(transition.differs)) or 'the same'} |"
        )
    lines.append("")
    changed = history.changed_checks(column)
    if not changed:
        return [*lines, "No check changed.", ""]
    later = history.releases[column][1:]
    lines += [
        f"{len(changed)} checks changed:" if len(changed) > 1 else "1 check changed:",
        "",
        "| check | " + " | ".join(escape.markdown(row.label) for row in later) + " |",
        "| :-- | " + " | ".join(":-:" for _ in later) + " |",
    ]
    for name in changed:
        steps = [history.steps.get((name, row, column)) for row in later]
        cells = [_cell(step) for step in steps]
        random = any(step is not None and step.check.get("random") is True for step in steps)
        lines.append(f"| {escape.markdown(name)}{' (random)' if random else ''} | " + " | ".join(cells) + " |")
    return [*lines, "", *_samples(repro.sample_changes(history, column), scripts)]


def _samples(changes: Sequence[repro.SampleChange], scripts: Collection[str]) -> list[str]:
    """The samples whose output changed, each with its distance from float64 before and after, and its repro."""
    if not changes:
        return []
    lines = [
        f"{len(changes)} samples changed"
        + (
            ", each with a repro: run it under both releases, or `nox -s bisect -- <repro> --by-output --from A --to B`"
            if any(change.script in scripts for change in changes)
            else ""
        )
        + ":",
        "",
        "| check | from | to | input | output | ulps from float64 | repro |",
        "| :-- | :-- | :-- | :-- | :-- | :-- | :-- |",
    ]
    for change in changes:
        # A script's path is letters, digits, _, / and . (repro.script_path): nothing to escape.
        link = f"[{change.script.rpartition('/')[2]}]({change.script})" if change.script in scripts else ""
        lines.append(
            f"| {escape.markdown(change.check)} | {escape.markdown(change.before.label)} "
            f"| {escape.markdown(change.after.label)} | {escape.markdown(change.input)} "
            f"| {escape.markdown(change.output_before)} → {escape.markdown(change.output_after)} "
            f"| {escape.markdown(change.ulps)} | {link} |"
        )
    return [*lines, ""]


def _share(part: int, whole: int) -> str:
    """``1207 of 1385 (87%)``: the percentage rounded down, so that 99.6% is not shown as all."""
    return f"{part} of {whole}" + (f" ({100 * part // whole}%)" if whole else "")


def _cell(step: CheckInRelease | None) -> str:
    if step is None:
        return "–"
    if step.change is SincePrevious.CHANGED:
        return f"{step.change.symbol} {step.comparison.changed}/{step.comparison.compared}"
    return step.change.symbol if step.change in SHOWN_CHANGES else ""
