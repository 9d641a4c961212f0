"""A record's identity: everything it depended on, gathered here and nowhere else.

Freshness, reuse by bisect and verify, and every view's "stale" are equality
of identities (:mod:`torchmatrix.freshness` compares them). A record's
identity holds:

- the build: the requirements and constraints, what the environment was seeded with
  (:data:`VENV_SEED`), the index and find-links the installer used
  (``index``), the installed torch's full version and the digest of its wheel's
  files (:data:`TORCH_BUILD`), the resolved package set (``packages``), the
  interpreter and its exact version;
- what the pair read: its probe's file (``probe``), its options, and every
  file it imported, opened or loaded with ``ctypes`` outside the environment and the standard library
  (``read``: path → sha256, as the worker saw it through Python's audit hooks,
  less what the pair wrote; on Pythons without them, every file of the probe's folder), the matrix's
  ``project:`` as built;
- what the pair saw: an environment built here, not inherited
  (:func:`pair_environment`), described by :func:`environment_identity`, the
  folder it ran from (``workdir``), and one fixed seed (:data:`SEED`);
- where it ran: the machine's name, which by default names how it computes (:class:`Machine`: its CPU's
  model, vendor, family and model numbers, ISA levels and features, its GPUs), and the folder its results are
  filed in; the whole identity is stored with each result (:data:`HARDWARE`).

What none of it can see: the network, the time of day, the machine's name, and faults of the hardware.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import fnmatch
import functools
import glob
import hashlib
import hmac
import importlib
import json
import os
import platform
import re
import subprocess
import sys
import time
import types
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .core import Record
from .errors import TorchmatrixError
from .util.cachedir import cache_dir

TORCH_BUILD = "torch_build"
"""The part holding the torch build's digest (:func:`torchmatrix.environment.cellenv.torch_build`)."""
PACKAGES = "packages"
"""The part holding the resolved package set's digest (:func:`torchmatrix.environment.cellenv.package_set`)."""
READ = "read"
"""The part holding the files a record's pair read, each with its sha256 (None: gone)."""
CONSTRAINTS = "constraints"
"""The part holding the cell's constraints (the known pins and the matrix's ``constrain:``): the constraints alone,
not the rules' words, which the result keeps beside its inputs (``CellResult.constrained_by``)."""
VENV_SEED = "venv_seed"
"""The part holding what the cell's environment was seeded with (``python -m venv``'s pip and setuptools): the
interpreter's ensurepip says what."""
INTERPRETER_BUILD = "interpreter_build"
"""The part holding a digest of the interpreter as built and installed, its standard library's files among it
(:func:`torchmatrix.interpreters.build`): a Python rebuilt or patched in place keeps its path and version."""
ENVIRONMENT = "environment"
"""The part holding every variable that reaches a pair (:func:`environment_identity`)."""
CPUS = "cpus"
"""The part holding the CPUs the pairs may run on (:func:`usable_cpus`)."""
LIMITS = "limits"
"""The part holding the resource limits the pairs run under (:func:`resource_limits`)."""
CREDENTIALS = "credentials"
"""The part holding the user, groups, capabilities and umask the pairs run as (:func:`credentials`)."""
PROCESS = "process"
"""The part holding what the kernel says of the state the pairs inherit besides the other parts (:func:`inherited`)."""


class Shown(enum.Enum):
    """How a change of a part is said."""

    VALUE = "value"
    """Its value before and after, shortened: ``the Python version changed: 3.9.17 → 3.9.18``."""
    WHOLE = "whole"
    """Its whole value before and after: two folders' paths often share their first 60 characters."""
    CHANGED = "changed"
    """That it changed: a digest, or a value too long to say, says nothing more."""
    BY_KEY = "by key"
    """Each of its keys that changed, before and after: ``stack 8388608 → 4194304``."""


@dataclass(frozen=True)
class Part:
    """One part of a record's identity, as its ``inputs`` store it under :attr:`key`."""

    key: str
    label: str
    """What it is, in a change's words: ``the Python version``."""
    portable: bool = False
    """Whether it means the same on every machine: what a record filed under another machine is compared by."""
    shown: Shown = Shown.VALUE
    implied: Any = None
    """What a record made before the part was recorded was made from (one run per pair, as every run then had)."""
    of_run: bool = True
    """Whether every record of a run shares it (it is the cell's); else it is the record's own (its probe's)."""
    on_disk: bool = False
    """Whether only the environment on disk tells it: compared where the probe session has one, never by bisect
    and verify, which have none at hand."""


PARTS = (
    Part("requirements", "the requirements", portable=True),
    Part(CONSTRAINTS, "the constraints", portable=True, implied=[]),
    Part(VENV_SEED, "the environment's seed", implied=[]),
    Part("interpreter", "the interpreter"),
    Part("python_version", "the Python version"),
    Part(INTERPRETER_BUILD, "the interpreter's build", shown=Shown.CHANGED),
    Part("worker", "torchmatrix's worker script", portable=True, shown=Shown.CHANGED),
    Part(TORCH_BUILD, "the torch build", shown=Shown.CHANGED, on_disk=True),
    Part(PACKAGES, "the installed packages", shown=Shown.CHANGED, on_disk=True),
    Part("timeout", "the timeout", portable=True),
    Part("project", "the sources of the matrix's project", portable=True, shown=Shown.CHANGED),
    Part("repeat", "the runs per pair", portable=True, implied=1),
    Part("index", "where torch is installed from", shown=Shown.CHANGED),
    Part(ENVIRONMENT, "the variables the pairs see"),
    Part(CPUS, "the CPUs the pairs may use"),
    Part(LIMITS, "the resource limits the pairs run under", shown=Shown.BY_KEY),
    Part(CREDENTIALS, "the user, groups, capabilities and umask the pairs run as", shown=Shown.BY_KEY),
    Part(PROCESS, "the process state the pairs inherit", shown=Shown.BY_KEY),
    Part("seed", "the seed", portable=True),
    Part("workdir", "the folder the pairs run from", shown=Shown.WHOLE),
    Part("probe", "the probe", portable=True, shown=Shown.CHANGED, of_run=False),
    Part("options", "the options of the probe", portable=True, shown=Shown.CHANGED, of_run=False),
    Part("entry", "the probe that made it", portable=True, of_run=False),
)
"""Every part of a record's identity but what its pair read (:data:`READ`), each declared once."""
PART = {part.key: part for part in PARTS}
READ_PART = Part(READ, "a file it read", shown=Shown.CHANGED, of_run=False)
"""What a pair read: compared file by file, by each file's digest now, on the machine that ran it alone."""
KIND_PART = Part("kind", "the probe's kind", portable=True, shown=Shown.WHOLE, of_run=False)
"""What a record ran as (:attr:`Record.kind`, not one of its inputs), against what a run now would make it
(:func:`torchmatrix.matrix.kinds.kinds_made`): a host that decides otherwise, or a rule that changed, re-runs it."""
RECORDED_WITH_READ = (ENVIRONMENT, "seed", "workdir")
"""Parts that only runs recording what their pairs read (:data:`READ`) record: a record holding one of them and no
:data:`READ` had it removed, and nothing tells what it read. A record made before reads were recorded holds none."""


