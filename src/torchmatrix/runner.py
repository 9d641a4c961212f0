"""Run every (probe, device) pair of a cell in worker processes of the cell's Python.

One worker imports torch once and runs the pairs in order, announcing each. If
it dies or a pair runs past the time limit, that pair is recorded as ``crash``
or ``timeout`` and a new worker goes on with the rest.

A worker runs in its own process group, so that stopping it stops whatever its
probes started too; and it ends itself, group and all, when this process ends
(its stdin, which this process holds open, reaches end of file): no probe
outlives the run, even when nox is killed with SIGKILL.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from .core import PROBE_OPTIONS_VARIABLE, Outcome, Pair, Record

WORKER = Path(__file__).with_name("envside") / "worker.py"
STDERR_TAIL = 2000
STARTUP_SECONDS = 300.0
"""The least time a worker gets to import torch, whatever the per-pair limit: a cold import can take minutes."""
POLL_SECONDS = 0.5
"""How often a quiet worker is checked for having died (its pipes may outlive it in a forked child)."""


@dataclass(frozen=True)
class CellRun:
    environment: dict[str, Any]
    records: tuple[Record, ...]
    import_failure: str = ""
    """Why ``import torch`` failed in the cell's environment (then no pair ran and there are no records)."""


Listener = Callable[[str, Pair, "Record | None"], None]
"""Called with ("start", pair, None) before a pair runs and ("record", pair, record) after."""


def run_cell(
    python: str,
    pairs: Sequence[Pair],
    timeout: float,
    listener: Listener | None = None,
    pycache_prefix: Path | None = None,
) -> CellRun:
    """Run ``pairs`` under ``python``; every pair gets exactly one record, whatever happens.

    ``pycache_prefix`` is where the worker's Python keeps the bytecode it compiles
    (``-X pycache_prefix``, Python 3.8+; older ones keep it beside the sources).
    Kept outside the environment, it survives the environment's rebuild, so the
    first ``import torch`` in a rebuilt environment does not compile torch again.
    """
    listener = listener or (lambda *_: None)
    records: list[Record] = []
    environment: dict[str, Any] = {}
    while len(records) < len(pairs):
        first = len(records)
        with _Worker(python, pairs, first, pycache_prefix) as worker:
            session = worker.follow(timeout, listener)
        records += session.records
        environment = environment or session.environment
        if not session.records:
            failure = session.failure or "the worker ended without running any probe"
            if not environment:  # torch never imported: the environment is unusable, no probe can run
                return CellRun({}, (), import_failure=failure)
            # A later worker died before its first pair: the rest share its fate rather than loop.
            for pair in pairs[first:]:
                record = Record(pair.probe.name, pair.device, session.failure_outcome, {}, failure, 0.0)
                listener("record", pair, record)
                records.append(record)
    return CellRun(environment, tuple(records))


@dataclass
class _WorkerSession:
    records: list[Record]
    environment: dict[str, Any]
    failure: str = ""
    failure_outcome: Outcome = Outcome.CRASH


