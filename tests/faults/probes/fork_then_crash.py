"""Starts a child that inherits every open file (as fork-based DataLoader workers do), then segfaults.

The child's pid is appended to $TORCHMATRIX_FAULTS_PIDS when that names a file.
"""

import ctypes
import os
import time


def run(device):
    child = os.fork()
    if child == 0:
        time.sleep(600)
        os._exit(0)
    record = os.environ.get("TORCHMATRIX_FAULTS_PIDS")
    if record:
        with open(record, "a") as pids:
            pids.write("{}\n".format(child))
    ctypes.string_at(0)