@dataclass(frozen=True)
class Change:
    """A part of an identity that is not what it was: ``before`` stored, ``after`` wanted now.

    ``subject`` is what the part is of where the part alone does not say: the probe whose digest or options changed,
    the file that changed. :mod:`torchmatrix.freshness` words it.
    """

    part: Part
    before: Any
    after: Any
    subject: str = ""


@dataclass(frozen=True)
class Identity:
    """What a record was made from: the value of each part of :data:`PARTS` it was made with, as its ``inputs``
    store them (a part recorded before it existed is its :attr:`Part.implied` value), and what its pair read."""

    parts: Mapping[str, Any]
    read: Any = None
    """The files its pair read, path → sha256 (:data:`READ`); None where none were recorded."""
    read_lost: bool = False
    """Whether its run recorded what its pair read and the record no longer says it (:data:`RECORDED_WITH_READ`)."""

    @classmethod
    def stored(cls, inputs: Mapping[str, Any]) -> Identity:
        """The identity a record's stored ``inputs`` say."""
        parts = {part.key: inputs.get(part.key, part.implied) for part in PARTS}
        read = inputs.get(READ)
        lost = read is None and any(key in inputs for key in RECORDED_WITH_READ)
        return cls(types.MappingProxyType(parts), read, lost)

    def changes(self, wanted: Mapping[str, Any], subject: str) -> list[Change]:
        """The parts that ``wanted`` (a record's inputs a run now would give) holds otherwise, in the order of
        :data:`PARTS`. Only the parts ``wanted`` holds are compared, and the probe's options always (none stored
        and none wanted are the same); ``subject`` is the probe they are of."""
        asked = [part for part in PARTS if part.key in wanted or part.key == "options"]
        return [
            Change(part, self.parts[part.key], wanted.get(part.key), subject)
            for part in asked
            if self.parts[part.key] != wanted.get(part.key)
        ]

    def changed_files(self, digests: FileDigests | None = None) -> list[Change]:
        """What of :attr:`read` is not as it was then, a :class:`Change` of :data:`READ_PART` per file (its
        ``subject``; ``before`` None: it appeared, ``after`` None: it is gone). A ``read`` that is no list of files
        with their digests (a hand-edited file: never current) is one change with no subject, and so is one that
        was removed (:attr:`read_lost`; ``before`` None).

        ``digests``: the files as hashed in this pass over many records (a file each record of a suite read is
        hashed once); by default, each is hashed now.
        """
        if self.read_lost:
            return [Change(READ_PART, None, None)]
        read = self.read
        if read is None:
            return []
        if not isinstance(read, dict) or not all(isinstance(digest, (str, type(None))) for digest in read.values()):
            return [Change(READ_PART, read, None)]
        digest_now = digests or FileDigests()
        found = ((path, digest, digest_now(path)) for path, digest in read.items())
        return [Change(READ_PART, digest, now, path) for path, digest, now in found if now != digest]


def of_run(parts: Mapping[str, Any]) -> dict[str, Any]:
    """Of ``parts``, those every record of a run shares (:attr:`Part.of_run`)."""
    return {key: value for key, value in parts.items() if key in PART and PART[key].of_run}


