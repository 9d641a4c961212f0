"""Starts a child in a session of its own (setsid) and a daemon (forked twice, its parent gone), and returns.

Both would sleep for ten minutes. Their pids are appended to
$TORCHMATRIX_FAULTS_PIDS when that names a file.
"""

import os
import subprocess
import sys
import time


def run(device):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
    reader, writer = os.pipe()
    middle = os.fork()
    if middle == 0:
        os.setsid()
        if os.fork() == 0:
            os.write(writer, str(os.getpid()).encode())
            time.sleep(600)
        os._exit(0)
    os.waitpid(middle, 0)
    daemon = int(os.read(reader, 32))
    record = os.environ.get("TORCHMATRIX_FAULTS_PIDS")
    if record:
        with open(record, "a") as pids:
            pids.write("{} {}\n".format(child.pid, daemon))
    return {"outcome": "pass", "metrics": {}, "message": "left two processes running"}
