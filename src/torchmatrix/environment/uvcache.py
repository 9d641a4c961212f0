"""The wheels of uv's cache: which unpacked wheel an installed distribution came from, and how to forget one.

uv says where its cache is (``uv cache dir``). There it unpacks each wheel it
installs once, into a folder of ``archive-v*``, and points to that folder from
an entry of a wheel bucket (``wheels-v*/pypi/torch/2.1.0-cp311-…``, or under
``index/<digest>/`` for another index or a find-links folder): a link, beside
files of the same name with another suffix that say where it came from. An
environment's files are hard links to (or copies of) that folder's.

Which wheel a folder holds is read from the folder itself, its ``.dist-info``
(name, version, and the tags of its ``WHEEL`` file), never from an entry's
name, which uv shortens to a digest where the tags are many. A folder that
none of the buckets points to is what ``uv cache prune`` removes: so a wheel
is forgotten by removing its entries, and uv's prune then frees its folder.
Where the cache is not laid out this way, what it holds is unknown, and said so.
"""

from __future__ import annotations

import email.parser
import functools
import importlib.metadata
import os
import subprocess
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from packaging.tags import Tag, parse_tag
from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import InvalidVersion, Version

ARCHIVES = "archive-v*"
BUCKETS = "wheels-v*"
LOCK_SUFFIX = ".lock"
"""The one file beside an entry that is kept when it is forgotten: another uv may be holding it."""


@dataclass(frozen=True)
class WheelId:
    """What identifies a wheel once installed or unpacked: its name, version and tags (its ``WHEEL`` file's)."""

    name: NormalizedName
    version: Version
    tags: frozenset[Tag]

    def __str__(self) -> str:
        return f"{self.name} {self.version}"


def name_of(distribution: importlib.metadata.Distribution) -> str | None:
    """The name ``distribution``'s metadata gives; None where it gives none (no ``METADATA``, as a stopped install
    leaves, or no ``Name:``), asked so that Python 3.12 and later do not warn, as they do of a missing key read."""
    metadata = distribution.metadata
    return str(metadata["Name"]) if "Name" in metadata else None


def built(distribution: importlib.metadata.Distribution) -> WheelId | None:
    """What ``distribution`` (installed, or unpacked in the cache) was built as; None where its metadata is not
    all there (a stopped install, a folder that is no wheel)."""
    name, wheel = name_of(distribution), distribution.read_text("WHEEL")
    if not name or not wheel:
        return None
    try:
        version = Version(distribution.version)
    except InvalidVersion:
        return None
    lines = email.parser.HeaderParser().parsestr(wheel).get_all("Tag") or []
    tags = frozenset(tag for line in lines for tag in parse_tag(line.strip()))
    return WheelId(canonicalize_name(name), version, tags)


@dataclass(frozen=True)
class CachedWheel:
    """A wheel unpacked in uv's cache: its folder (``archive-v0/<id>``), what it is, and the bucket entries that
    point to it."""

    archive: Path
    built: WheelId
    entries: tuple[Path, ...]


@dataclass(frozen=True)
class Cache:
    """uv's cache as found: where it is, its bucket entries by package, or why what it holds is unknown."""

    root: Path | None
    unknown: str = ""
    """Why its wheels cannot be told ('' when they can): uv is missing, or the cache is not laid out as expected."""
    entries: Mapping[NormalizedName, tuple[tuple[Path, Path], ...]] = field(default_factory=dict)
    """By package name: (entry, the folder it points to)."""

    def wheels_named(self, name: NormalizedName) -> list[CachedWheel]:
        """Every wheel of package ``name`` in the cache, one per unpacked folder."""
        by_archive: dict[Path, list[Path]] = {}
        for entry, archive in self.entries.get(name, ()):
            by_archive.setdefault(archive, []).append(entry)
        found = []
        for archive, entries in by_archive.items():
            unpacked = _unpacked(archive)
            if unpacked is not None and unpacked.name == name:
                found.append(CachedWheel(archive, unpacked, tuple(entries)))
        return found

    def wheels_of(self, installed: WheelId) -> list[CachedWheel]:
        """The wheels of the cache that ``installed`` is: same name, version and tags."""
        return [wheel for wheel in self.wheels_named(installed.name) if wheel.built == installed]


