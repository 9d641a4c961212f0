"""What the worker makes of a pair's process: its records, from how the process ended and what it wrote."""

import hashlib
import io
import json
import os
import platform
import re
import signal
import struct
import sys
import time

from .answers import exit_answer, malformed, pair_answer, tail, unavailable
from .protocol import (
    BEFORE_TESTS,
    CONFTEST_FAILED,
    CRASH,
    ERROR,
    FAIL,
    MAX_ANSWER_BYTES,
    MAX_MESSAGE,
    MODULE,
    PASS,
    PYTEST,
    READ_UNTOLD,
    SCRIPT,
    SCRIPT_OR_TESTS,
    TIMEOUT,
    UNAVAILABLE,
    WORKER_FAILED,
    defines_run,
    parsed,
)  # fmt: skip

FAILED = (FAIL, ERROR, CRASH, TIMEOUT)
"""The outcomes of a test that fail pytest's run."""


class Found(object):
    """What the pairs this worker ran found of each probe: the names of its records, and the kind pytest said it is,
    with why and what pytest's processes read as they said it (each one's ``Ending.read``).

    A probe's kind is asked of pytest on its first device; its other devices take the answer, and depend on what
    it was decided by as the first does.
    """

    def __init__(self):
        self.records = {}
        self.kinds = {}


def records_of(isolation, pair, absent, limit, found, alive):
    """Every record of one pair: its probe's, or one per test of pytest tests; each with its duration and the kind
    it ran as, with why (``kind``, ``kind_reason``).

    ``alive`` is called as tests make progress.
    """
    name = pair["name"]
    kind, reason, decided_by = found.kinds.get(name) or (pair["kind"], pair.get("kind_reason", ""), [])
    if pair["device"] in absent:  # no process needed to learn it again
        names = found.records.get(name) or [name]
        records = [dict(unavailable(absent[pair["device"]]), probe=test, duration=0.0) for test in names]
    elif kind == SCRIPT_OR_TESTS and defines_run_here(pair["path"]):
        kind, reason = MODULE, DEFINED_HERE
        found.kinds[name] = kind, reason, []
        records = run_as(kind, isolation, pair, limit, alive)
    elif kind == SCRIPT_OR_TESTS:
        (kind, reason, decided_by), records = asked_records(isolation, pair, limit, alive)
        found.kinds[name] = kind, reason, decided_by
    else:
        records = run_as(kind, isolation, pair, limit, alive, decided_by)
    records = one_per_name(records)
    found.records[name] = [record["probe"] for record in records]
    return [dict(record, kind=kind, kind_reason=reason) for record in records]


def one_per_name(records):
    """``records`` with one record per name: pytest runs every item it collected, and two may share a node id (a
    ``conftest.py``'s ``pytest_pycollect_makeitem`` that names two functions alike); by hand the run fails if one of
    them does. Their record is the first that failed (``fail``, ``error``, ``crash``, ``timeout``), else the first
    skipped, else the first, saying how many ran under that name."""
    named = {}
    for record in records:
        named.setdefault(record["probe"], []).append(record)
    merged = []
    for record in records:
        alike = named.pop(record["probe"], None)
        if alike is None:
            continue
        if len(alike) == 1:
            merged.append(record)
            continue
        failed = [one for one in alike if one["outcome"] in FAILED]
        skipped = [one for one in alike if one["outcome"] == UNAVAILABLE]
        chosen = (failed or skipped or alike)[0]
        said = "pytest ran {} tests of this node id, {} of them failed".format(len(alike), len(failed))
        message = said + (": " + chosen["message"] if chosen.get("message") else "")
        duration = sum(one.get("duration", 0.0) for one in alike)
        merged.append(dict(chosen, message=tail(message), duration=duration))
    return merged


DEFINED_HERE = "it defines run(device), as the cell's Python parses it (the host's Python cannot)"


def defines_run_here(path):
    """Whether a file asked of the cell defines ``run(device)`` as this, the cell's, Python parses it: where the
    host's Python cannot parse a file, the cell decides its whole kind by the host's rule, then pytest's. A file the
    host parsed, which defines no ``run(device)`` there, defines none here either."""
    try:
        with open(path, "rb") as file:
            source = file.read()
    except (OSError, IOError):
        return False  # pytest, asked, says so
    return defines_run(source, path) is True


def run_as(kind, isolation, pair, limit, alive, decided_by=()):
    """The records of a pair run as ``kind`` says: pytest tests, a script, or a ``run(device)`` module; each with
    what its processes read, and what ``decided_by`` read (pytest's, that said its kind on another device)."""
    if kind == PYTEST:
        return records_of_tests(isolation, pair, limit, alive, decided_by)
    began = time.perf_counter()
    ending = isolation.run(dict(pair, job=kind), limit)
    if kind == SCRIPT:
        record = script_record(ending, pair, limit)
    else:
        record = pair_record(ending, pair["name"], pair["device"], limit)
    record = dict(record, probe=pair["name"], duration=time.perf_counter() - began)
    return with_files_read([record], [*decided_by, ending.read])