SEED = 0
"""The seed of every pair's process, in every cell and repeat: Python's ``random``, torch's generators, NumPy's global
one, and the hash seed (``PYTHONHASHSEED``), which each run of a repeat has one more of (``cellrun.run_pairs``), as
each process by hand has its own. Results are reproducible; a repeat shows nondeterminism that is not the
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


def record_inputs(
    run_inputs: Mapping[str, Any], probe: str, made_by: str | None = None, device: str | None = None
) -> dict[str, Any]:
    """What the records of ``probe`` of a run from ``run_inputs`` are made from, as they store it: the parts every
    record of the run shares (:func:`of_run`), the sha256 of its file (``probe``) and, if the matrix gives it any,
    its options (``options``). The one place a record's identity is made; the runner adds what its pair read.

    ``made_by``: the probe that makes records named otherwise (pytest tests, a record per test): its
    digest and options are theirs, and its name is kept as their ``entry``, which :func:`maker` reads.
    ``device``: the pair's, whose variables are recorded as it saw them (:func:`seen_on`); None: as every pair
    was given them (a record of before the pairs' environment was recorded).
    """
    probes = run_inputs.get("probes")
    options = run_inputs.get("probe_options")
    owner = made_by or probe
    entry = {"entry": owner} if owner != probe else {}
    given = options.get(owner) if isinstance(options, dict) else None
    shared = of_run(run_inputs)
    if ENVIRONMENT in shared:
        shared[ENVIRONMENT] = seen_on(shared[ENVIRONMENT], device)
    return {
        **shared,
        "probe": probes.get(owner) if isinstance(probes, dict) else None,
        **entry,
        **({"options": given} if given else {}),
    }


def maker(record: Record) -> tuple[str, str]:
    """(probe, device) of the pair that made ``record``: its own, or its tests' for a test's record."""
    entry = record.inputs.get("entry")
    return (entry if isinstance(entry, str) else record.probe, record.device)


def portable(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """Of ``inputs``, what means the same on any machine (:attr:`Part.portable`)."""
    return {key: value for key, value in inputs.items() if key in PART and PART[key].portable}


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
        why: {_as_text(name): value for name, value in sorted(taken.items()) if name not in declared}
        for why, taken in taken_from_caller(passed, caller).items()
    }
    given = {name: passed_digest(value) for name, value in reaching.pop("passed").items()}
    by_value = {why: {name: _as_text(value) for name, value in values.items()} for why, values in reaching.items()}
    return {"set": {_as_text(name): _as_text(value) for name, value in sorted(declared.items())}, "passed": given,
            **by_value}  # fmt: skip


def _as_text(text: str) -> str:
    """``text``, a variable's name or value, as a record holds it: as it is where it is UTF-8 text; else a NUL (which
    no variable holds, so it is no other variable's text) and the repr of its bytes (``os.environ`` holds those no
    encoding decodes as lone surrogates, which no UTF-8 file can)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "\0" + repr(os.fsencode(text))
    return text


def folder_text(folder: Path) -> str:
    """``folder`` (the one the pairs run from, ``workdir``) as a record holds it: its path where it is UTF-8 text;
    else as :func:`_as_text` holds a variable's value, so that one named by bytes that are no UTF-8 (a folder of
    Latin-1 names the ``torchmatrix`` command is started in) is recorded, never an error as the result is written."""
    return _as_text(str(folder))


def passed_digest(value: str) -> str:
    """A digest of a value ``pass_env:`` takes from the caller, keyed by a secret of this user's
    (:func:`passed_key`): results may be shared and committed, and a plain sha256 of a value that can be guessed (a
    short token, ``prod``) gives it away to whoever tries the guesses. Of the bytes the pair is given: a value that is
    no UTF-8 text (Python holds its other bytes as lone surrogates) has a digest of its own, as any value has."""
    return hmac.new(passed_key(), value.encode("utf-8", "surrogateescape"), hashlib.sha256).hexdigest()


PASSED_KEY = "passed-values.key"
"""The file of torchmatrix's cache folder holding the key of :func:`passed_digest`."""


KEY_BYTES = 32


def passed_key() -> bytes:
    """The key of :func:`passed_digest`: 32 random bytes kept in torchmatrix's cache folder, made the first time,
    readable by this user alone. Made in full before it is there (linked into place), so that two runs at once take
    one key; where the cache's file system has no hard links, created in place by one run, which the others wait a
    moment for. A new key (the cache folder emptied) makes each record whose pairs a ``pass_env:`` value reached stale
    once."""
    path = cache_dir() / PASSED_KEY
    for _ in range(50):
        try:
            key = path.read_bytes()
        except FileNotFoundError:
            path.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(FileExistsError):
                _make_key(path)  # never replaces a key another run made first
            continue
        except OSError as error:
            raise TorchmatrixError(_unusable_key(path, error.strerror or str(error))) from None
        if len(key) == KEY_BYTES:
            return key
        time.sleep(0.1)  # being written by the run that created it
    raise TorchmatrixError(_unusable_key(path, f"not a key of {KEY_BYTES} bytes"))


def _unusable_key(path: Path, why: str) -> str:
    return (
        f"{path}: {why}: torchmatrix keeps the key of the passed variables' digests there; remove what is there and "
        f"run again (the records a passed value reached then run again once)"
    )


def _make_key(path: Path) -> None:
    """Write a new key to ``path``: whole before it is there where the file system links, else created in place."""
    key = os.urandom(KEY_BYTES)
    made = path.with_name(f"{PASSED_KEY}.{os.getpid()}")
    _write_new(made, key, os.O_TRUNC)
    try:
        os.link(made, path)
    except FileExistsError:
        raise
    except OSError:  # no hard links (a FAT or SMB cache folder): created by one run alone
        _write_new(path, key, os.O_EXCL)
    finally:
        made.unlink()


def _write_new(path: Path, content: bytes, flag: int) -> None:
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | flag, 0o600), "wb") as file:
        file.write(content)


HIDDEN_ON_CPU = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES")
"""What the worker empties for a pair on the cpu, whatever the matrix or the caller gives (the pair sees no
accelerator: ``hide_accelerators`` in the worker's ``pairs.py``)."""


def seen_on(environment: Any, device: str | None) -> Any:
    """``environment`` (:func:`environment_identity`) as a pair on ``device`` sees it: on the cpu, each variable of
    :data:`HIDDEN_ON_CPU` it holds empty (a passed one by the digest of nothing); elsewhere, or where it is no
    such record, as it is."""
    if device != "cpu" or not isinstance(environment, dict):
        return environment
    empty = {why: passed_digest("") if why == "passed" else "" for why in environment}
    return {
        why: {name: empty[why] if name in HIDDEN_ON_CPU else value for name, value in given.items()}
        if isinstance(given, dict)
        else given
        for why, given in environment.items()
    }


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


def resource_limits() -> dict[str, list[int | str]] | None:
    """The resource limits this process, and every pair it starts, runs under, as the kernel says (``ulimit``:
    each ``RLIMIT_*`` the platform has, soft and hard, ``unlimited`` for none): a stack's size decides where a deep
    recursion crashes, an address space's where an allocation fails. None where there are none to ask (Windows)."""
    try:
        import resource
    except ImportError:
        return None
    limits: dict[str, list[int | str]] = {}
    for name in sorted(name for name in dir(resource) if name.startswith("RLIMIT_")):
        try:
            found = resource.getrlimit(getattr(resource, name))
        except (OSError, ValueError):
            continue
        limits[name.removeprefix("RLIMIT_").lower()] = [
            "unlimited" if value == resource.RLIM_INFINITY else value for value in found
        ]
    return limits


