"""The protocol between the parent and the worker: the request, the messages, the limits on what a pair sends."""

import ast
import hashlib
import io
import json
import os
import stat

PROTOCOL_VERSION = 2
"""Sent in the "ready" message; the parent refuses a worker that speaks another."""


PASS = "pass"
FAIL = "fail"
ERROR = "error"
CRASH = "crash"
TIMEOUT = "timeout"
UNAVAILABLE = "unavailable"
"""The outcomes of the records the worker sends, as the host's ``torchmatrix.core.Outcome`` names them (which
this side cannot import: the host's tests check that the two agree)."""


BEFORE_TESTS = "before_tests"
"""The metric of a test file's record where pytest ended before it ran a test (a name or an option it refused, a
``conftest.py`` that failed to import or exited): no test printed anything."""
CONFTEST_FAILED = "conftest_failed"
"""The metric naming the ``conftest.py`` whose import failed as pytest began (pytest's exit code 4, as for a name or
an option it refuses), as pytest's plugin hook saw it."""


MODULE = "module"
SCRIPT = "script"
PYTEST = "pytest"
SCRIPT_OR_TESTS = "script-or-tests"
"""The kinds of probe a pair may be (the host's ``torchmatrix.core.Kind``, checked by its tests); the last, a .py
file without ``run(device)``, is tests or a script as pytest, asked in the cell, says."""


def defines_run(source, filename):
    """Whether a .py file's ``source`` (bytes) defines ``run`` at its top level as the worker calls it,
    ``run(device)``, which makes it a module; None where this Python cannot parse it.

    ``run``'s first parameter is ``device`` and any other has a default: a script's own helper ``run(x)``, or
    ``run`` imported (``from subprocess import run``), does not make it a module. The host tells a module by this
    rule as it reads a matrix; the worker, with the cell's Python, for a file the host's Python cannot parse.
    """
    try:
        tree = ast.parse(source, filename)
    except (SyntaxError, ValueError):
        return None
    return any(is_run_device(node) for node in tree.body)


def is_run_device(node):
    """Whether a top-level statement defines ``run(device)`` (:func:`defines_run`)."""
    if not isinstance(node, ast.FunctionDef) or node.name != "run":
        return False
    arguments = node.args
    positional = list(getattr(arguments, "posonlyargs", [])) + list(arguments.args)  # posonlyargs: 3.8 and newer
    if not positional or positional[0].arg != "device":
        return False
    keyword_only_required = any(default is None for default in arguments.kw_defaults)
    return len(positional) - 1 <= len(arguments.defaults) and not keyword_only_required


OUTCOMES_A_PROBE_MAY_RETURN = (PASS, FAIL)


OUTCOMES_A_CHILD_MAY_SEND = OUTCOMES_A_PROBE_MAY_RETURN + (ERROR, UNAVAILABLE)


OUTCOMES_THE_WORKER_MAY_SEND = OUTCOMES_A_CHILD_MAY_SEND + (CRASH, TIMEOUT)
"""A child's, and the worker's own for a pair's process that died or ran past its limit."""


OPTIONS_VARIABLE = "TORCHMATRIX_PROBE_OPTIONS"
"""The probes' options, JSON with an entry per probe (the host's ``torchmatrix.variables.PROBE_OPTIONS``): a pair
finds its own probe's entry alone, the options its record holds."""


INPUTS_VARIABLE = "TORCHMATRIX_INPUTS"
"""Names the folder of inputs every cell of a machine shares (the host's ``torchmatrix.variables.INPUTS``)."""


WORKER_FAILED = 70
"""The status the worker's own code ends a pair's process with where it failed there (``EX_SOFTWARE``)."""

READ_UNTOLD = "not all written down"
"""What the worker sends as a pair's files read where one of its processes could not write down a file it read (its
journal: a full disk, a file size limit): the record cannot say what its pair read, and is never current."""


MODULE_LOOKED_FOR = ".*"
"""Ending a path the pair "read" (``folder/name.*``): the module ``name`` looked for in ``folder`` by the import
system, whose forms there (``name.py``, ``name/__init__.py``, an extension module, …) the host digests together:
one appearing is a change, as a file that appears is."""

