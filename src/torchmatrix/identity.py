"""A record's identity: everything it depended on, gathered here and nowhere else.

Freshness, reuse by bisect and verify, and every view's "stale" are equality
of identities (:mod:`torchmatrix.freshness` compares them). A record's
identity holds:

- the build: the requirements, the index and find-links the installer used
  (``index``), the installed torch's full version and the digest of its wheel's
  files (:data:`TORCH_BUILD`), the resolved package set (``packages``), the
  interpreter and its exact version;
- what the pair read: its probe's file (``probe``), its options, and every
  file it imported, opened or loaded with ``ctypes`` outside the environment and the standard library
  (``read``: path → sha256, as the worker saw it through Python's audit hooks;
  on Pythons without them, every file of the probe's folder), the matrix's
  ``project:`` as built;
- what the pair saw: an environment built here, not inherited
  (:func:`pair_environment`), described by :func:`environment_identity`, and
  one fixed seed (:data:`SEED`);
- where it ran: the machine's name, which by default names its CPU and GPU
  (:func:`default_machine_name`), and the folder its results are filed in.

What none of it can see: the network, the time of day, and faults of the hardware.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import platform
import re
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .core import Record

TORCH_BUILD = "torch_build"
"""The key of the torch build's digest (:func:`torchmatrix.cellenv.torch_build`) among a run's inputs."""
PACKAGES = "packages"
"""The key of the resolved package set's digest (:func:`torchmatrix.cellenv.package_set`) among a run's inputs."""
READ = "read"
"""The key of the files a record's pair read, each with its sha256 (None: gone), among a record's inputs."""
ENVIRONMENT_BOUND = (TORCH_BUILD, PACKAGES)
"""What only an environment on disk can tell: compared when the probe session has one, left out by bisect and verify."""
RECORD_INPUTS = (
    "requirements", "interpreter", "python_version", "worker", TORCH_BUILD, PACKAGES, "timeout", "project", "repeat",
    "index", "environment", "seed",
)  # fmt: skip
"""What every record of one run shares among its inputs; each adds its probe's sha256 (``probe``) and what it read."""
PORTABLE = ("requirements", "worker", "timeout", "project", "repeat", "seed", "probe", "options", "entry")
"""The inputs that mean the same on every machine: what a record filed under another machine is compared by."""

SEED = 0
"""The seed of every pair's process, in every cell and repeat: Python's ``random``, torch's generators, NumPy's global
one, and the hash seed (``PYTHONHASHSEED``). Results are reproducible; a repeat shows nondeterminism that is not the
generators' (threads, atomics, uninitialised memory)."""

PASSED_THROUGH = (
    "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "LC_*", "TZ", "TMPDIR", "TEMP", "TMP",
    "SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "APPDATA", "LOCALAPPDATA", "USERPROFILE",
)  # fmt: skip
"""What every pair gets from the caller's environment for a process to run at all: its home and user, its locale
and time zone, where temporary files go (the pairs' own folders are made there), Windows' own; no more (not TERM:
a pair's output goes to a file, never a terminal). Each can change what a pair reads, writes or prints: their
values are part of the identity."""
STEERING = (
    "OMP_*", "GOMP_*", "KMP_*", "MKL_*", "OPENBLAS_*", "ATEN_*", "DNNL_*", "ONEDNN_*", "MKLDNN_*",
    "CUDA_*", "CUBLAS_*", "CUBLASLT_*", "CUDNN_*", "NVIDIA_*", "HIP_*", "ROCR_*",
    "TORCH_*", "PYTORCH_*", "TORCHINDUCTOR_*", "TRITON_*",
)  # fmt: skip
"""The families of variables that steer torch and the libraries it loads, as their own documentation names them:
torch's pages of environment variables (threads: ``OMP_*``, ``MKL_*``; CUDA: ``CUDA_*``, ``CUBLAS_*``,
``CUBLASLT_*``, ``CUDNN_*``, ``NVIDIA_TF32_OVERRIDE``, ``PYTORCH_*``, ``TORCH_*``; MPS and debugging: the same),
ATen's CPU dispatch (``ATEN_CPU_CAPABILITY``), oneDNN's run-time controls (``ONEDNN_*``, ``DNNL_*``, ``MKLDNN_*``
before), OpenMP's runtimes (GNU's ``GOMP_*``, Intel's ``KMP_*``), OpenBLAS, ROCm (``HIP_*``, ``ROCR_*``),
Inductor's configuration (``TORCHINDUCTOR_*``) and Triton's. Passed through, and their values are part of the
identity."""
OWN = ("TORCHMATRIX_WORKER_START",)
"""torchmatrix's own switches for the worker (how it starts a pair's process): passed, and part of the identity."""


