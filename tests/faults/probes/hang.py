"""Never returns, and leaves a child process running too (both must be stopped).

$TORCHMATRIX_FAULTS_HANG, when set, names the one torch release it hangs on
(it passes at once on the others). When $TORCHMATRIX_FAULTS_PIDS names a file,
its own pid and the child's are appended to it, so that a test can check
that no process outlives the run.
"""

import os
import subprocess
import sys
import time

import torch


def run(device):
    only = os.environ.get("TORCHMATRIX_FAULTS_HANG")
    if only and torch.__version__.split("+")[0] != only:
        return {"outcome": "pass", "metrics": {}, "message": "hangs only on torch " + only}
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    record = os.environ.get("TORCHMATRIX_FAULTS_PIDS")
    if record:
        with open(record, "a") as pids:
            pids.write("{} {}\n".format(os.getpid(), child.pid))
    print("hang: started, now sleeping forever", flush=True)
    while True:
        time.sleep(60)