FILE_THERE = " (whether it is there)"
"""Ending a path the pair "read" whose file (or folder) the environment's code (pytest, torch) only asked about
(``os.path.exists``, ``Path.is_file``) and found there: what it decided by is that it is there, and what it is, which
the host says as ``there`` or ``a folder`` (None: gone). A file a pair asks about and then reads counts by its content,
one not there by its absence."""

FILE_STATED = " (what os.stat says of it)"
"""Ending a path whose file (or folder, or link) the pair's own code asked about (``os.path.getsize``,
``os.path.getmtime``, ``os.readlink``, ``Path.stat``, ``os.fstat``): what it may have decided by is all ``os.stat``
says (:func:`stat_digest`)."""

FOLDER_LISTED = " (what is in it)"
"""Ending the path of a folder the pair's own code listed (``os.listdir``, ``os.scandir``, ``glob``, ``os.walk``):
the host digests the names in it, so that a file put there or taken away is a change."""

DISTRIBUTIONS_IN = " (the distributions in it)"
"""Ending the path of a folder ``importlib.metadata`` listed as it looked for installed distributions (pytest's
plugins, torch's backends, by their entry points): the host digests the names of the distributions' metadata there
(``*.dist-info``, ``*.egg-info``), so that one put there (``pip install -e .``) is a change."""

LEADS_TO = " (the file it is)"
"""Ending the path of a script the pair ran: where it leads, through links (``os.path.realpath``), whose folder is
first on ``sys.path``, so that a link pointed at the same script in another folder, beside other modules, is a
change."""

ASKED_ENDINGS = (FILE_THERE, FILE_STATED, FOLDER_LISTED, DISTRIBUTIONS_IN, LEADS_TO)


def asked_digest(entry):
    """What the file or folder an ``entry`` (a path ending with one of :data:`ASKED_ENDINGS`) names is now, as its
    ending asks: ``there`` or ``a folder``; the digest of what ``os.stat`` says of it; of the names in it (of its
    distributions' metadata); the path it leads to. None where nothing is there. The worker and the host say it by
    this one rule."""
    path, ending = asked_path(entry)
    if ending == FILE_THERE:
        return "there" if os.path.isfile(path) else "a folder" if os.path.isdir(path) else None
    if ending == FILE_STATED:
        return stat_digest(path)
    if ending == FOLDER_LISTED:
        return listing_digest(path)
    if ending == DISTRIBUTIONS_IN:
        return listing_digest(path, lambda name: is_metadata(path, name))
    if ending == LEADS_TO:
        return os.path.realpath(path) if os.path.lexists(path) else None
    return None


def asked_path(entry):
    """The path of an ``entry`` of :func:`asked_digest`, and its ending (None: no such entry)."""
    ending = next((ending for ending in ASKED_ENDINGS if entry.endswith(ending)), None)
    return (entry[: -len(ending)], ending) if ending else (entry, None)


def stat_digest(path):
    """The sha256 of what ``os.lstat``, ``os.stat`` and ``os.readlink`` say of ``path``, but its last access (which a
    read changes) and its device's number: where it links to, its kind and permissions, inode, owner and group, its
    extended attributes, and a file's links, size and times of change; None where nothing is there."""
    try:
        link = os.lstat(path)
    except OSError:
        return None
    target = os.readlink(path) if stat.S_ISLNK(link.st_mode) else None
    try:
        found = os.stat(path)
    except OSError:
        found = link  # a link to nothing
    said = [target, found.st_mode, found.st_ino, found.st_uid, found.st_gid, extended_attributes(path)]
    if stat.S_ISREG(found.st_mode):  # a folder's links and times change as files are made in it
        said += [found.st_nlink, found.st_size, found.st_mtime_ns, found.st_ctime_ns]
    return hashlib.sha256(json.dumps(said).encode("ascii")).hexdigest()


def extended_attributes(path):
    """The extended attributes of the file at ``path`` (``os.getxattr``), each name with its value's sha256, sorted;
    none where this platform or file system has none."""
    try:
        names = sorted(os.listxattr(path))
        return [[name, hashlib.sha256(os.getxattr(path, name)).hexdigest()] for name in names]
    except (AttributeError, OSError):
        return []


