"""`nox -s report`: render every machine's results into the output folder, print each machine's table, diff."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

from .. import freshness, results, summaries, terminal, terminal_table, variables
from ..errors import TorchmatrixError
from ..report import cells, diff, model, publish
from ..report import options as report_options

if TYPE_CHECKING:
    import nox

    from ..project import Project


def run(project: Project, session: nox.Session) -> None:
    """Render every machine's results into the output folder, print each machine's table, diff if asked."""
    options = report_options.parse(session.posargs)
    project.require_writable(project.matrix.output)
    merged = _merged(session, project.results_dir, project, None if options.all_cells else _matrix_cells(project))
    bisections, skipped = summaries.scan(project.matrix.output / "bisect")
    results.warn_skipped(skipped, session.warn)
    try:
        written = publish.write(project.matrix.output, publish.render(merged, options.formats, bisections))
    except OSError as exc:
        session.error(terminal.escape(f"cannot write the reports to {project.matrix.output}: {exc.strerror or exc}"))
    # This machine's table first, then those of the machines whose folders were copied in.
    machines = sorted({result.machine for result in merged.results} or {project.machine},
                      key=lambda machine: (machine != project.machine, machine.casefold()))  # fmt: skip
    for machine in machines:
        cells = [result for result in merged.results if result.machine == machine]
        print(
            f"{terminal.escape(machine, keep_newlines=False)}:\n{terminal_table.table(cells, project.matrix.devices)}\n",
            flush=True,
        )
    if merged.others:
        session.log(
            terminal.escape(
                f"{len(merged.others)} stored cell(s) not shown, as no cell of the matrix now "
                f"({', '.join(aside.result.cell_id for aside in merged.others)}): -- --all-cells shows them",
                keep_newlines=False,
            )
        )
    names = ", ".join(path.name for path in written)
    session.log(
        terminal.escape(f"{len(machines)} machine(s); wrote {names} to {project.matrix.output}", keep_newlines=False)
    )
    if options.diff:
        before = _merged(session, options.diff)
        print(diff.render(diff.changes(before, merged), str(options.diff), str(project.results_dir)), flush=True)


def _merged(
    session: nox.Session,
    results_dir: Path,
    current: Project | None = None,
    matrix_cells: cells.MatrixCells | None = None,
) -> model.Report:
    """The report of every result under ``results_dir``; with ``current``, records it would not make so are stale;
    with ``matrix_cells``, the results that are no cell of it are only named."""
    scan = results.scan(results_dir)
    results.warn_skipped(scan, session.warn)
    found = freshness.marked_stale(scan.results, current) if current else scan.results
    if matrix_cells is None:
        return model.build(found)
    return model.build(*cells.split(found, matrix_cells))


def _matrix_cells(project: Project) -> cells.MatrixCells:
    """The cells of the matrix file, as planned here.

    A run of chosen releases or one Python (``$TORCHMATRIX_TORCH``, ``$TORCHMATRIX_PYTHON``: what bisect's cells
    run with) leaves the matrix what its file says: the report is planned again without them.
    """
    chosen = {variables.TORCH.name, variables.PYTHON.name}
    planned = project.cells
    if any(project.caller.get(name) for name in chosen):
        from .. import project as projects

        environ = {name: value for name, value in project.caller.items() if name not in chosen}
        # Where the matrix cannot be planned without them, the plan of this run: what it ran is shown.
        with contextlib.suppress(TorchmatrixError):
            planned = projects.load(project.matrix.file.parent, environ).cells
    return cells.MatrixCells.of(planned, project.machine)
