"""What a Python with a torch installed already says of itself: the parts of a ``probe-installed`` record's identity
that its environment alone tells, asked of that Python as a cell's are read from the environment torchmatrix built.

Its interpreter (the path named, its version and its build), and, of the site folders it imports from as a pair's
process starts (``python -I``: the environment's own, and the system's where the environment lets them in), the torch
build and the package set. A package installed there since, a torch upgraded, the system site packages switched on or
off, or the interpreter rebuilt in place: each makes the records measured there stale.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from .. import identity, interpreters
from .cellenv import packages_in, torch_build_in

_MARK = "torchmatrix-given-environment:"
"""What the answer's line begins with: a ``.pth`` file or a ``sitecustomize`` may print as the Python starts."""
_QUERY = (
    "import json, site, sys\n"
    f"print({_MARK!r} + json.dumps({{'site': site.getsitepackages(), "
    "'version': '.'.join(map(str, sys.version_info[:3]))}))\n"
)


def parts(python: str) -> dict[str, object]:
    """The parts of a record's identity that ``python``'s environment tells; none where ``python`` is not here (a
    record of another machine, an environment removed since): what cannot be asked is not compared."""
    if not os.path.isfile(python):
        return {}
    said = _ask(python)
    folders = [Path(folder) for folder in said.get("site", []) if os.path.isdir(folder)]
    return {
        "interpreter": python,
        "python_version": said.get("version"),
        identity.INTERPRETER_BUILD: interpreters.build(python),
        identity.TORCH_BUILD: torch_build_in(folders),
        identity.PACKAGES: _packages(folders),
    }


def _packages(folders: list[Path]) -> str | None:
    """The digest of the packages in ``folders`` (:func:`packages_in`) and of which folders they are: the system's
    site folder let in (``include-system-site-packages``) is another set of packages, though it holds only those the
    environment holds already (the pip and setuptools a new environment is seeded with), and its ``.pth`` files run
    as the Python starts."""
    found = packages_in(folders)
    if found is None:
        return None
    return hashlib.sha256(json.dumps([[str(folder) for folder in folders], found]).encode()).hexdigest()


def _ask(python: str) -> dict[str, Any]:
    """What ``python -I`` says of its site folders and version, after whatever its start printed; nothing where it
    does not answer."""
    try:
        completed = subprocess.run(
            [python, "-I", "-c", _QUERY], capture_output=True, encoding="utf-8", errors="replace", timeout=60,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        _, marked, answer = completed.stdout.rpartition(_MARK)
        said = json.loads(answer.partition("\n")[0]) if completed.returncode == 0 and marked else {}
    except (OSError, subprocess.SubprocessError, ValueError):
        return {}
    return said if isinstance(said, dict) else {}