def credentials() -> dict[str, object]:
    """The user, group and other groups this process, and every pair it starts, runs as, its capabilities and its
    umask, as the kernel says: what a file's permissions allow it (root reads and writes what another may not, by
    its capabilities: ``CAP_DAC_OVERRIDE``), and the permissions of every file it makes."""
    mask = os.umask(0)
    os.umask(mask)  # the umask can only be read by setting it: put it back at once
    found: dict[str, object] = {"umask": f"{mask:04o}"}
    if hasattr(os, "getuid"):
        found.update(uid=os.getuid(), gid=os.getgid(), groups=sorted(set(os.getgroups())))
    found.update(capabilities())
    return found


def capabilities() -> dict[str, str]:
    """This process's capability sets, as Linux's ``/proc/self/status`` says them (``CapEff``, what it may do now;
    ``CapInh``, ``CapPrm``, ``CapBnd``, ``CapAmb``, what a program it starts may hold); none elsewhere."""
    return {name: value for name, value in kernel_status().items() if name.startswith("Cap")}


def kernel_status() -> dict[str, str]:
    """Each field of Linux's ``/proc/self/status``, its value's words single-spaced; none elsewhere."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return {}
    return {key: " ".join(value.split()) for key, _, value in (line.partition(":") for line in status.splitlines())}


def usable_cpus() -> str:
    """The CPUs this process, and every pair it starts, may run on (its affinity: ``taskset``, a container's cpuset,
    a batch system's allocation), as ``taskset`` lists them (``0-3,8``): torch's default number of threads is as
    many, and a reduction splits its work, and a float sum's last bits, by it; on a machine of unlike cores, which
    ones decides how fast. Where the affinity cannot be asked, how many the machine has (``4 CPUs``)."""
    if not hasattr(os, "sched_getaffinity"):
        return f"{os.cpu_count() or 1} CPUs"
    spans: list[list[int]] = []
    for cpu in sorted(os.sched_getaffinity(0)):
        if spans and spans[-1][1] == cpu - 1:
            spans[-1][1] = cpu
        else:
            spans.append([cpu, cpu])
    return ",".join(str(first) if first == last else f"{first}-{last}" for first, last in spans)


def inherited() -> dict[str, str]:
    """What the kernel says of this process that every pair it starts inherits, but what the other parts hold
    (its CPUs, limits and credentials) and what a pair is given anew (its signals): its niceness (``nice``), its
    scheduling policy (``chrt``), and each of Linux's ``/proc/self`` files that a program keeps across ``exec``: its
    personality (``setarch -R``), its OOM score's adjustment (``choom``), its timer slack, and every field of its
    ``status`` that is not this process's own (:data:`OWN_STATUS`: ``NoNewPrivs``, ``Seccomp``, ``Mems_allowed``,
    ``THP_enabled``, the speculation mitigations; and a field a newer kernel adds), and the limits of its control
    group (:func:`cgroup_limits`); and the GPU driver its kernel runs (:func:`gpu_driver`). Each as the kernel words
    it; none that cannot be asked here."""
    found: dict[str, str] = {}
    with contextlib.suppress(AttributeError, OSError):
        found["niceness"] = str(os.getpriority(os.PRIO_PROCESS, 0))
    with contextlib.suppress(AttributeError, OSError):
        found["scheduler"] = f"{os.sched_getscheduler(0)} {os.sched_getparam(0).sched_priority}"
    for name in ("personality", "oom_score_adj", "timerslack_ns"):
        with contextlib.suppress(OSError):
            found[name] = Path("/proc/self", name).read_text().strip()
    found.update((key, value) for key, value in kernel_status().items() if not _matches(key, OWN_STATUS))
    found.update(cgroup_limits())
    found.update(gpu_driver())
    return found


NVIDIA_DRIVER = Path("/proc/driver/nvidia/version")
"""Where the NVIDIA kernel module says its version."""


def gpu_driver() -> dict[str, str]:
    """The NVIDIA driver the kernel runs, as it says it (``NVRM version: NVIDIA UNIX x86_64 Kernel Module
    550.54.15 …``), where one is loaded: which CUDA a torch build can use with it decides whether a ``cuda`` pair
    runs at all ("the NVIDIA driver on your system is too old"), and the code it compiles for the GPU. An upgrade
    re-runs the records, where the GPU's model, the machine's name, stays. None where no driver is loaded."""
    try:
        first = NVIDIA_DRIVER.read_text(encoding="utf-8", errors="replace").splitlines()[0]
    except (OSError, IndexError):
        return {}
    return {"nvidia_driver": " ".join(first.split())}


CGROUP_LIMITS = (
    ("cgroup_memory_max", "memory", ("memory.max", "memory.limit_in_bytes")),
    ("cgroup_pids_max", "pids", ("pids.max",)),
)  # fmt: skip
"""The limits of Linux's control groups a pair runs under, as ``systemd-run -p MemoryMax=``, a container's
``--memory`` or a batch system's job sets them, each with its controller and the files it is told in (cgroup v2's
first, then v1's): the memory one decides where an allocation is killed, the pids one whether a fork fails, as
``ulimit``'s do (:func:`resource_limits`), and every process a pair starts is in its group."""
CGROUP_UNLIMITED = 1 << 62
"""At or above it a limit is none: cgroup v1 says no memory limit as the largest page-aligned 64-bit value."""


