"""A cell's environment on disk: whether it was made with the cell's Python, and whether its install finished.

nox reuses an environment without asking which interpreter made it, and an
installer stopped halfway (Ctrl-C, a full disk) leaves torch's ``RECORD`` in
place over a fraction of its files, which the next install takes for done.
So an environment counts as built only when a marker says so: written after
the install finished and torch imported there, for the build then installed,
and removed before anything is installed again.
"""

from __future__ import annotations

import importlib.metadata
import os
from collections.abc import Iterable
from pathlib import Path

from packaging.utils import canonicalize_name

from . import atomicfile
from .freshness import site_packages, torch_build
from .interpreters import Interpreter

MARKER = ".torchmatrix-built"
"""In the environment's folder: the torch build (:func:`torch_build`) that was installed there and imported."""


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
    return build if build is not None and _marked(env) == build else None


def holds_torch(env: Path) -> bool:
    """Whether anything of torch is installed in ``env``, finished or not."""
    return any((folder / "torch").exists() or any(folder.glob("torch-*.dist-info")) for folder in site_packages(env))


def half_built(env: Path) -> bool:
    """Whether ``env`` holds a torch that no finished install vouches for (an install was stopped halfway)."""
    return holds_torch(env) and built_torch(env) is None


def installed_versions(env: Path, names: Iterable[str]) -> dict[str, str | None]:
    """The version of each of ``names`` installed in ``env`` (None where it is not), read without importing."""
    folders = [str(folder) for folder in site_packages(env)]
    found = {
        canonicalize_name(dist.metadata["Name"]): dist.version
        for dist in importlib.metadata.distributions(path=folders)
    }
    return {name: found.get(canonicalize_name(name)) for name in names}


def mark_built(env: Path) -> None:
    """Record that the torch now in ``env`` was installed in full and imported."""
    build = torch_build(env)
    if build is not None:
        atomicfile.write_text(env / MARKER, build + "\n")


def unmark_built(env: Path) -> None:
    """Forget that ``env`` was built: done before every install, which may stop halfway."""
    (env / MARKER).unlink(missing_ok=True)


def _marked(env: Path) -> str | None:
    try:
        return (env / MARKER).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None


def _pyvenv_cfg(env: Path) -> dict[str, str] | None:
    try:
        text = (env / "pyvenv.cfg").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    pairs = (line.partition("=") for line in text.splitlines() if "=" in line)
    return {key.strip(): value.strip() for key, _, value in pairs}
