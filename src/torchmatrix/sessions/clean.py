"""`nox -s clean -- RELEASE [RELEASE …]`: remove what releases keep on disk, their environments and the wheels of
uv's cache that nothing else here keeps; never a stored result.

An environment goes only while this holds its lock, the one its probe session
holds while it runs (:func:`torchmatrix.environment.cellenv.locked`): it waits for a run
that uses it. A wheel goes by its entries in uv's cache; ``uv cache prune``
then frees the folders nothing points to any more.
"""

from __future__ import annotations

import functools
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.version import InvalidVersion, Version

from ..environment import cellenv, disk, uvcache
from ..errors import UsageError, did_you_mean
from ..util import safetext
from ..util.arguments import Parser, typed
from . import keeps

if TYPE_CHECKING:
    import nox

    from ..project import Project

ARGUMENTS = "RELEASE [RELEASE …] [--dry-run]"


@dataclass(frozen=True)
class CleanRequest:
    releases: tuple[str, ...]
    dry_run: bool = False


def parse(argv: Sequence[str], command: str | None = None) -> CleanRequest:
    args = arguments_parser(command).parse(argv)
    return CleanRequest(tuple(args.releases), args.dry_run)


def arguments_parser(command: str | None = None) -> Parser:
    """The parser of the session's arguments, whose usage line is the ``command``'s that starts it (nox's: None)."""
    does = "Remove releases' environments and the cached wheels they keep."
    parser = Parser(typed(command, "clean", ARGUMENTS), does)
    parser.add_argument("releases", nargs="+", metavar="RELEASE", help="a torch release of the matrix: 2.1.0")
    parser.add_argument("--dry-run", action="store_true", help="say what would go, and how much, removing nothing")
    return parser


def run(project: Project, session: nox.Session, command: str | None = None) -> None:
    """Remove the environments of the releases asked and the cached wheels nothing else here keeps, then prune."""
    request = parse(session.posargs, command)
    outside = {Version(word): [str(Version(word))] for word in request.releases if _outside(project, word)}
    survey, uv = keeps.survey(project, session, outside)
    chosen = list(dict.fromkeys(chosen_release(survey, project, word) for word in request.releases))
    removal = survey.removal(chosen)
    usage = disk.Usage()
    for line in said(survey, removal, chosen, usage, request.dry_run):
        print(safetext.for_terminal(line), flush=True)
    if request.dry_run or not removal.paths:
        return
    for env in removal.environments:
        with cellenv.locked(env, functools.partial(print, f"waiting for the run that uses {env} to end", flush=True)):
            if env.exists():  # another clean may have removed it while this one waited
                remove_environment(env)
    for folder in removal.bytecode:  # compiled by the environments' Pythons, which are gone
        shutil.rmtree(folder, ignore_errors=True)
    for wheel in removal.wheels:
        uvcache.forget(wheel)
    if removal.wheels:
        print(safetext.for_terminal(_pruned(uv)), flush=True)


def remove_environment(env: Path) -> None:
    """Remove ``env``, its marker first: a removal stopped halfway (Ctrl-C) leaves what is left of it no
    environment that counts as built, which the next run rebuilds rather than reuses."""
    cellenv.unmark_built(env)
    shutil.rmtree(env)


def _outside(project: Project, word: str) -> bool:
    """Whether ``word`` is a release, spelled in full, that is none of the matrix's."""
    try:
        version = Version(word)
    except InvalidVersion:
        return False
    return str(version) == word and all(cell.torch != version for cell in project.cells)


def chosen_release(survey: disk.Survey, project: Project, word: str) -> str:
    """The label of the release ``word`` names: one of the matrix's, or another, spelled in full, whose environments
    are here. Anything else is refused, with the releases it could have meant."""
    listed = sorted({cell.torch for cell in project.cells})
    try:
        version: Version | None = Version(word)
    except InvalidVersion:
        version = None
    holder = next((holder for holder in survey.releases if Version(holder.label) == version), None)
    if holder is not None and (version in listed or holder.environments):
        return holder.label
    installed = [holder.torch for holder in survey.others if holder.torch]
    built = sorted({Version(torch) for torch in installed if _is_release(torch)})
    known = [str(release) for release in dict.fromkeys([*listed, *built])]
    same = [release for release in known if Version(release) == version]  # 9.0 for 9.0.0, outside the matrix
    in_full = "a release outside the matrix is named in full, as `nox -s plan` lists it"
    hint = f"did you mean {same[0]!r}?" if same else did_you_mean(word, known, in_full)
    others = f"; other releases with environments here: {', '.join(map(str, built))}" if built else ""
    listing = ", ".join(map(str, listed)) or "none"
    raise UsageError(
        f"{word} is no torch release of {project.matrix.file} (its releases: {listing}{others}), "
        f"nor one whose environments are here\n  hint: {hint}"
    )


def _is_release(text: str) -> bool:
    try:
        Version(text)
    except InvalidVersion:
        return False
    return True


def said(
    survey: disk.Survey, removal: disk.Removal, chosen: Sequence[str], usage: disk.Usage, dry_run: bool
) -> list[str]:
    """What removing ``chosen`` removes (would remove, with ``dry_run``), how much that frees, and what stays."""
    releases = ", ".join(chosen)
    if not removal.paths:
        return [f"torch {releases}: nothing kept here (no environment, no cached wheel of its own)"]
    verb = "would remove" if dry_run else "removing"
    lines = []
    built = [*removal.environments, *removal.bytecode]
    if built:
        size = disk.human(usage.size(built))
        lines.append(f"torch {releases}: {verb} {len(removal.environments)} environment(s) and their bytecode, {size}:")
        lines += [f"  {folder}" for folder in built]
    if removal.wheels:
        size = disk.human(usage.size(wheel.archive for wheel in removal.wheels))
        lines.append(f"torch {releases}: {verb} {len(removal.wheels)} cached wheel(s) nothing else here keeps, "
                     f"{size}, from {survey.cache.root}: {disk.names(removal.wheels)}")  # fmt: skip
    if removal.shared:
        users = sorted({user for wheel in removal.shared for user in survey.users(wheel)} - set(chosen))
        lines.append(f"kept: {len(removal.shared)} cached wheel(s) that {' and '.join(users)} also keep")
    if survey.cache.unknown:
        lines.append(f"the cached wheels are not known, so none is removed: {survey.cache.unknown}")
    lines.append(f"{'frees' if not dry_run else 'would free'} {disk.human(usage.frees(removal.paths))} "
                 "(a file also linked from elsewhere stays); stored results stay")  # fmt: skip
    return lines


def _pruned(uv: str | None) -> str:
    """``uv cache prune`` run, so that the folders of the wheels forgotten go: what it said, or what to run."""
    if uv is None:
        return "run `uv cache prune` to free the folders of the wheels removed"
    code, output = uvcache.prune(uv, os.environ)
    if code != 0:
        return f"`uv cache prune` failed ({safetext.terminal_line(output)}): run it again to free the wheels' folders"
    return f"uv cache prune: {output.splitlines()[-1] if output else 'done'}"
