"""What `nox -s plan` and `nox -s clean` share: the environments folders of the running nox, uv's cache, and what
the matrix's releases keep there."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from nox.virtualenv import find_uv
from packaging.version import Version

from ..environment import disk, uvcache
from . import childnox

if TYPE_CHECKING:
    import nox

    from ..project import Project


def survey(
    project: Project, session: nox.Session, more: Mapping[Version, Sequence[str]] | None = None
) -> tuple[disk.Survey, str | None]:
    """What each release of the matrix (and each of ``more``, by its probe sessions' parameters) keeps, with every
    other environment of the folders; and the uv that made them (None where there is none)."""
    envdir = childnox.envdir_of(session)
    uv, cache = _cache()
    releases = {**parameters(project), **(more or {})}
    return disk.survey([envdir, *disk.held_envdirs(envdir)], releases, cache), uv


def parameters(project: Project) -> dict[Version, list[str]]:
    """The parameters of each release's probe sessions: its cells', and the one a bisect that holds a Python runs
    it as (``2.1.0``), which a release the matrix pins two Pythons for has not."""
    found: dict[Version, list[str]] = {}
    for cell in project.cells:
        found.setdefault(cell.torch, []).append(cell.parameter)
    return {version: list(dict.fromkeys([*listed, str(version)])) for version, listed in found.items()}


def _cache() -> tuple[str | None, uvcache.Cache]:
    """uv (as nox finds it, to build the cells with) and its cache, as it says where that is."""
    has_uv, uv, _ = find_uv()
    if not has_uv:
        why = "uv is not found: the cells' environments are made by virtualenv and pip, whose cache is not read"
        return None, uvcache.Cache(None, why)
    root = uvcache.ask_root(uv, os.environ)
    if isinstance(root, str):
        return uv, uvcache.Cache(None, root)
    return uv, uvcache.read(root)