def is_metadata(folder, name):
    """Whether ``name`` in ``folder`` is the metadata of a distribution, as ``importlib.metadata`` finds it (any
    case): ``*.dist-info``, ``*.egg-info``, and an ``.egg`` folder's ``EGG-INFO``."""
    name = name.lower()
    return name.endswith((".dist-info", ".egg-info")) or (folder.lower().endswith(".egg") and name == "egg-info")


def listing_digest(folder, kept=None):
    """The sha256 of the names in ``folder`` (those ``kept`` keeps), sorted; None where it is no folder."""
    try:
        names = sorted(name for name in os.listdir(folder) if kept is None or kept(name))
    except OSError:
        return None
    return hashlib.sha256(b"\n".join(os.fsencode(name) for name in names)).hexdigest()


SITE_PTH_FILES = "*.pth"
"""Ending a path the pair "read" (``folder/*.pth``): the ``.pth`` files of a site folder of the pair's interpreter,
which ``site`` ran as it started, before the worker heard anything; the host digests their names and contents
together: one added, changed or removed is a change."""

EXECUTABLE = " executable"
"""Ending the digest of a file the process may run (``os.access(path, os.X_OK)``): a program made runnable or not
(``chmod +x``) changes what runs, and where a name is found along ``PATH``, as a change of its content does."""


def content_written_since(changed, modified, began):
    """Whether a file's content was written at ``began`` or later, by its times: ``changed``, the kernel's time of its
    last change (``st_ctime``, stamped on every write, rename or change of its times, mode, links or attributes,
    which no program sets), and ``modified``, its content's (``st_mtime``, stamped with the same time on a write).
    Both are since then, and the content's is no later than the change: one ahead of it was given (``touch -d``, a
    copy from a machine whose clock is ahead), not written, and a change since then was of the rest."""
    return began is not None and began <= modified <= changed


def file_digest(path, open_file=os.open, access=os.access, stat_of=os.fstat):
    """The sha256 of the file at ``path`` as it is now (hexadecimal), ending :data:`EXECUTABLE` where it may be run;
    None where it is no readable file of content: not there, not readable, or a pipe, a device or a socket, whose
    reading may never end (opened without waiting for a pipe's other end). The worker and the host digest a file by
    this one rule, by the functions ``os`` had as this module was imported: a pair's code that replaced ``open``
    never sees it."""
    try:
        fd = open_file(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    digest = hashlib.sha256()
    with io.FileIO(fd) as file:
        try:
            if not stat.S_ISREG(stat_of(fd).st_mode):
                return None
            for chunk in iter(lambda: file.read(1 << 20), b""):
                digest.update(chunk)
        except OSError:
            return None
    return digest.hexdigest() + (EXECUTABLE if access(path, os.X_OK) else "")


MAX_MESSAGE = 4000


MAX_INT_DIGITS = 20
"""The most digits an integer in a result file may have (the host's ``torchmatrix.util.storedjson.MAX_INT_DIGITS``,
checked by its tests): a wider one in a probe's metrics is sent as text, as a non-finite float is."""


MAX_METRICS_BYTES = 1 << 20


MAX_ANSWER_BYTES = MAX_METRICS_BYTES + (1 << 18)
"""The most a child may send: a record's metrics within their limit, with its message and traceback."""


DEVICE_VARIABLE = "TORCHMATRIX_DEVICE"
"""Where a script and tests learn their device; set for every probe."""


WORKER_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "worker.py")
"""The script the parent runs, and a spawned pair's process runs again (``--child``)."""


PLUGIN_FILE = os.path.join(os.path.dirname(WORKER_FILE), "pytest_plugin.py")


class ParentGone(Exception):
    """The parent closed this worker's stdin: it ended, or wants the worker to stop."""


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


def write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def parsed(answer):
    """The child's answer as a dict; None if it sent none, too much, or something else."""
    if not answer or len(answer) > MAX_ANSWER_BYTES:
        return None
    try:
        value = json.loads(answer.decode("utf-8"))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
