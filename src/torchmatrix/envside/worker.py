"""Run probes inside a cell's environment: import torch once, then every (probe, device) pair in a process of its own.

This file runs under the cell's Python (3.6 and newer), with the standard
library and torch only; it never imports torchmatrix. Its parts are the
package beside it, ``torchmatrix_worker``: the protocol (``protocol``), what
a pair's process does (``pairs``, ``answers``, ``reads``), the file it answers in (``reply``), what the worker
makes of it (``records``), how each pair gets a process of its own
(``isolation``) and the fingerprint (``fingerprint``). This file is the main
loop.

The request arrives as one JSON line on stdin:

    {"pairs": [pair, ...], "first": index, "timeout": s, "startup": s, "scratch": folder, "workdir": folder,
     "seed": n}

where each pair is ``{"name": ..., "path": ..., "device": ..., "kind": ...,
"kind_reason": ...}``, its kind ``module`` (a file that defines
``run(device)``), ``script`` (run as ``python script.py`` would run it),
``pytest`` (tests, with ``"select": "::test_x"`` or "", and ``"root"``,
the folder their ids are relative to) or ``script-or-tests`` (a file without ``run(device)``, with
``"select"`` and ``"root"``: on its first device, a module if this Python
parses it and finds ``run(device)``, which the host's Python could not parse;
else ``pytest PATH`` runs; if it collects a test, the file is tests, else it
runs again as a script; its other devices take that answer).

Every pair runs from ``workdir``, its working directory: the folder a by-hand
run would start in (the matrix's, or where the ``torchmatrix`` command was
started), so that relative paths, ``python -m`` of a neighbour and data files
beside a test resolve as they would by hand. What a pair writes there stays,
as it would by hand. The pairs' temporary folders are made in ``scratch``,
which the parent removes when the worker has ended (and the worker when the
parent is gone).

The parent keeps stdin open: when it closes (the parent ended, even by
SIGKILL, or it asks the worker to stop), the worker kills every process its
pairs started and exits. Messages to the parent are JSON lines on the original
stdout, which is kept for them alone (whatever probes print goes to logs):

    {"event": "ready", "protocol": version, "environment": {..., "import_seconds": s}}
    {"event": "start", "index": i}
    {"event": "alive", "index": i}
    {"event": "records", "index": i, "records": [record, ...], "ended_at": time.time() as the pair ended}
    {"event": "done"}

with each record ``{"probe": name, "outcome": ..., "metrics": {...},
"message": ..., "duration": s, "read": [path, ...] or null,
"read_as_found": {path: digest or null, ...}, "kind": ...,
"kind_reason": ...}`` (the kind it ran as, and why): one per pair,
named as its probe, except for pytest tests, which get one per test, named by
its node id. ``read`` lists the files the pair's process imported, opened
for reading or loaded with ``ctypes`` outside its environment, the standard
library and ``scratch`` (seen by an audit hook, Python 3.8+), as the process told it at its end and
its journal says (its forked children's reads, and all a process that died or was stopped had read),
worked out by this worker once the process ended; null on an older Python. ``read_as_found``
holds those of them that no longer hold what the pair read, with the sha256 of
what it found (null: not there; ``reads.CHANGED_AFTER_IT_WAS_READ``: unknown). Each test may
run ``timeout`` seconds, so a pair of tests may take longer: "alive" says,
as each test starts and ends, that the worker is not stuck.

Each pair runs in a new process, so that it starts from the state this worker
has right after ``import torch`` (threads, default dtype, grad mode, flags,
environment variables, its working directory) whatever the pairs before it
changed, with an empty temporary folder of its own (``TMPDIR``, ``TEMP`` and
``TMP``, where ``tempfile`` puts its files) that is removed afterwards, with stdin from
/dev/null and its output in a log of its own. Every pair starts from one
seed (``seed``: Python's ``random``, torch's generators, NumPy's global one;
the hash seed is the worker's, which the parent sets), and a pair on ``cpu``
sees no CUDA or MPS device, so a script that picks one itself still runs on
the cpu it is filed under. Its outcome is ``crash`` if that
process dies and ``timeout`` if it runs past ``timeout`` seconds; either way
this worker goes on with the next pair. The duration of a pair's record
covers the whole of it: starting the process, running the pair, ending and
cleaning up (a test's record: the test, as pytest timed it; a device that is
not there: none).

On Linux a pair's process is forked from this worker, which never runs torch
code itself: a forked child cannot use a CUDA context its parent created, so
even the fingerprint and the device checks run in a forked child, the first,
once per cell (a pair whose device is absent starts no process). The worker
is a child subreaper, so whatever a pair started, even a process that called
setsid() or forked twice to leave, becomes the worker's child when its parent
ends; after each pair the worker kills the pair's process group, then every
child it still has. Should the worker itself be killed, the pair's own
process dies with it (PR_SET_PDEATHSIG).

A script's forked child runs a new Python in its place (this file, ``--child``), which
keeps its group, folder and log and imports torch only as the script does, as
``python script.py`` would, after what the script set before it.

Elsewhere a pair's process is a new Python running this file (``--child``),
which imports torch again (a second or two per pair): macOS's system
libraries, Metal's included, do not survive a fork without exec, and Windows
has no fork. There a pair's process gets its own process group (POSIX) or is
stopped with ``taskkill /T`` (Windows); a process that left the group, or
whose parent ended first, is not stopped. $TORCHMATRIX_WORKER_START=spawn
chooses this way on Linux too (the tests use it to run it there).
"""

