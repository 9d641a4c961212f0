"""Run probes inside a cell's environment: import torch once, then every (probe, device) pair in a process of its own.

This file runs under the cell's Python (3.6 and newer), with the standard
library and torch only; it never imports torchmatrix.

The request arrives as one JSON line on stdin:

    {"pairs": [pair, ...], "first": index, "timeout": s, "startup": s, "scratch": folder, "seed": n}

where each pair is ``{"name": ..., "path": ..., "device": ..., "kind": ...}``,
its kind ``module`` (a file that defines ``run(device)``), ``script`` (run as
``python script.py`` would run it) or ``pytest`` (tests, with ``"select":
"::test_x"`` or "", and ``"root"``, where pytest runs from).

The pairs' temporary folders are made in ``scratch``, which the parent removes
when the worker has ended (and the worker when the parent is gone).

The parent keeps stdin open: when it closes (the parent ended, even by
SIGKILL, or it asks the worker to stop), the worker kills every process its
pairs started and exits. Messages to the parent are JSON lines on the original
stdout, which is kept for them alone (whatever probes print goes to logs):

    {"event": "ready", "environment": {..., "import_seconds": s}}
    {"event": "start", "index": i}
    {"event": "alive", "index": i}
    {"event": "records", "index": i, "records": [record, ...]}
    {"event": "done"}

with each record ``{"probe": name, "outcome": ..., "metrics": {...},
"message": ..., "duration": s, "read": [path, ...] or null}``: one per pair,
named as its probe, except for pytest tests, which get one per test, named by
its node id. ``read`` lists the files the pair's process imported or opened
for reading outside its environment, the standard library and ``scratch``
(seen by an audit hook, Python 3.8+); null where that is not known
(an older Python, a process that died before it could say). Each test may
run ``timeout`` seconds, so a pair of tests may take longer: "alive" says,
as each test starts and ends, that the worker is not stuck.

Each pair runs in a new process, so that it starts from the state this worker
has right after ``import torch`` (threads, default dtype, grad mode, flags,
environment variables) whatever the pairs before it changed, in an empty
temporary folder of its own that is removed afterwards, with stdin from
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

Elsewhere a pair's process is a new Python running this file (``--child``),
which imports torch again (a second or two per pair): macOS's system
libraries, Metal's included, do not survive a fork without exec, and Windows
has no fork. There a pair's process gets its own process group (POSIX) or is
stopped with ``taskkill /T`` (Windows); a process that left the group, or
whose parent ended first, is not stopped. $TORCHMATRIX_WORKER_START=spawn
chooses this way on Linux too (the tests use it to run it there).
"""

import contextlib
import faulthandler
import functools
import hashlib
import importlib.machinery
import importlib.util
import json
import math
import os
import platform
import random
import re
import runpy
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback

try:
    import ctypes
except ImportError:  # a Python built without it: no subreaper, no parent-death signal
    ctypes = None

OUTCOMES_A_PROBE_MAY_RETURN = ("pass", "fail")
OUTCOMES_A_CHILD_MAY_SEND = ("pass", "fail", "error", "unavailable")
MAX_MESSAGE = 4000
MAX_METRICS_BYTES = 1 << 20
MAX_ANSWER_BYTES = MAX_METRICS_BYTES + (1 << 18)
"""The most a child may send: a record's metrics within their limit, with its message and traceback."""
LOG_TAIL = 2000
"""How much of the end of a crashed pair's log goes into its message (faulthandler's stack is there)."""
KILL_SECONDS = 5.0
"""How long ending a pair's processes may take; a process stuck in the kernel that long is left behind."""
TEMP_PREFIX = "torchmatrix-pair-"
DEVICE_VARIABLE = "TORCHMATRIX_DEVICE"
"""Where a script and tests learn their device; set for every probe."""
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
WORKER_FILE = os.path.abspath(__file__)


class ParentGone(Exception):
    """The parent closed this worker's stdin: it ended, or wants the worker to stop."""


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
    isolation = Forking(scratch, 0, channel.fileno()) if forks() else Spawning(scratch, 0, startup)
    try:
        left = started + startup - time.monotonic()  # the fingerprint has what the import left of its allowance
        devices = sorted(set(pair["device"] for pair in pairs))
        checked = isolation.run({"job": "fingerprint", "devices": devices}, left)
        environment = environment_from(checked, torch)
        environment["import_seconds"] = import_seconds
        absent = absent_devices(checked)
        send({"event": "ready", "environment": environment})
        tests_found = {}  # a pytest probe's tests, as its run on an earlier device found them
        for index, pair in enumerate(pairs, start=request.get("first", 0)):
            send({"event": "start", "index": index})
            alive = functools.partial(send, {"event": "alive", "index": index})
            records = records_of(isolation, pair, absent, timeout, tests_found, alive)
            send({"event": "records", "index": index, "records": records})
        send({"event": "done"})
    except ParentGone:
        isolation.remove_scratch()  # nobody reads on: what the running pair started was ended already
    finally:
        isolation.close()
    sys.stderr.flush()
    os._exit(0)  # torch was imported, never used: nothing of it to shut down


def forget_own_folder():
    """Leave this file's folder off sys.path, where running it put it: a probe's ``import x`` never finds ours."""
    if sys.path and sys.path[0] == os.path.dirname(WORKER_FILE):
        del sys.path[0]


def read_line(fd):
    """Read up to the first newline byte by byte, so that nothing after it is consumed."""
    data = b""
    while not data.endswith(b"\n"):
        chunk = os.read(fd, 1)
        if not chunk:
            break
        data += chunk
    return data


def protocol_channel():
    """A file on a copy of stdout, for messages only; fd 1 (print, C stdio) becomes stderr, the worker's log."""
    channel = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    return channel


def forks():
    return sys.platform.startswith("linux") and os.environ.get("TORCHMATRIX_WORKER_START") != "spawn"


def records_of(isolation, pair, absent, limit, tests_found, alive):
    """Every record of one pair: its probe's, or one per test of pytest tests; each with its duration.

    ``alive`` is called as tests make progress.
    """
    name, device = pair["name"], pair["device"]
    if device in absent:  # no process needed to learn it again
        names = tests_found.get(name) or [name]
        return [dict(unavailable(absent[device]), probe=test, duration=0.0) for test in names]
    if pair["kind"] == "pytest":
        records = records_of_tests(isolation, pair, limit, alive)
        tests_found[name] = [record["probe"] for record in records]
        return records
    began = time.perf_counter()
    ending = isolation.run(dict(pair, job=pair["kind"]), limit)
    if pair["kind"] == "script":
        record = script_record(ending, pair, limit)
    else:
        record = pair_record(ending, name, device, limit)
    return [dict(record, probe=name, duration=time.perf_counter() - began, read=files_read(ending))]


