"""A stand-in for torch, for unit tests of the worker protocol only: enough for the worker's fingerprint.

$TORCHMATRIX_STUB_IMPORT_SECONDS makes importing it take that long (a slow `import torch`).
"""

import os
import time

time.sleep(float(os.environ.get("TORCHMATRIX_STUB_IMPORT_SECONDS", "0")))

__version__ = "0.0.0+stub"


class version:
    cuda = None
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
    @staticmethod
    def is_available():
        return False


def get_num_threads():
    return 1