def cgroup_limits(
    membership: Path = Path("/proc/self/cgroup"), mounts: Path = Path("/proc/self/mountinfo")
) -> dict[str, str]:
    """The limits of :data:`CGROUP_LIMITS` this process, and every pair it starts, runs under: for each, the
    lowest its group and the groups above it set (a child's limit cannot lift its parent's), in bytes or
    processes; none where no group sets one (or there are none, off Linux), so that a machine without limits says
    what it said before they were asked. Where each group's folder is, the kernel says: the group ``membership``
    names, in the mount of its hierarchy (``mounts``, :func:`cgroup_mounts`) that holds it, from that mount's root
    (inside a container, its own groups'); a group no mount here shows is not asked."""
    try:
        lines = membership.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return {}
    groups: dict[str, str] = {}
    for line in lines:
        _, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        for controller in controllers.split(",") if controllers else [""]:
            groups.setdefault(controller, path)
    mounted = cgroup_mounts(mounts)
    found: dict[str, str] = {}
    for key, controller, files in CGROUP_LIMITS:
        limits = [
            limit
            for hierarchy in ("", controller)
            if hierarchy in groups
            for root, point in mounted.get(hierarchy, [])
            for limit in _group_limits(point, _below(groups[hierarchy], root), files)
        ]
        if limits:
            found[key] = str(min(limits))
    return found


def cgroup_mounts(mounts: Path) -> dict[str, list[tuple[str, Path]]]:
    """Where each hierarchy of control groups is mounted, as the kernel says it (``/proc/self/mountinfo``): for
    each controller of cgroup v1 (``memory``, ``pids``) and for cgroup v2 (``""``), the root of the hierarchy each
    mount shows and the folder it is mounted on."""
    try:
        lines = mounts.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return {}
    found: dict[str, list[tuple[str, Path]]] = {}
    for line in lines:
        fields = line.split()
        if "-" not in fields[6:]:
            continue
        kind = fields[6:][fields[6:].index("-") + 1 :]
        if len(kind) < 3 or kind[0] not in ("cgroup", "cgroup2"):
            continue
        root, point = (re.sub(r"\\([0-7]{3})", lambda code: chr(int(code[1], 8)), field) for field in fields[3:5])
        for hierarchy in [""] if kind[0] == "cgroup2" else kind[2].split(","):
            found.setdefault(hierarchy, []).append((root, Path(point)))
    return found


def _below(path: str, root: str) -> str | None:
    """``path``, a group's, from ``root``, the root of a mount of its hierarchy; None where the mount holds none of
    it."""
    relative = os.path.relpath(path or "/", root)
    return None if relative == os.pardir or relative.startswith(os.pardir + os.sep) else relative


def _group_limits(base: Path, path: str | None, files: Sequence[str]) -> list[int]:
    """The limits ``files`` set in the group ``path`` under ``base`` and in each group above it, up to ``base``."""
    if path is None or not (base / path).is_dir():
        return []
    limits = []
    folder = base / path
    while True:
        for name in files:
            with contextlib.suppress(OSError, ValueError):
                text = (folder / name).read_text(encoding="utf-8").strip()
                if text != "max" and int(text) < CGROUP_UNLIMITED:
                    limits.append(int(text))
        if folder == base or base not in folder.parents:
            return limits
        folder = folder.parent


OWN_STATUS = (
    "Name", "State", "Tgid", "Ngid", "Pid", "PPid", "TracerPid", "FDSize", "NS*", "Kthread", "Vm*", "Rss*",
    "HugetlbPages", "CoreDumping", "Threads", "SigQ", "SigPnd", "ShdPnd", "SigBlk", "SigIgn", "SigCgt",
    "*ctxt_switches", "Umask", "Uid", "Gid", "Groups", "Cap*", "Cpus_allowed*",
)  # fmt: skip
"""The fields of Linux's ``/proc/self/status`` that are this process's own (its ids, memory, threads, pending signals
and handlers: a pair's signals are given anew), or that another part holds (:func:`credentials`,
:func:`usable_cpus`): what :func:`inherited` leaves out."""


# --- what a pair read ---------------------------------------------------------------------


RanBetween = tuple[float | None, float | None]
"""When a pair ran: ``time.time()`` as it began and as it ended; None where that is not known."""

CHANGED_AFTER_THE_PAIR = "changed after the pair ended"
"""What :func:`files_read` says a file held that was changed after its pair ended, before its digest was taken (by
the next pair, which began meanwhile): what the pair read is known no more, and no file's digest is this."""


def files_read(
    paths: Iterable[str], ran: RanBetween = (None, None), as_found: Mapping[str, str | None] | None = None
) -> dict[str, str | None]:
    """Each of ``paths`` with the sha256 of its content (None where it is no longer a readable file); one of
    ``as_found`` with its digest there: what the pair read in a file it changed (or that changed) after it read it.

    ``ran``: when the pair began and ended (``time.time()``). A file whose content was written between them was
    written while the pair ran, by it or by a program it started (a subprocess's output it then read): what the pair
    made, not what it read. It is left out, so that a run of another cell rewriting it makes no record stale; one
    only made runnable, linked or given attributes meanwhile holds what it held before. One changed after the pair
    ended (by the pair after it, which the worker began before this was asked) holds no longer what the pair read:
    :data:`CHANGED_AFTER_THE_PAIR`.
    """
    found = as_found or {}
    began_at, ended_at = ran
    kept: dict[str, str | None] = {}
    for path in sorted(set(paths)):
        changed = None if path in found else _changed_since(path, began_at)
        if changed is not None and ended_at is not None and changed[0] > ended_at:
            kept[path] = CHANGED_AFTER_THE_PAIR
        elif changed is None or not changed[1]:  # as it was, or only its mode, links or attributes changed
            kept[path] = found[path] if path in found else file_digest(Path(path))
    return kept


