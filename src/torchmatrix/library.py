"""The user's own project (``project:`` in the matrix), built once into a wheel per change of its sources.

Its sources are the files git knows in the project's folder (tracked ones, and
untracked ones git does not ignore), else every file under it; either way
without the output folder and the usual build and environment folders, which
change on every run. Their digest names the wheel's folder in torchmatrix's
cache: a cell finds the wheel built already, or builds it under a lock, so
cells that run at once build it once. What the wheel installs is what every
record of the matrix was made from: editing the library re-runs its cells.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import parse_wheel_filename

from . import atomicfile
from .cachedir import cache_dir
from .errors import UsageError

SKIPPED_FOLDERS = frozenset({".git", ".nox", ".tox", ".venv", "build", "dist", "__pycache__", ".pytest_cache"})
"""Never sources, in a project that git does not track: environments, caches and build output."""


@dataclass(frozen=True)
class Built:
    wheel: Path
    name: str
    """The distribution's name, as its wheel spells it."""
    contents: str
    """``sha256:<digest>`` of what the wheel installs (its RECORD): what the records of the matrix depend on.

    Not the sources' digest: a change outside the package (a probe, the matrix, the docs) builds the wheel
    again, but re-runs nothing.
    """


def build(project: Path, leave_out: Iterable[Path] = (), cache: Path | None = None) -> Built:
    """The wheel of ``project``, built unless a wheel of the same sources is in the cache.

    ``leave_out``: folders inside the project that are no sources (the matrix's output).
    A project that does not build is a :class:`UsageError` with the builder's last lines.
    """
    digest = sources_digest(project, leave_out)
    folder = (cache or cache_dir() / "wheels") / digest
    with atomicfile.locked(folder.parent):
        wheels = sorted(folder.glob("*.whl"))
        if not wheels:
            wheels = [_build_into(project, folder)]
    name = parse_wheel_filename(wheels[0].name)[0]
    return Built(wheels[0], str(name), f"sha256:{_contents_digest(wheels[0])}")


def requires_python(project: Path | None) -> SpecifierSet | None:
    """The Pythons ``project`` installs on: its pyproject.toml's ``requires-python``; None where it says none.

    Read without building, so that the plan can say which cells cannot install it. A project without a
    pyproject.toml (setup.py alone), or one whose value does not read as a specifier, says nothing here:
    its build speaks for it.
    """
    if project is None:
        return None
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    try:
        text = (project / "pyproject.toml").read_text(encoding="utf-8")
        value = tomllib.loads(text).get("project", {}).get("requires-python")
        return SpecifierSet(value) if isinstance(value, str) and value.strip() else None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, InvalidSpecifier, AttributeError):
        return None


def _contents_digest(wheel: Path) -> str:
    """sha256 over the wheel's RECORD: the path and hash of every file it installs, in order."""
    with zipfile.ZipFile(wheel) as archive:
        (record,) = [name for name in archive.namelist() if name.endswith(".dist-info/RECORD")]
        lines = archive.read(record).decode("utf-8").splitlines()
    return hashlib.sha256("\n".join(sorted(line for line in lines if not line.startswith(record))).encode()).hexdigest()


def sources_digest(project: Path, leave_out: Iterable[Path] = ()) -> str:
    """sha256 over the project's source files: their paths and their bytes."""
    skipped = [folder.resolve() for folder in leave_out]
    digest = hashlib.sha256()
    for relative in sorted(_sources(project)):
        path = project / relative
        if any(path.resolve().is_relative_to(folder) for folder in skipped) or not path.is_file():
            continue
        digest.update(relative.as_posix().encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _sources(project: Path) -> Iterator[Path]:
    listed = subprocess.run(
        ["git", "-C", str(project), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=False,
    )
    if listed.returncode == 0:
        yield from (Path(name.decode()) for name in listed.stdout.split(b"\0") if name)
        return
    for path in project.rglob("*"):
        relative = path.relative_to(project)
        if not (set(relative.parts) & SKIPPED_FOLDERS or any(part.endswith(".egg-info") for part in relative.parts)):
            yield relative


def _build_into(project: Path, folder: Path) -> Path:
    building = folder.with_name(folder.name + ".building")
    shutil.rmtree(building, ignore_errors=True)
    done = subprocess.run(
        [_uv(), "build", "--wheel", "--out-dir", str(building), str(project)],
        capture_output=True,
        text=True,
        check=False,
    )
    wheels = sorted(building.glob("*.whl"))
    if done.returncode != 0 or len(wheels) != 1:
        last = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        raise UsageError(f"building {project} into a wheel failed (project: in the matrix):\n{last}")
    building.rename(folder)
    return folder / wheels[0].name


def _uv() -> str:
    import uv  # the uv that nox installs packages with

    return uv.find_uv_bin()
