"""A stand-in for torch, for unit tests of the worker protocol only: enough for the worker's fingerprint.

$TORCHMATRIX_STUB_IMPORT_SECONDS makes importing it take that long (a slow `import torch`).
$TORCHMATRIX_STUB_CUDA=1 gives it a CUDA device, which `cuda.device_side_assert()` breaks for good,
as a real device-side assert breaks the process's CUDA context.
"""

import os
import time

time.sleep(float(os.environ.get("TORCHMATRIX_STUB_IMPORT_SECONDS", "0")))

__version__ = "0.0.0+stub"


STUB_CUDA = os.environ.get("TORCHMATRIX_STUB_CUDA") == "1"


class version:
    cuda = "12.0" if STUB_CUDA else None
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

    @staticmethod
    def is_available():
        return STUB_CUDA

    @staticmethod
    def device_count():
        return 1

    @staticmethod
    def get_device_name(index):
        return "Stub GPU"

    @classmethod
    def device_side_assert(cls):
        cls.broken = True
        cls.synchronize()

    @classmethod
    def synchronize(cls):
        if cls.broken:
            raise RuntimeError("CUDA error: device-side assert triggered")


def get_num_threads():
    return 1