def unavailable(reason):
    return {"outcome": "unavailable", "metrics": {}, "message": reason, "read": []}


def files_read(ending):
    """The files a pair's process said it read; None when it did not say (it died, or its Python has no audit)."""
    answer = parsed(ending.answer) if ending.code == 0 and not ending.timed_out else None
    read = answer.get("read") if answer is not None else None
    if not isinstance(read, list) or not all(isinstance(path, str) for path in read):
        return None
    return read


# --- what a pair's process does -----------------------------------------------------


def child_main(job, answer_fd):
    """Do ``job`` in this new process, write its answer to ``answer_fd`` and end the process; never returns."""
    status, own_pid = 70, os.getpid()
    try:
        import torch

        reads = None if job["job"] == "fingerprint" else FilesRead(job["scratch"])
        answer = perform(torch, job)
        if reads is not None:
            answer["read"] = reads.paths()
        if os.getpid() == own_pid:  # a probe's forked child that returned here is not the pair's process
            write_all(answer_fd, json.dumps(answer, allow_nan=False).encode("utf-8"))
        status = 0
    except SystemExit as exit:  # sys.exit() in a probe ends its process, as os._exit() does
        status = exit_status(exit)
    except Exception as error:  # the worker's own code failed here (a probe's exception is its outcome)
        traceback.print_exc()
        if os.getpid() == own_pid:
            message = "torchmatrix's worker failed in this pair's process: " + describe(error)
            write_all(answer_fd, json.dumps({"outcome": "error", "metrics": {}, "message": message}).encode("utf-8"))
            status = 0
    except BaseException:
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(status)  # no atexit handlers, no torch shutdown: the parent decides what is left


def perform(torch, job):
    if job["job"] == "fingerprint":
        checked = {device: device_available(torch, device) for device in job["devices"]}
        return {"environment": fingerprint(torch), "devices": checked}
    available, reason = device_available(torch, job["device"])
    if not available:
        return unavailable(reason)
    os.environ[DEVICE_VARIABLE] = job["device"]
    if job["device"] == "cpu":
        hide_accelerators(torch)
    seed_generators(torch, job.get("seed", 0))
    sys.meta_path.insert(0, FromSources(excluded_folders(job["scratch"])))
    if job["job"] == "script":
        return run_script(torch, job)
    if job["job"] == "pytest":
        return run_tests(job)
    return run_pair(torch, job["name"], job["path"], job["device"])


def hide_accelerators(torch):
    """Make this process see no CUDA (nor ROCm) device and no MPS: what runs on the cpu pair runs on the cpu.

    CUDA reads the variables when it starts, which it has not in this process (the worker never starts it).
    """
    os.environ["CUDA_VISIBLE_DEVICES"] = ""
    os.environ["HIP_VISIBLE_DEVICES"] = ""
    mps = getattr(torch.backends, "mps", None)
    if mps is not None:
        mps.is_available = lambda: False


def seed_generators(torch, seed):
    """Seed Python's ``random``, torch's generators and NumPy's global one, now or when the pair imports NumPy."""
    random.seed(seed)
    torch.manual_seed(seed)
    if "numpy" in sys.modules:
        seed_numpy(sys.modules["numpy"], seed)
    else:
        sys.meta_path.insert(0, SeedingNumpy(seed))


def seed_numpy(numpy, seed):
    with contextlib.suppress(Exception):  # a NumPy without a global generator is nothing to seed
        numpy.random.seed(seed)


class SeedingNumpy(object):
    """A finder that lets NumPy import as it would, then seeds its global generator."""

    def __init__(self, seed):
        self.seed = seed

    def find_spec(self, name, path=None, target=None):
        if name != "numpy.random":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        execute, seed = spec.loader.exec_module, self.seed

        def exec_module(module):
            execute(module)
            with contextlib.suppress(Exception):
                module.seed(seed)

        spec.loader.exec_module = exec_module
        return spec


class FilesRead(object):
    """The files this process opens for reading or imports from outside the environment, the standard library,
    the worker's scratch folder and torchmatrix's worker: what the pair's outcome may depend on besides its probe.

    Python's audit hooks (3.8+) see every ``open``; every module loaded from a file is added by its file, as an
    import may read bytecode compiled elsewhere instead (and ``sitecustomize`` was imported before this process
    was a pair's). A file is listed by the path it was opened by, links unresolved, so that a link pointed
    elsewhere is a change too; one that was not there is listed as well, since its appearing is one. A file the
    process made or emptied (opened to write, or to append, before it read it) is its own.
    """

    def __init__(self, scratch):
        self.scratch = scratch
        self.reading, self.own = set(), set()
        self.known = hasattr(sys, "addaudithook")
        if self.known:
            sys.addaudithook(self.opened)

    def opened(self, event, arguments):
        if event != "open":
            return
        try:
            path, mode, flags = arguments[:3]
            if isinstance(path, bytes):
                path = os.fsdecode(path)
            if not isinstance(path, str):
                return  # a file descriptor: opened before, by path
            path = os.path.abspath(path)
            if not makes_its_own(mode, flags):
                if path not in self.own:
                    self.reading.add(path)
            elif path not in self.reading:
                self.own.add(path)
        except Exception:  # noqa: S110 - an exception here would be the probe's open's, which it is not
            pass

    def paths(self):
        """Every file read (or looked for and not there), sorted; None where this Python has no audit hooks."""
        if not self.known:
            return None
        found = set(self.reading)
        for module in list(sys.modules.values()):
            where = getattr(module, "__file__", None)
            if isinstance(where, str):
                found.add(os.path.abspath(where))
        excluded = tuple(os.path.join(folder, "") for folder in excluded_folders(self.scratch))
        return sorted(
            path for path in found
            if not is_bytecode(path) and not path.startswith(excluded) and not os.path.isdir(path)
            and not os.path.realpath(path).startswith(excluded)
        )  # fmt: skip


