"""`nox -s report`: render every machine's results into the output folder, print each machine's table, diff."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import freshness, identity, results, variables
from ..bisection import summaries
from ..bisection.standing import answers_marked_stale
from ..core import Probe, Record
from ..errors import TorchmatrixError
from ..matrix.schema import PROBE_NAME
from ..util import safetext
from ..util.arguments import typed
from ..views import cells, diff, markdown, model, publish, repro, terminal_table
from ..views import options as report_options

if TYPE_CHECKING:
    import nox

    from ..project import Project


def queue_report(session: nox.Session) -> None:
    """Queue this session after the cells; nox runs it once, however many cells ask."""
    # Under `nox -j N` each session runs in its own nox process, which cannot
    # queue another (ValueError): `nox -j N -s probe report` prints the table once, last.
    with contextlib.suppress(ValueError):
        session.notify("report", posargs=[])  # the table takes none of the cells' arguments (--force)


def run(
    project: Project,
    session: nox.Session,
    ran: Sequence[str] = (),
    command: str | None = None,
    repeat: int | None = None,
) -> None:
    """Render every machine's results into the output folder, print each machine's table, diff if asked.

    ``ran``: the probe sessions this nox run ran before it (``probe(1.12.1)``), whose cells alone its tables show;
    none: every table. ``repeat``: the runs per pair they took where not the matrix's (``-- --repeat N``), by which
    the records of their cells are judged, as a run of them now would be: the rest as the matrix says. ``command``:
    the command that started it when it is not nox (``torchmatrix``), for the commands it suggests.
    """
    options = report_options.parse(session.posargs, command)
    project.require_writable(project.matrix.output)
    took = project.matrix.probes  # the matrix's, or those the run was given
    project = project.with_stored_probes(results.scan(project.results_dir).results)
    judge = project if repeat is None else AsRan(project, project.with_repeat(repeat), tuple(ran), took)
    matrix_cells = None if options.all_cells else _matrix_cells(project)
    merged = _merged(session, project.results_dir, project, matrix_cells, command, judge)
    bisections, skipped = summaries.scan(project.matrix.output / "bisect")
    results.warn_skipped(skipped, session.warn)
    bisections = answers_marked_stale(project, bisections, results.scan(project.results_dir).results)
    try:
        files = publish.render(merged, options.formats, bisections, _probe_sources(project, merged))
        written = publish.write(project.matrix.output, files)
        _remove_old_repros(project.matrix.output, files)
    except OSError as exc:
        session.error(
            safetext.for_terminal(f"cannot write the reports to {project.matrix.output}: {exc.strerror or exc}")
        )
    # This machine's table first, then those of the machines whose folders were copied in.
    machines = sorted({result.machine for result in merged.results} or {project.machine},
                      key=lambda machine: (machine != project.machine, machine.casefold()))  # fmt: skip
    shown = [result for result in merged.results if not ran or _ran_here(result, project.machine, ran)]
    for machine in machines:
        cells = [result for result in shown if result.machine == machine]
        if cells or not ran:
            table = terminal_table.table(cells, project.matrix.devices, typed(command, "probe"))
            print(f"{safetext.for_terminal(machine, keep_newlines=False)}:\n{table}\n", flush=True)
            for note in _constraint_notes(merged, cells):
                print(safetext.for_terminal(f"note: {note}", keep_newlines=False), flush=True)
    if len(shown) < len(merged.results):
        others = len(merged.results) - len(shown)
        session.log(
            f"{others} other stored cell(s) not shown, as this run did not run them: "
            f"`{typed(command, 'report')}` shows them"
        )
    if merged.others:
        session.log(
            safetext.for_terminal(
                f"{len(merged.others)} stored cell(s) not shown, as no cell of the matrix now "
                f"({', '.join(aside.result.cell_id for aside in merged.others)}): "
                f"`{typed(command, 'report', '--all-cells')}` shows them",
                keep_newlines=False,
            )
        )
    in_repro = [path for path in written if path.parent.name == repro.FOLDER and path.suffix == ".py"]
    scripts = sum(not path.name.endswith(repro.MODULE_SUFFIX) for path in in_repro)  # the probe's copy they import
    names = ", ".join(path.name for path in written if path not in in_repro)
    names += f" and {scripts} repro script(s) in {repro.FOLDER}/" if scripts else ""
    kept = len(files) - len(written)
    did = f"wrote {names} to {project.matrix.output}" if written else f"the reports in {project.matrix.output}"
    did += f" ({kept} unchanged)" if written and kept else " are up to date" if not written else ""
    session.log(safetext.for_terminal(f"{len(machines)} machine(s); {did}", keep_newlines=False))
    _add_to_step_summary(session, project, merged, bisections)
    if options.diff:  # the two result sets as stored: what changed between them; a record stale now said so
        stored = results.scan(project.results_dir).results
        before, after = _merged(session, options.diff), model.build(stored)
        found = diff.changes(before, after, model.build(freshness.marked_stale(stored, judge)))
        print(diff.render(found, str(options.diff), str(project.results_dir)), flush=True)


def _ran_here(result: results.CellResult, machine: str, ran: Sequence[str]) -> bool:
    return result.machine == machine and result.session in ran


@dataclass(frozen=True)
class AsRan:
    """What a run now would do (:class:`freshness.RunNow`) for the report of probe sessions that took runs per pair
    of their own (``-- --repeat N``): the records of the cells they ran made with those runs per pair as they ran them
    (``ran_as``), every other record as the matrix says (``project``). Their records are not stale by their own run's
    settings; a later report, of the matrix's, says what changed. A record of a probe they did not take (``took``: the
    probes the run was given, where it was given any), or whose identity says other runs per pair, was not made by
    them, and is judged as a run of the matrix would judge it."""

    project: Project
    ran_as: Project
    ran: Sequence[str]
    took: Sequence[Probe]

    @property
    def machine(self) -> str:
        return self.project.machine

    @property
    def hardware(self) -> identity.Machine:
        return self.project.hardware

    def owner(self, record_name: str) -> Probe | None:
        return self.project.owner(record_name)

    def identity_now(self, result: results.CellResult, record: Record) -> Mapping[str, Any] | None:
        made_with = identity.Identity.stored(record.inputs).parts["repeat"]
        made_here = _ran_here(result, self.machine, self.ran) and made_with == self.ran_as.matrix.repeat
        made_now = made_here and any(probe.covers(record.probe) for probe in self.took)
        return (self.ran_as if made_now else self.project).identity_now(result, record)


STEP_SUMMARY_LIMIT = 1 << 20
"""GitHub refuses a step summary over 1 MiB, and shows none of it then."""


def _add_to_step_summary(
    session: nox.Session, project: Project, report: model.Report, bisections: Sequence[summaries.Summary]
) -> None:
    """On GitHub Actions, the report's Markdown on the job's summary page (:data:`variables.STEP_SUMMARY`)."""
    path = variables.STEP_SUMMARY.get(project.caller)
    if not path:
        return
    text = markdown.render(report, bisections=bisections)
    if len(text.encode()) > STEP_SUMMARY_LIMIT:
        text = f"# {markdown.TITLE}\n\nThe report is over the 1 MiB a step summary holds: see its files.\n"
    try:
        with open(path, "a", encoding="utf-8") as summary:
            summary.write(text + "\n")
    except OSError as exc:
        session.warn(safetext.for_terminal(f"cannot add the report to the step summary {path}: {exc.strerror or exc}"))


def _probe_sources(project: Project, report: model.Report) -> dict[str, repro.ProbeSource]:
    """The file of each probe whose records ask for repro scripts: the matrix's probe of that name, or the one of
    that name in probes/ beside the matrix (where a record names a probe the matrix no longer has), if it is a
    probe's name."""
    base = project.matrix.file.parent
    named = {probe.name: probe.path for probe in project.matrix.probes}

    def probe_file(name: str) -> Path | None:
        return named.get(name) or (base / "probes" / f"{name}.py" if PROBE_NAME.match(name) else None)

    return repro.sources(report.tables, probe_file, project.matrix.output / repro.FOLDER, base)