def _changed_since(path: str, began_at: float | None) -> tuple[float, bool] | None:
    """When the file at ``path`` was last changed, if at ``began_at`` or later, by the time the kernel stamps on every
    change of a file (``st_ctime``), which no program sets, and whether its content was written since too (the
    worker's ``content_written_since``); else None. The time of its content's (``st_mtime``), which a program may set
    (``touch -d``, a copy from a machine whose clock is ahead), says whether that change was of its content; alone
    it says nothing of when it was written.

    The kernel stamps a file with a clock that may lag the one ``time.time()`` reads by a tick: a file written
    just after ``began_at`` may look older, and is then counted as read, as it would have been without this rule.
    """
    if began_at is None:
        return None
    try:
        found = os.stat(path)
    except OSError:
        return None
    written = _protocol.content_written_since(found.st_ctime, found.st_mtime, began_at)
    return (found.st_ctime, written) if began_at <= found.st_ctime else None


def folder_files(folder: Path, limit: int = 5000, leaving_out: Path | None = None) -> list[str] | None:
    """Every file under ``folder`` but hidden ones, bytecode and those in the folder ``leaving_out`` (torchmatrix's
    own output, written after the pair): what a pair may have read when nothing told which. None where there are
    more than ``limit``: what the pair read is then not told, rather than told in part."""
    found: list[str] = []
    left_out = os.path.realpath(leaving_out) if leaving_out is not None else None
    for root, folders, files in os.walk(folder):
        folders[:] = sorted(
            name
            for name in folders
            if not name.startswith(".")
            and name != "__pycache__"
            and os.path.realpath(os.path.join(root, name)) != left_out
        )
        found += [os.path.join(root, name) for name in sorted(files) if not name.startswith(".")]
        if len(found) > limit:
            return None
    return found


PYTEST_CONFIGURATION = (
    "pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg", "setup.py",
    "conftest.py",
)  # fmt: skip
"""The files pytest 9 looks for, present or not, in the folders above the tests it runs (and conftest.py below):
what stands for its own answer where the pair's process could not be asked (:func:`pytest_configuration`)."""


def pytest_configuration(tests: Path) -> list[str]:
    """Every file whose presence or content can change how pytest runs ``tests`` (a file or a folder): the
    configuration files of each folder above it, and each folder's ``conftest.py`` below it; there or not.

    Only for a pair whose process could not say what it looked for (a Python without audit hooks, a worker that
    died): a pair's process otherwise hears each file pytest asks for itself, there or not, whatever pytest's
    release looks for.
    """
    above = [tests, *tests.parents] if tests.is_dir() else list(tests.parents)
    found = [str(folder / name) for folder in above for name in PYTEST_CONFIGURATION]
    if tests.is_dir():
        for root, folders, _files in os.walk(tests):
            folders[:] = sorted(name for name in folders if not name.startswith(".") and name != "__pycache__")
            found.append(os.path.join(root, "conftest.py"))
    return found


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


_protocol: Any = importlib.import_module("torchmatrix.envside.torchmatrix_worker.protocol")
"""What the pair's worker and the host agree on (the worker's side cannot import torchmatrix)."""
MODULE_LOOKED_FOR: str = _protocol.MODULE_LOOKED_FOR
"""How a pair's ``read`` names a module looked for in a folder (``folder/name.*``)."""
FILE_THERE: str = _protocol.FILE_THERE
"""How a pair's ``read`` names a file the environment's code only asked about and found there
(``path (whether it is there)``)."""
FILE_STATED: str = _protocol.FILE_STATED
"""How a pair's ``read`` names a file its own code asked about (``path (what os.stat says of it)``)."""
DISTRIBUTIONS_IN: str = _protocol.DISTRIBUTIONS_IN
"""How a pair's ``read`` names a folder ``importlib.metadata`` looked for distributions in (``path (the distributions
in it)``)."""
LEADS_TO: str = _protocol.LEADS_TO
"""How a pair's ``read`` names the script it ran by where its path leads (``path (the file it is)``)."""
FOLDER_LISTED: str = _protocol.FOLDER_LISTED
"""How a pair's ``read`` names a folder its own code listed (``path (what is in it)``)."""
SITE_PTH_FILES: str = _protocol.SITE_PTH_FILES
"""How a pair's ``read`` names the ``.pth`` files of a site folder, which ``site`` ran as it started
(``folder/*.pth``)."""
READ_UNTOLD: str = _protocol.READ_UNTOLD
"""What a worker sends as a pair's files read where one of its processes could not write down all it read."""
EXECUTABLE: str = _protocol.EXECUTABLE
"""How a file's digest ends where the file may be run."""
MODULE_SUFFIXES = (".py", ".pyw", ".pyc", ".so", ".pyd")
"""What a module's file ends with, on any Python: its source, its bytecode, an extension module
(``name.cpython-311-x86_64-linux-gnu.so`` ends with ``.so``)."""


def path_read(entry: str) -> str:
    """The path an entry of a pair's ``read`` names, without what was asked of it (``path (whether it is there)``)."""
    path: str = _protocol.asked_path(entry)[0]
    return path


def file_digest(path: Path) -> str | None:
    """The sha256 of the file at ``path``, and whether it may be run; None where it is no readable file. For a file
    only asked about (``path (whether it is there)``), ``there`` or ``a folder``, what it is; for one the pair's code
    asked about (``path (what os.stat says of it)``), of what ``os.stat`` says; for a folder listed (``path (what is
    in it)``), of the names in it (the worker's ``asked_digest``); for a module looked for (``folder/name.*``), of
    the module's forms in that folder (:func:`module_forms`); for a site folder's ``.pth`` files (``folder/*.pth``),
    of each one's name and content (:func:`pth_files`)."""
    if path.name.endswith(_protocol.ASKED_ENDINGS):
        digest: str | None = _protocol.asked_digest(str(path))
        return digest
    if path.name == SITE_PTH_FILES:
        found = pth_files(path.parent)
        return _digest("\n".join(found).encode()) if found else None
    if path.name.endswith(MODULE_LOOKED_FOR):
        forms = module_forms(path.parent, path.name.removesuffix(MODULE_LOOKED_FOR))
        return _digest("\n".join(forms).encode()) if forms else None
    return _protocol.file_digest(path)