class FromSources(object):
    """A finder that compiles every module outside ``excluded`` (the environment, the standard library) from its
    source, never from bytecode cached before: a source replaced by one of the same size and modification time
    would run as the old one, while the record names the new one."""

    def __init__(self, excluded):
        self.excluded = tuple(os.path.join(folder, "") for folder in excluded)

    def find_spec(self, name, path=None, target=None):
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        loader = getattr(spec, "loader", None)
        if type(loader) is not importlib.machinery.SourceFileLoader or spec.origin.startswith(self.excluded):
            return None  # the next finder finds it as Python would
        spec.loader = SourceOnly(loader.name, loader.path)
        return spec


class SourceOnly(importlib.machinery.SourceFileLoader):
    """A loader that neither reads nor writes cached bytecode (SourceLoader skips both without the source's stats)."""

    def path_stats(self, path):
        raise OSError("compiled from its source every time")


def makes_its_own(mode, flags):
    """Whether an ``open`` with ``mode`` (``open()``'s) or ``flags`` (``os.open``'s) makes or empties the file,
    or only adds to it: what it held before is then none of the reader's business."""
    if isinstance(mode, str):
        return "w" in mode or "x" in mode or ("a" in mode and "+" not in mode)
    access = flags & 3
    return access == os.O_WRONLY or bool(flags & os.O_TRUNC) or bool(flags & getattr(os, "O_EXCL", 0))


def is_bytecode(path):
    """A compiled module: what it holds is its source's, which counts by the module's file."""
    return path.endswith((".pyc", ".pyo"))


def excluded_folders(scratch):
    """Where a pair's process reads nothing that identifies what it ran: what the environment's identity covers,
    the pairs' own folders (in ``scratch``), the worker's, and the kernel's."""
    folders = [sys.prefix, sys.base_prefix, sys.exec_prefix, getattr(sys, "base_exec_prefix", sys.prefix),
               os.path.dirname(WORKER_FILE), scratch, "/proc", "/sys", "/dev"]  # fmt: skip
    prefix = getattr(sys, "pycache_prefix", None)
    given = folders + ([prefix] if prefix else [])
    return sorted(set(given + [os.path.realpath(folder) for folder in given]))


def write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def run_pair(torch, name, path, device):
    try:
        result = load_probe(name, path).run(device)
        if device == "cuda":
            torch.cuda.synchronize()
    # A probe's exception is its outcome, not its process's end; KeyboardInterrupt too: the pair's process has a
    # group of its own, which a Ctrl-C at the terminal never reaches, so only the probe can have raised it.
    except (Exception, KeyboardInterrupt) as error:
        return {"outcome": "error", "metrics": {"traceback": tail(traceback.format_exc())}, "message": describe(error)}
    return checked(result)


def load_probe(name, path):
    module = load_module("torchmatrix_probe_" + name, path)
    if not callable(getattr(module, "run", None)):
        raise TypeError("probe file {} defines no run(device) function".format(path))
    return module


def load_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def checked(result):
    """Turn what a probe returned into a record, or an error record saying what is wrong with it."""
    if not isinstance(result, dict):
        return malformed("run() returned {} instead of a dict".format(type(result).__name__))
    outcome = result.get("outcome")
    if outcome not in OUTCOMES_A_PROBE_MAY_RETURN:
        return malformed("run() returned outcome {!r}; expected 'pass' or 'fail'".format(outcome))
    metrics = result.get("metrics", {})
    if not isinstance(metrics, dict):
        return malformed("run() returned metrics of type {}; expected a dict".format(type(metrics).__name__))
    try:
        metrics = json_safe(metrics)
    except (TypeError, ValueError) as error:
        return malformed("run() returned metrics that are not plain data: {}".format(error))
    size = len(json.dumps(metrics))
    if size > MAX_METRICS_BYTES:
        return malformed(
            "run() returned {:.1f} MB of metrics; the limit is {} MB: store what was checked "
            "(observed, expected, error), not whole tensors".format(size / (1 << 20), MAX_METRICS_BYTES >> 20)
        )
    return {"outcome": outcome, "metrics": metrics, "message": tail(str(result.get("message", "")))}


def malformed(message):
    return {"outcome": "error", "metrics": {}, "message": "malformed result: " + message}


def json_safe(value, depth=0):
    """Plain JSON data; non-finite floats become the strings 'nan', 'inf', '-inf'."""
    if depth > 20:
        raise ValueError("nested too deeply")
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, (list, tuple)):
        return [json_safe(item, depth + 1) for item in value]
    if isinstance(value, dict):
        return {str(key): json_safe(item, depth + 1) for key, item in value.items()}
    raise TypeError("{!r} of type {}".format(value, type(value).__name__)[:200])


def describe(error):
    return tail("{}: {}".format(type(error).__name__, error))


def tail(text):
    return text if len(text) <= MAX_MESSAGE else "…" + text[-MAX_MESSAGE:]


# --- a script, in its pair's process: run as `python script.py` would run it ---------------------


EXIT_SKIP = 125
"""The exit status that says "this does not apply here", as `git bisect run` reads it."""


def run_script(torch, job):
    """Run the script as its own ``__main__``, its stdout going to ``job["output"]``; how it ended.

    As ``python script.py`` would: its folder first on sys.path, its path as
    sys.argv[0], its traceback on stderr. What it prints stays out of the
    answer: the worker reads the output file, even after a crash.
    """
    path = job["path"]
    redirect_stdout(job["output"])
    sys.argv = [path]
    sys.path.insert(0, os.path.dirname(path))
    try:
        runpy.run_path(path, run_name="__main__")
        if job["device"] == "cuda":
            torch.cuda.synchronize()
    except SystemExit as exit:
        answer = exit_answer(exit_status(exit))
        if exit.code is not None and not isinstance(exit.code, int):  # sys.exit("why"): python prints why
            answer["message"] = tail(str(exit.code))
        return answer
    except BaseException as error:  # the script's end, not its process's: anything it raised is its outcome
        return exception_answer(error, path)
    return exit_answer(0)


def redirect_stdout(path):
    """fd 1 (print's and C's stdout) to the file at ``path``; stderr stays the pair's log."""
    sys.stdout.flush()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | getattr(os, "O_BINARY", 0))
    os.dup2(fd, 1)
    os.close(fd)


def exit_status(exit):
    """The exit status ``python`` gives ``sys.exit(code)``: None 0, a number itself, anything else printed and 1."""
    if exit.code is None:
        return 0
    if isinstance(exit.code, int):
        return exit.code & 0xFF
    print(exit.code, file=sys.stderr)
    return 1


