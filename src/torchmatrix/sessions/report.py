"""`nox -s report`: render every machine's results into the output folder, print each machine's table, diff."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .. import freshness, results, summaries, summary, terminal
from ..report import diff, model, publish
from ..report import options as report_options

if TYPE_CHECKING:
    import nox

    from ..project import Project


def run(project: Project, session: nox.Session) -> None:
    """Render every machine's results into the output folder, print each machine's table, diff if asked."""
    options = report_options.parse(session.posargs)
    project.require_writable(project.matrix.output)
    merged = _merged(session, project.results_dir, project)
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
            f"{terminal.escape(machine, keep_newlines=False)}:\n{summary.table(cells, project.matrix.devices)}\n",
            flush=True,
        )
    names = ", ".join(path.name for path in written)
    session.log(
        terminal.escape(f"{len(machines)} machine(s); wrote {names} to {project.matrix.output}", keep_newlines=False)
    )
    if options.diff:
        before = _merged(session, options.diff)
        print(diff.render(diff.changes(before, merged), str(options.diff), str(project.results_dir)), flush=True)


def _merged(session: nox.Session, results_dir: Path, current: Project | None = None) -> model.Report:
    """The report of every result under ``results_dir``; with ``current``, records it would not make so are stale."""
    scan = results.scan(results_dir)
    results.warn_skipped(scan, session.warn)
    return model.build(freshness.marked_stale(scan.results, current) if current else scan.results)
