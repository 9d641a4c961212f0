"""Find the CPython interpreters on this machine and the wheel tags each accepts.

Looked for on PATH, in pyenv's versions folder and among uv-managed Pythons.
Each candidate is asked, by running it, for its version and ABI flags; the
answers are cached by path, size and modification time. uv's install folder
is asked of uv, and cached while uv and the variables it derives it from stay.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging import tags
from packaging.tags import Tag
from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from .util import atomicfile
from .util.cachedir import cache_dir

OLDEST = (3, 6)
"""The probes and the worker are written for Python 3.6 and newer."""

# Runs under any Python from 2.7 on, so that an old interpreter answers instead of crashing. Its seed is what
# `python -m venv` installs in a new environment: ensurepip chooses the wheels (its own, or the ones a distribution
# puts in their place) and hands them to pip; here it hands them to a stand-in that keeps their names. None: it has
# no ensurepip to ask (Debian's and Ubuntu's Pythons, without their pythonX.Y-venv package). It is asked as in a new
# environment, where `python -m venv` runs it: Debian's and Ubuntu's ensurepip exits in the system's Python itself
# (`sys.exit(1)`, "ensurepip is disabled in Debian/Ubuntu for the system python") unless `sys.real_prefix` says
# it runs in an environment, and an exit is no answer about the Python.
_QUERY = (
    "import json, os, platform, sys, sysconfig\n"
    "def seed():\n"
    "    wheels = []\n"
    "    def run_pip(args, additional_paths=None):\n"
    "        wheels.extend(os.path.basename(path) for path in additional_paths or [])\n"
    "        return 0\n"
    "    try:\n"
    "        import ensurepip\n"
    "    except ImportError:\n"
    "        return None\n"
    "    try:\n"
    "        ensurepip._run_pip = run_pip\n"
    "        sys.real_prefix = sys.prefix\n"
    "        ensurepip.bootstrap(upgrade=True, default_pip=True)\n"
    "    except BaseException:\n"
    "        return []\n"
    "    return wheels\n"
    "def seed_from():\n"
    "    try:\n"
    "        import ensurepip\n"
    "    except ImportError:\n"
    "        return []\n"
    "    folders = [os.path.join(os.path.dirname(ensurepip.__file__), '_bundled'),\n"
    "               getattr(ensurepip, '_WHEEL_PKG_DIR', None) or sysconfig.get_config_var('WHEEL_PKG_DIR')]\n"
    "    return [os.path.abspath(folder) for folder in folders if folder]\n"
    "print(json.dumps({'seed_from': seed_from(), 'implementation': platform.python_implementation(),"
    " 'version': list(sys.version_info[:3]), 'abiflags': getattr(sys, 'abiflags', ''),"
    " 'bits': 64 if sys.maxsize > 2**32 else 32, 'executable': sys.executable,"
    " 'in_venv': sys.prefix != getattr(sys, 'base_prefix', sys.prefix), 'seed': seed()}))\n"
)
_QUERY_DIGEST = hashlib.sha256(_QUERY.encode()).hexdigest()[:16]
"""Part of every cached answer's stamp: an answer to an earlier query is asked again."""


def _folders_stamp(folders: Any) -> list[Any]:
    """Each of ``folders`` as its files stand: each file's name, size and modification time, or None where the folder
    is not there. What ensurepip seeds from is no file of the interpreter's own: a distribution's wheel folder
    (Debian's ``/usr/share/python-wheels``, updated with ``python3-pip-whl``), or its ``ensurepip/_bundled``."""
    stamp: list[Any] = []
    for folder in folders if isinstance(folders, list) else []:
        try:
            entries = sorted(os.scandir(str(folder)), key=lambda entry: entry.name)
            stamp.append([folder, [[entry.name, *_size_and_time(entry)] for entry in entries]])
        except OSError:
            stamp.append([folder, None])
    return stamp


def _size_and_time(entry: os.DirEntry[str]) -> list[int]:
    try:
        stat = entry.stat()
    except OSError:
        return []
    return [stat.st_size, stat.st_mtime_ns]


