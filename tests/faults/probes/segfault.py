"""Dies with SIGSEGV, as an old torch build can: reads address 0 through ctypes."""

import ctypes


def run(device):
    ctypes.string_at(0)