def asked_records(isolation, pair, limit, alive):
    """A .py file without ``run(device)``: ``pytest PATH``, in this cell, says whether it holds tests.

    pytest collects the path as a path on its command line, whatever its name. Where it collects tests from
    it, they ran there and are its records; where it collects none (none there, or the file failed to import
    or skipped itself), or its process ended before it said, the file runs again, as a script. The kind, why,
    and what pytest's processes read as they said it; and the records.
    """
    began, read = time.perf_counter(), []
    records, said = run_tests_until_done(isolation, pair, limit, alive, read, asking=True)
    decided_by = list(read)
    if records is not None:
        return (PYTEST, said, decided_by), with_files_read(records, read)
    alive()  # the script's run gets the limit afresh, as pytest's ask had it (a file that hangs as it is imported)
    ending = isolation.run(dict(pair, job=SCRIPT), limit)
    read.append(ending.read)
    record = dict(script_record(ending, pair, limit), probe=pair["name"], duration=time.perf_counter() - began)
    return (SCRIPT, said, decided_by), with_files_read([record], read)


class Ending(object):
    """How a pair's process ended: its exit code (negative: the signal), what it sent, its log's tail.

    ``sides``: what it wrote to its side files (a script's output, the tests' progress), by name; ``places``: the
    cell's folders it saw (:func:`cell_places`), which its output is normalised by; ``read``: the files it and its
    children read, and of them those not as first found, with what they held (``reads.files_read``).
    """

    def __init__(self, code, answer, timed_out, log_tail, sides=None, places=(), read=(None, {}), began=True):
        self.code = code
        self.began = began
        """Whether the process made its answer file ready (:func:`reply.is_ready`), as the worker's code does before
        the pair's code runs."""
        self.read = read
        self.answer = answer
        self.timed_out = timed_out
        self.log_tail = log_tail
        self.sides = sides or {}
        self.places = places


def never_began(ending):
    """Whether the worker's own code failed in the pair's process before the pair's code ran: it ended with
    :data:`WORKER_FAILED` before it made its answer file ready (a full temporary folder, a file size limit under the
    answer file's room, a Python it could not start). Never the pair's outcome: by hand it would have run."""
    return not ending.began and not ending.timed_out and ending.code == WORKER_FAILED


def worker_failed(ending):
    message = "torchmatrix's worker failed in the pair's process before the pair began"
    if ending.log_tail:
        message += ":\n" + ending.log_tail
    return {"outcome": ERROR, "metrics": {}, "message": message}


def pair_record(ending, name, device, limit):
    if ending.timed_out:
        return {"outcome": TIMEOUT, "metrics": {"limit": limit}, "message": "stopped after {:g} s".format(limit)}
    if never_began(ending):
        return worker_failed(ending)
    if len(ending.answer) > MAX_ANSWER_BYTES:  # more than any record: whatever its exit code
        return malformed("the probe's process sent more than {} bytes".format(MAX_ANSWER_BYTES))
    if ending.code != 0 or not ending.answer.strip():
        how = exit_description(ending.code) + (" before it answered" if ending.code == 0 else "")
        message = "the probe's process {} while running {} on {}".format(how, name, device)
        if ending.log_tail:
            message += ":\n" + ending.log_tail
        return {"outcome": CRASH, "metrics": {"exit_code": ending.code}, "message": message}
    answer = parsed(ending.answer)
    if answer is None:
        return malformed("the probe's process sent something that is not a record")
    return pair_answer(answer)


MAX_OUTPUT_BYTES = 64 << 10
"""How much of a script's output its record keeps to be read: the end of it. Its digest covers the whole."""


MESSAGE_LINES = 3
"""How many of the last lines a script printed make its record's message."""


OUTPUT_CHUNK = 1 << 20
"""How much of a line of output is read at a time."""
LONGEST_MATCH = 8192
"""More than any rule's match can span (a repr of :data:`PER_PROCESS`, a path of the cell's :func:`cell_places`,
a torch version): a line is normalised in pieces cut where no match is cut."""


POINTER_DIGITS = 2 * struct.calcsize("P")
"""The most hex digits an address has in this Python (16 where a pointer is 8 bytes)."""


REPR = rb"<(?:[^<>\n]{0,200}<[^<>\n]{0,200}>){0,3}[^<>\n]{0,200}>"
"""A repr in angle brackets, on one line, holding at most three others (``<function f.<locals>.g at 0x…>``)."""


