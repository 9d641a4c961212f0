"""`nox -s plan`: the resolved plan, a row per cell (what it installs, what bounds it, what seeds its environment),
what each release keeps on disk, and nothing run."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tabulate import tabulate

from ..environment import disk
from ..planner import assumed_support
from ..util import safetext
from ..util.arguments import Parser, typed
from ..views import pins
from . import keeps

if TYPE_CHECKING:
    import nox

    from ..environment.uvcache import CachedWheel
    from ..planner import Cell
    from ..project import Project


def run(project: Project, session: nox.Session, command: str | None = None) -> None:
    """Print where the plan looked (matrix, machine, results, find-links, notes), the caller's variables no pair
    sees, each cell's row, and what each release keeps on disk (``command`` names the session that removes it)."""
    arguments_parser(command).parse(session.posargs)  # none but --help
    project.refuse_unlisted(command)
    print(text(project))
    print()
    print(disk_text(keeps.survey(project, session)[0], disk.Usage(), command))


def arguments_parser(command: str | None = None) -> Parser:
    """The parser of the session's arguments (it takes none), whose usage line is the ``command``'s that starts it
    (nox's: None)."""
    usage = typed(command, "plan", "[SCRIPT …] [--torch V[,V…]]" if command else "")
    does = "Show each cell's Python, requirements and status, and what each release keeps on disk; build nothing."
    return Parser(usage, does)


def text(project: Project) -> str:
    lines = [f"matrix:  {project.matrix.file}", f"machine: {project.machine}", f"results: {project.results_dir}"]
    lines += [f"find-links: {link}" for link in project.find_links]
    lines += [f"note: {safetext.for_terminal(note)}" for note in project.notes]
    lines += [f"note: {assumed}" for assumed in _assumptions(project.cells)]
    lines += [f"note: {safetext.for_terminal(why)}" for why in _unseeded(project.cells)]
    unseen = project.unseen_variables()
    if unseen:  # whatever they steer, no pair sees them: said, never dropped in silence
        lines.append(f"not passed to the pairs: {safetext.for_terminal(', '.join(unseen))} (`pass_env:` passes one)")
    rows = [
        [
            cell.session,
            f"{cell.interpreter.path} ({cell.interpreter.source})" if cell.interpreter else "-",
            " ".join(project.install_requirements(cell, build=False)),  # the plan builds nothing
            " ".join(cell.constraints) or "-",
            " ".join(cell.seed) or "-",
            _status(cell),
        ]
        for cell in project.cells
    ]
    headers = ["session", "python", "requirements", "constraints", "seed", "status"]
    table = tabulate(rows, headers=headers, disable_numparse=True)
    return "\n".join([*lines, "", table, "", *_why(project)])


def _why(project: Project) -> list[str]:
    """Where the cells' constraints come from, with their reasons, in the words a result records them and a report's
    note says them (:func:`.pins.why`), and what the seed is."""
    by_rule: dict[str, list[str]] = {}
    for given in dict.fromkeys(given for cell in project.cells for given in cell.constrained_by):
        by_rule.setdefault(pins.why(given), []).append(given.text)
    said = [f"  {' '.join(texts)}: {rule}" for rule, texts in by_rule.items()]
    if said:
        said.insert(0, "constraints bound a package where a cell installs it, and add none:")
    said.append("seed: what `python -m venv` installs in a new environment, as each interpreter's ensurepip says")
    return [safetext.for_terminal(line) for line in said]


def _assumptions(cells: Sequence[Cell]) -> list[str]:
    """What the plan assumed of each release newer than its table, once per release whose Python it chose."""
    chosen = dict.fromkeys(cell.torch for cell in cells if cell.python_request is None and cell.interpreter)
    return [text for text in (assumed_support(version) for version in chosen) if text]


def _unseeded(cells: Sequence[Cell]) -> list[str]:
    """Why the environments of the cells' interpreters that have no ensurepip are left unseeded, once each."""
    whys = (cell.interpreter.why_unseeded for cell in cells if cell.interpreter)
    return [why for why in dict.fromkeys(whys) if why]


def _status(cell: Cell) -> str:
    if cell.outcome:
        return f"{cell.outcome.value}: {safetext.for_terminal(cell.hint)}"
    return "ready" if cell.interpreter else f"cannot plan: {safetext.for_terminal(cell.hint)}"


def disk_text(survey: disk.Survey, usage: disk.Usage, command: str | None = None) -> str:
    """What each release keeps (its environments, the cached wheels it alone keeps, what removing it frees), the
    wheels several keep, the other environments here, and the total."""
    cache = survey.cache
    where = f"uv's cache {cache.root}" if cache.root else "uv's cache"
    lines = [f"kept on disk: environments in {survey.envdir}, wheels in {where}"]
    if cache.unknown:
        lines.append(f"cached wheels: unknown: {cache.unknown}")
    rows = [_release_row(survey, usage, holder) for holder in survey.releases]
    headers = ["release", "environments (with bytecode)", "cached wheels", "removing it frees"]
    lines += [tabulate(rows, headers=headers, disable_numparse=True)]
    for users, wheels in _shared(survey).items():
        archives = [wheel.archive for wheel in wheels]
        lines.append(f"shared by {', '.join(users)}: {len(wheels)} wheel(s), {disk.human(usage.size(archives))}: "
                     f"{disk.names(wheels)}")  # fmt: skip
    if survey.others:
        others = [f"{holder.label}{f' (torch {holder.torch})' if holder.torch else ''}" for holder in survey.others]
        paths = [path for holder in survey.others for path in _paths(holder)]
        size = disk.human(usage.size(paths))
        named = ", ".join(others)
        lines.append(f"also here, of no release of the matrix: {named}: {size} with the wheels only they keep")
    everything = [path for holder in survey.holders for path in _paths(holder)]
    removes = typed(command, "clean", "RELEASE")
    lines.append(f"total: {disk.human(usage.size(everything))}, a file linked from the cache into an environment "
                 f"counted once; `{removes}` removes what a release keeps")  # fmt: skip
    return "\n".join(safetext.for_terminal(line) for line in lines)


def _release_row(survey: disk.Survey, usage: disk.Usage, holder: disk.Holder) -> list[str]:
    environments = holder.environments
    built = f"{len(environments)}, {disk.human(usage.size(holder.built))}" if holder.built else "none"
    if survey.cache.unknown:
        return [holder.label, built, "unknown", disk.human(usage.frees(holder.built)) if holder.built else "-"]
    removal = survey.removal([holder.label])
    own = [wheel.archive for wheel in removal.wheels]
    wheels = f"{len(own)}, {disk.human(usage.size(own))}" if own else "none"
    if removal.shared:
        wheels += f" + {len(removal.shared)} shared"
    frees = disk.human(usage.frees(removal.paths)) if removal.paths else "-"
    return [holder.label, built, wheels, frees]


def _shared(survey: disk.Survey) -> dict[tuple[str, ...], list[CachedWheel]]:
    """The wheels a release keeps with others, by who keeps them (what other environments alone share is theirs)."""
    groups: dict[tuple[str, ...], list[CachedWheel]] = {}
    for wheel in disk.in_order({wheel for holder in survey.releases for wheel in holder.wheels}):
        users = tuple(survey.users(wheel))
        if len(users) > 1:
            groups.setdefault(users, []).append(wheel)
    return groups


def _paths(holder: disk.Holder) -> list[Path]:
    return [*holder.built, *(wheel.archive for wheel in holder.wheels)]
