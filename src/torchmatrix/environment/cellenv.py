"""A cell's environment on disk: whether it was made with the cell's Python, and whether its install finished.

nox reuses an environment without asking which interpreter made it, and an
installer stopped halfway (Ctrl-C, a full disk) leaves torch's ``RECORD`` in
place over a fraction of its files, which the next install takes for done.
So an environment counts as built only when a marker says so: written after
the install finished and torch imported there, for the build then installed
and where it came from (the index and find-links), and removed before
anything is installed again, and before the environment is made anew or removed
(a removal stopped halfway leaves packages, torch's ``RECORD`` among them, over
what it took away). An installer asked for ``torch==X`` from another
index keeps the torch it has: an environment built from elsewhere is rebuilt.

The build is identified without importing torch (which costs seconds): by the
digest of the ``RECORD`` file of torch's installed ``.dist-info``, which lists
the sha256 of every file the wheel put in place, so two environments share a
digest exactly when they hold the same wheel.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import importlib.metadata
import io
import json
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from ..interpreters import Interpreter
from ..util import atomicfile
from .uvcache import name_of

MARKER = ".torchmatrix-built"
"""In the environment's folder: the torch build (:func:`torch_build`) that was installed there and imported, the
digest of where it came from (:func:`source_digest`) and the digest of what the install was asked to hold (its
requirements, constraints and seed), a line each."""

# Written by the installer, not taken from the wheel: they differ between
# installers (and RECORD cannot hold its own hash), so they are left out.
_INSTALLER_FILES = frozenset({"INSTALLER", "REQUESTED", "RECORD", "direct_url.json"})


@contextlib.contextmanager
def locked(env: Path, waiting: Callable[[], None] | None = None) -> Iterator[None]:
    """Hold the lock of ``env`` (a file beside it) while it is built, used or removed: two runs of one cell take
    turns, and its removal waits for the run that uses it. ``waiting`` is called when another holds it."""
    with atomicfile.locked(env.parent, f".{env.name}.lock", waiting):
        yield


def interpreter_mismatch(env: Path, interpreter: Interpreter) -> str:
    """Why ``env`` was not made with ``interpreter`` (another version or another executable); '' when it was."""
    config = _pyvenv_cfg(env)
    if config is None:
        return ""  # no environment yet: nothing to reuse
    made_with = config.get("version_info", config.get("version", ""))
    wanted = ".".join(map(str, interpreter.version))
    if made_with.split(".")[:3] != wanted.split("."):
        return f"it was made with Python {made_with or '(unknown)'}, the cell's is {wanted} ({interpreter.path})"
    python = env / "bin" / "python"
    if python.exists() and os.path.realpath(python) != os.path.realpath(interpreter.path):
        return f"its python is {os.path.realpath(python)}, the cell's is {os.path.realpath(interpreter.path)}"
    return ""


def built_torch(env: Path) -> str | None:
    """The torch build of ``env`` if its install finished and that torch imported there; else None."""
    build = torch_build(env)
    return build if build is not None and _marked(env)[:1] == [build] else None


def source_mismatch(env: Path, source: Mapping[str, Any]) -> str:
    """Why the torch built in ``env`` may not be the one ``source`` gives (it came from elsewhere); '' if it is."""
    marked = _marked(env)
    if not marked:
        return ""  # nothing built yet: nothing to keep
    if marked[1:2] != [source_digest(source)]:
        return f"its torch was installed from elsewhere; this cell installs from {_described(source)}"
    return ""


def source_digest(source: Mapping[str, Any]) -> str:
    """A digest of where an installer takes torch from (:func:`torchmatrix.identity.build_source`)."""
    return hashlib.sha256(json.dumps(source, sort_keys=True).encode()).hexdigest()


def asked_mismatch(env: Path, asked: Mapping[str, Any]) -> str:
    """Why ``env`` may hold packages that an environment built for ``asked`` (its requirements, constraints and
    seed) would not: it was built for others, and an installer removes nothing it installed then; '' if it was not."""
    marked = _marked(env)
    if not marked:
        return ""  # nothing built yet: nothing to keep
    if marked[2:3] != [source_digest(asked)]:
        return "it was built for other requirements, constraints or seed, whose packages an install leaves in place"
    return ""


def package_set(env: Path) -> str | None:
    """A digest of every distribution installed in ``env`` with its version: the resolved package set."""
    return packages_in(site_packages(env))


def packages_in(site_folders: Sequence[Path]) -> str | None:
    """A digest of every distribution installed in ``site_folders`` with its version and the files its ``RECORD``
    lists, each by its digest (:func:`_wheel_entries`): a package rebuilt and installed again under the same version
    (``pip install ./mypkg`` of edited sources, a wheel of the same name built anew) is another; None where there are
    none."""
    folders = [str(folder) for folder in site_folders]
    if not folders:
        return None
    found = set()
    listed: set[str] = set()
    for dist in importlib.metadata.distributions(path=folders):
        record = dist.read_text("RECORD") or ""
        name = name_of(dist)
        if name:  # a nameless one's RECORD counts nowhere: the files it lists count by content
            listed.update(_listed_files(Path(str(dist.locate_file(""))), record))
            files = hashlib.sha256("\n".join(sorted(_wheel_entries(record))).encode())
            found.add(f"{canonicalize_name(name)}=={dist.version} {files.hexdigest()}")
    found.update(f"unlisted {path}" for path in _unlisted_files(folders, listed))
    # A file's name need not be UTF-8 (``café.txt`` written in Latin-1): its bytes, as the file system holds them.
    return hashlib.sha256("\n".join(sorted(found)).encode("utf-8", "surrogateescape")).hexdigest()


def _listed_files(folder: Path, record: str) -> Iterator[str]:
    """The files of ``folder`` that ``record`` lists with their digest: what its distribution's identity covers. Not
    one it names by a way out of the folder (``../site-packages/helper.py``): the identity leaves those out
    (:func:`_wheel_entries`)."""
    for row in csv.reader(io.StringIO(record)):
        if len(row) >= 2 and row[1] and not row[0].startswith(("..", "/")):
            yield os.path.normpath(os.path.join(folder, row[0]))


def _unlisted_files(folders: Sequence[str], listed: set[str]) -> Iterator[str]:
    """``path sha256`` of each file of ``folders`` that no distribution's ``RECORD`` lists with its digest: a module
    put there by hand (``cp helper.py site-packages/``), the files of a distribution installed without one (a Linux
    distribution's ``.egg-info`` package, updated under its version), a sourceless module (``helper.pyc`` beside no
    ``helper.py``, which Python imports), a file added to a distribution's metadata (an ``entry_points.txt`` that
    registers a pytest plugin). Not a file written over one a ``RECORD`` lists, which counts by the digest listed
    (docs/identity.md, "What the identity cannot see"); not the bytecode Python writes as it imports
    (``__pycache__``); not a distribution's ``RECORD``, whose entries count; not the ``.pth`` files of each folder,
    which count in what each pair read. What is no file of content (a named pipe, a device a link points to) counts
    by what it is, never read: reading one would wait, or never end."""
    seen: set[str] = set()
    for top in folders:
        for root, dirs, files in os.walk(top, followlinks=True):
            real = os.path.realpath(root)
            if real in seen:
                dirs[:] = []
                continue
            seen.add(real)
            at_top = os.path.normpath(root) == os.path.normpath(top)
            metadata = os.path.normpath(os.path.dirname(root)) == os.path.normpath(top) and root.endswith(
                (".dist-info", ".egg-info")
            )
            dirs[:] = sorted(name for name in dirs if name != "__pycache__")
            for name in sorted(files):
                path = os.path.normpath(os.path.join(root, name))
                skipped = (at_top and name.endswith(".pth")) or (metadata and name == "RECORD")
                if skipped or path in listed:
                    continue
                try:
                    kind = os.stat(path).st_mode
                except OSError as error:
                    yield f"{os.path.relpath(path, top)} ({error.strerror})"
                    continue
                if not stat.S_ISREG(kind):
                    yield f"{os.path.relpath(path, top)} (no file of content: {stat.S_IFMT(kind):o})"
                    continue
                digest = hashlib.sha256()
                try:
                    with open(path, "rb") as file:
                        for block in iter(lambda: file.read(1 << 20), b""):
                            digest.update(block)
                except OSError as error:
                    yield f"{os.path.relpath(path, top)} ({error.strerror})"
                    continue
                yield f"{os.path.relpath(path, top)} {digest.hexdigest()}"


SEED_ARGUMENTS = ("-I", "-m", "ensurepip", "--upgrade", "--default-pip")
"""What ``python -m venv`` runs in the environment it made to seed it (``venv.EnvBuilder._setup_pip``)."""
PYCACHE_FOLDER = ".pycache"
CONSTRAINTS_FILE = ".torchmatrix-constraints.txt"
"""In the environment's folder: the cell's constraints, one a line, for the installer's ``--constraint``."""