ADDRESS = re.compile(rb"(?<= at 0x)[0-9a-fA-F]{1,%d}(?![\w.])" % POINTER_DIGITS)
"""An address as CPython's reprs print it (``at %p``): `` at 0x``, then no more hex digits than a pointer has."""


def addresses_in(match):
    """The repr ``match`` found with each address in it as ``…``."""
    return ADDRESS.sub(b"\xe2\x80\xa6", match.group(0))


PER_PROCESS = (
    ("an address in a repr: the hex after ' at 0x' inside <…>, no wider than a pointer", REPR, addresses_in),
)
"""What in a script's output differs from one process to the next, wherever it runs, and what replaces it
(torchmatrix/printed.py documents each rule, and what it must not touch); then each of the cell's own
folders (:func:`cell_places`)."""


TORCH_VERSION = b"<torch version>"
VERSION_RULE = (
    "a torch version: the cell's own, as torch prints it (1.12.1+cu102) and as released, and every release the "
    "index lists, alone or after a v"
)
"""What the rule of torch's versions replaces (:func:`output_rules`), as the docs name it."""

RELEASES = []
"""Every torch version the index lists (the host's ``Project.torch_releases``), which :func:`know_releases` sets: a
script that prints one (``print("fixed in 1.12.1")``) prints the same in every cell, its own version or not."""


def know_releases(versions):
    """Have :func:`cell_places` hand every pair the torch ``versions`` the index lists, to be normalised as the cell's
    own version is: a version printed as text is then the same text in every cell, whichever it is."""
    RELEASES[:] = [str(version) for version in versions]


PAIR_FOLDER, WORKER_FOLDER, ENVIRONMENT = "<pair folder>", "<worker folder>", "<cell environment>"
PAIR_FOLDER_NAME, WORKER_FOLDER_NAME = "<pair folder's name>", "<worker folder's name>"
ENVIRONMENT_NAME = "<cell environment's name>"
HELD_PREFIX = "held-python-"
"""The folder that holds the environments of the cells on a Python a bisect holds (``disk.HELD_PREFIX``)."""
PLACES = (
    ("the pair's temporary folder, where it runs", PAIR_FOLDER),
    ("the worker's temporary folder, which holds the pairs' folders", WORKER_FOLDER),
    ("the cell's environment (sys.prefix, $VIRTUAL_ENV)", ENVIRONMENT),
    ("the name of the pair's temporary folder (torchmatrix-pair-9xq1b2c3), printed alone", PAIR_FOLDER_NAME),
    ("the name of the worker's temporary folder (torchmatrix-worker-k2j4x9_a), printed alone", WORKER_FOLDER_NAME),
    ("the name of the cell's environment's folder (probe-2-1-0), printed alone", ENVIRONMENT_NAME),
)
"""The cell's own folders, which a script may print (``os.getcwd()``, ``torch.__file__``, ``sys.executable``), and
what replaces each: :func:`cell_places` finds them."""


def cell_places(folder, scratch):
    """The cell's own folders (:data:`PLACES`) as ``[path, what replaces it]``, each as given and resolved, the
    longest first: a path inside another is replaced before it."""
    found = {}
    for path, token in ((folder, PAIR_FOLDER), (scratch, WORKER_FOLDER), (sys.prefix, ENVIRONMENT),
                        (os.environ.get("VIRTUAL_ENV"), ENVIRONMENT)):  # fmt: skip
        for each in (path, os.path.realpath(path)) if path else ():
            found.setdefault(each, token)
    # The temporary folders' names alone (os.path.basename(os.getcwd()), a relative path ../torchmatrix-pair-…):
    # torchmatrix made both, with a random suffix, so neither name is a word of any output.
    for path, token in ((folder, PAIR_FOLDER_NAME), (scratch, WORKER_FOLDER_NAME)):
        found.setdefault(os.path.basename(os.path.normpath(path)), token)
    # The folder's name alone only where it names an environment made for the cell (a venv: probe-2-1-0); an
    # interpreter's own prefix (/usr/local) is no cell's, and its name ("local") a word of any output.
    name = os.path.basename(os.path.normpath(sys.prefix))
    if sys.prefix != getattr(sys, "base_prefix", sys.prefix) and len(name) > 3:
        found.setdefault(name, ENVIRONMENT_NAME)
        # A cell on a Python a bisect holds lies one folder deeper (.nox/held-python-3.10/probe-2-1-0): that
        # folder and its own name are the environment's name, so a path to it from the folder the pair runs in
        # (os.path.relpath(torch.__file__)) reads as a matrix cell's does, never as a change between releases.
        parent = os.path.basename(os.path.dirname(os.path.normpath(sys.prefix)))
        if parent.startswith(HELD_PREFIX):
            found.setdefault(parent + "/" + name, ENVIRONMENT_NAME)
    releases = [[version, TORCH_VERSION.decode("ascii")] for version in RELEASES if version not in found]
    return sorted(([path, token] for path, token in found.items()), key=lambda place: -len(place[0])) + releases


