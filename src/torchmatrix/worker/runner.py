"""Run every (probe, device) pair of a cell in a worker process of the cell's Python.

The worker imports torch once and runs each pair in a process of its own,
announcing each: a pair that crashes or runs past the time limit is recorded
as ``crash`` or ``timeout`` by the worker, which goes on with the rest (see
``envside/worker.py``). Should the worker itself die or stop answering, this
side records the pair that was running and starts a new worker for the rest.

The worker ends every process its pairs started, and itself, when its stdin
(which this process holds open) reaches end of file: when this process ends,
even by SIGKILL, or when it stops the worker, which it does by closing that
stdin, giving the worker a few seconds, then killing the worker's process group.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import json
import os
import queue
import shutil
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

from .. import identity, variables
from ..core import Kind, MalformedRecord, Outcome, Pair, Record
from ..errors import TorchmatrixError
from ..util import storedjson

WORKER = Path(__file__).parent.with_name("envside") / "worker.py"
PYTEST_PLUGIN = WORKER.with_name("pytest_plugin.py")
WORKER_FILES = tuple(sorted([WORKER, PYTEST_PLUGIN, *WORKER.with_name("torchmatrix_worker").glob("*.py")]))
"""The code that runs in a cell's environment: what a record depends on of torchmatrix's."""
PROTOCOL_VERSION: int = importlib.import_module("torchmatrix.envside.torchmatrix_worker.protocol").PROTOCOL_VERSION
"""What the worker must say it speaks when it is ready: a worker of another torchmatrix is not run."""
"""Loaded by the worker into the pytest it runs for tests."""
STDERR_TAIL = 2000
STARTUP_SECONDS = 300.0
"""The least time a worker gets to import torch, whatever the per-pair limit: a cold import can take minutes."""
GRACE_SECONDS = 10.0
"""How long past a limit the worker, which enforces it, has to send its verdict before it counts as hung."""
STOP_SECONDS = 5.0
"""How long a worker asked to stop (its stdin closed) has to end its pairs' processes before it is killed."""
POLL_SECONDS = 0.5
"""How often a quiet worker is checked for having died (in case something it started holds its stdout open)."""
STALL_SECONDS = 1.0
"""How much longer than :data:`POLL_SECONDS` between two looks at the worker means this side was not watching (it
was stopped, or its output blocked): the time is given back to the worker before it is taken for hung."""


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
    variables_seen: dict[str, str] | None = None,
    *,
    workdir: Path,
    torch_releases: Sequence[str] = (),
    own_output: Path | None = None,
    hash_seed: int = identity.SEED,
) -> CellRun:
    """Run ``pairs`` under ``python`` from the folder ``workdir``; every pair gets exactly one record, whatever happens.

    Each pair's working directory is ``workdir``, as a by-hand run's is the folder it is started in
    (:attr:`torchmatrix.matrix.Matrix.run_from`); its temporary files go to a folder of its own, removed after it.

    ``variables_seen`` is the pairs' environment (:func:`torchmatrix.identity.pair_environment`); by default
    the one built for ``python`` with nothing declared. Each record's inputs hold what its pair read
    (:data:`identity.READ`).

    ``hash_seed``: the pairs' ``PYTHONHASHSEED``: each run of a repeat gets one of its own (:func:`cellrun.run_pairs`).

    ``own_output``: torchmatrix's own output folder (results and reports), never taken for what a pair read where
    nothing told it (:func:`_files_read`): the run writes it after the pair.

    ``torch_releases``: every torch version the index lists, which what a script prints is normalised by as by its
    cell's own version (:func:`torchmatrix.worker.printed.normalised`).

    ``pycache_prefix`` is where the worker's Python keeps the bytecode it compiles
    (``-X pycache_prefix``, Python 3.8+; older ones keep it beside the sources).
    Kept outside the environment, it survives the environment's rebuild, so the
    first ``import torch`` in a rebuilt environment does not compile torch again.
    """
    listener = listener or (lambda *_: None)
    records: list[Record] = []
    environment: dict[str, Any] = {}
    done = 0
    while done < len(pairs):
        first = done
        with _Worker(
            python, pairs, first, timeout, pycache_prefix=pycache_prefix, variables_seen=variables_seen,
            workdir=workdir, torch_releases=torch_releases, own_output=own_output, hash_seed=hash_seed,
        ) as worker:  # fmt: skip
            session = worker.follow(listener)
        records += session.records
        done += session.pairs
        environment = environment or session.environment
        if not session.pairs:
            failure = session.failure or "the worker ended without running any probe"
            if not environment:  # torch never imported: the environment is unusable, no probe can run
                return CellRun({}, (), import_failure=failure)
            # A later worker died before its first pair: the rest share its fate rather than loop.
            for pair in pairs[first:]:
                record = _unanswered(pair, session.failure_outcome, {}, failure, 0.0, None, own_output)
                listener("record", pair, record)
                records.append(record)
            done = len(pairs)
    return CellRun(environment, tuple(records))