def pycache_prefix(env: Path) -> Path:
    """Where the cells' Pythons keep compiled bytecode: beside the environments, so a rebuilt one finds it."""
    return env.parent / PYCACHE_FOLDER


def bytecode_of(env: Path) -> list[Path]:
    """The folders of :func:`pycache_prefix` that hold the bytecode of ``env``'s files: Python's pycache tree
    mirrors each source's absolute path under the prefix (the path as given, and as resolved, where they differ)."""
    prefix = pycache_prefix(env)
    mirrors = dict.fromkeys(prefix / path.relative_to(path.anchor) for path in (env.absolute(), env.resolve()))
    return [mirror for mirror in mirrors if mirror.is_dir()]


def unseeded(env: Path, seed: Iterable[str]) -> list[str]:
    """The packages of ``seed`` (``pip==23.2.1``) that ``env`` holds no version of: all, in a new environment."""
    names = [Requirement(requirement).name for requirement in seed]
    return [name for name, version in installed_versions(env, names).items() if version is None]


def constraints_file(env: Path, constraints: Sequence[str]) -> Path:
    """``constraints`` written to :data:`CONSTRAINTS_FILE` in ``env``, for the installer to read."""
    path = env / CONSTRAINTS_FILE
    atomicfile.write_text(path, "".join(f"{constraint}\n" for constraint in constraints))
    return path