def script_record(ending, pair, limit):
    """A script's record, from how it ended, with the lines it printed (the end of them) in its metrics."""
    ended_itself = ending.code is not None and ending.code >= 0 and not ending.timed_out
    if never_began(ending):
        record = worker_failed(ending)
    elif ended_itself and not ending.answer.strip():  # it left (os._exit) before the worker's code could answer
        record = exit_answer(ending.code)
    else:
        record = pair_record(ending, pair["name"], pair["device"], limit)
    printed = ending.sides.get("output") or read_output(io.BytesIO(), ())
    raised = record["message"] if record["outcome"] not in (CRASH, TIMEOUT) else ""  # what it raised, or exited with
    metrics = dict(record["metrics"], **output_metrics(printed, raised, ending.places))
    lines = metrics["output"]
    message = record["message"] or tail("\n".join(line.rstrip() for line in lines[-MESSAGE_LINES:]).strip())
    if not message and metrics.get("exit_code"):
        message = "exited with code {}".format(metrics["exit_code"])
    return dict(record, metrics=metrics, message=message)


def output_metrics(printed, raised, places, unseen=""):
    """What ``bisect --by-output`` compares of a run: the lines of the end of what it printed (``printed``, as
    :func:`read_output` read it) and the sha256 of all of it, and what it ``raised``; each normalised by ``places``
    and the rules of :func:`output_rules`. ``unseen``: why what it printed was never seen (pytest's capture off),
    said in their place: it printed something or nothing, no one knows."""
    if unseen:
        metrics = {"output_unseen": unseen}
    else:
        lines, cut = printed_lines(printed["end"])
        metrics = {"output": lines, "output_sha256": printed["sha256"], "output_bytes": printed["bytes"]}
        if cut:
            metrics["output_truncated"] = True
    if raised:  # a long one's end: its digest is raised_sha256
        said = normalised_output(raised.encode("utf-8", "replace"), output_rules(places))
        metrics["raised"] = said.decode("utf-8", "replace")
    return metrics


def printed_lines(printed):
    """The lines of a script's output that its record keeps (those of its end), and whether any were left out.

    Where the output was cut, the first line kept is the end of one, and starts with "…".
    """
    cut = len(printed) > MAX_OUTPUT_BYTES
    lines = printed[-MAX_OUTPUT_BYTES:].decode("utf-8", "replace").splitlines()
    if cut and lines:
        lines[0] = "\u2026" + lines[0]
    return lines, cut


def output_rules(places=(), versions=None):
    """The rules a script's output is normalised by: each of the cell's ``places`` (:func:`cell_places`), then
    PER_PROCESS, then the cell's torch version (``versions``: the one this worker imported) and every release the
    index lists (the places that are versions) as <torch version>, the longest first (``1.12.1+cu102`` before
    ``1.12.1``), also after a ``v`` (``torch v1.12.1``)."""
    if versions is None:
        torch = sys.modules.get("torch")
        version = str(getattr(torch, "__version__", "") or "")
        versions = [version, version.split("+")[0]]
    token_of_versions = TORCH_VERSION.decode("ascii")
    versions = list(versions) + [text for text, token in places if token == token_of_versions]
    places = [(text, token) for text, token in places if token != token_of_versions]
    rules = []
    for path, token in places:
        # the whole folder, not the start of a longer name: /x/probe-1-12-1 is not in /x/probe-1-12-10 nor in
        # /x/probe-1-12-1.0, and is in "/x/probe-1-12-1." ending a sentence
        pattern = rb"(?<![\w.-])" + re.escape(os.fsencode(path)) + rb"(?![\w-]|\.[\w-])"
        rules.append((re.compile(pattern), token.encode("utf-8")))
    rules += [(re.compile(pattern), replacement) for _, pattern, replacement in PER_PROCESS]
    for version in sorted(set(v for v in versions if v), key=len, reverse=True):
        # not a part of another number or word: 1.12.1 is not in 11.12.1, 1.12.10, 1.12.1.2 or xv1.12.1, and is in
        # v1.12.1, whose v starts a word
        pattern = rb"(?:(?<![\w.+])|(?<=(?<!\w)v))" + re.escape(version.encode("utf-8")) + rb"(?![\w+]|\.\d)"
        rules.append((re.compile(pattern), TORCH_VERSION))
    return rules


def said_digest(text, places):
    """The sha256 of what a script raised or exited with, all of it, normalised as its output is."""
    return hashlib.sha256(normalised_output(text.encode("utf-8", "replace"), output_rules(places))).hexdigest()


def normalised_output(data, rules):
    """``data``, bytes a script printed, with each of ``rules`` (:func:`output_rules`) applied in turn."""
    for pattern, replacement in rules:
        data = pattern.sub(replacement, data)
    return data


