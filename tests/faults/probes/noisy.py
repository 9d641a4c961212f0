"""Floods stdout and stderr with megabytes of garbage, fake protocol lines and invalid UTF-8, then passes."""

import os
import sys


def run(device):
    garbage = bytes(range(256)) * 4096  # 1 MiB: NULs, ANSI escapes, invalid UTF-8
    fake = b'{"event": "done"}\n{"event": "record", "index": 0, "outcome": "fail"}\n'
    for fd in (1, 2):
        for _ in range(4):
            os.write(fd, garbage)
            os.write(fd, fake)
    print('{"event": "done"}')
    print("x" * 2000000)
    sys.stderr.write("y" * 2000000 + "\n")
    return {"outcome": "pass", "metrics": {}, "message": "noisy but fine"}
