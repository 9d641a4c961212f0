"""What a matrix keeps on disk: each release's environments, and the wheels of uv's cache they were installed from.

A release keeps the environment of each of its probe sessions (``.nox/probe-2-1-0``, and one per Python a bisect
held, ``.nox/held-python-3.10/probe-2-1-0``) and the cached wheels those environments hold, found by asking
each environment what it has installed and the cache what it has unpacked (:mod:`torchmatrix.environment.uvcache`). A
wheel two releases hold (NVIDIA's CUDA libraries, shared by torch releases of one CUDA) is kept once, and
removing one release's environments leaves it for the other. Sizes are what the files take on the disk; a file
an environment hard-links from the cache is one file, counted once.
"""

from __future__ import annotations

import importlib.metadata
import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from nox.sessions import _normalize_path
from packaging.utils import canonicalize_name
from packaging.version import Version

from ..planner import session_of
from .cellenv import bytecode_of, installed_versions, site_packages
from .uvcache import Cache, CachedWheel, WheelId, built

TORCH = canonicalize_name("torch")


def environment_of(folder: Path, parameter: str) -> Path:
    """Where nox keeps the environment of ``probe(<parameter>)`` in the environments folder ``folder``.

    nox's own rule (which writes a name too long for a path as a digest of it), since nox makes the folder; asked
    quietly: what nox warns of as it names the folder, it warns of as it makes it.
    """
    quiet = logging.getLogger("nox")
    was, quiet.disabled = quiet.disabled, True
    try:
        return Path(_normalize_path(str(folder), session_of(parameter)))
    finally:
        quiet.disabled = was


HELD_PREFIX = "held-python-"
"""The name of a folder of ``--envdir`` that holds the environments of cells on a Python a bisect holds, before
that Python: ``held-python-3.10``."""


def held_envdirs(envdir: Path) -> list[Path]:
    """The folders of ``envdir`` where a bisect kept the environments of cells on a Python it held."""
    return sorted(folder for folder in envdir.glob(f"{HELD_PREFIX}*") if folder.is_dir())


def envdir_for(envdir: Path, held_python: str | None) -> Path:
    """Where the environments of cells on ``held_python`` go: ``<envdir>/held-python-3.10``; ``envdir`` itself
    for the matrix's own cells (no Python held).

    A session's environment is named by the session alone (``probe-1-13-1``); a bisect that holds Python 3.10
    over a release the matrix runs on 3.11 would otherwise rebuild the matrix's environment on 3.10, and the
    next plain run rebuild it back.
    """
    return envdir / f"{HELD_PREFIX}{held_python}" if held_python else envdir


def environments_in(folder: Path) -> list[Path]:
    """Every environment directly in ``folder``: each folder with a ``pyvenv.cfg``."""
    try:
        return sorted(child for child in folder.iterdir() if (child / "pyvenv.cfg").is_file())
    except OSError:
        return []


def installed(env: Path) -> set[WheelId]:
    """What is installed in ``env``, as each distribution was built (those whose metadata is all there)."""
    folders = [str(folder) for folder in site_packages(env)]
    found = (built(distribution) for distribution in importlib.metadata.distributions(path=folders))
    return {each for each in found if each is not None}


@dataclass(frozen=True)
class Holder:
    """What one release of the matrix, or one other environment, keeps: its environments and cached wheels."""

    label: str
    """The release (``2.1.0``), or the other environment's folder, as the environments folder names it."""
    environments: tuple[Path, ...]
    wheels: frozenset[CachedWheel]
    torch: str | None = None
    """The torch installed in an environment that is no release's of the matrix; None for a release's own."""
    bytecode: tuple[Path, ...] = ()
    """The folders of the bytecode its environments' Pythons compiled
    (:func:`torchmatrix.environment.cellenv.bytecode_of`)."""

    @property
    def built(self) -> tuple[Path, ...]:
        """Its environments and their bytecode."""
        return (*self.environments, *self.bytecode)


@dataclass(frozen=True)
class Survey:
    """What the releases asked about keep, and every other environment of the environments folders."""

    envdir: Path
    """nox's environments folder (``--envdir``), which holds the folders of the Pythons a bisect held."""
    cache: Cache
    releases: tuple[Holder, ...]
    others: tuple[Holder, ...]

    @property
    def holders(self) -> tuple[Holder, ...]:
        return (*self.releases, *self.others)

    def users(self, wheel: CachedWheel) -> list[str]:
        """The labels of those that keep ``wheel``."""
        return [holder.label for holder in self.holders if wheel in holder.wheels]

    def removal(self, labels: Iterable[str]) -> Removal:
        """What removing the releases of ``labels`` removes: their environments, and the wheels they keep that
        nothing else here keeps; and the wheels they keep that others keep too, which stay."""
        chosen = set(labels)
        leaving = [holder for holder in self.holders if holder.label in chosen]
        staying = [holder for holder in self.holders if holder.label not in chosen]
        kept_elsewhere = frozenset().union(*(holder.wheels for holder in staying))
        theirs = frozenset().union(*(holder.wheels for holder in leaving))
        environments = tuple(env for holder in leaving for env in holder.environments)
        bytecode = tuple(folder for holder in leaving for folder in holder.bytecode)
        return Removal(environments, in_order(theirs - kept_elsewhere), in_order(theirs & kept_elsewhere), bytecode)