def read_output(printed, places):
    """A script's output, from the file ``printed``, normalised (``places``: the cell's, :func:`cell_places`): the
    sha256 of the whole, its size as printed, and its end (one byte more than a record keeps, which tells that it was
    cut)."""
    rules = output_rules(places)
    digest, size, end, pending = hashlib.sha256(), 0, bytearray(), b""
    while True:
        chunk = printed.readline(OUTPUT_CHUNK)
        size += len(chunk)
        data = pending + chunk
        cut = len(data) if not chunk or data.endswith(b"\n") else uncut_end(data, rules)
        data, pending = normalised_output(data[:cut], rules), data[cut:]
        digest.update(data)
        end += data
        if len(end) > 2 * (MAX_OUTPUT_BYTES + 1):
            del end[: -(MAX_OUTPUT_BYTES + 1)]
        if not chunk:
            break
    return {"end": bytes(end[-(MAX_OUTPUT_BYTES + 1) :]), "sha256": digest.hexdigest(), "bytes": size}


def uncut_end(data, rules):
    """Where to end the piece of a long line normalised now: before its last LONGEST_MATCH bytes, and before any
    match of ``rules`` that would be cut there (the rest waits for the next piece)."""
    cut = max(0, len(data) - LONGEST_MATCH)
    for pattern, _ in rules:
        for match in pattern.finditer(data, max(0, cut - LONGEST_MATCH)):
            if match.start() < cut < match.end():
                cut = match.start()
    return cut


def records_of_tests(isolation, pair, limit, alive, decided_by=()):
    """One record per test of a pytest pair, each test within ``limit`` seconds.

    A test that kills or hangs its process gets ``crash`` or ``timeout``, and
    pytest runs again, in a new process, on the tests it had not reached.
    Every record gets what all of the pair's processes read (tests share them), and what ``decided_by`` read.
    """
    read = list(decided_by)
    records, _ = run_tests_until_done(isolation, pair, limit, alive, read)
    return with_files_read(records, read)


def with_files_read(records, read):
    """``records``, each with what all of their pair's processes read (``read``: each one's ``Ending.read``, in
    the order they ran): every file (None: one of them could not say; :data:`READ_UNTOLD`: one of them could not
    write down all it read), and those changed as the first found them."""
    if any(files == READ_UNTOLD for files, _ in read):
        return [dict(record, read=READ_UNTOLD, read_as_found={}) for record in records]
    known = all(files is not None for files, _ in read)
    paths = sorted(set(path for files, _ in read for path in files)) if known else None
    found = {}
    for _, changed in reversed(read):
        found.update(changed)
    return [dict(record, read=paths, read_as_found=found) for record in records]


def run_tests_until_done(isolation, pair, limit, alive, read, asking=False):
    """The records of :func:`records_of_tests`, and what pytest's first process said it collected; what each
    process read is appended to ``read``.

    ``asking``: whether the file is tests at all is pytest's to say; where its first process collected none, the
    records are None.
    """
    records, expected = [], None
    targets = [pair["path"] + pair.get("select", "")]
    said = ""
    while True:
        alive()
        ending = isolation.run(dict(pair, job=PYTEST, targets=targets), limit, alive)
        events = ProgressOfTests(ending.sides.get("progress", b""), ending.places)
        # tests pytest-xdist ran in processes of its own read there what the pair's cannot tell: as a process that
        # could not say what it read, every file of the tests' folder counts (runner._files_read)
        read.append((None, ending.read[1]) if events.distributed and ending.read[0] != READ_UNTOLD else ending.read)
        if not said:
            said = events.collection(ending, pair["path"])
            if asking and not events.holds_tests(ending, pair["path"]):
                return None, said
        records += events.ended
        expected = events.collected if events.collected is not None else expected
        done = set(record["probe"] for record in records)
        left = [test for test in expected or () if test not in done and test != events.running]
        answer = answer_of(ending)
        if answer is not None:  # pytest returned, or never ran (no such device, no pytest)
            if not records and events.running is None:
                ended = tests_ended(answer, ending, pair["name"], events.conftest_failed)
                return [dict(ended, probe=pair["name"], duration=0.0)], said
            if events.running is not None:  # pytest.exit() in it, or a plugin that ended the session there
                records.append(dict(ended_in(answer, events), probe=events.running, duration=events.running_for()))
            records += [dict(not_reached(answer), probe=test, duration=0.0) for test in left]
            failed = session_failed(answer, records, ending, pair["name"])
            if failed and any(record["probe"] == pair["name"] for record in records):  # a node id: its one test's
                return [dict(record, **failed[0]) if record["probe"] == pair["name"] else record
                        for record in records], said  # fmt: skip
            return records + [dict(record, duration=0.0) for record in failed], said
        fate = pair_record(ending, events.running or pair["name"], pair["device"], limit)
        if events.running is None and not events.ended:  # it got nowhere: the tests left share its fate
            return records + [dict(fate, probe=test, duration=0.0) for test in left or [pair["name"]]], said
        if events.running is not None:
            records.append(dict(fate, probe=events.running, duration=events.running_for()))
        if not left:
            return records, said
        targets = [os.path.join(pair["root"], test) for test in left]