@dataclass(frozen=True)
class Interpreter:
    path: str
    version: tuple[int, int, int]
    abiflags: str
    source: str
    seed: tuple[str, ...] = ()
    """What ``python -m venv`` seeds an environment of it with, as its ensurepip says: ``("pip==23.2.1",
    "setuptools==65.5.0")`` (3.12 and newer bundle pip alone); none where it has no ensurepip."""
    ensurepip: bool = True
    """Whether it has ensurepip, which ``python -m venv`` seeds an environment with; without it, that fails."""

    @property
    def minor(self) -> str:
        """``"3.10"``, the form a matrix pins and a cell id shows."""
        return f"{self.version[0]}.{self.version[1]}"

    @property
    def free_threaded(self) -> bool:
        return "t" in self.abiflags

    @property
    def why_unseeded(self) -> str:
        """Why environments of it are left unseeded, with what to do (as ``python -m venv`` there would say); ''
        where they are not."""
        if self.ensurepip:
            return ""
        package = f"python{self.minor}-venv"
        return (
            f"python{self.minor} at {self.path} has no ensurepip (Debian, Ubuntu: apt install {package}): "
            "its environments are left unseeded, without the pip and setuptools `python -m venv` installs"
        )

    def tags(self, platforms: Iterable[str]) -> frozenset[Tag]:
        """The wheel tags this interpreter installs on the given platforms, as pip would compute them."""
        return _tag_set(self.version[:2], self.abiflags, tuple(platforms))


# Both cached: thousands of tags per interpreter, asked for by every cell of the plan.
@functools.lru_cache(maxsize=64)
def _tag_set(python_version: tuple[int, ...], abiflags: str, platforms: tuple[str, ...]) -> frozenset[Tag]:
    return frozenset(_ordered_tags(python_version, abiflags, platforms))


@functools.lru_cache(maxsize=64)
def _ordered_tags(python_version: tuple[int, ...], abiflags: str, platforms: tuple[str, ...]) -> tuple[Tag, ...]:
    interpreter = f"cp{python_version[0]}{python_version[1]}"
    ordered = list(tags.cpython_tags(python_version, abis=[interpreter + abiflags], platforms=platforms))
    ordered += tags.compatible_tags(python_version, interpreter, platforms)
    return tuple(dict.fromkeys(ordered))


def host_platforms() -> list[str]:
    """This machine's platform tags, most specific first (e.g. manylinux_2_36_x86_64 … linux_x86_64)."""
    return list(tags.platform_tags())


def discover(environ: Mapping[str, str] | None = None, cache: Path | None = None) -> list[Interpreter]:
    """Every usable CPython found, newest first; one per version (PATH wins over pyenv over uv)."""
    environ = os.environ if environ is None else environ
    known = _Cache(cache or cache_dir() / "interpreters.json")
    found: dict[tuple[tuple[int, int, int], str], Interpreter] = {}
    for source, path in candidates(environ, known):
        interpreter = known.query(os.path.realpath(path), source)
        if interpreter is not None and interpreter.version[:2] >= OLDEST:
            found.setdefault((interpreter.version, interpreter.abiflags), interpreter)
    known.save()
    return sorted(found.values(), key=lambda python: (python.version, not python.free_threaded), reverse=True)


