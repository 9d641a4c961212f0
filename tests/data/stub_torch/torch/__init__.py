"""A stand-in for torch, for unit tests of the worker protocol only: enough for the worker's fingerprint.

$TORCHMATRIX_STUB_IMPORT_SECONDS makes importing it take that long (a slow `import torch`).
$TORCHMATRIX_STUB_CUDA=1 gives it a CUDA device, which `cuda.device_side_assert()` breaks for good,
as a real device-side assert breaks the process's CUDA context; =build makes it a CUDA build on a
machine without a CUDA device. As with real CUDA, a process
forked after CUDA was initialised cannot use it: every call there raises.
$TORCHMATRIX_STUB_LOG names a file that gets a line "import <pid> <parent's pid>" for each
import and "cuda <pid> <parent's pid>" for each CUDA call, is_available() included.
"""

import os
import time

time.sleep(float(os.environ.get("TORCHMATRIX_STUB_IMPORT_SECONDS", "0")))


def _log(event):
    path = os.environ.get("TORCHMATRIX_STUB_LOG")
    if path:
        with open(path, "a") as log:
            log.write(f"{event} {os.getpid()} {os.getppid()}\n")


_log("import")

__version__ = "0.0.0+stub"


STUB_CUDA = os.environ.get("TORCHMATRIX_STUB_CUDA") == "1"
CUDA_BUILD = os.environ.get("TORCHMATRIX_STUB_CUDA") in ("1", "build")


class version:
    cuda = "12.0" if CUDA_BUILD else None
    hip = None
    git_version = "stub"
    debug = False


class __config__:
    @staticmethod
    def show():
        return "  - BLAS_INFO=stub\n  - CPU capability usage: NONE\n"


class backends:
    class cudnn:
        @staticmethod
        def is_available():
            return False

    class cpu:
        @staticmethod
        def get_cpu_capability():
            return "NONE"


class cuda:
    broken = False
    initialised_in = None
    """The pid of the process that initialised CUDA: a child forked from it cannot use it."""

    @classmethod
    def _initialise(cls):
        _log("cuda")
        if cls.initialised_in not in (None, os.getpid()):
            raise RuntimeError("Cannot re-initialize CUDA in forked subprocess (stub)")
        cls.initialised_in = os.getpid()

    @classmethod
    def is_available(cls):
        try:
            cls._initialise()
        except RuntimeError:
            return False
        return STUB_CUDA and os.environ.get("CUDA_VISIBLE_DEVICES") != ""  # read when CUDA starts, as CUDA does

    @classmethod
    def device_count(cls):
        cls._initialise()
        return 1

    @classmethod
    def get_device_name(cls, index):
        cls._initialise()
        return "Stub GPU"

    @classmethod
    def device_side_assert(cls):
        cls._initialise()
        cls.broken = True
        cls.synchronize()

    @classmethod
    def synchronize(cls):
        cls._initialise()
        if cls.broken:
            raise RuntimeError("CUDA error: device-side assert triggered")


def get_num_threads():
    return 1


def manual_seed(seed):
    return seed