def exit_answer(status):
    return {"outcome": exit_outcome(status), "metrics": {"exit_code": status}, "message": ""}


def exit_outcome(status):
    """An exit status as `git bisect run` reads it: 0 good, 125 skip, 1-127 bad; above 127 it gives no verdict."""
    if status == 0:
        return "pass"
    if status == EXIT_SKIP:
        return "unavailable"
    return "fail" if 0 < status < 128 else "error"


def exception_answer(error, path):
    """A script that raised: AssertionError fails, unittest.SkipTest does not apply, anything else is an error."""
    text = script_traceback(path)
    sys.stderr.write(text)  # as python would
    if is_skip(error):
        return {"outcome": "unavailable", "metrics": {}, "message": tail(str(error))}
    outcome = "fail" if isinstance(error, AssertionError) else "error"
    return {"outcome": outcome, "metrics": {"traceback": tail(text)}, "message": describe(error)}


def is_skip(error):
    unittest = sys.modules.get("unittest")  # imported by whatever raised SkipTest
    return unittest is not None and isinstance(error, unittest.SkipTest)


def script_traceback(path):
    """The traceback of the exception being handled from the script's first frame on, as python prints it."""
    kind, error, frames = sys.exc_info()
    while frames is not None and frames.tb_frame.f_code.co_filename != path:
        frames = frames.tb_next  # runpy's and this worker's frames are no part of the script's story
    return "".join(traceback.format_exception(kind, error, frames))


# --- pytest tests, in their pair's process --------------------------------------------------------


PLUGIN_FILE = os.path.join(os.path.dirname(WORKER_FILE), "pytest_plugin.py")


def run_tests(job):
    """Run pytest on ``job["targets"]`` in this process; its plugin writes each test's end to ``job["progress"]``."""
    try:
        import pytest
    except ImportError as error:
        return {"outcome": "error", "metrics": {}, "message": "pytest does not import in this cell: {}".format(error)}
    plugin = load_module("torchmatrix_pytest_plugin", PLUGIN_FILE)
    if getattr(sys, "pycache_prefix", None) is None:
        sys.dont_write_bytecode = True  # no __pycache__ in the tests' folders (pytest's rewritten asserts included)
    arguments = ["-p", "no:cacheprovider", "--continue-on-collection-errors", "--rootdir", job["root"]]
    code = pytest.main(arguments + job["targets"], plugins=[plugin, plugin.Progress(job["progress"])])
    return {"pytest_exit": int(code)}


# --- what the worker makes of a pair's process ----------------------------------------------------


class Ending(object):
    """How a pair's process ended: its exit code (negative: the signal), what it sent, its log's tail.

    ``sides``: what it wrote to its side files (a script's output, the tests' progress), by name.
    """

    def __init__(self, code, answer, timed_out, log_tail, sides=None):
        self.code = code
        self.answer = answer
        self.timed_out = timed_out
        self.log_tail = log_tail
        self.sides = sides or {}


def pair_record(ending, name, device, limit):
    if ending.timed_out:
        return {"outcome": "timeout", "metrics": {"limit": limit}, "message": "stopped after {:g} s".format(limit)}
    if len(ending.answer) > MAX_ANSWER_BYTES:  # then the worker ended it: its exit code says nothing
        return malformed("the probe's process sent more than {} bytes".format(MAX_ANSWER_BYTES))
    if ending.code != 0 or not ending.answer.strip():
        how = exit_description(ending.code) + (" before it answered" if ending.code == 0 else "")
        message = "the probe's process {} while running {} on {}".format(how, name, device)
        if ending.log_tail:
            message += ":\n" + ending.log_tail
        return {"outcome": "crash", "metrics": {"exit_code": ending.code}, "message": message}
    answer = parsed(ending.answer)
    if answer is None:
        return malformed("the probe's process sent something that is not a record")
    return pair_answer(answer)


MAX_OUTPUT_BYTES = 64 << 10
"""How much of a script's output its record keeps to be read: the end of it. Its digest covers the whole."""
MESSAGE_LINES = 3
"""How many of the last lines a script printed make its record's message."""
OUTPUT_CHUNK = 1 << 20
"""How much of a line of output is normalised at a time: a rule's match cut by a chunk's end stays as printed."""
PER_PROCESS = (
    ("an object's address in its default repr", rb"(?<= at 0x)[0-9a-fA-F]+(?=>)", b"\xe2\x80\xa6"),
    (
        "the random part of the names of a pair's folders",
        rb"(?<=torchmatrix-worker-)[a-z0-9_]{8}(?![\w-])|(?<=torchmatrix-pair-)[a-z0-9_]{8}(?![\w-])",
        b"<tmp>",
    ),
)
"""What in a script's output differs from one process to the next, and what replaces it
(torchmatrix/printed.py documents each rule, and what it must not touch)."""
TORCH_VERSION = b"<torch version>"


def script_record(ending, pair, limit):
    """A script's record, from how it ended, with the lines it printed (the end of them) in its metrics."""
    ended_itself = ending.code is not None and ending.code >= 0 and not ending.timed_out
    if ended_itself and not ending.answer.strip():  # it left (os._exit) before the worker's code could answer
        record = exit_answer(ending.code)
    else:
        record = pair_record(ending, pair["name"], pair["device"], limit)
    printed = ending.sides.get("output") or {"end": b"", "sha256": hashlib.sha256().hexdigest(), "bytes": 0}
    lines, cut = printed_lines(printed["end"])
    metrics = dict(record["metrics"], output=lines, output_sha256=printed["sha256"], output_bytes=printed["bytes"])
    if cut:
        metrics["output_truncated"] = True
    if record["message"] and record["outcome"] not in ("crash", "timeout"):  # what it raised, or exited with
        said = normalised_output(record["message"].encode("utf-8", "replace"), output_rules())
        metrics["raised"] = said.decode("utf-8", "replace")
    message = record["message"] or tail("\n".join(line.rstrip() for line in lines[-MESSAGE_LINES:]).strip())
    if not message and metrics.get("exit_code"):
        message = "exited with code {}".format(metrics["exit_code"])
    return dict(record, metrics=metrics, message=message)