def _remove_old_repros(output: Path, files: dict[str, str]) -> None:
    """Remove the repro scripts of samples that no longer changed: a link to one would be a change no more. Only
    where a view that links them was written: the others make none."""
    folder = output / repro.FOLDER
    if not {publish.FILE_NAMES["changes"], publish.FILE_NAMES["html"]} & set(files):
        return
    for path in folder.glob("*.py") if folder.is_dir() else ():
        if f"{repro.FOLDER}/{path.name}" not in files:
            path.unlink(missing_ok=True)


def _constraint_notes(report: model.Report, cells: Sequence[results.CellResult]) -> list[str]:
    """The notes on what the rows of ``cells`` were installed under besides torch, where a row beside them was not."""
    rows = {model.Row(cell.torch, cell.python_request) for cell in cells}
    return [report.notes[number - 1] for row, number in report.row_notes.items() if row in rows]


def _merged(
    session: nox.Session,
    results_dir: Path,
    current: Project | None = None,
    matrix_cells: cells.MatrixCells | None = None,
    command: str | None = None,
    judge: freshness.RunNow | None = None,
) -> model.Report:
    """The report of every result under ``results_dir``; with ``current``, records it would not make so (or
    ``judge``, where it is another run's) are stale, and its pins say why of a constraint a result recorded no rule
    of; with ``matrix_cells``, the results that are no cell of it are only named; ``command``: the command that
    started the session when it is not nox, whose words the report suggests."""
    scan = results.scan(results_dir)
    results.warn_skipped(scan, session.warn)
    found = freshness.marked_stale(scan.results, judge or current) if current else scan.results
    known, own = (current.known_pins, current.matrix.pins) if current else ((), ())  # why, where none is recorded
    shown, others = (list(found), []) if matrix_cells is None else cells.split(found, matrix_cells)
    return replace(model.build(shown, others, command, known, own), warnings=scan.warnings)


def _matrix_cells(project: Project) -> cells.MatrixCells:
    """The cells of the matrix as this run has it, planned here: releases a person chose (``--torch``,
    ``$TORCHMATRIX_TORCH``) are the cells whose table they asked for.

    The child nox of a bisect or a verify (the one a hand-back folder is set for) runs one release, on the
    Python it holds, with ``$TORCHMATRIX_TORCH`` and ``$TORCHMATRIX_PYTHON``: that leaves the matrix what
    its file says, and its report is planned again without them.
    """
    chosen = {variables.TORCH.name, variables.PYTHON.name}
    planned = project.cells
    if variables.HANDBACK.get(project.caller) and any(project.caller.get(name) for name in chosen):
        from .. import project as projects

        environ = {name: value for name, value in project.caller.items() if name not in chosen}
        # Where the matrix cannot be planned without them, the plan of this run: what it ran is shown.
        with contextlib.suppress(TorchmatrixError):
            planned = projects.load(project.matrix.file.parent, environ).cells
    return cells.MatrixCells.of(planned, project.machine)