def candidates(environ: Mapping[str, str], known: _Cache | None = None) -> list[tuple[str, str]]:
    """(source, path) of every executable that may be a Python, in order of preference."""
    found = [("PATH", path) for path in _on_path(environ)]
    pyenv_root = Path(environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    found += [("pyenv", str(path)) for path in _in_versions_folder(pyenv_root / "versions")]
    found += [("uv", path) for path in _uv_managed(environ, known)]
    return found


def _on_path(environ: Mapping[str, str]) -> list[str]:
    names = [f"python3.{minor}" for minor in range(20, OLDEST[1] - 1, -1)] + ["python3", "python"]
    path = environ.get("PATH", "")
    found = (shutil.which(name, path=path) for name in names)
    return [executable for executable in found if executable]


def _in_versions_folder(folder: Path) -> list[Path]:
    executable = Path("python.exe") if sys.platform == "win32" else Path("bin") / "python"
    if not folder.is_dir():
        return []
    return sorted(path for path in (version / executable for version in folder.iterdir()) if path.exists())


def _uv_managed(environ: Mapping[str, str], known: _Cache | None) -> list[str]:
    """The Pythons in uv's install folder (``uv python dir``).

    Listing the folder takes milliseconds where ``uv python list`` takes most of
    a second (it inspects every Python on PATH too), and this runs every time
    nox loads the noxfile.
    """
    folder = Path(_uv_python_dir(environ, known) or ".missing")
    executable = Path("python.exe") if sys.platform == "win32" else Path("bin") / "python3"
    if not folder.is_dir():
        return []
    # Hidden entries are uv's own (.lock, .cache, .temp).
    installs = sorted(install for install in folder.iterdir() if not install.name.startswith("."))
    return [str(install / executable) for install in installs if (install / executable).exists()]


# What uv derives its install folder from (docs.astral.sh/uv/reference/storage), besides its own version.
_UV_PYTHON_DIR_VARIABLES = ("UV_PYTHON_INSTALL_DIR", "XDG_DATA_HOME", "HOME", "APPDATA")


def _uv_python_dir(environ: Mapping[str, str], known: _Cache | None) -> str | None:
    """What ``uv python dir`` prints; remembered in ``known`` while uv and what it derives the folder from stay."""
    uv = _uv_binary()
    if uv is None:
        return None
    try:
        stat = os.stat(uv)
    except OSError:
        return None

    def ask() -> str | None:
        try:
            completed = subprocess.run(
                [uv, "python", "dir"], capture_output=True, text=True, timeout=30, env=dict(environ), check=True
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return completed.stdout.strip() or None

    if known is None:
        return ask()
    stamp = [stat.st_size, stat.st_mtime_ns, os.getcwd(), *(environ.get(name) for name in _UV_PYTHON_DIR_VARIABLES)]
    return known.answer(f"{os.path.realpath(uv)} python dir", stamp, ask)


def _uv_binary() -> str | None:
    try:
        from uv import find_uv_bin  # noqa: PLC0415 - optional at import time

        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        return shutil.which("uv")


class _Cache:
    """Answers of earlier questions, each valid while its stamp (e.g. an executable's size and mtime) is unchanged."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.changed = False
        try:
            self.entries: dict[str, dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self.entries = {}

    def query(self, path: str, source: str) -> Interpreter | None:
        """The interpreter ``path`` runs (a shim's or symlink's target), or None if it is unusable.

        An interpreter inside a virtual environment is passed over: environments
        are built from base interpreters, which are found in their own right.
        """
        try:
            stat = os.stat(path)
        except OSError:
            return None
        answer = self.answer(path, [stat.st_size, stat.st_mtime_ns, _QUERY_DIGEST], lambda: _ask(path), _seeds_from)
        usable = answer and answer.get("implementation") == "CPython" and answer.get("bits") == 64
        if not usable or answer.get("in_venv"):
            return None
        executable = os.path.realpath(answer.get("executable") or path)
        seed = answer.get("seed")
        version = tuple(answer["version"])
        return Interpreter(executable, version, answer["abiflags"], source, _seed(seed), seed is not None)

    def answer(
        self, key: str, stamp: list[Any], ask: Callable[[], Any], holds: Callable[[Any], bool] = lambda _: True
    ) -> Any:
        """The answer kept under ``key`` while its ``stamp`` is unchanged and it ``holds`` still; else ``ask()``'s,
        kept from now on."""
        entry = self.entries.get(key)
        if not isinstance(entry, dict) or entry.get("stamp") != stamp or not holds(entry.get("answer")):
            entry = {"stamp": stamp, "answer": ask()}
            self.entries[key] = entry
            self.changed = True
        return entry["answer"]

    def save(self) -> None:
        if self.changed:
            # A read-only cache only costs a few milliseconds next time.
            with contextlib.suppress(OSError):
                atomicfile.write_json(self.path, self.entries)


def _seed(wheels: Any) -> tuple[str, ...]:
    """``("pip==23.2.1", ...)`` of the wheel files ensurepip named; a name that is no wheel's is left out."""
    found = []
    for wheel in wheels if isinstance(wheels, list) else []:
        try:
            name, version, _, _ = parse_wheel_filename(str(wheel))
        except InvalidWheelFilename:
            continue
        found.append(f"{name}=={version}")
    return tuple(sorted(found))


def _ask(path: str) -> dict[str, Any] | None:
    """What the interpreter at ``path`` says of itself (:data:`_QUERY`), with how the folders its ensurepip seeds from
    stood as it said it (``seed_stamp``); None where it does not answer."""
    try:
        completed = subprocess.run(
            [path, "-c", _QUERY], capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL
        )
        answer = json.loads(completed.stdout) if completed.returncode == 0 else None
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    if isinstance(answer, dict):
        answer["seed_stamp"] = _folders_stamp(answer.get("seed_from"))
    return answer


def _seeds_from(answer: Any) -> bool:
    """Whether the folders a kept answer's ensurepip seeds from stand as they did when it was asked: a wheel there
    replaced (a distribution's update of its pip or setuptools) changes what ``python -m venv`` seeds, though the
    interpreter's executable stays."""
    return not isinstance(answer, dict) or answer.get("seed_stamp") == _folders_stamp(answer.get("seed_from"))


_BUILD_QUERY = (
    "import json, sys, sysconfig\n"
    "paths = sysconfig.get_paths()\n"
    "shared = sysconfig.get_config_var('Py_ENABLE_SHARED') and sysconfig.get_config_var('LDLIBRARY')\n"
    "library = shared and sysconfig.get_config_var('LIBDIR')\n"
    "print(json.dumps({'version': sys.version, 'executable': sys.executable,"
    " 'stdlib': sorted({paths['stdlib'], paths['platstdlib']}),"
    " 'library': library and shared and library + '/' + shared}))\n"
)
_NOT_THE_STANDARD_LIBRARY = frozenset({"site-packages", "dist-packages", "__pycache__"})


@functools.lru_cache(maxsize=64)
def build(path: str) -> str | None:
    """A digest of the interpreter at ``path`` as it is built and installed: its full version (``sys.version``, with
    its build's date and compiler), and the name, size and modification time of its executable, its shared library
    and every file of its standard library (not its site folders, nor bytecode). A Python rebuilt or patched in place
    (a distribution's update of one version, ``pyenv install --force``, a module of the standard library edited)
    keeps its path and version, which a record's identity holds too, but not this. None where it cannot be asked.
    Asked once a process: what it reads may change while the interpreter's own file does not."""
    found = _ask_build(path) if os.path.isfile(path) else None
    if found is None:
        return None
    digest = hashlib.sha256(str(found["version"]).encode())
    files = [found["executable"], *([found["library"]] if found.get("library") else [])]
    walked: set[tuple[int, int]] = set()
    for root in found["stdlib"]:
        # A folder of it that is a link (a package kept elsewhere) is followed: python imports its files by the link's
        # path, which a pair's reads leave out as the standard library's. Each folder is walked once, so a link that
        # leads back up the tree ends.
        for folder, names, filenames in os.walk(root, followlinks=True):
            try:
                stat = os.stat(folder)
            except OSError:
                names[:] = []
                continue
            if (stat.st_dev, stat.st_ino) in walked:
                names[:] = []
                continue
            walked.add((stat.st_dev, stat.st_ino))
            names[:] = sorted(name for name in names if name not in _NOT_THE_STANDARD_LIBRARY)
            files += [os.path.join(folder, name) for name in sorted(filenames)]
    for file in files:
        try:
            stat = os.stat(file)
        except OSError:
            digest.update(f"{file}\0gone\n".encode())
            continue
        digest.update(f"{file}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def _ask_build(path: str) -> dict[str, Any] | None:
    try:
        completed = subprocess.run(
            [path, "-S", "-c", _BUILD_QUERY], capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL
        )
        found = json.loads(completed.stdout) if completed.returncode == 0 else None
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    if not isinstance(found, dict) or not isinstance(found.get("stdlib"), list) or not found.get("executable"):
        return None
    return found