@dataclass(frozen=True)
class Removal:
    environments: tuple[Path, ...]
    wheels: tuple[CachedWheel, ...]
    """The cached wheels that go: nothing that stays keeps them."""
    shared: tuple[CachedWheel, ...] = ()
    """The cached wheels the removed releases keep that stay, as others keep them too."""
    bytecode: tuple[Path, ...] = ()

    @property
    def paths(self) -> list[Path]:
        """Everything that goes once uv's prune frees the wheels' folders."""
        return [*self.environments, *self.bytecode, *(wheel.archive for wheel in self.wheels)]


def survey(folders: Sequence[Path], releases: Mapping[Version, Sequence[str]], cache: Cache) -> Survey:
    """What each of ``releases`` (each with its probe sessions' parameters) keeps in the environments folders
    ``folders`` (the first is nox's ``--envdir``, the others those a bisect holds a Python in) and ``cache``.

    A release's cached torch is its own even where no environment of it is left.
    """
    claimed: set[Path] = set()
    holders = []
    for version, parameters in releases.items():
        found = [environment_of(folder, parameter) for folder in folders for parameter in parameters]
        environments = tuple(dict.fromkeys(env for env in found if env.is_dir()))
        claimed.update(environments)
        wheels = _wheels_of(environments, cache) | _torch_wheels(version, cache)
        holders.append(Holder(str(version), environments, wheels, None, _bytecode(found)))  # left by one gone too
    others = []
    for env in (env for folder in folders for env in environments_in(folder) if env not in claimed):
        torch = installed_versions(env, [TORCH])[TORCH]
        others.append(Holder(_label(env, folders[0]), (env,), _wheels_of([env], cache), torch, _bytecode([env])))
    return Survey(folders[0], cache, tuple(holders), tuple(others))


def _bytecode(environments: Iterable[Path]) -> tuple[Path, ...]:
    return tuple(folder for env in environments for folder in bytecode_of(env))


def _label(env: Path, envdir: Path) -> str:
    return env.relative_to(envdir).as_posix() if env.is_relative_to(envdir) else str(env)


def _wheels_of(environments: Iterable[Path], cache: Cache) -> frozenset[CachedWheel]:
    return frozenset(wheel for env in environments for each in installed(env) for wheel in cache.wheels_of(each))


def _torch_wheels(version: Version, cache: Cache) -> frozenset[CachedWheel]:
    """The cached torch wheels of release ``version``: its local builds too (``2.1.0+cpu``) where it names none."""
    return frozenset(
        wheel
        for wheel in cache.wheels_named(TORCH)
        if wheel.built.version == version or (not version.local and Version(wheel.built.version.public) == version)
    )


def in_order(wheels: Iterable[CachedWheel]) -> tuple[CachedWheel, ...]:
    """``wheels`` by name, then version."""
    return tuple(sorted(wheels, key=lambda wheel: (wheel.built.name, wheel.built.version, str(wheel.archive))))


@dataclass
class Usage:
    """What files take on the disk, each file (each inode) counted once, its folders walked once."""

    _walked: dict[Path, list[tuple[tuple[int, int], int, int]]] = field(default_factory=dict)

    def size(self, paths: Iterable[Path]) -> int:
        """The bytes the files under ``paths`` take, a file linked from several of them counted once."""
        return sum({key: taken for path in paths for key, _, taken in self._files(path)}.values())

    def frees(self, paths: Iterable[Path]) -> int:
        """The bytes that removing ``paths`` frees: of the files whose every hard link is under them."""
        links: dict[tuple[int, int], int] = {}
        files: dict[tuple[int, int], tuple[int, int]] = {}
        for path in dict.fromkeys(paths):
            for key, count, taken in self._files(path):
                links[key] = links.get(key, 0) + 1
                files[key] = (count, taken)
        return sum(taken for key, (count, taken) in files.items() if links[key] >= count)

    def _files(self, root: Path) -> list[tuple[tuple[int, int], int, int]]:
        """Each file and folder under ``root`` (itself too): its (device, inode), its count of hard links (1 for a
        folder, which goes with what it holds), and the bytes it takes, as ``du`` counts them."""
        if root not in self._walked:
            found = []
            for folder, _, names in os.walk(root):
                for path in (folder, *(os.path.join(folder, name) for name in names)):
                    try:
                        facts = os.lstat(path)
                    except OSError:
                        continue
                    taken = facts.st_blocks * 512 if hasattr(facts, "st_blocks") else facts.st_size
                    links = 1 if path is folder else facts.st_nlink
                    found.append(((facts.st_dev, facts.st_ino), links, taken))
            self._walked[root] = found
        return self._walked[root]


def human(size: int) -> str:
    """``1.2 GiB``: as uv says sizes."""
    if size < 1024:
        return f"{size} B"
    amount, unit = size / 1024, "KiB"
    for larger in ("MiB", "GiB"):
        if amount < 1024:
            break
        amount, unit = amount / 1024, larger
    return f"{amount:.1f} {unit}"


def names(wheels: Sequence[CachedWheel], shown: int = 3) -> str:
    """``torch 2.1.0, triton 2.1.0, nvidia-nccl-cu12 2.18.1, …``: the first ``shown`` of ``wheels``, by name and
    version (a release's wheels for two Pythons are one name)."""
    named = list(dict.fromkeys(str(wheel.built) for wheel in wheels))
    return ", ".join(named[:shown]) + (", …" if len(named) > shown else "")