import sys

STARTED_WITH = frozenset(sys.modules)
"""The modules this Python imported as it started, before this file's: all that a script's Python, started by
hand, has imported before the script (``--child``: :func:`torchmatrix_worker.pairs.spawned_child`)."""

# ruff: noqa: E402 - the imports after STARTED_WITH are no part of it
import faulthandler
import functools
import json
import os
import tempfile
import time

if sys.path[:1] != [os.path.dirname(os.path.abspath(__file__))]:  # python -P (PYTHONSAFEPATH) puts it there no more
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from torchmatrix_worker.isolation import Forking, Spawning
from torchmatrix_worker.pairs import spawned_child
from torchmatrix_worker.protocol import PROTOCOL_VERSION, WORKER_FILE, ParentGone, protocol_channel, read_line
from torchmatrix_worker.records import Found, absent_devices, environment_from, know_releases, records_of


def main():
    forget_own_folder()
    request = json.loads(read_line(0).decode("utf-8"))
    started = time.monotonic()
    channel = protocol_channel()
    faulthandler.enable(all_threads=False)  # a crash of the worker itself leaves its stack in its log
    timeout = float(request["timeout"])
    startup = float(request.get("startup", timeout))
    seed = int(request.get("seed", 0))
    pairs = [dict(pair, path=os.path.abspath(pair["path"]), seed=seed) for pair in request["pairs"]]
    know_releases(request.get("torch_releases") or [])

    def send(message):
        try:
            channel.write(json.dumps(message, allow_nan=False) + "\n")
            channel.flush()
        except OSError:
            raise ParentGone() from None

    import_started = time.perf_counter()
    import torch

    import_seconds = time.perf_counter() - import_started
    # After the import: its SIGCHLD handler is no business of torch's import (nor of anything it starts).
    scratch = request.get("scratch") or tempfile.gettempdir()
    workdir = request["workdir"]
    isolation = Forking(scratch, workdir, 0, channel.fileno()) if forks() else Spawning(scratch, workdir, 0, startup)
    try:
        left = started + startup - time.monotonic()  # the fingerprint has what the import left of its allowance
        devices = sorted(set(pair["device"] for pair in pairs))
        checked = isolation.run({"job": "fingerprint", "devices": devices}, left)
        environment = environment_from(checked, torch)
        environment["import_seconds"] = import_seconds
        absent = absent_devices(checked)
        send({"event": "ready", "protocol": PROTOCOL_VERSION, "environment": environment})
        found = Found()  # each probe's records and kind, as its run on an earlier device found them
        for index, pair in enumerate(pairs, start=request.get("first", 0)):
            send({"event": "start", "index": index})
            alive = functools.partial(send, {"event": "alive", "index": index})
            records = records_of(isolation, pair, absent, timeout, found, alive)
            send({"event": "records", "index": index, "records": records, "ended_at": time.time()})
        send({"event": "done"})
    except ParentGone:
        isolation.remove_scratch()  # nobody reads on: what the running pair started was ended already
    finally:
        isolation.close()
    sys.stderr.flush()
    os._exit(0)  # torch was imported, never used: nothing of it to shut down


def forget_own_folder():
    """Leave this file's folder off sys.path, where running it (or this file) put it: a probe's ``import x`` never
    finds ours."""
    if sys.path and sys.path[0] == os.path.dirname(WORKER_FILE):
        del sys.path[0]


def forks():
    return sys.platform.startswith("linux") and os.environ.get("TORCHMATRIX_WORKER_START") != "spawn"


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        forget_own_folder()
        spawned_child(json.loads(sys.argv[2]), STARTED_WITH)
    else:
        main()