def printed_lines(printed):
    """The lines of a script's output that its record keeps (those of its end), and whether any were left out.

    Where the output was cut, the first line kept is the end of one, and starts with "…".
    """
    cut = len(printed) > MAX_OUTPUT_BYTES
    lines = printed[-MAX_OUTPUT_BYTES:].decode("utf-8", "replace").splitlines()
    if cut and lines:
        lines[0] = "\u2026" + lines[0]
    return lines, cut


def output_rules(versions=None):
    """The rules a script's output is normalised by: PER_PROCESS, then the cell's torch version (``versions``:
    the one this worker imported) as <torch version>, the longest first (``1.12.1+cu102`` before ``1.12.1``)."""
    if versions is None:
        torch = sys.modules.get("torch")
        version = str(getattr(torch, "__version__", "") or "")
        versions = [version, version.split("+")[0]]
    rules = [(re.compile(pattern), replacement) for _, pattern, replacement in PER_PROCESS]
    for version in sorted(set(v for v in versions if v), key=len, reverse=True):
        # not a part of another number: 1.12.1 is not in 11.12.1, 1.12.10 or 1.12.1.2
        pattern = rb"(?<![\w.+])" + re.escape(version.encode("utf-8")) + rb"(?![\w+]|\.\d)"
        rules.append((re.compile(pattern), TORCH_VERSION))
    return rules


def normalised_output(data, rules):
    """``data``, bytes a script printed, with each of ``rules`` (:func:`output_rules`) applied in turn."""
    for pattern, replacement in rules:
        data = pattern.sub(replacement, data)
    return data


def read_output(printed):
    """A script's output, from the file ``printed``, normalised: the sha256 of the whole, its size as printed, and its
    end (one byte more than a record keeps, which tells that it was cut)."""
    rules = output_rules()
    digest, size, end = hashlib.sha256(), 0, bytearray()
    while True:
        chunk = printed.readline(OUTPUT_CHUNK)
        if not chunk:
            break
        size += len(chunk)
        chunk = normalised_output(chunk, rules)
        digest.update(chunk)
        end += chunk
        if len(end) > 2 * (MAX_OUTPUT_BYTES + 1):
            del end[: -(MAX_OUTPUT_BYTES + 1)]
    return {"end": bytes(end[-(MAX_OUTPUT_BYTES + 1) :]), "sha256": digest.hexdigest(), "bytes": size}


def records_of_tests(isolation, pair, limit, alive):
    """One record per test of a pytest pair, each test within ``limit`` seconds.

    A test that kills or hangs its process gets ``crash`` or ``timeout``, and
    pytest runs again, in a new process, on the tests it had not reached.
    Every record gets what all of the pair's processes read: tests share them.
    """
    read = []
    records = run_tests_until_done(isolation, pair, limit, alive, read)
    return [dict(record, read=None if None in read else sorted(set(path for paths in read for path in paths)))
            for record in records]  # fmt: skip


def run_tests_until_done(isolation, pair, limit, alive, read):
    """The records of :func:`records_of_tests`; what each process read is appended to ``read``."""
    records, expected = [], None
    targets = [pair["path"] + pair.get("select", "")]
    while True:
        alive()
        ending = isolation.run(dict(pair, job="pytest", targets=targets), limit, alive)
        read.append(files_read(ending))
        events = ProgressOfTests(ending.sides.get("progress", b""))
        records += events.ended
        expected = events.collected if events.collected is not None else expected
        done = set(record["probe"] for record in records)
        left = [test for test in expected or () if test not in done and test != events.running]
        answer = parsed(ending.answer) if ending.code == 0 and not ending.timed_out else None
        if answer is not None:  # pytest returned, or never ran (no such device, no pytest)
            if not records:
                return [dict(tests_ended(answer, ending, pair["name"]), probe=pair["name"], duration=0.0)]
            return records + [dict(not_reached(answer), probe=test, duration=0.0) for test in left]
        fate = pair_record(ending, events.running or pair["name"], pair["device"], limit)
        if events.running is None and not events.ended:  # it got nowhere: the tests left share its fate
            return records + [dict(fate, probe=test, duration=0.0) for test in left or [pair["name"]]]
        if events.running is not None:
            records.append(dict(fate, probe=events.running, duration=events.running_for()))
        if not left:
            return records
        targets = [os.path.join(pair["root"], test) for test in left]


def tests_ended(answer, ending, name):
    """The record of a pytest run of ``name`` that ended without a test's record: why it ran none."""
    if "pytest_exit" not in answer:
        return pair_answer(answer)
    code = answer["pytest_exit"]
    if code == 5:
        why = ("collected no tests in {} (it collects test_*.py files and their test_* functions; "
               "list run() probes and scripts one by one)").format(name)  # fmt: skip
    else:
        why = "exited with code {} before running a test".format(code)
    log = ending.log_tail.strip()
    return {"outcome": "error", "metrics": {"pytest_exit": code},
            "message": "pytest " + why + (":\n" + log if log else "")}  # fmt: skip


def not_reached(answer):
    """The record of a test pytest collected and returned without running (``-x`` in its options, a plugin)."""
    code = answer.get("pytest_exit")
    return {"outcome": "error", "metrics": {"pytest_exit": code},
            "message": "pytest ended (exit code {}) without running it".format(code)}  # fmt: skip


class ProgressOfTests(object):
    """What a pytest run's plugin wrote (pytest_plugin.py): the tests collected, those that ended, the one running."""

    def __init__(self, data):
        self.collected = None
        self.ended = []
        self.running = None
        self.started_at = None
        for line in data.decode("utf-8", "replace").splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue  # a line cut short by the process's end
            if not isinstance(event, dict):
                continue
            if isinstance(event.get("collected"), list):
                self.collected = [str(test) for test in event["collected"]]
            elif "start" in event:
                self.running, self.started_at = str(event["start"]), event.get("at")
            elif "test" in event:
                self.ended.append(record_of_test(event))
                if self.ended[-1]["probe"] == self.running:
                    self.running = None

    def running_for(self):
        started = self.started_at if isinstance(self.started_at, (int, float)) else time.time()
        return max(0.0, time.time() - started)


def record_of_test(event):
    duration = event.get("duration")
    seconds = float(duration) if isinstance(duration, (int, float)) else 0.0
    return dict(pair_answer(event), probe=str(event["test"]), duration=seconds)