def record_inputs(run_inputs: Mapping[str, Any], probe: str, made_by: str | None = None) -> dict[str, Any]:
    """What the records of ``probe`` are made from: the keys of :data:`RECORD_INPUTS` that a run's inputs hold,
    the sha256 of its file (``probe``) and, if the matrix gives it any, its options (``options``).

    ``made_by``: the probe that makes records named otherwise (pytest tests, a record per test): its
    digest and options are theirs, and its name is kept as their ``entry``, which :func:`maker` reads.
    """
    probes = run_inputs.get("probes")
    options = run_inputs.get("probe_options")
    owner = made_by or probe
    entry = {"entry": owner} if owner != probe else {}
    given = options.get(owner) if isinstance(options, dict) else None
    return {
        **{key: run_inputs[key] for key in RECORD_INPUTS if key in run_inputs},
        "probe": probes.get(owner) if isinstance(probes, dict) else None,
        **entry,
        **({"options": given} if given else {}),
    }


def maker(record: Record) -> tuple[str, str]:
    """(probe, device) of the pair that made ``record``: its own, or its tests' for a test's record."""
    entry = record.inputs.get("entry")
    return (entry if isinstance(entry, str) else record.probe, record.device)


def portable(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """Of ``inputs``, what means the same on any machine (:data:`PORTABLE`)."""
    return {key: value for key, value in inputs.items() if key in PORTABLE}


# --- the build ------------------------------------------------------------------------


def build_source(index_url: str, find_links: Sequence[str]) -> dict[str, Any]:
    """Where the installer takes torch from: a build from elsewhere is another build, even of one version."""
    return {"index_url": index_url, "find_links": list(find_links)}


# --- what a pair sees -------------------------------------------------------------------


def pair_environment(
    python: str, declared: Mapping[str, str], passed: Sequence[str], caller: Mapping[str, str]
) -> dict[str, str]:
    """The environment every pair of a cell runs in: built from the cell, never the caller's as it is.

    The cell's ``bin`` first on PATH (then the system's folders, or the caller's PATH if ``passed`` names it),
    VIRTUAL_ENV the cell's, :data:`SEED` as the hash seed, what :func:`taken_from_caller` takes from ``caller``
    (:data:`PASSED_THROUGH`, :data:`STEERING`, :data:`OWN` and the variables ``passed`` names, ``NAME`` or a
    pattern, ``MY_*``), then the ``declared`` ones.
    """
    bin_dir = str(Path(python).parent)
    kept = {name: value for taken in taken_from_caller(passed, caller).values() for name, value in taken.items()}
    rest = kept.pop("PATH", None) or os.defpath
    environment = {**kept, "PATH": os.pathsep.join([bin_dir, rest]), "PYTHONHASHSEED": str(SEED)}
    prefix = Path(bin_dir).parent
    if (prefix / "pyvenv.cfg").is_file():
        environment["VIRTUAL_ENV"] = str(prefix)
    environment.update(declared)
    return environment


def environment_identity(
    declared: Mapping[str, str], passed: Sequence[str], caller: Mapping[str, str]
) -> dict[str, Any]:
    """What of :func:`pair_environment` a record depends on: every variable that reaches a pair from the matrix or
    the caller. The values the matrix sets (``set``), a digest of each value ``passed`` takes from the caller
    (``passed``: never the value, it may be a secret), the values of the variables torchmatrix takes itself
    (``steering``: :data:`STEERING` and :data:`OWN`; ``needed``: :data:`PASSED_THROUGH`). A caller's variable the
    matrix sets reaches no pair, and is not among them."""
    reaching = {
        why: {name: value for name, value in sorted(taken.items()) if name not in declared}
        for why, taken in taken_from_caller(passed, caller).items()
    }
    given = {name: _digest(value.encode()) for name, value in reaching.pop("passed").items()}
    return {"set": dict(sorted(declared.items())), "passed": given, **reaching}


def taken_from_caller(passed: Sequence[str], caller: Mapping[str, str]) -> dict[str, dict[str, str]]:
    """What of ``caller`` reaches every pair, by why: what ``passed`` names (``passed``), what steers torch, its
    libraries or the worker (``steering``), what a process needs to run (``needed``); each variable once, under
    the first that takes it. One rule for what a pair sees and what its record holds: nothing passes unrecorded."""
    taken: dict[str, dict[str, str]] = {"passed": {}, "steering": {}, "needed": {}}
    patterns = {"passed": tuple(passed), "steering": (*STEERING, *OWN), "needed": PASSED_THROUGH}
    for name, value in caller.items():
        why = next((why for why, names in patterns.items() if _matches(name, names)), None)
        if why is not None:
            taken[why][name] = value
    return taken


def left_out(declared: Mapping[str, str], passed: Sequence[str], caller: Mapping[str, str]) -> list[str]:
    """The names of the caller's variables that reach no pair, sorted: neither taken (:func:`taken_from_caller`)
    nor set by the matrix. Whatever they steer, no pair sees it: a plan says so, ``pass_env:`` passes one."""
    taken = {name for names in taken_from_caller(passed, caller).values() for name in names}
    return sorted(name for name in caller if name not in taken and name not in declared)


def _matches(name: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


# --- what a pair read ---------------------------------------------------------------------


def files_read(paths: Iterable[str]) -> dict[str, str | None]:
    """Each of ``paths`` with the sha256 of its content (None where it is no longer a readable file)."""
    return {path: file_digest(Path(path)) for path in sorted(set(paths))}


def folder_files(folder: Path, limit: int = 5000) -> list[str]:
    """Every file under ``folder`` but hidden ones and bytecode: what a pair may have read when nothing told which."""
    found: list[str] = []
    for root, folders, files in os.walk(folder):
        folders[:] = sorted(name for name in folders if not name.startswith(".") and name != "__pycache__")
        found += [os.path.join(root, name) for name in sorted(files) if not name.startswith(".")]
        if len(found) >= limit:
            break
    return found[:limit]


PYTEST_CONFIGURATION = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg", "conftest.py")
"""The files pytest looks for, present or not, in the folders above the tests it runs (and conftest.py below)."""


def pytest_configuration(tests: Path) -> list[str]:
    """Every file whose presence or content can change how pytest runs ``tests`` (a file or a folder): the
    configuration files of each folder above it, and each folder's ``conftest.py`` below it; there or not.

    pytest only asks whether most of them exist, which no audit hook sees: a ``tox.ini`` put beside the tests
    later changes what runs, so its absence is part of what the tests read.
    """
    above = [tests, *tests.parents] if tests.is_dir() else list(tests.parents)
    found = [str(folder / name) for folder in above for name in PYTEST_CONFIGURATION]
    if tests.is_dir():
        for root, folders, _files in os.walk(tests):
            folders[:] = sorted(name for name in folders if not name.startswith(".") and name != "__pycache__")
            found.append(os.path.join(root, "conftest.py"))
    return found


def changed_files(read: Any, digests: FileDigests | None = None) -> list[str]:
    """What of ``read`` (a record's :data:`READ`) is not as it was then: ``helper.py changed``, ``data.csv is gone``.

    ``digests``: the files as hashed in this pass over many records (a file each record of a suite read is hashed
    once); by default, each is hashed now.
    """
    if read is None:
        return []
    if not isinstance(read, dict) or not all(isinstance(digest, (str, type(None))) for digest in read.values()):
        return ["what it read is not a list of files with their digests"]  # a hand-edited file: never current
    digest_now = digests or FileDigests()
    changes = []
    for path, digest in read.items():
        now = digest_now(path)
        if now != digest:
            changes.append(f"{path} {'is gone' if now is None else 'appeared' if digest is None else 'changed'}")
    return changes


class FileDigests:
    """The sha256 of files, each read once: for one pass over stored records, in which no file is expected to change.

    Every record of a test suite's pair lists the files the suite read; hashing them once per record would make
    a report of N tests cost N times the reading of the suite.
    """

    def __init__(self) -> None:
        self._known: dict[str, str | None] = {}

    def __call__(self, path: str) -> str | None:
        if path not in self._known:
            self._known[path] = file_digest(Path(path))
        return self._known[path]


def file_digest(path: Path) -> str | None:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as file:
            for chunk in iter(lambda: file.read(1 << 20), b""):
                digest.update(chunk)
    except OSError:
        return None
    return digest.hexdigest()


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- where it ran ----------------------------------------------------------------------------


def default_machine_name() -> str:
    """``linux-x86_64-amd-epyc``, ``darwin-arm64-apple-m1``: the OS, the architecture, the CPU's model and, where
    there is one, the GPU's. Machines that can compute differently (AMD and Intel x86 round float32 differently
    in some kernels) are different columns, and one's results never overwrite the other's."""
    models = [_slug(model) for model in (cpu_model(), *gpu_models())]
    return "-".join([f"{platform.system()}-{platform.machine()}".lower(), *(model for model in models if model)])


def cpu_model() -> str:
    """The CPU's model as the OS names it (``AMD EPYC 7B13 64-Core Processor``); '' where it cannot tell."""
    if sys.platform.startswith("linux"):
        try:
            with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as cpuinfo:
                for line in cpuinfo:
                    key, _, value = line.partition(":")
                    if key.strip() in ("model name", "Model", "Hardware"):
                        return value.strip()
        except OSError:
            return ""
        return ""
    if sys.platform == "darwin":
        try:
            done = subprocess.run(["sysctl", "-n", "machdep.cpu.brand_string"], capture_output=True, text=True)
            return done.stdout.strip()
        except OSError:
            return ""
    return platform.processor()


def gpu_models() -> list[str]:
    """The NVIDIA GPUs' models the driver lists (``NVIDIA H200``), without starting CUDA; [] where none."""
    found = []
    for information in sorted(Path("/proc/driver/nvidia/gpus").glob("*/information")):
        try:
            text = information.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        found += [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Model:")]
    return list(dict.fromkeys(found))


_NOISE = re.compile(
    r"\((?:R|TM|r|tm)\)|®|™|\bCPU\b|\bProcessor\b|\b\d+-Core\b|@.*$|\b[\d.]+\s*GHz\b|\bwith\b.*$", re.IGNORECASE
)


def _slug(text: str) -> str:
    """``Intel(R) Xeon(R) CPU @ 2.20GHz`` → ``intel-xeon``: lower case, the marks and clock left out."""
    words = re.sub(r"[^a-z0-9.]+", "-", _NOISE.sub(" ", text).lower())
    return words.strip("-.")