def ask_root(uv: str, environ: Mapping[str, str]) -> Path | str:
    """Where uv keeps its cache, as ``uv cache dir`` says in ``environ`` (``UV_CACHE_DIR`` moves it); else why not."""
    try:
        done = subprocess.run(
            [uv, "cache", "dir"], env=dict(environ), capture_output=True, text=True, check=False, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"`{uv} cache dir` could not run: {exc}"
    if done.returncode != 0 or not done.stdout.strip():
        return f"`{uv} cache dir` failed: {(done.stderr or done.stdout).strip() or f'exit {done.returncode}'}"
    return Path(done.stdout.strip())


def read(root: Path) -> Cache:
    """The cache at ``root``: every entry of its wheel buckets, by package; empty where there is no cache yet."""
    archives = [folder.resolve() for folder in sorted(root.glob(ARCHIVES)) if folder.is_dir()]
    entries: dict[NormalizedName, list[tuple[Path, Path]]] = {}
    for bucket in sorted(root.glob(BUCKETS)):
        for entry, archive in _entries(bucket, archives):
            entries.setdefault(canonicalize_name(entry.parent.name), []).append((entry, archive))
    if not entries and any(next(folder.iterdir(), None) for folder in archives):
        why = (f"{root} holds unpacked wheels ({ARCHIVES}) but no entry of a wheel bucket ({BUCKETS}) points to "
               "one: a layout this torchmatrix does not know (another uv?)")  # fmt: skip
        return Cache(root, why)
    return Cache(root, "", {name: tuple(found) for name, found in entries.items()})


def _entries(folder: Path, archives: list[Path]) -> Iterator[tuple[Path, Path]]:
    """Each entry under ``folder`` that points into one of ``archives``, with the folder it points to."""
    try:
        children = sorted(folder.iterdir())
    except OSError:
        return
    for child in children:
        if child.is_symlink() or _is_junction(child):
            target = Path(os.path.realpath(child))
            if target.parent in archives:
                yield child, target
        elif child.is_dir():
            yield from _entries(child, archives)


def _is_junction(path: Path) -> bool:
    """Whether ``path`` is a Windows junction, which uv makes where a symbolic link needs privileges."""
    isjunction = getattr(os.path, "isjunction", None)  # Python 3.12 and newer
    return bool(isjunction and isjunction(path))


@functools.lru_cache(maxsize=4096)  # a folder's wheel never changes: uv unpacks the next one into a new folder
def _unpacked(archive: Path) -> WheelId | None:
    """What the wheel unpacked in ``archive`` is, read from its ``.dist-info``; None where it holds none."""
    found = [built(distribution) for distribution in importlib.metadata.distributions(path=[str(archive)])]
    return found[0] if len(found) == 1 else None


def forget(wheel: CachedWheel) -> list[Path]:
    """Remove the bucket entries of ``wheel`` and the files beside each that describe it (its lock stays): the
    paths removed. Its folder stays until ``uv cache prune`` finds nothing points to it."""
    removed = []
    for entry in wheel.entries:
        beside = [path for path in entry.parent.glob(f"{entry.name}.*") if path.suffix != LOCK_SUFFIX]
        for path in [entry, *beside]:
            try:
                path.unlink()
            except FileNotFoundError:
                continue
            removed.append(path)
    return removed


def prune(uv: str, environ: Mapping[str, str]) -> tuple[int, str]:
    """Run ``uv cache prune``, which waits while another uv reads the cache: its exit status and what it said."""
    try:
        done = subprocess.run(
            [uv, "cache", "prune"], env=dict(environ), stdin=subprocess.DEVNULL, capture_output=True, text=True,
            check=False,
        )  # fmt: skip
    except OSError as exc:
        return 1, str(exc)
    return done.returncode, (done.stderr + done.stdout).strip()
