"""Run probes inside a cell's environment: import torch once, then every (probe, device) pair.

This file runs under the cell's Python (3.6 and newer), with the standard
library and torch only; it never imports torchmatrix. The request arrives as
one JSON line on stdin: {"pairs": [[name, path, device], ...], "first": index}.
The parent keeps stdin open: when it closes (the parent ended, even by
SIGKILL), the worker kills itself and every process its probes started.

Messages to the parent are JSON lines on the original stdout, which is kept
for them alone: whatever probes print, from Python or from C, goes to stderr.

    {"event": "ready", "environment": {..., "import_seconds": s}}
    {"event": "start", "index": i}
    {"event": "record", "index": i, "outcome": ..., "metrics": {...}, "message": ..., "duration": s}
    {"event": "done"}

A worker sends "done" early when a pair left CUDA unusable in it (a
device-side assert poisons the process's CUDA context for good): the parent
starts a new worker for the pairs left, so that they are not charged with an
error that was not theirs.
"""

import faulthandler
import importlib.util
import json
import math
import os
import platform
import re
import signal
import sys
import threading
import time
import traceback

OUTCOMES_A_PROBE_MAY_RETURN = ("pass", "fail")
MAX_MESSAGE = 4000
MAX_METRICS_BYTES = 1 << 20


def main():
    request = json.loads(read_line(0))
    watch_parent(os.dup(0))
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)  # probes and their children read nothing from the parent's pipe
    sys.stdin = open(os.devnull)  # noqa: SIM115 - lives as long as the worker
    channel = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # from here on, fd 1 (print, C stdio) is the log, not the channel
    faulthandler.enable(all_threads=False)  # a segfault leaves its thread's Python stack in the kept log

    def send(message):
        channel.write(json.dumps(message, allow_nan=False) + "\n")
        channel.flush()

    started = time.perf_counter()
    import torch

    environment = fingerprint(torch)
    environment["import_seconds"] = time.perf_counter() - started
    send({"event": "ready", "environment": environment})
    probes = {}
    for index, (name, path, device) in enumerate(request["pairs"], start=request.get("first", 0)):
        send({"event": "start", "index": index})
        started = time.perf_counter()
        record = run_pair(torch, probes, name, path, device)
        record.update({"event": "record", "index": index, "duration": time.perf_counter() - started})
        broke_cuda = device == "cuda" and record["outcome"] == "error" and not cuda_usable(torch)
        if broke_cuda:
            note = " (this left CUDA unusable: the next pairs run in a new worker)"
            record["message"] = tail(record["message"] + note)
        send(record)
        if broke_cuda:
            break
    send({"event": "done"})


def read_line(fd):
    """Read up to the first newline byte by byte, so that nothing after it is consumed."""
    data = b""
    while not data.endswith(b"\n"):
        chunk = os.read(fd, 1)
        if not chunk:
            break
        data += chunk
    return data.decode("utf-8")


def watch_parent(fd):
    """End this worker and its probes' processes when the parent closes the pipe on ``fd`` (it ended)."""

    def watch():
        try:
            while os.read(fd, 4096):
                pass
        except OSError:
            pass
        if hasattr(os, "killpg") and os.getpgrp() == os.getpid():
            os.killpg(os.getpid(), signal.SIGKILL)  # the parent started this worker as a group leader
        os._exit(70)

    thread = threading.Thread(target=watch, name="torchmatrix-watch-parent")
    thread.daemon = True
    thread.start()


def run_pair(torch, probes, name, path, device):
    available, reason = device_available(torch, device)
    if not available:
        return {"outcome": "unavailable", "metrics": {}, "message": reason}
    try:
        if path not in probes:
            probes[path] = load_probe(name, path)
        result = probes[path].run(device)
        if device == "cuda":
            torch.cuda.synchronize()
    except Exception as error:  # a probe's exception is its outcome, not the worker's end
        return {"outcome": "error", "metrics": {"traceback": tail(traceback.format_exc())}, "message": describe(error)}
    return checked(result)


def cuda_usable(torch):
    """Whether CUDA still works in this process: an error like a device-side assert is sticky, others are not."""
    try:
        torch.cuda.synchronize()
    except Exception:
        return False
    return True


def load_probe(name, path):
    spec = importlib.util.spec_from_file_location("torchmatrix_probe_" + name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not callable(getattr(module, "run", None)):
        raise TypeError("probe file {} defines no run(device) function".format(path))
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
    main()