@dataclass
class _WorkerSession:
    records: list[Record]
    environment: dict[str, Any]
    failure: str = ""
    failure_outcome: Outcome = Outcome.CRASH
    pairs: int = 0
    """How many pairs are done (pytest tests make a record per test)."""


class _Worker:
    """One worker process: started on enter, stopped with its children on exit."""

    def __init__(
        self,
        python: str,
        pairs: Sequence[Pair],
        first: int,
        timeout: float,
        *,
        pycache_prefix: Path | None,
        variables_seen: dict[str, str] | None,
        workdir: Path,
        torch_releases: Sequence[str],
        own_output: Path | None,
        hash_seed: int,
    ) -> None:
        self.pairs = pairs
        self.own_output = own_output
        self.first = first
        self.timeout = timeout
        self.startup = max(timeout, STARTUP_SECONDS)
        self.stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - closed in __exit__
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        # The pairs' temporary folders go in here, removed in __exit__ even if the worker could not remove them.
        self.scratch = tempfile.mkdtemp(prefix="torchmatrix-worker-")
        request = {
            "pairs": [_pair_request(pair) for pair in pairs[first:]],
            "first": first,
            "timeout": timeout,
            "startup": self.startup,
            "scratch": self.scratch,
            "workdir": str(workdir),
            "seed": identity.SEED,
            "torch_releases": list(torch_releases),
        }
        # Not -I, which would ignore the hash seed: no PYTHON* variable reaches the cell unless the matrix sets it.
        options = ["-X", f"pycache_prefix={pycache_prefix}"] if pycache_prefix else []
        if variables_seen is None:
            variables_seen = identity.pair_environment(python, {}, (), os.environ)
        self.process = subprocess.Popen(
            [python, "-s", "-u", *options, str(WORKER)],
            env=_worker_environment(pairs, variables_seen, hash_seed),
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
        self._stop()
        self.stderr.close()
        shutil.rmtree(self.scratch, ignore_errors=True)

    def _stop(self) -> None:
        """Let the worker end its pairs' processes (its stdin closes), then kill it and its group if it is still there.

        Killed at once, it could not: what a pair started in a session of its own would live on.
        """
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        try:
            self.process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            _kill_tree(self.process)
            self.process.wait()

    def _read(self) -> None:
        assert self.process.stdout is not None
        with self.process.stdout:  # closed at its end by the one thread that reads it, never left to the collector
            for line in self.process.stdout:
                self.lines.put(line)
        self.lines.put(None)

    def follow(self, listener: Listener) -> _WorkerSession:
        """Read the worker's messages until it is done, dies, or stops answering.

        The worker stops a pair at its time limit itself; this side waits a grace period
        longer before it takes the worker for hung.
        """
        session = _WorkerSession([], {})
        running: int | None = None
        began_at = time.time()  # the wall clock's, which files are stamped by: what a pair wrote is its own
        limit = self.startup  # until the first pair starts, the limit bounds `import torch` and the fingerprint
        started = time.monotonic()
        deadline = started + limit + GRACE_SECONDS
        died_at: float | None = None
        watched = started
        while True:
            now = time.monotonic()
            # Longer between two looks than a look waits: this side was stopped (Ctrl-Z, SIGSTOP) or held (a
            # terminal paused, a pager not read), and watched nothing meanwhile. The worker, in a process group of
            # its own, ran on and keeps the pair's limit itself: what it said then is read before it is judged hung.
            unwatched = now - watched
            if unwatched > POLL_SECONDS + STALL_SECONDS:
                deadline = max(deadline + unwatched, now + GRACE_SECONDS)
            watched = now
            if now >= deadline:
                self._overran(session, running, limit, started, began_at, listener)
                return session
            if died_at is None and self.process.poll() is not None:
                died_at = now
            if died_at is not None and now - died_at > POLL_SECONDS:
                # Dead, yet its stdout is still open: a child it forked holds it. What it sent has been read.
                self._died(session, running, started, began_at, listener)
                return session
            try:
                line = self.lines.get(timeout=min(POLL_SECONDS, deadline - now))
            except queue.Empty:
                continue
            if line is None:
                self._died(session, running, started, began_at, listener)
                return session
            message = _parse(line)
            event = message.get("event")
            if event == "ready":
                if message.get("protocol") != PROTOCOL_VERSION:
                    raise TorchmatrixError(
                        f"the worker at {WORKER} speaks protocol {message.get('protocol')}, this torchmatrix "
                        f"{PROTOCOL_VERSION}: its files are of another version; reinstall torchmatrix"
                    )
                session.environment = message.get("environment") or {}
            elif event == "start" and message.get("index") == self.first + session.pairs:
                running = message["index"]
                limit = self.timeout
                started, began_at = time.monotonic(), time.time()
                deadline = started + limit + GRACE_SECONDS
                listener("start", self.pairs[running], None)
            elif event == "alive" and running is not None and message.get("index") == running:
                deadline = time.monotonic() + limit + GRACE_SECONDS  # tests: each gets the limit
            elif event == "records" and running is not None and message.get("index") == running:
                for record in _records(self.pairs[running], message, began_at, self.own_output):
                    session.records.append(record)
                    listener("record", self.pairs[running], record)
                session.pairs += 1
                running = None
            elif event == "done":
                return session

    def _overran(
        self,
        session: _WorkerSession,
        running: int | None,
        limit: float,
        started: float,
        began_at: float,
        listener: Listener,
    ) -> None:
        self._stop()
        waited = limit + GRACE_SECONDS
        if running is None:
            session.failure = f"the worker did not start within {waited:g} s (import torch hung?)"
            session.failure_outcome = Outcome.TIMEOUT
            return
        pair = self.pairs[running]
        message = f"stopped after {waited:g} s: the worker hung instead of stopping it at {limit:g} s"
        took = time.monotonic() - started
        record = _unanswered(pair, Outcome.TIMEOUT, {"limit": limit}, message, took, began_at, self.own_output)
        session.records.append(record)
        session.pairs += 1
        listener("record", pair, record)

    def _died(
        self, session: _WorkerSession, running: int | None, started: float, began_at: float, listener: Listener
    ) -> None:
        code = self.process.wait()
        how = _exit_description(code)
        log = self._stderr_tail()
        if running is None:
            stage = "before running a probe" if session.environment else "while importing torch"
            session.failure = f"the worker {how} {stage}" + (f":\n{log}" if log else "")
            return
        pair = self.pairs[running]
        message = f"the worker {how} while running {pair.probe.name} on {pair.device}" + (f":\n{log}" if log else "")
        took = time.monotonic() - started
        record = _unanswered(pair, Outcome.CRASH, {"exit_code": code}, message, took, began_at, self.own_output)
        session.records.append(record)
        session.pairs += 1
        listener("record", pair, record)

    def _stderr_tail(self) -> str:
        self.stderr.seek(0, os.SEEK_END)
        size = self.stderr.tell()
        self.stderr.seek(max(0, size - STDERR_TAIL))
        text = self.stderr.read().decode("utf-8", "replace").strip()
        return ("…" + text) if size > STDERR_TAIL else text


def _worker_environment(pairs: Sequence[Pair], variables_seen: dict[str, str], hash_seed: int) -> dict[str, str]:
    """The pairs' environment, with the probes' options where they read them, and ``hash_seed`` as their
    ``PYTHONHASHSEED``.

    Always set, to ``{}`` when no probe has options: options that reached a probe from the user's
    shell would make records that say nothing of them.
    """
    options = {pair.probe.name: pair.probe.options for pair in pairs if pair.probe.options}
    probe_options = json.dumps(options, sort_keys=True)
    return {**variables_seen, "PYTHONHASHSEED": str(hash_seed), variables.PROBE_OPTIONS.name: probe_options}


def _pair_request(pair: Pair) -> dict[str, str]:
    """A pair as the worker reads it (see its docstring)."""
    probe = pair.probe
    request = {"name": probe.name, "path": str(probe.path), "device": pair.device, "kind": probe.kind.value,
               "kind_reason": probe.kind_reason}  # fmt: skip
    if probe.kind.may_be_tests:
        request.update(select=probe.select, root=str(probe.root or probe.path.parent))
    return request


def _parse(line: bytes) -> dict[str, Any]:
    try:
        message = json.loads(line)
        if storedjson.SURROGATE_ESCAPE.search(line.decode("latin-1")):  # a lone one would break every writer
            message = storedjson.text_only(_unnamed_as_gone(message))
    except (ValueError, RecursionError):
        return {}
    return message if isinstance(message, dict) else {}


def _unnamed_as_gone(message: Any) -> Any:
    """``message`` with each file the worker found as the pair read it (``read_as_found``) whose name is no UTF-8
    text as not there: it is recorded with U+FFFD in its name (:func:`storedjson.text_only`), which names no file, and
    is so found by every check after; as the worker found it (``a folder``, a digest), the record would be stale at
    once, and every run after would run it again."""
    records = message.get("records") if isinstance(message, dict) else None
    for item in records if isinstance(records, list) else []:
        found = item.get("read_as_found") if isinstance(item, dict) else None
        if isinstance(found, dict):
            item["read_as_found"] = {
                path: None if isinstance(path, str) and storedjson.text_only(path) != path else digest
                for path, digest in found.items()
            }
    return message


def _records(pair: Pair, message: dict[str, Any], began_at: float, own_output: Path | None = None) -> list[Record]:
    """The records a "records" message holds; one saying so if it holds none (a pair gets at least one). The pair
    ended when the worker sent it (``ended_at``): the next pair may have begun since."""
    given, ended_at = message.get("records"), message.get("ended_at")
    ended_at = ended_at if isinstance(ended_at, float) else None
    records = (
        [_record(pair, item, began_at, ended_at, own_output) for item in given if isinstance(item, dict)]
        if isinstance(given, list)
        else []
    )
    if records:
        return records
    said = "the worker sent no record of this pair"
    return [_unanswered(pair, Outcome.ERROR, {}, said, 0.0, began_at, own_output)]


def _unanswered(
    pair: Pair,
    outcome: Outcome,
    metrics: dict[str, Any],
    message: str,
    duration: float,
    began_at: float | None,
    own_output: Path | None,
) -> Record:
    """The record of a pair the worker gave none for (it died, hung, or said nothing): nothing says what it read."""
    inputs = {identity.READ: _files_read(pair, None, (began_at, None), None, own_output)}
    return Record(pair.probe.name, pair.device, outcome, metrics, message, duration, inputs, *_kind_of(pair))


def _record(
    pair: Pair, sent: dict[str, Any], began_at: float, ended_at: float | None, own_output: Path | None
) -> Record:
    """The record the worker sent, read as a result file's is (:meth:`Record.from_json`), with its device and inputs.

    A malformed one is the pair's ``error``, saying why: a worker's bad answer is data about the pair.
    """
    read = _files_read(pair, sent.get("read"), (began_at, ended_at), sent.get("read_as_found"), own_output)
    inputs = {identity.READ: read}
    try:
        record = Record.from_json(dict(sent, device=pair.device, inputs=inputs))
    except MalformedRecord as exc:
        name, metrics = _record_name(pair, sent.get("probe")), _refused_metrics(sent.get("metrics"))
        message = f"malformed result: {exc}"
        return Record(name, pair.device, Outcome.ERROR, metrics, message, 0.0, inputs, *_kind_of(pair))
    return dataclasses.replace(record, probe=_record_name(pair, record.probe))


def _kind_of(pair: Pair) -> tuple[Kind, str]:
    """The kind of a record the worker sent none of, with why: its probe's, as the host told it."""
    return pair.probe.kind, pair.probe.kind_reason


def _refused_metrics(sent: Any) -> dict[str, Any]:
    """The metrics of a malformed record, kept for whoever reads the file: its checks under a name no view reads."""
    if not isinstance(sent, dict):
        return {}
    return {("refused_checks" if key == "checks" else key): value for key, value in sent.items()}


def _record_name(pair: Pair, sent: Any) -> str:
    """The name a record the worker sent is filed under: its own, if one of its pair's probe; a test of a file
    named from another root, as the probe names its tests (two tests never one record); else the probe's."""
    if not isinstance(sent, str):
        return pair.probe.name
    if pair.probe.covers(sent):
        return sent
    return pair.probe.test_named(sent) or pair.probe.name


def _files_read(
    pair: Pair, read: Any, ran: tuple[float | None, float | None], as_found: Any, own_output: Path | None
) -> dict[str, str | None] | None:
    """What the pair that ``ran`` from a time to a time (None: it never began, or its end is not known) read, by
    content, less what it wrote (:func:`identity.files_read`), and what it read of files changed after it read them
    as the worker found it (``as_found``). Where the worker could not tell (a Python without audit hooks, a worker
    that died), every file of the probe's folder (the matrix's, for tests, which pytest runs from) but those of
    torchmatrix's ``own_output``, and for tests, or a file whose kind pytest says, pytest's configuration files
    there or not (:func:`identity.pytest_configuration`): what the pair's process would have said it looked for.
    None where a process of the pair could not write down all it read (:data:`identity.READ_UNTOLD`), or the
    folder holds too many files to stand for it: the record does not say what its pair read, and is never current.
    """
    if read == identity.READ_UNTOLD:
        return None
    probe = pair.probe
    if isinstance(read, list) and all(isinstance(path, str) for path in read):
        return identity.files_read(read, ran, _digests(as_found))
    tests_root = probe.kind is Kind.PYTEST and probe.root is not None and probe.root in probe.path.parents
    folder = probe.root if tests_root and probe.root else probe.path.parent
    read = identity.folder_files(folder, leaving_out=own_output)
    if read is None:  # too many to stand for what it read
        return None
    configuration = identity.pytest_configuration(probe.path) if probe.kind.may_be_tests else []
    return identity.files_read([*read, *configuration], ran, _digests(as_found))


def _digests(sent: Any) -> dict[str, str | None]:
    """``sent`` if it maps paths to digests (or None), else nothing: a worker's bad answer changes no digest."""
    if isinstance(sent, dict) and all(isinstance(digest, (str, type(None))) for digest in sent.values()):
        return sent
    return {}


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
    """Kill the worker and whatever is left in its process group."""
    if sys.platform == "win32":
        if process.poll() is None:
            process.kill()
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
