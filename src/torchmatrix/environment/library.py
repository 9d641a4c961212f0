"""The user's own project (``project:`` in the matrix), built once into a wheel per change of what it packs.

What goes into the wheel is what the project's build backend packs: its
sdist, built in a temporary folder (a file generated and ignored by git goes
in if the backend packs it; a file it leaves out, the matrix or the results,
changes nothing). The digest of the sdist's contents names the wheel's folder
in torchmatrix's cache: a cell finds the wheel built already, or builds it from
the sdist, outside the project's folder, under a lock, so cells that run at
once build it once. What the wheel installs is what every record of the matrix
was made from: editing the library re-runs its cells. The build leaves nothing
in the project's folder (setuptools' ``*.egg-info`` is removed again).
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import parse_wheel_filename

from ..errors import UsageError
from ..util import atomicfile
from ..util.cachedir import cache_dir


@dataclass(frozen=True)
class Built:
    wheel: Path
    name: str
    """The distribution's name, as its wheel spells it."""
    contents: str
    """``sha256:<digest>`` of what the wheel installs (its RECORD): what the records of the matrix depend on.

    Not the sdist's digest: a change the wheel does not install (a README the sdist packs) builds the wheel
    again, but re-runs nothing.
    """


def build(project: Path, cache: Path | None = None) -> Built:
    """The wheel of ``project``, built from its sdist unless a wheel of the same sdist contents is in the cache.

    A project that does not build is a :class:`UsageError` with the builder's last lines.
    """
    with tempfile.TemporaryDirectory(prefix="torchmatrix-sdist-") as scratch:
        sdist = _sdist(project, Path(scratch))
        folder = (cache or cache_dir() / "wheels") / sdist_digest(sdist)
        with atomicfile.locked(folder.parent):
            wheels = sorted(folder.glob("*.whl"))
            if not wheels:
                wheels = [_wheel_from(sdist, project, folder)]
    name = parse_wheel_filename(wheels[0].name)[0]
    return Built(wheels[0], str(name), f"sha256:{_contents_digest(wheels[0])}")


def requires_python(project: Path | None) -> SpecifierSet | None:
    """The Pythons ``project`` installs on: its pyproject.toml's ``requires-python``; None where it says none.

    Read without building, so that the plan can say which cells cannot install it. A project without a
    pyproject.toml (setup.py alone), or one whose value does not read as a specifier, says nothing here:
    its build speaks for it.
    """
    value = _declared(project).get("requires-python")
    try:
        return SpecifierSet(value) if isinstance(value, str) and value.strip() else None
    except InvalidSpecifier:
        return None


def distribution_name(project: Path) -> str:
    """The name ``project`` is installed by (its pyproject.toml's ``[project] name``, PEP 621), or its folder's name
    where it declares none there (a setup.py alone, a name its backend makes)."""
    name = _declared(project).get("name")
    return name if isinstance(name, str) and name.strip() else project.name


def _declared(project: Path | None) -> dict[str, object]:
    """The ``[project]`` table of ``project``'s pyproject.toml: its static metadata; {} where there is none."""
    if project is None:
        return {}
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    try:
        table = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8")).get("project", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}
    return table if isinstance(table, dict) else {}


def _contents_digest(wheel: Path) -> str:
    """sha256 over the wheel's RECORD: the path and hash of every file it installs, in order."""
    with zipfile.ZipFile(wheel) as archive:
        (record,) = [name for name in archive.namelist() if name.endswith(".dist-info/RECORD")]
        lines = archive.read(record).decode("utf-8").splitlines()
    return hashlib.sha256("\n".join(sorted(line for line in lines if not line.startswith(record))).encode()).hexdigest()


def sdist_digest(sdist: Path) -> str:
    """sha256 over an sdist's files, their paths (below its top folder) and bytes: not the archive's dates."""
    digest = hashlib.sha256()
    with tarfile.open(sdist) as archive:
        members = sorted((member for member in archive.getmembers() if member.isfile()), key=lambda m: m.name)
        for member in members:
            extracted = archive.extractfile(member)
            data = extracted.read() if extracted else b""
            digest.update(member.name.partition("/")[2].encode() + b"\0" + hashlib.sha256(data).digest())
    return digest.hexdigest()


def _sdist(project: Path, scratch: Path) -> Path:
    """The project's sdist, built into ``scratch``; what a setuptools build leaves in the project is removed."""
    before = set(_egg_infos(project))
    done = _uv_build(["--sdist", "--out-dir", str(scratch), str(project)])
    for left in set(_egg_infos(project)) - before:
        shutil.rmtree(left, ignore_errors=True)
    sdists = sorted(scratch.glob("*.tar.gz"))
    if done.returncode != 0 or len(sdists) != 1:
        raise _failed(project, done)
    return sdists[0]


def _egg_infos(project: Path) -> list[Path]:
    """Where setuptools writes its metadata while it builds: beside the packages, in the project or in src/."""
    return [*project.glob("*.egg-info"), *project.glob("*/*.egg-info")]


def _wheel_from(sdist: Path, project: Path, folder: Path) -> Path:
    building = folder.with_name(folder.name + ".building")
    shutil.rmtree(building, ignore_errors=True)
    done = _uv_build(["--wheel", "--out-dir", str(building), str(sdist)])
    wheels = sorted(building.glob("*.whl"))
    if done.returncode != 0 or len(wheels) != 1:
        raise _failed(project, done)
    building.rename(folder)
    return folder / wheels[0].name


def _uv_build(arguments: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([_uv(), "build", *arguments], capture_output=True, text=True, check=False)


def _failed(project: Path, done: subprocess.CompletedProcess[str]) -> UsageError:
    last = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
    return UsageError(f"building {project} into a wheel failed (project: in the matrix):\n{last}")


def _uv() -> str:
    import uv  # the uv that nox installs packages with

    return uv.find_uv_bin()
