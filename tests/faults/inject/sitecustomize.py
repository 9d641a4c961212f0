"""Fault injector for a test's nox process: put this folder on PYTHONPATH to load it.

With $TORCHMATRIX_FAULTS_SIGNAL_AT_RENAME set to a signal name (SIGKILL, SIGINT)
and $TORCHMATRIX_FAULTS_RESULTS to a folder, the process sends itself that
signal at the moment it renames a file into that folder: when a result file
is complete on disk under its temporary name and not yet in place, the worst
moment to be interrupted. The worker runs with -I and never loads this file.
Written to be importable by any Python this machine has (2.7 included), as
every interpreter nox or torchmatrix starts with this PYTHONPATH imports it.
"""

import os
import signal
import sys


def _install():
    name = os.environ.get("TORCHMATRIX_FAULTS_SIGNAL_AT_RENAME")
    folder = os.environ.get("TORCHMATRIX_FAULTS_RESULTS")
    if not name or not folder or not hasattr(sys, "addaudithook"):
        return
    number = getattr(signal, name)

    def hook(event, args):
        if event == "os.rename" and str(args[1]).startswith(folder):
            os.kill(os.getpid(), number)

    sys.addaudithook(hook)


_install()