def pair_answer(answer):
    """A record as a pair's process sent it, checked: a malformed one is an error saying so."""
    if not (
        answer.get("outcome") in OUTCOMES_A_CHILD_MAY_SEND
        and isinstance(answer.get("metrics"), dict)
        and isinstance(answer.get("message"), str)
    ):
        return malformed("the probe's process sent something that is not a record")
    return {"outcome": answer["outcome"], "metrics": answer["metrics"], "message": tail(answer["message"])}


def environment_from(ending, torch):
    """The fingerprint a child sent; without one, what the worker can tell without calling into torch."""
    answer = parsed(ending.answer)
    if ending.code == 0 and answer is not None and isinstance(answer.get("environment"), dict):
        return answer["environment"]
    why = "stopped at the time limit" if ending.timed_out else exit_description(ending.code)
    return {
        "torch": torch.__version__,
        "python": platform.python_version(),
        "python_executable": sys.executable,
        "fingerprint_error": "the fingerprint's process {}{}".format(
            why, ":\n" + ending.log_tail if ending.log_tail else ""
        ),
    }


def absent_devices(ending):
    """The devices the fingerprint's process found missing, each with why; {} if it could not tell."""
    answer = parsed(ending.answer) if ending.code == 0 else None
    checked = answer.get("devices") if answer is not None else None
    if not isinstance(checked, dict):
        return {}
    return {device: str(why) for device, (available, why) in checked.items() if not available}


def parsed(answer):
    """The child's answer as a dict; None if it sent none, too much, or something else."""
    if not answer or len(answer) > MAX_ANSWER_BYTES:
        return None
    try:
        value = json.loads(answer.decode("utf-8"))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def exit_description(code):
    if code is None:
        return "could not be stopped"
    if code < 0:
        try:
            return "died with {}".format(signal.Signals(-code).name)
        except ValueError:
            return "died with signal {}".format(-code)
    return "exited with code {}".format(code)


def exit_code(status):
    """waitpid's status as subprocess reports it: the exit code, or minus the signal that ended it."""
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


# --- a fresh folder and log for each pair, whichever way its process starts -----------------------


class Isolation(object):
    """Runs each job in a new process, in an empty temporary folder, with its output in a log of its own."""

    def __init__(self, scratch):
        self.scratch = scratch
        self.pid = os.getpid()
        self.subreaper = prctl(PR_SET_CHILD_SUBREAPER, 1)

    def run(self, job, limit, progressed=None):
        """Do ``job`` in a new process, stopped if it runs longer than ``limit`` seconds; an Ending.

        Tests get ``limit`` seconds each, and ``progressed`` is called as each starts and ends.
        Raises ParentGone if the parent went away meanwhile, after ending the job's processes.
        """
        folder = tempfile.mkdtemp(prefix=TEMP_PREFIX, dir=self.scratch)
        log = tempfile.TemporaryFile()  # noqa: SIM115 - closed below, after the whole job
        sides = self.side_files(job)
        job = dict(job, scratch=self.scratch, **sides)
        try:
            deadline = Deadline(limit, sides.get("progress"), progressed)
            code, answer, timed_out = self.start_and_wait(job, folder, log, deadline)
            log_tail = keep_log(log, job)
            written = dict((name, read_side(name, path)) for name, path in sides.items())
            return Ending(code, answer, timed_out, log_tail, written)
        finally:
            log.close()
            shutil.rmtree(folder, ignore_errors=True)
            for path in sides.values():
                with contextlib.suppress(OSError):
                    os.unlink(path)

    def side_files(self, job):
        """The file a job of its kind writes besides its answer, by name: beside its folder, which it may empty."""
        name = SIDE_FILES.get(job["job"])
        if name is None:
            return {}
        fd, path = tempfile.mkstemp(prefix=name + "-", dir=self.scratch)
        os.close(fd)
        return {name: path}

    def kill_children(self, deadline):
        """Kill and reap every child the worker still has: with the subreaper, whatever a pair left running."""
        while time.monotonic() < deadline:
            children = own_children(self.pid)
            if not children:
                return
            for child in children:
                with contextlib.suppress(OSError):
                    os.kill(child, signal.SIGKILL)  # a child: until it is reaped, its pid stays its own
            for child in children:
                self.reap(child, deadline)

    def reap(self, pid, deadline):
        """Wait for the child ``pid`` (killed) to end until ``deadline``; its status, None if it did not end."""
        while True:
            try:
                done, status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                return None
            if done:
                return status
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self.pause(min(left, 0.1))

    def pause(self, seconds):
        time.sleep(min(seconds, 0.01))

    def close(self):
        self.kill_children(time.monotonic() + KILL_SECONDS)

    def remove_scratch(self):
        if self.scratch != tempfile.gettempdir():  # a folder of the parent's, not the system's
            shutil.rmtree(self.scratch, ignore_errors=True)


SIDE_FILES = {"script": "output", "pytest": "progress"}
"""The side file of each kind of job: a script's stdout, the tests' progress (pytest_plugin.py)."""


def keep_log(log, job):
    """Append the job's log, and a script's output, to the worker's (stderr); the log's end, for a crash's message."""
    what = "the fingerprint" if job["job"] == "fingerprint" else "{} on {}".format(job["name"], job["device"])
    size = log.seek(0, os.SEEK_END)
    if size:
        log.seek(0)
        append_to_log("the output of " + what, log)
    if job.get("output") and os.path.getsize(job["output"]):
        with open(job["output"], "rb") as printed:
            append_to_log("what {} printed".format(what), printed)
    log.seek(max(0, size - LOG_TAIL))
    end = log.read().decode("utf-8", "replace").strip()
    return ("…" + end) if size > LOG_TAIL else end


def append_to_log(title, source):
    sys.stderr.flush()
    out = sys.stderr.buffer
    out.write("--- torchmatrix: {} ---\n".format(title).encode("utf-8"))
    shutil.copyfileobj(source, out)
    out.write(b"\n")
    out.flush()


def read_side(name, path):
    """What a job wrote to its side file: a script's output as :func:`read_output` reads it; the tests' progress."""
    with open(path, "rb") as side:
        return read_output(side) if name == "output" else side.read()