def module_forms(folder: Path, name: str) -> list[str]:
    """The files in ``folder`` the import system may take for the module ``name``, sorted: a module
    (``name.py``, ``name.<tag>.so``, …), a package's ``__init__`` (``name/__init__.py``), or a folder alone
    (``name/``), which an import that finds nothing else takes for a namespace package. A zip file on ``sys.path``
    (or a folder inside one) is looked in as a folder is (:func:`zipped_module_forms`)."""
    if not folder.is_dir():
        return zipped_module_forms(folder, name)
    candidates = [*folder.glob(f"{glob.escape(name)}.*"), *(folder / name).glob("__init__.*")]
    forms = [str(path.relative_to(folder)) for path in candidates if path.suffix in MODULE_SUFFIXES and path.is_file()]
    return sorted(forms + ([f"{name}/"] if (folder / name).is_dir() else []))


ZIPPED_MODULE_SUFFIXES = (".py", ".pyc")
"""What a module's file in a zip file ends with: ``zipimport`` imports no extension module."""


def zipped_module_forms(folder: Path, name: str) -> list[str]:
    """The files ``zipimport`` may take for the module ``name`` where ``folder`` is a zip file, or a folder inside
    one (``lib.zip/sub``), sorted as :func:`module_forms` says them: ``name.py``, ``name/__init__.pyc``, or the
    folder's own entry (``name/``), a namespace package's part. None where it is no zip file (not there, as it may
    have been when the pair looked, which made it no file of content: only what a lookup now finds in it counts)."""
    archive, inside = folder, ""
    while not archive.exists() and archive != archive.parent:
        archive, inside = archive.parent, f"{archive.name}/{inside}"
    if not archive.is_file():
        return []
    try:
        with zipfile.ZipFile(archive) as zipped:
            entries = set(zipped.namelist())
    except (OSError, zipfile.BadZipFile):
        return []
    forms = [f"{name}{suffix}" for suffix in ZIPPED_MODULE_SUFFIXES]
    forms += [f"{name}/__init__{suffix}" for suffix in ZIPPED_MODULE_SUFFIXES] + [f"{name}/"]
    return sorted(form for form in forms if inside + form in entries)


def pth_files(folder: Path) -> list[str]:
    """``name sha256`` of each ``.pth`` file in ``folder``, by name, as ``site.addsitedir`` lists them (every name
    that ends with ``.pth``), and after it each folder it names that is not there (:func:`pth_folders_not_there`);
    none where ``folder`` is no folder."""
    try:
        names = sorted(name for name in os.listdir(folder) if name.endswith(".pth"))
    except OSError:
        return []
    found = []
    for name in names:
        try:
            content = (folder / name).read_bytes()
        except OSError:
            found.append(f"{name} None")  # a folder, or unreadable: site skips it
            continue
        found.append(f"{name} {_digest(content)}")
        found += [f"{name} names {missing} (not there)" for missing in pth_folders_not_there(folder, content)]
    return found


def pth_folders_not_there(folder: Path, content: bytes) -> list[str]:
    """The folders a ``.pth`` file of ``folder`` holding ``content`` names that are not there: ``site`` adds to
    ``sys.path`` only those that are as Python starts, so one made since (with a module an import then finds) is a
    change, as the file's content is. Its comments and ``import`` lines name none. A byte order mark opens the
    first line as Python before 3.13 reads it, and not as 3.13 and newer do (``utf-8-sig``): both count."""
    missing: list[str] = []
    for encoding in ("utf-8", "utf-8-sig"):
        for line in content.decode(encoding, "surrogateescape").splitlines():
            if line.startswith("#") or not line.strip() or line.startswith(("import ", "import\t")):
                continue
            named = os.path.abspath(os.path.join(folder, line.rstrip()))
            if not os.path.exists(named) and named not in missing:
                missing.append(named)
    return missing


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- where it ran ----------------------------------------------------------------------------

HARDWARE = "hardware"
"""The key of this machine's :class:`Machine` (its JSON) in each result's ``environment``."""

PSABI_LEVELS = (
    ("x86-64-v2", ("cx16", "lahf_lm", "popcnt", "pni", "sse4_1", "sse4_2", "ssse3")),
    ("x86-64-v3", ("avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave")),
    ("x86-64-v4", ("avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl")),
)  # fmt: skip
"""The x86-64 psABI's micro-architecture levels, each with the /proc/cpuinfo flags it adds to the one before."""
LEVEL_NAMES = {"x86-64-v4": "avx512", "x86-64-v3": "avx2", "x86-64-v2": "sse4"}
"""A level as a machine's name says it: the name of the kernels torch dispatches to on it (AVX512, AVX2)."""
DISPATCHED = (
    "avx512_vnni", "avx512_bf16", "avx512_fp16", "avx512ifma", "avx512vbmi", "avx_vnni", "amx_tile", "amx_bf16",
    "amx_int8", "amx_fp16", "asimd", "asimddp", "asimdhp", "fphp", "bf16", "i8mm", "sve", "sve2", "svebf16",
    "svei8mm", "sme", "sme2",
)  # fmt: skip
"""The CPU features beyond the levels that torch, oneDNN or its BLAS choose kernels by (VNNI, BF16, AMX; on arm64
NEON, dot products, SVE, SME). The other flags (a hypervisor's, power management's) say nothing of arithmetic:
two VMs of one CPU differ in them, and must not be two machines."""
ARM_LEVELS = ("sme", "sve2", "sve", "asimd")
"""The arm64 features a name says, the widest first; NEON (``asimd``) is the baseline."""
MACOS_FEATURES = {
    "hw.optional.AdvSIMD": "asimd", "hw.optional.arm.FEAT_DotProd": "asimddp", "hw.optional.arm.FEAT_FP16": "asimdhp",
    "hw.optional.arm.FEAT_BF16": "bf16", "hw.optional.arm.FEAT_I8MM": "i8mm", "hw.optional.arm.FEAT_SME": "sme",
    "hw.optional.arm.FEAT_SME2": "sme2",
}  # fmt: skip
"""What macOS's ``sysctl hw.optional`` calls the features of :data:`DISPATCHED`: as Linux names them, so that one
CPU's identity reads alike under either."""