def _described(source: Mapping[str, Any]) -> str:
    links = source.get("find_links") or []
    return str(source.get("index_url")) + (f" and {' '.join(map(str, links))}" if links else "")


def holds_torch(env: Path) -> bool:
    """Whether anything of torch is installed in ``env``, finished or not."""
    return any((folder / "torch").exists() or any(folder.glob("torch-*.dist-info")) for folder in site_packages(env))


def half_built(env: Path) -> bool:
    """Whether ``env`` holds a torch that no finished install vouches for (an install was stopped halfway)."""
    return holds_torch(env) and built_torch(env) is None


def missing_file(env: Path) -> str | None:
    """A file that a distribution installed in ``env`` lists in its ``RECORD`` and that is gone (its path from the
    site folder), else None: what a removal stopped halfway leaves (``nox --reuse-venv=never`` and ``uv venv
    --clear`` remove an environment in the order its folder lists it, before torchmatrix's code runs), which the
    installer, reading each package's metadata alone, takes for installed. Bytecode, which installers compile or
    not, is left out, and so are its ``__pycache__`` folders, which virtualenv's seeder lists as rows of their own
    whether it compiled them or not; so are the scripts outside the site folder."""
    for folder in site_packages(env):
        for dist in importlib.metadata.distributions(path=[str(folder)]):
            for row in csv.reader(io.StringIO(dist.read_text("RECORD") or "")):
                path = row[0] if row else ""
                bytecode = path.endswith(".pyc") or "__pycache__" in path.split("/")
                counted = path and not path.startswith(("..", "/")) and not bytecode
                if counted and not os.path.lexists(folder / path):
                    return path
    return None