class Deadline(object):
    """When a job's time is up: ``limit`` seconds after it starts or, for tests, after their latest start or end.

    Tests share their process, so each gets the limit afresh: the plugin's
    progress file grows as each starts and ends, and the deadline moves then.
    """

    POLL_SECONDS = 0.25
    """How often a progress file is looked at."""

    def __init__(self, limit, progress=None, progressed=None):
        self.limit = limit
        self.progress = progress
        self.progressed = progressed or (lambda: None)
        self.seen = 0
        self.start()

    def start(self):
        self.at = time.monotonic() + self.limit

    def remaining(self):
        """Seconds until the deadline (none left: at most 0), moved first if the tests made progress."""
        if self.progress is not None:
            size = size_of(self.progress)
            if size != self.seen:
                self.seen = size
                self.start()
                self.progressed()
        return self.at - time.monotonic()

    def pause(self, remaining):
        """How long to wait, with ``remaining`` seconds left, before asking again."""
        return min(remaining, self.POLL_SECONDS) if self.progress is not None else remaining


def own_children(pid):
    """The pids whose parent is ``pid`` ([] where there is no /proc).

    Its threads' lists of children cost microseconds; a kernel without them
    (CONFIG_PROC_CHILDREN) has every process's stat file read instead.
    """
    try:
        children = []
        for task in os.listdir("/proc/{}/task".format(pid)):
            with open("/proc/{}/task/{}/children".format(pid, task)) as listed:
                children += [int(child) for child in listed.read().split()]
        return children
    except OSError:
        return children_by_scan(pid)


def children_by_scan(pid):
    """The pids whose parent is ``pid``, from every /proc/<pid>/stat ([] where there is no /proc)."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    parent = str(pid).encode()
    children = []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open("/proc/{}/stat".format(name), "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[-1].split()  # the name in parentheses may hold anything
        except OSError:
            continue
        if len(fields) > 1 and fields[1] == parent:
            children.append(int(name))
    return children


def prctl(option, value):
    """Linux's prctl(option, value); whether it worked (False elsewhere)."""
    if ctypes is None or not sys.platform.startswith("linux"):
        return False
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


# --- Linux: fork --------------------------------------------------------------------


class Forking(Isolation):
    """Each job in a child forked from this worker, which waits on it, its own stdin and SIGCHLD alone.

    The worker starts no thread (a fork in a process with threads can deadlock
    its child): one select() watches the child's answer, the child's end (a
    SIGCHLD handler wakes it) and the parent's end (stdin closes).
    """

    def __init__(self, scratch, parent_fd, channel_fd):
        Isolation.__init__(self, scratch)
        self.parent_fd = parent_fd
        self.wakeup, wakeup_writer = os.pipe()
        os.set_blocking(self.wakeup, False)
        os.set_blocking(wakeup_writer, False)
        signal.signal(signal.SIGCHLD, lambda signum, frame: None)  # a handler, so that the signal reaches the fd
        signal.set_wakeup_fd(wakeup_writer)
        self.private = [channel_fd, self.wakeup, wakeup_writer]
        """What a child must not keep: the parent's channel, and the worker's own wake-up pipe."""

    def start_and_wait(self, job, folder, log, deadline):
        deadline.start()
        reader, writer = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                self.enter_child(folder, log.fileno(), [reader] + self.private)
                child_main(job, writer)
            finally:  # never back into the worker's code: its cleanup is the worker's, not this child's
                os._exit(70)
        os.close(writer)
        os.set_blocking(reader, False)
        try:
            with contextlib.suppress(OSError):
                os.setpgid(pid, pid)  # as the child does itself: whichever runs first, it leads its own group
            answer, timed_out = self.wait(pid, reader, deadline)
        finally:
            code = self.end(pid)
            os.close(reader)
        return code, answer, timed_out

    def enter_child(self, folder, log_fd, inherited):
        """Make this forked child a pair's process: own group, own folder, own log, nothing of the parent's."""
        os.setpgid(0, 0)
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        if prctl(PR_SET_PDEATHSIG, signal.SIGKILL) and os.getppid() != self.pid:
            os._exit(70)  # the worker died before the signal was armed
        for fd in inherited:
            os.close(fd)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)  # stdin was the parent's pipe: the worker's alone
        os.close(devnull)
        sys.stdin = open(os.devnull)  # noqa: SIM115 - lives as long as the process
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        faulthandler.enable(all_threads=False)  # its stack on a crash, into the log
        os.chdir(folder)

    def wait(self, pid, reader, deadline):
        """What the child sends on ``reader`` until it ends or ``deadline`` passes; (answer, timed out).

        A probe's own forked children inherit the pipe, so its end of file does not
        mean the child ended: the child's exit (SIGCHLD) does.
        """
        answer = bytearray()
        watched = [self.parent_fd, self.wakeup, reader]
        while not ended(pid):
            left = deadline.remaining()
            if left <= 0:
                return bytes(answer), True
            readable = select.select(watched, [], [], deadline.pause(left))[0]
            if self.parent_fd in readable and not os.read(self.parent_fd, 4096):
                raise ParentGone()
            if self.wakeup in readable:
                drain(self.wakeup)
            if reader in readable:
                if not read_into(answer, reader):
                    watched.remove(reader)  # from here on, the child's end is seen by SIGCHLD alone
                elif len(answer) > MAX_ANSWER_BYTES:
                    return bytes(answer), False  # more than any record: the pair is over
        read_into(answer, reader)  # what it wrote just before it ended
        return bytes(answer), False

    def end(self, pid):
        """Kill what is left of a job's processes, reap its own; its exit code (None if it could not be stopped)."""
        deadline = time.monotonic() + KILL_SECONDS
        for kill in (os.killpg, os.kill):  # unreaped, its pid is still its group's id: no stranger shares it
            with contextlib.suppress(OSError):
                kill(pid, signal.SIGKILL)
        status = self.reap(pid, deadline)
        self.kill_children(deadline)
        return None if status is None else exit_code(status)

    def pause(self, seconds):
        select.select([self.wakeup], [], [], seconds)  # until a child ends, or ``seconds``
        drain(self.wakeup)


def ended(pid):
    """Whether the child ``pid`` ended, leaving it unreaped: its pid, and so its group's id, stay taken."""
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


def read_into(buffer, fd):
    """Read what ``fd`` holds now into ``buffer``, up to just past the limit; False at its end of file."""
    while len(buffer) <= MAX_ANSWER_BYTES:
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return True
        if not chunk:
            return False
        buffer += chunk
    return True


def drain(fd):
    try:
        while os.read(fd, 4096):
            pass
    except BlockingIOError:
        pass


# --- elsewhere: a new Python per job ------------------------------------------------------