def session_failed(answer, records, ending, name):
    """A record named after the path pytest ran on where pytest's run failed though none of its tests did (a
    ``conftest.py``'s ``pytest_sessionfinish`` that sets the exit status, a coverage floor, ``--cov-fail-under``):
    by hand that run fails, and each test's record passing would hide it. None where pytest's exit status is
    0, or 5 where no test ran (its options deselected every one; 5 after a test ran is a hook's), or a test's
    record says why."""
    code = answer.get("pytest_exit")
    none_ran = all(record["outcome"] == UNAVAILABLE for record in records)
    if code in (None, 0) or (code == 5 and none_ran) or any(record["outcome"] in FAILED for record in records):
        return []
    lines = [line.strip() for line in ending.log_tail.splitlines() if line.strip()]
    said = ": " + " / ".join(lines[-3:]) if lines else ""
    message = "pytest ended with exit code {} though none of its tests failed{}".format(code, said)
    metrics = {"pytest_exit": code, "after_tests": True}  # views.supported.AFTER_TESTS
    return [{"outcome": ERROR, "metrics": metrics, "message": tail(message), "probe": name}]


def tests_ended(answer, ending, name, conftest_failed=""):
    """The record of a pytest run of ``name`` that ended without a test's record: why it ran none, that it ended
    before a test (:data:`BEFORE_TESTS`), and the ``conftest.py`` that failed to import where pytest's hook saw one
    (:data:`CONFTEST_FAILED`): what a bisect tells a name or option pytest refused from."""
    if "pytest_exit" not in answer:
        return pair_answer(answer)
    code = answer["pytest_exit"]
    if code == 5:
        why = ("collected no tests in {} (it collects test_*.py files and their test_* functions; "
               "list run() probes and scripts one by one)").format(name)  # fmt: skip
    else:
        why = "exited with code {} before running a test".format(code)
    log = ending.log_tail.strip()
    said = said_why(log, code)
    first = why + (": " + said if said else "")
    # normalised as a script's output is (the cell's folders, an address, its torch version): what a bisect by output
    # compares between releases, where each cell's would differ
    first = normalised_output(first.encode("utf-8", "replace"), output_rules(ending.places)).decode("utf-8", "replace")
    metrics = {"pytest_exit": code, BEFORE_TESTS: True}
    if conftest_failed:
        metrics[CONFTEST_FAILED] = conftest_failed
    return {"outcome": ERROR, "metrics": metrics, "message": "pytest " + first + (":\n" + log if log else "")}


def said_why(log, code):
    """Why pytest ended before a test, in its own words, the first line a table or a bisect shows: its ``ERROR:``
    line (``ERROR: not found: t.py::test_nope``); for a ``conftest.py`` that failed to import (exit code 4 too), where
    (if the log's end kept it) and what it raised; else what a hook raised last (:func:`raised_last`); '' where the
    log says none of these."""
    lines = [line.strip() for line in log.splitlines()]
    errors = [line for line in lines if line.startswith("ERROR:")]
    if errors:
        return errors[-1]
    where = [line for line in lines if line.startswith("ImportError while loading conftest")]
    raised = [line[1:].strip() for line in lines if line.startswith("E ")]
    if where or (raised and code == 4):
        return " ".join(where[:1] + raised[-1:])
    return raised_last(log)


GROUP_MARGIN = re.compile(r"^\s*\| ?")
"""The margin Python prints before each line of an exception group's traceback (``  | ``)."""


def raised_last(log):
    """What the last traceback in ``log`` says was raised (``RuntimeError: no such toolkit``, ``ExceptionGroup: hooks
    failed (2 sub-exceptions)``), as Python prints it after its frames (pytest's ``INTERNALERROR>`` and an exception
    group's margin before each line left out): never a line printed after it (pytest's summary, which holds how long
    it ran, or a hook's print); '' where the log holds no traceback's frames."""
    marker = "INTERNALERROR>"
    lines = [line[len(marker) + 1 :] if line.startswith(marker) else line for line in log.splitlines()]
    lines = [GROUP_MARGIN.sub("", line) for line in lines]
    frames = [at for at, line in enumerate(lines) if line.startswith('  File "')]
    after = lines[frames[-1] + 1 :] if frames else []
    return next((line.strip() for line in after if line.strip() and not line[:1].isspace()), "")