def installed_versions(env: Path, names: Iterable[str]) -> dict[str, str | None]:
    """The version of each of ``names`` installed in ``env`` (None where it is not), read without importing."""
    folders = [str(folder) for folder in site_packages(env)]
    # A .dist-info without METADATA (what a stopped install can leave) names nothing.
    distributions = importlib.metadata.distributions(path=folders)
    found = {canonicalize_name(dist.name): dist.version for dist in distributions if name_of(dist)}
    return {name: found.get(canonicalize_name(name)) for name in names}


def mark_built(env: Path, source: Mapping[str, Any], asked: Mapping[str, Any]) -> None:
    """Record that the torch now in ``env`` was installed in full from ``source``, for ``asked``, and imported."""
    build = torch_build(env)
    if build is not None:
        atomicfile.write_text(env / MARKER, f"{build}\n{source_digest(source)}\n{source_digest(asked)}\n")


def unmark_built(env: Path) -> None:
    """Forget that ``env`` was built: done before every install, which may stop halfway."""
    (env / MARKER).unlink(missing_ok=True)


def _marked(env: Path) -> list[str]:
    """The marker's lines: the build, then the digest of its source; [] where there is none."""
    try:
        return (env / MARKER).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []


def _pyvenv_cfg(env: Path) -> dict[str, str] | None:
    try:
        text = (env / "pyvenv.cfg").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    pairs = (line.partition("=") for line in text.splitlines() if "=" in line)
    return {key.strip(): value.strip() for key, _, value in pairs}


def site_packages(env: Path) -> list[Path]:
    """The environment's site-packages: ``lib/pythonX.Y/site-packages`` (POSIX), ``Lib/site-packages`` (Windows)."""
    found = [*sorted(env.glob("lib/python*/site-packages")), env / "Lib" / "site-packages"]
    unique = {path.resolve(): path for path in found if path.is_dir()}
    return list(unique.values())


def torch_build(env: Path) -> str | None:
    """``<version> sha256:<digest of torch's RECORD>`` for the torch installed in ``env``, without importing it.

    None when ``env`` holds no torch, or one whose files are not recorded (nothing identifies its build then).
    """
    return torch_build_in(site_packages(env))


def torch_build_in(site_folders: Sequence[Path]) -> str | None:
    """:func:`torch_build` of the torch installed in ``site_folders``."""
    folders = [str(folder) for folder in site_folders]
    distributions = list(importlib.metadata.distributions(name="torch", path=folders)) if folders else []
    records = [(dist.version, dist.read_text("RECORD")) for dist in distributions]
    if not records or any(record is None for _, record in records):
        return None
    digest = hashlib.sha256()
    for _, record in sorted(records, key=lambda item: item[0]):
        for line in sorted(_wheel_entries(record or "")):
            digest.update(line.encode("utf-8") + b"\n")
    return f"{records[0][0]} sha256:{digest.hexdigest()}"


def _wheel_entries(record: str) -> list[str]:
    """``path,hash`` of every file the wheel installed into site-packages.

    Scripts outside it (``../../../bin/torchrun``) are left out: the installer
    writes their first line with the environment's own path. So is the bytecode
    of ``__pycache__``, which some installers compile and others do not (a
    sourceless module, ``helper.pyc`` beside no source, is the module itself).
    """
    entries = []
    for row in csv.reader(io.StringIO(record)):
        if len(row) < 2 or not row[1]:
            continue
        path = row[0]
        parts = path.split("/")
        if path.startswith(("..", "/")) or (path.endswith(".pyc") and "__pycache__" in parts):
            continue
        if parts[0].endswith(".dist-info") and parts[-1] in _INSTALLER_FILES:
            continue
        entries.append(f"{path},{row[1]}")
    return entries