class Spawning(Isolation):
    """Each job in a new Python running this file, which imports torch again: no fork, nothing inherited.

    A job's time limit starts once its process has imported torch (which may take
    up to ``startup`` seconds), as it would in a forked child. A thread waits for
    the parent's end (stdin closes), then ends the running job's processes and the worker.
    """

    def __init__(self, scratch, parent_fd, startup):
        Isolation.__init__(self, scratch)
        self.startup = startup
        self.process = None
        watcher = threading.Thread(target=self.watch_parent, args=(parent_fd,), name="torchmatrix-watch-parent")
        watcher.daemon = True
        watcher.start()

    def watch_parent(self, fd):
        try:
            while os.read(fd, 4096):
                pass
        except OSError:
            pass
        process = self.process
        if process is not None:
            self.end(process)
        self.remove_scratch()
        os._exit(70)

    def start_and_wait(self, job, folder, log, deadline):
        answer_fd, answer_path = tempfile.mkstemp(prefix="answer-", dir=self.scratch)  # beside the pair's folder
        os.close(answer_fd)
        try:
            self.process = subprocess.Popen(
                child_command(dict(job, answer=answer_path)),
                cwd=folder, stdin=subprocess.DEVNULL, stdout=log, stderr=log, **own_process_group()
            )  # fmt: skip
            timed_out = not self.imported(self.process, answer_path) or not ended_within(self.process, deadline)
            self.end(self.process)
            return self.process.returncode, read_answer(answer_path), timed_out
        finally:
            if self.process is not None and self.process.returncode is None:  # the parent left while it waited
                self.end(self.process)
            self.process = None
            with contextlib.suppress(OSError):
                os.unlink(answer_path)

    def imported(self, process, answer_path):
        """Whether ``process`` imported torch within the startup allowance (or ended before)."""
        deadline = time.monotonic() + self.startup
        while not size_of(answer_path):  # it writes a newline once torch is imported
            if process.poll() is not None:
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)
        return True

    def end(self, process):
        """Kill the job's process and what it started, as far as this platform can tell, and reap it."""
        if sys.platform == "win32":
            if process.poll() is None:
                subprocess.call(
                    ["taskkill", "/F", "/T", "/PID", str(process.pid)],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
        else:
            with contextlib.suppress(OSError):
                os.killpg(process.pid, signal.SIGKILL)  # its own group: start_new_session
        if process.poll() is None:
            process.kill()
        process.wait()
        if self.subreaper:
            self.kill_children(time.monotonic() + KILL_SECONDS)


def size_of(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def read_answer(path):
    """What a job's process wrote to its answer file; nothing if a probe deleted the file."""
    try:
        with open(path, "rb") as answer:
            return answer.read(MAX_ANSWER_BYTES + 1)
    except OSError:
        return b""


def ended_within(process, deadline):
    """Whether ``process`` ended before ``deadline``, which starts now (torch is imported)."""
    deadline.start()
    while True:
        left = deadline.remaining()
        if left <= 0:
            return False
        try:
            process.wait(timeout=deadline.pause(left))
            return True
        except subprocess.TimeoutExpired:
            pass


def child_command(job):
    """This file run as a job's process, with this Python's -X options (pycache_prefix).

    Not ``-I``, which would ignore PYTHONHASHSEED: the environment is the worker's, which the parent built.
    """
    options = []
    for key, value in sys._xoptions.items():
        options += ["-X", key if value is True else "{}={}".format(key, value)]
    return [sys.executable, "-s", "-u"] + options + [WORKER_FILE, "--child", json.dumps(job)]


def own_process_group():
    if sys.platform == "win32":
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}


def spawned_child(job):
    """A job's process started by Spawning: its folder, stdin and log are set; its answer goes to a file.

    A newline written first tells the parent that torch is imported (JSON ignores it).
    """
    faulthandler.enable(all_threads=False)
    answer_fd = os.open(job["answer"], os.O_WRONLY | os.O_TRUNC | getattr(os, "O_BINARY", 0))
    import torch  # noqa: F401 - the import child_main then finds done

    write_all(answer_fd, b"\n")
    child_main(job, answer_fd)


# --- the fingerprint (in a job's process) ---------------------------------------------


def device_available(torch, device):
    if device == "cpu":
        return True, ""
    if device == "cuda":
        if torch.version.cuda is None and getattr(torch.version, "hip", None) is None:
            return False, "this torch build has no CUDA support"
        if not torch.cuda.is_available():
            return False, "torch has CUDA support but this machine has no usable CUDA device"
        return True, ""
    if device == "mps":
        backend = getattr(torch.backends, "mps", None)
        if backend is None:
            return False, "torch {} has no MPS backend (added in 1.12)".format(torch.__version__)
        if not backend.is_built():
            return False, "this torch build has no MPS support"
        if not backend.is_available():
            return False, "this machine has no MPS device"
        return True, ""
    return False, "unknown device {!r}".format(device)


def fingerprint(torch):
    """What identifies the build and the machine, in the spirit of torch.utils.collect_env."""
    config = safe(lambda: torch.__config__.show(), "")
    cudnn = safe(lambda: torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None)
    return {
        "torch": torch.__version__,
        "git_version": getattr(torch.version, "git_version", None),
        "cuda": torch.version.cuda,
        "hip": getattr(torch.version, "hip", None),
        "cudnn": cudnn,
        "debug": getattr(torch.version, "debug", None),
        "blas": config_value(config, r"BLAS_INFO=(\w+)"),
        "lapack": config_value(config, r"LAPACK_INFO=(\w+)"),
        "cpu_capability": safe(lambda: torch.backends.cpu.get_cpu_capability())
        or config_value(config, r"CPU capability usage: (\w+)"),
        "num_threads": torch.get_num_threads(),
        "numpy": safe(lambda: __import__("numpy").__version__),
        "python": platform.python_version(),
        "python_executable": sys.executable,
        "os": platform.platform(),
        "machine": platform.machine(),
        "devices": device_names(torch),
    }


def device_names(torch):
    names = {"cpu": cpu_name()}
    if safe(lambda: torch.cuda.is_available(), False):
        names["cuda"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    if safe(lambda: torch.backends.mps.is_available(), False):
        names["mps"] = "Apple MPS"
    return names


def cpu_name():
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def config_value(config, pattern):
    match = re.search(pattern, config)
    return match.group(1) if match else None


def safe(compute, default=None):
    try:
        return compute()
    except Exception:
        return default


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        forget_own_folder()
        spawned_child(json.loads(sys.argv[2]))
    else:
        main()