def ended_in(answer, events):
    """The record of a test pytest was running when it returned (``pytest.exit()``, which ends the session): by
    hand, the run stops there, and fails unless it exits with 0 (``pytest.exit(why, returncode=0)``); with pytest's
    words (``events``: :class:`ProgressOfTests`)."""
    code, said = answer.get("pytest_exit"), events.ended_session
    message = "pytest ended while it ran (exit code {}){}".format(code, ": " + said if said else "")
    return {"outcome": PASS if code == 0 else ERROR, "metrics": {"pytest_exit": code}, "message": message}


def not_reached(answer):
    """The record of a test pytest collected and returned without running (``-x`` in its options, a plugin)."""
    code = answer.get("pytest_exit")
    return {"outcome": UNAVAILABLE if code == 0 else ERROR, "metrics": {"pytest_exit": code},
            "message": "pytest ended (exit code {}) without running it".format(code)}  # fmt: skip


class ProgressOfTests(object):
    """What a pytest run's plugin wrote (pytest_plugin.py): the tests collected, those that ended, the one running.

    ``places``: the cell's folders, by which what each test printed and raised is normalised.
    """

    def __init__(self, data, places):
        self.collected = None
        self.deselected = []
        self.ended = []
        self.running = None
        self.started_at = None
        self.tests_because = ""
        self.ended_session = ""
        self.collecting = False
        self.distributed = False
        self.named_as_tests = None
        """Whether pytest, having read its configuration, took the path for a test module by its ``python_files``
        (None: it did not get so far, or did not say)."""
        self.conftest_failed = ""
        """The ``conftest.py`` that failed to import as pytest began, which ended it ('': none did)."""
        for line in data.decode("utf-8", "replace").splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue  # a line cut short by the process's end
            if not isinstance(event, dict):
                continue
            if isinstance(event.get("collected"), list):
                self.collected = [str(test) for test in event["collected"]]
                self.distributed = self.distributed or bool(event.get("distributed"))
            elif isinstance(event.get("deselected"), list):
                tests = [str(test) for test in event["deselected"]]
                self.deselected += tests
                self.ended += [deselected(test, event.get("by")) for test in tests]
            elif isinstance(event.get("named_as_tests"), bool):
                self.named_as_tests = event["named_as_tests"]
            elif isinstance(event.get("conftest_failed"), str):
                self.conftest_failed = event["conftest_failed"]
            elif event.get("collecting") is True:
                self.collecting = True
            elif isinstance(event.get("ended"), str):
                self.ended_session = event["ended"]
            elif "start" in event:
                self.running, self.started_at = str(event["start"]), event.get("at")
            elif "test" in event:
                because = event.get("tests_because")
                self.tests_because = self.tests_because or (because if isinstance(because, str) else "")
                self.ended.append(record_of_test(event, places))
                if self.ended[-1]["probe"] == self.running:
                    self.running = None

    def holds_tests(self, ending, path):
        """Whether the path pytest ran on is tests, as pytest says: it collected a test from it; or it could not
        collect a file it takes for a test module by its name (an import error, a bad parametrize), or the tests a
        file of another name defines once it imported (a bad parametrize), or failed before
        it began to collect (a ``conftest.py`` that raised or called ``pytest.exit()``), which by hand is a test
        run that failed, not a script; or its options deselected every test of it. A file it collected nothing
        from, without an error, is a script, but where pytest could not be asked (:meth:`unasked_test_module`)."""
        if self.collected or self.deselected or self.tests_because:
            return True
        return (
            self.failed_before_collecting(ending)
            or self.failed_test_module(ending, path)
            or self.unasked_test_module(ending, path)
        )

    def failed_test_module(self, ending, path):
        """Whether pytest returned a failure (neither 0 nor 5) as it collected ``path``, a test module by its name,
        though no collector said it failed (its import raised ``SystemExit``, which pytest ends on as an internal
        error, exit code 3; it called ``pytest.exit()``), or returned 0 there before it said what it collected (a
        ``conftest.py``'s ``pytest_collection`` that called ``pytest.exit(..., returncode=0)``), or its process
        ended there without a word (its import called ``os._exit(0)``, crashed or hung): by hand a run that fails or
        runs none of its tests, never a script that passes."""
        answer = answer_of(ending)
        code = None if answer is None else answer.get("pytest_exit")
        if answer is None or code == 0:
            return self.collecting and self.collected is None and self.named_module(path)
        return code not in (5, None) and self.named_module(path)

    def named_module(self, path):
        """Whether ``path`` is a test module by its name: by the project's ``python_files`` where pytest read them,
        else as pytest's default names them (``test_*.py``, ``*_test.py``)."""
        if self.named_as_tests is not None:
            return self.named_as_tests
        name = os.path.basename(path)
        return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))

    def unasked_test_module(self, ending, path):
        """Whether pytest does not import in this cell (a broken environment, a pin of the cell's), so it cannot be
        asked, or a ``conftest.py`` skipped every test at its import (``pytest.skip(..., allow_module_level=True)``
        where there is no GPU, or on an old torch), and ``path`` is named as a test module: by the project's
        ``python_files`` where pytest read it before the ``conftest.py`` ended it (``check_*.py`` as well), else as
        pytest's default names them (``test_*.py``, ``*_test.py``): tests that cannot run (an error) or that do not
        apply (``unavailable``), as by hand, never a script whose functions nobody calls passing. A file named
        otherwise runs as the script it may be (a Python with its own torch and no pytest runs ``repro.py``)."""
        answer = answer_of(ending)
        if answer is None or "pytest_exit" in answer or answer.get("outcome") not in (ERROR, UNAVAILABLE):
            return False
        return self.named_module(path)

    def failed_before_collecting(self, ending):
        """Whether pytest returned a failure (neither 0 nor 5, no tests) before it began to collect, or its process
        ended there once pytest had read its configuration (a ``conftest.py`` that called ``os._exit()``, crashed or
        hung at its import): the file was never imported, and by hand the run fails; or returned 0 there (a
        ``conftest.py`` that called ``sys.exit(0)``, a ``pytest_sessionstart`` that called ``pytest.exit(...,
        returncode=0)``) where the file is a test module by its ``python_files``: by hand pytest runs none of its
        tests. A file named otherwise (``repro.py``) is a script there, as ``python repro.py`` by hand runs it:
        pytest, ending well before it looked, never said it is tests."""
        if self.collecting:
            return False
        answer = answer_of(ending)
        if answer is None:
            return self.named_as_tests is not None
        if answer.get("pytest_exit") == 0:  # a conftest.py's sys.exit(0): by hand pytest says nothing, runs nothing
            return self.named_as_tests is True
        return answer.get("pytest_exit") not in (5, None)

    def collection(self, ending, path):
        """What pytest said of the path it collected, in words: why it is tests, or why it is run as a script."""
        count = len(self.collected or ()) + len(self.deselected)
        if count:
            left_out = ", {} deselected".format(len(self.deselected)) if self.deselected else ""
            return "pytest collected {} test{} from it{}".format(count, "" if count == 1 else "s", left_out)
        answer = answer_of(ending)
        if self.tests_because:
            return "pytest could not collect it, " + self.tests_because
        ended = "ran past its time limit" if ending.timed_out else exit_description(ending.code)
        if self.failed_before_collecting(ending):
            if answer is None:
                return "pytest's process {} before collecting it".format(ended)
            return "pytest ended with exit code {} before collecting it".format(answer["pytest_exit"])
        if self.failed_test_module(ending, path):
            if answer is None:
                return "pytest's process {} as it collected it, a test module by its name".format(ended)
            return "pytest ended with exit code {} as it collected it, a test module by its name".format(
                answer["pytest_exit"]
            )
        if self.collected is not None or (answer is not None and "pytest_exit" in answer):
            return "pytest collected no test from it"
        if answer is not None:
            return "pytest could not run: " + str(answer.get("message", ""))
        return "pytest's process {} before it said what it collected".format(ended)

    def running_for(self):
        started = self.started_at if isinstance(self.started_at, (int, float)) else time.time()
        return max(0.0, time.time() - started)