class _Worker:
    """One worker process: started on enter, killed with its children on exit."""

    def __init__(self, python: str, pairs: Sequence[Pair], first: int, pycache_prefix: Path | None) -> None:
        self.pairs = pairs
        self.first = first
        self.stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - closed in __exit__
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        request = {
            "pairs": [[pair.probe.name, str(pair.probe.path), pair.device] for pair in pairs[first:]],
            "first": first,
        }
        # -I: none of the user's PYTHON* variables (PYTHONPATH, PYTHONDONTWRITEBYTECODE) reach the cell.
        options = ["-X", f"pycache_prefix={pycache_prefix}"] if pycache_prefix else []
        self.process = subprocess.Popen(
            [python, "-I", "-u", *options, str(WORKER)],
            env=_worker_environment(pairs),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            **_own_process_group(),
        )
        assert self.process.stdin is not None
        try:
            # One line; stdin then stays open: its end tells the worker that this process is gone.
            self.process.stdin.write(json.dumps(request).encode() + b"\n")
            self.process.stdin.flush()
        except OSError:
            pass  # it died at once; follow() reports how
        threading.Thread(target=self._read, daemon=True).start()

    def __enter__(self) -> _Worker:
        return self

    def __exit__(self, *_exc: object) -> None:
        _kill_tree(self.process)
        self.process.wait()
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        self.stderr.close()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def follow(self, timeout: float, listener: Listener) -> _WorkerSession:
        """Read the worker's messages until it is done, dies, or overruns ``timeout`` on one pair."""
        session = _WorkerSession([], {})
        running: int | None = None
        limit = max(timeout, STARTUP_SECONDS)  # until the first pair starts, the limit bounds `import torch`
        started = time.monotonic()
        deadline = started + limit
        died_at: float | None = None
        while True:
            now = time.monotonic()
            if now >= deadline:
                self._overran(session, running, limit, started, listener)
                return session
            if died_at is None and self.process.poll() is not None:
                died_at = now
            if died_at is not None and now - died_at > POLL_SECONDS:
                # Dead, yet its stdout is still open: a child it forked holds it. What it sent has been read.
                self._died(session, running, started, listener)
                return session
            try:
                line = self.lines.get(timeout=min(POLL_SECONDS, deadline - now))
            except queue.Empty:
                continue
            if line is None:
                self._died(session, running, started, listener)
                return session
            message = _parse(line)
            event = message.get("event")
            if event == "ready":
                session.environment = message.get("environment") or {}
            elif event == "start" and message.get("index") == self.first + len(session.records):
                running = message["index"]
                limit = timeout
                started = time.monotonic()
                deadline = started + limit
                listener("start", self.pairs[running], None)
            elif event == "record" and running is not None and message.get("index") == running:
                record = _record(self.pairs[running], message)
                session.records.append(record)
                listener("record", self.pairs[running], record)
                running = None
            elif event == "done":
                return session

    def _overran(
        self, session: _WorkerSession, running: int | None, limit: float, started: float, listener: Listener
    ) -> None:
        _kill_tree(self.process)
        if running is None:
            session.failure = f"the worker did not start within {limit:g} s (import torch hung?)"
            session.failure_outcome = Outcome.TIMEOUT
            return
        pair = self.pairs[running]
        record = Record(
            pair.probe.name, pair.device, Outcome.TIMEOUT, {"limit": limit},
            f"stopped after {limit:g} s", time.monotonic() - started,
        )  # fmt: skip
        session.records.append(record)
        listener("record", pair, record)

    def _died(self, session: _WorkerSession, running: int | None, started: float, listener: Listener) -> None:
        code = self.process.wait()
        how = _exit_description(code)
        log = self._stderr_tail()
        if running is None:
            stage = "before running a probe" if session.environment else "while importing torch"
            session.failure = f"the worker {how} {stage}" + (f":\n{log}" if log else "")
            return
        pair = self.pairs[running]
        message = f"the worker {how} while running {pair.probe.name} on {pair.device}" + (f":\n{log}" if log else "")
        record = Record(
            pair.probe.name, pair.device, Outcome.CRASH, {"exit_code": code}, message, time.monotonic() - started
        )
        session.records.append(record)
        listener("record", pair, record)

    def _stderr_tail(self) -> str:
        self.stderr.seek(0, os.SEEK_END)
        size = self.stderr.tell()
        self.stderr.seek(max(0, size - STDERR_TAIL))
        text = self.stderr.read().decode("utf-8", "replace").strip()
        return ("…" + text) if size > STDERR_TAIL else text


def _worker_environment(pairs: Sequence[Pair]) -> dict[str, str]:
    """This process's environment, with the probes' options where they read them.

    Always set, to ``{}`` when no probe has options: options that reached a probe from the user's
    shell would make records that say nothing of them.
    """
    options = {pair.probe.name: pair.probe.options for pair in pairs if pair.probe.options}
    return {**os.environ, PROBE_OPTIONS_VARIABLE: json.dumps(options, sort_keys=True)}


def _parse(line: bytes) -> dict[str, Any]:
    try:
        message = json.loads(line)
    except ValueError:
        return {}
    return message if isinstance(message, dict) else {}


def _record(pair: Pair, message: dict[str, Any]) -> Record:
    try:
        outcome = Outcome(message.get("outcome"))
    except ValueError:
        outcome = Outcome.ERROR
    metrics = message.get("metrics")
    return Record(
        probe=pair.probe.name,
        device=pair.device,
        outcome=outcome,
        metrics=metrics if isinstance(metrics, dict) else {},
        message=str(message.get("message", "")),
        duration=float(message.get("duration") or 0.0),
    )


def _exit_description(code: int) -> str:
    if code < 0:
        try:
            return f"died with {signal.Signals(-code).name}"
        except ValueError:
            return f"died with signal {-code}"
    return f"exited with code {code}"


def _own_process_group() -> dict[str, Any]:
    if sys.platform == "win32":
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}


def _kill_tree(process: subprocess.Popen[bytes]) -> None:
    """Kill the worker and anything its probes started (its whole process group)."""
    if sys.platform == "win32":
        if process.poll() is None:
            process.kill()
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