@dataclass(frozen=True)
class Machine:
    """How this machine computes, as it says itself: the OS and architecture, the CPU's model, its vendor, family
    and model numbers, the ISA levels and features kernels are chosen by, and the GPUs' models.

    Two machines with one identity run the same kernels on the same instructions; the default name
    (:meth:`name`) is a readable part and a digest of the whole, so machines that differ in any of it are filed
    apart, and results filed under one name from two identities are warned of.
    """

    system: str
    architecture: str
    cpu: str = ""
    vendor: str = ""
    family: str = ""
    model: str = ""
    levels: tuple[str, ...] = ()
    features: tuple[str, ...] = ()
    gpus: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        return {key: list(value) if isinstance(value, tuple) else value for key, value in data.items()}

    def digest(self) -> str:
        """A short digest of the whole identity: what separates machines whose readable names are alike."""
        return hardware_digest(self.to_json())

    def level(self) -> str:
        """The widest vector ISA it has, as torch's dispatch names it (``avx512``, ``avx2``, ``sve``, ``neon``)."""
        if self.levels:
            return LEVEL_NAMES.get(self.levels[-1], self.levels[-1])
        widest = next((feature for feature in ARM_LEVELS if feature in self.features), "")
        return "neon" if widest == "asimd" else widest

    def name(self) -> str:
        """``linux-x86_64-amd-epyc-7b13-avx2-0fe363``: the OS, the architecture, the CPU's model, its widest ISA,
        the GPUs' models where there are some, and the digest of the rest (family, model, features)."""
        parts = [self.system, self.architecture, _slug(self.cpu), self.level(), *(_slug(gpu) for gpu in self.gpus)]
        return "-".join([*(part for part in parts if part), self.digest()])


def hardware_digest(data: Mapping[str, Any]) -> str:
    """The digest of a machine's identity as stored (:meth:`Machine.to_json`): the same for the same identity."""
    return _digest(json.dumps(data, sort_keys=True).encode())[:6]


def describe_hardware(data: Mapping[str, Any]) -> str:
    """A stored identity in a few words: ``AMD EPYC 7B13 (AuthenticAMD 25/1, x86-64-v3, 0fe363)``."""
    numbers = "/".join(str(data.get(key) or "?") for key in ("family", "model"))
    levels = data.get("levels")
    level = str(levels[-1]) if isinstance(levels, list) and levels else ""
    details = ", ".join(part for part in (f"{data.get('vendor') or '?'} {numbers}", level, hardware_digest(data)))
    return f"{data.get('cpu') or 'a CPU'} ({details})"


@functools.cache
def this_machine() -> Machine:
    """This machine's :class:`Machine`, asked once: /proc/cpuinfo on Linux, ``sysctl`` on macOS."""
    system, architecture, gpus = platform.system().lower(), platform.machine().lower(), tuple(gpu_models())
    if sys.platform.startswith("linux"):
        try:
            text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        return from_cpuinfo(text, system, architecture, gpus)
    if sys.platform == "darwin":
        return from_sysctl(_sysctl(), system, architecture, gpus)
    return Machine(system, architecture, cpu=platform.processor(), gpus=gpus)


def from_cpuinfo(text: str, system: str, architecture: str, gpus: Sequence[str] = ()) -> Machine:
    """The machine /proc/cpuinfo's ``text`` describes (its first processor's lines; x86 and arm64 alike)."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, colon, value = line.partition(":")
        if colon:
            fields.setdefault(key.strip(), value.strip())
    flags = set((fields.get("flags") or fields.get("Features") or "").split())
    levels: list[str] = []
    for level, needs in PSABI_LEVELS:
        if architecture not in ("x86_64", "amd64") or not flags.issuperset(needs):
            break
        levels.append(level)
    return Machine(
        system,
        architecture,
        cpu=fields.get("model name") or fields.get("Model") or fields.get("Hardware") or "",
        vendor=fields.get("vendor_id") or fields.get("CPU implementer") or "",
        family=fields.get("cpu family") or fields.get("CPU architecture") or "",
        model=fields.get("model") or fields.get("CPU part") or "",
        levels=tuple(levels),
        features=tuple(sorted(flags.intersection(DISPATCHED))),
        gpus=tuple(gpus),
    )


def from_sysctl(text: str, system: str, architecture: str, gpus: Sequence[str] = ()) -> Machine:
    """The machine ``sysctl machdep.cpu.brand_string hw.cpufamily hw.cpusubfamily hw.optional`` describes: its
    features are those of :data:`MACOS_FEATURES` that are 1 there."""
    fields = dict(_split(line) for line in text.splitlines() if ":" in line)
    features = {feature for name, feature in MACOS_FEATURES.items() if fields.get(name) == "1"}
    brand = fields.get("machdep.cpu.brand_string", "")
    return Machine(
        system,
        architecture,
        cpu=brand,
        vendor=brand.split(" ", 1)[0],
        family=fields.get("hw.cpufamily", ""),
        model=fields.get("hw.cpusubfamily", ""),
        features=tuple(sorted(features)),
        gpus=tuple(gpus),
    )


def _split(line: str) -> tuple[str, str]:
    key, _, value = line.partition(":")
    return key.strip(), value.strip()


def _sysctl() -> str:
    names = ["machdep.cpu.brand_string", "hw.cpufamily", "hw.cpusubfamily", "hw.optional"]
    try:
        return subprocess.run(["sysctl", *names], capture_output=True, text=True).stdout
    except OSError:
        return ""


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