def deselected(test, by):
    """The record of a test pytest's options deselected (``by``: ``-m 'not slow'``): it does not run, as by hand."""
    message = "deselected by pytest's options ({})".format(by) if isinstance(by, str) else "deselected by pytest"
    return {"outcome": UNAVAILABLE, "metrics": {}, "message": message, "probe": test, "duration": 0.0}


def answer_of(ending):
    """What a pair's process answered, if it ended by itself and answered; else None."""
    return parsed(ending.answer) if ending.code == 0 and not ending.timed_out else None


def record_of_test(event, places):
    """A test's record from the event of its end; what it printed (or why it was never seen) and raised in its
    metrics, as a script's."""
    duration = event.get("duration")
    seconds = float(duration) if isinstance(duration, (int, float)) else 0.0
    record = dict(pair_answer(event), probe=str(event["test"]), duration=seconds)
    printed, raised, unseen = event.get("printed"), event.get("raised"), event.get("output_unseen")
    if isinstance(printed, str) and isinstance(raised, str):
        output = read_output(io.BytesIO(printed.encode("utf-8", "replace")), places)
        unseen = unseen if isinstance(unseen, str) else ""
        metrics = dict(record["metrics"], **output_metrics(output, tail(raised), places, unseen))
        if len(raised) > MAX_MESSAGE:  # all of it, by digest, as a script's (pairs.whole_of)
            metrics["raised_sha256"] = said_digest(raised, places)
        record["metrics"] = metrics
    return record


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
