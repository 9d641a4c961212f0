"""Stand-in torch wheels: a package named torch whose version, git hash and behaviour differ per wheel.

Each wheel is the stand-in of ``tests/data/stub_torch`` (enough of torch for
the worker's fingerprint, pure Python, no dependencies) with its own
``__version__``, a ``version.git_version`` made from the version, and
``torch.behaviour``: what each probe of :data:`PROBE` returns under it
(``"pass"``, ``"fail"``, or ``"random"``: either, by chance). A folder of them
is a find-links folder that installs in a second, so that bisections over
nightlies (``9.1.0.dev20241001``…) run for real without a network.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import http.server
import threading
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path

STUB = Path(__file__).with_name("data") / "stub_torch" / "torch" / "__init__.py"

PROBE = '''\
"""Returns what this torch's stand-in says it returns (torch.behaviour), or either, as a race would decide.

Not by a seeded generator: every pair starts from one seed, and the same choice every run would be no race.
"""
import os

import torch


def run(device):
    outcome = torch.behaviour.get(PROBE_NAME, "pass")
    if outcome == "random":
        outcome = "pass" if os.urandom(1)[0] < 128 else "fail"
    return {"outcome": outcome, "metrics": {}, "message": ""}
'''


def git_hash(version: str) -> str:
    """The made-up git hash of the stand-in of ``version``."""
    return hashlib.sha1(version.encode()).hexdigest()


def probe(folder: Path, name: str) -> Path:
    """Write probe ``name``: it returns what ``torch.behaviour[name]`` says."""
    path = folder / f"{name}.py"
    path.write_text(PROBE.replace("PROBE_NAME", repr(name)))
    return path


def wheel(folder: Path, version: str, behaviour: Mapping[str, str], python: str | None = None) -> Path:
    """Build ``torch-<version>-py3-none-any.whl`` in ``folder``; with ``python`` (``"3.10"``), the wheel of that
    Python alone, ``torch-<version>-cp310-none-any.whl``: a release whose wheels stop at some Python is one of these
    per Python it has."""
    tag = f"cp{python.replace('.', '')}-none-any" if python else "py3-none-any"
    source = STUB.read_text()
    for old, new in (('__version__ = "0.0.0+stub"', f'__version__ = "{version}"'),
                     ('git_version = "stub"', f'git_version = "{git_hash(version)}"')):  # fmt: skip
        assert old in source, f"the stand-in of {STUB} no longer says {old}"
        source = source.replace(old, new)
    source += f"\n\nbehaviour = {dict(behaviour)!r}\n"
    return _built(folder, "torch", version, tag, {"torch/__init__.py": source})


def package(folder: Path, name: str, version: str, size: int = 0) -> Path:
    """Build a wheel of a package of its own in ``folder``, pure Python, holding ``size`` bytes more: a stand-in of
    a library the torch releases of a matrix share, as NVIDIA's CUDA libraries are shared."""
    module = name.replace("-", "_")
    return _built(
        folder, name, version, "py3-none-any", {f"{module}/__init__.py": f"# {'x' * size}\nVERSION = {version!r}\n"}
    )


def _built(folder: Path, name: str, version: str, tag: str, sources: Mapping[str, str]) -> Path:
    """The wheel of ``name`` ``version`` for ``tag``, holding ``sources`` (path: text) and its metadata."""
    escaped = name.replace("-", "_")
    info = f"{escaped}-{version}.dist-info"
    files = {
        **sources,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{info}/WHEEL": f"Wheel-Version: 1.0\nGenerator: torchmatrix-tests\nRoot-Is-Purelib: true\nTag: {tag}\n",
    }
    record = [f"{path},sha256={_digest(text)},{len(text.encode())}" for path, text in files.items()]
    files[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{escaped}-{version}-{tag}.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for member, text in files.items():
            archive.writestr(member, text)
    return path


def _digest(text: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()


@contextlib.contextmanager
def index(wheels: Path, handler: type[http.server.SimpleHTTPRequestHandler] | None = None) -> Iterator[str]:
    """A PEP 503 index of the torch wheels in ``wheels``, served on this machine while the block runs (by
    ``handler``, a quiet one by default): its URL."""
    root = wheels.parent / f"{wheels.name}-index"
    page = root / "simple" / "torch" / "index.html"
    page.parent.mkdir(parents=True, exist_ok=True)
    anchors = "".join(
        f'<a href="/{wheels.name}/{path.name}">{path.name}</a>\n' for path in sorted(wheels.glob("*.whl"))
    )
    page.write_text(f"<!DOCTYPE html>\n<html><body>\n{anchors}</body></html>\n")
    (root / wheels.name).mkdir(exist_ok=True)
    for path in wheels.glob("*.whl"):
        (root / wheels.name / path.name).write_bytes(path.read_bytes())
    with serving(root, handler) as url:
        yield f"{url}/simple"


@contextlib.contextmanager
def serving(root: Path, handler: type[http.server.SimpleHTTPRequestHandler] | None = None) -> Iterator[str]:
    """The files under ``root``, served on this machine by ``handler`` (a quiet one) while the block runs: its URL."""
    served = functools.partial(handler or _QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), served)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the name http.server gives it
        pass
