"""What a pair's process does: one probe, script or test run on one device, from one seed, then its answer."""

import atexit
import builtins
import contextlib
import faulthandler
import gc
import importlib.machinery
import importlib.util
import json
import os
import signal
import sys
import tempfile
import traceback
import types
import weakref

from .answers import checked, describe, exit_answer, exit_status, print_exit_code, said_of, tail, unavailable
from .fingerprint import device_available, fingerprint
from .protocol import (
    DEVICE_VARIABLE,
    ERROR,
    FAIL,
    MAX_MESSAGE,
    OPTIONS_VARIABLE,
    PLUGIN_FILE,
    PYTEST,
    SCRIPT,
    UNAVAILABLE,
    WORKER_FAILED,
)
from .reads import FilesRead, FromSources, SourceOnly, excluded_folders
from .records import said_digest
from .reply import Reply


def child_main(job):
    """Do ``job`` in this new process, store its answer in its file (``job["answer"]``: :class:`Reply`, made ready
    before the job begins) and end the process; never returns."""
    status, own_pid, reply = WORKER_FAILED, os.getpid(), None
    try:
        reply = Reply(job["answer"])
        ordinary_signals()
        job = dict(job, folder=os.path.dirname(os.path.realpath(job.get("path") or os.curdir)), pid=own_pid)
        reads = None
        if job["job"] != "fingerprint":
            reads = FilesRead(job["scratch"], job.get("read"), reply.untold, job.get("targets", ()))
        if job["job"] == SCRIPT:
            reads.runs(job["path"])
        answer = fingerprint_answer(job["devices"]) if reads is None else perform(job)
        told = [] if reads is None else reads.entries() or []
        if os.getpid() == own_pid:  # a probe's forked child that returned here is not the pair's process
            said = json.dumps(answer, allow_nan=False).encode("utf-8")
            lines = b"\n".join(json.dumps(entry).encode("ascii") for entry in told)  # one each
            if not reply.holds(said, lines):  # what the room cannot hold, the journal does
                reads.write_all_down(told)
                lines = b""
            reply.store(said, lines)
        status = 0
    except SystemExit as exit:  # sys.exit() in a probe ends its process, as os._exit() does
        print_exit_code(exit)
        status = exit_status(exit)
    except Exception as error:  # the worker's own code failed here (a probe's exception is its outcome)
        traceback.print_exc()
        if reply is not None and os.getpid() == own_pid:
            message = "torchmatrix's worker failed in this pair's process: " + describe(error)
            reply.store(json.dumps({"outcome": ERROR, "metrics": {}, "message": message}).encode("utf-8"), b"")
            status = 0
    except BaseException:
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(status)  # no atexit handlers (a script's ran at its end), no torch shutdown: the parent decides


def ordinary_signals():
    """Give this process the signals of a Python started by hand, in a terminal: none blocked, none ignored but
    those Python ignores itself (``SIGPIPE``, ``SIGXFSZ``), Ctrl-C a ``KeyboardInterrupt``. How torchmatrix was
    started (``nohup``, which ignores ``SIGHUP``; ``&`` in a script, which ignores ``SIGINT`` and ``SIGQUIT``; a
    program that blocks a signal) reaches neither the pair nor the programs it starts, which would keep both."""
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
    pythons_own = [getattr(signal, name, None) for name in ("SIGPIPE", "SIGXFSZ")]
    for number in range(1, signal.NSIG):
        if number in pythons_own:
            continue
        try:
            if signal.getsignal(number) is signal.SIG_IGN:
                signal.signal(number, signal.default_int_handler if number == signal.SIGINT else signal.SIG_DFL)
        except (OSError, ValueError, RuntimeError):  # no such signal here, or one no process may handle
            pass


def fingerprint_answer(devices):
    import torch

    checked = {device: device_available(torch, device) for device in devices}
    return {"environment": fingerprint(torch), "devices": checked}


def perform(job):
    """Run the pair's probe, script or tests, each as it runs by hand but from one seed, on its device alone.

    A script's process is a new interpreter (:func:`spawned_child`) whose torch the script's own ``import torch``
    loads, after whatever the script set before it (``os.environ``, ``sys.setdlopenflags``), as by hand; its
    device is one the worker found. A probe's and tests' process finds torch imported by the worker, and asks it
    whether the device is there.
    """
    if job["job"] == SCRIPT:
        start_as_a_pair(job)
        return run_script(job)
    import torch

    available, reason = device_available(torch, job["device"])
    if not available:
        return unavailable(reason)
    start_as_a_pair(job)
    ThreadsAsImported(torch)
    if job["job"] == PYTEST:
        return run_tests(job)
    return run_pair(torch, job["name"], job["path"], job["device"])


def start_as_a_pair(job):
    """What every pair starts with: its device, its own options, its seed, bytecode of sources alone."""
    os.environ[DEVICE_VARIABLE] = job["device"]
    keep_own_options(job.get("name"))
    keep_bytecode_out_of_the_folder()
    if job["device"] == "cpu":
        hide_accelerators()
    seed_generators(job.get("seed", 0))
    FromSources(excluded_folders(job["scratch"])).install()
    forget_distribution_listings()


def forget_distribution_listings():
    """Forget the folders ``importlib.metadata`` listed before the pair began (torch's import, in the worker, looks
    for its backends' distributions), which it keeps while a folder's time is unchanged: the pair's own look lists
    them again, and so counts what it found there (a plugin's ``*.dist-info`` put beside the tests)."""
    for name in ("importlib.metadata", "importlib_metadata"):
        fast_path = getattr(sys.modules.get(name), "FastPath", None)
        for cached in (getattr(fast_path, "__new__", None), getattr(fast_path, "lookup", None)):
            getattr(cached, "cache_clear", lambda: None)()


class ThreadsAsImported(object):
    """The tests' own ``import torch`` finds torch imported already (by the worker, which spares it the cost), so a
    thread count their code set before it (``os.environ["OMP_NUM_THREADS"] = "1"`` in a ``conftest.py``) reached
    no OpenMP as it loaded: at the first ``import torch`` of the pair's code (or of what it imports), one it set
    since the pair began is given to torch (``torch.set_num_threads``), as OpenMP, loaded by that import by hand,
    would have read it then. (A script's own import loads torch: :func:`perform`.)"""

    def __init__(self, torch):
        self.torch = torch
        self.given = os.environ.get(THREADS_VARIABLE)
        self.original = builtins.__import__
        builtins.__import__ = self.importing

    def importing(self, name, *arguments, **options):
        if name == "torch" or name.startswith("torch."):
            builtins.__import__ = self.original  # once: what the pair sets later, by hand, torch never reads
            threads = os.environ.get(THREADS_VARIABLE)
            if threads != self.given and threads is not None and threads.strip().isdigit() and int(threads) > 0:
                self.torch.set_num_threads(int(threads))
        return self.original(name, *arguments, **options)


THREADS_VARIABLE = "OMP_NUM_THREADS"
"""How many threads torch's CPU kernels use, as OpenMP reads it once, as it loads."""


def keep_own_options(name):
    """Leave the pair's probe ``name`` its own entry of the options (:data:`OPTIONS_VARIABLE`) alone: the options its
    record holds. Another probe's, which its record does not hold, would reach it unrecorded."""
    try:
        options = json.loads(os.environ.get(OPTIONS_VARIABLE) or "{}")
    except ValueError:
        options = {}
    own = {name: options[name]} if isinstance(options, dict) and name in options else {}
    os.environ[OPTIONS_VARIABLE] = json.dumps(own, sort_keys=True)


def keep_bytecode_out_of_the_folder():
    """Have the Pythons a pair starts (``python -m helper``) keep their bytecode where this one does, not in
    ``__pycache__`` folders beside the sources, in the folder the pair runs from (Python 3.8+; a value the matrix
    sets stands)."""
    prefix = getattr(sys, "pycache_prefix", None)
    if prefix:
        os.environ.setdefault("PYTHONPYCACHEPREFIX", prefix)


def hide_accelerators():
    """Make this process see no CUDA (nor ROCm) device and no MPS: what runs on the cpu pair runs on the cpu.

    CUDA reads the variables when it starts, which it has not in this process (the worker never starts it).
    """
    os.environ["CUDA_VISIBLE_DEVICES"] = ""
    os.environ["HIP_VISIBLE_DEVICES"] = ""
    after_import("torch", hide_mps)


def hide_mps(torch):
    mps = getattr(torch.backends, "mps", None)
    if mps is not None:
        mps.is_available = lambda: False


def seed_generators(seed):
    """Seed Python's ``random``, torch's generators and NumPy's global one, now or as the pair imports them."""
    after_import("random", lambda random: random.seed(seed))
    after_import("torch", lambda torch: torch.manual_seed(seed))
    after_import("numpy.random", lambda numpy_random: seed_numpy(numpy_random, seed))


def seed_numpy(numpy_random, seed):
    with contextlib.suppress(Exception):  # a NumPy without a global generator is nothing to seed
        numpy_random.seed(seed)


def after_import(name, action):
    """Call ``action`` with the environment's module ``name``: now, where it is imported, or as soon as the pair
    imports it.

    The environment's is the one Python finds now, before the pair's code puts its own folder first on sys.path: a
    module of that name the pair brings itself (a ``random.py`` or ``torch.py`` beside a script, which its import
    finds by hand too) is the pair's own, and no action touches it.
    """
    if name in sys.modules:
        action(sys.modules[name])
    else:
        package = name.partition(".")[0]
        sys.meta_path.insert(0, AfterImport(name, package, origin(importlib.util.find_spec(package)), action))


def origin(spec):
    """Where the module of ``spec`` comes from (its file); None for no module."""
    return getattr(spec, "origin", None)


class AfterImport(object):
    """A finder that lets the module ``name`` import as it would, then, where its top-level package came from
    ``package_origin``, calls ``action`` with it; once, at its first import.

    It stays until the module is imported: a look (``importlib.util.find_spec``) is no import.
    """

    def __init__(self, name, package, package_origin, action):
        self.name = name
        self.package = package
        self.package_origin = package_origin
        self.action = action
        self.finding = False

    def find_spec(self, name, path=None, target=None):
        if name != self.name or self.finding:
            return None
        self.finding = True
        try:
            spec = importlib.util.find_spec(name)  # as the finders after this one find it
        finally:
            self.finding = False
        if spec is None or spec.loader is None:
            return spec
        execute = spec.loader.exec_module

        def exec_module(module):
            execute(module)
            with contextlib.suppress(ValueError):
                sys.meta_path.remove(self)
            package = sys.modules.get(self.package)
            if self.package_origin is not None and origin(getattr(package, "__spec__", None)) == self.package_origin:
                self.action(module)

        spec.loader.exec_module = exec_module
        return spec


def run_pair(torch, name, path, device):
    try:
        result = load_probe(name, path).run(device)
        if device == "cuda":
            torch.cuda.synchronize()
    # A probe's exception is its outcome, not its process's end; KeyboardInterrupt too: the pair's process has a
    # group of its own, which a Ctrl-C at the terminal never reaches, so only the probe can have raised it.
    except (Exception, KeyboardInterrupt) as error:
        return {"outcome": ERROR, "metrics": {"traceback": tail(traceback.format_exc())}, "message": describe(error)}
    return checked(result)


def load_probe(name, path):
    module = load_module("torchmatrix_probe_" + name, path)
    if not callable(getattr(module, "run", None)):
        raise TypeError("probe file {} defines no run(device) function".format(path))
    return module


def load_module(name, path):
    """The module of the file at ``path``, compiled from its source: bytecode cached from a source of the same size
    and modification time (``cp -p``, a symlink switched) would run the old code under the new file's record."""
    spec = importlib.util.spec_from_file_location(name, path, loader=SourceOnly(name, path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_script(job):
    """Run the script as its own ``__main__``, its stdout going to ``job["output"]``; how it ended.

    As ``python script.py`` would: as the module ``__main__`` (:func:`as_main`),
    its own folder first on sys.path (``job["folder"]``: a link's target's, as
    python follows it),
    its path as sys.argv[0] (and the command line ``python script.py``), its
    traceback on stderr (or to ``sys.excepthook``, where the script set its
    own), then all python does as it exits (:func:`end_as_python_does`). What
    it prints stays out of the answer: the worker reads the output file, even
    after a crash.
    """
    path = job["path"]
    redirect_stdout(job["output"])
    sys.argv = [path]
    sys.orig_argv = [sys.executable, path]
    if not getattr(sys.flags, "safe_path", False):  # python -P, PYTHONSAFEPATH: python puts no folder there
        sys.path.insert(0, job["folder"])
    main = as_main(path)
    ended = None  # what the script raised, SystemExit included
    try:
        with open(path, "rb") as source:
            code = compile(source.read(), path, "exec", dont_inherit=True)
        exec(code, main.__dict__)
        if job["device"] == "cuda" and "torch" in sys.modules:
            sys.modules["torch"].cuda.synchronize()
    except BaseException as error:  # the script's end, not its process's: anything it raised is its outcome
        ended = error
    # The script's trace and profile functions see python's work as it exits, not the worker's (end_as_python_does):
    # taken off here, where a call of the worker's would be the first thing they saw.
    watchers = sys.gettrace(), sys.getprofile()
    try:
        sys.settrace(None)
        sys.setprofile(None)
    except Exception:  # noqa: S110 - the script's audit hook refused it: they see the worker's code
        pass
    answer, status = script_answer(ended, path, job["places"])  # status: python's, or minus the signal it dies of
    script_module, main, ended = weakref.ref(main), None, None  # python's own hold on it alone
    if not end_as_python_does(script_module, watchers) and status >= 0:
        answer, status = exit_answer(FLUSH_FAILED), FLUSH_FAILED
    if status < 0 or os.getpid() != job["pid"]:
        end_process_as_python(status)
    return answer


def script_answer(ended, path, places):
    """How a script that raised ``ended`` (None: nothing) ended: its answer, and python's exit status for it (minus
    the signal it dies of: an uncaught KeyboardInterrupt's SIGINT). An exception is told of as python tells it."""
    if ended is None:
        return exit_answer(0), 0
    if isinstance(ended, SystemExit):
        print_exit_code(ended)
        status = exit_status(ended)
        answer = exit_answer(status)
        if ended.code is not None and not isinstance(ended.code, int):  # sys.exit("why"): python prints why
            answer["message"] = tail(said_of(ended.code))
            answer["metrics"].update(whole_of(said_of(ended.code), places))
        return answer, status
    status = -signal.SIGINT if type(ended) is KeyboardInterrupt else 1  # python's test: no subclass
    return exception_answer(ended, path, places), status


def end_process_as_python(status):
    """End this process as python ends with ``status``: where it is negative, by the signal it names (an uncaught
    ``KeyboardInterrupt``: python dies of SIGINT, after its end). So ends a script interrupted, and a child the
    script forked that came back here, with its own status, as its parent waits for it."""
    if status < 0:  # by raise_signal, which no audit hook of the script's hears (os.kill, on Pythons without it)
        signal.signal(-status, signal.SIG_DFL)
        getattr(signal, "raise_signal", lambda number: os.kill(os.getpid(), number))(-status)
    os._exit(status if status >= 0 else 128 - status)


def as_main(path):
    """The module ``__main__`` that ``python script.py`` runs the script at ``path`` as, in ``sys.modules`` (where
    pickle and an exit handler look it up), with the globals python gives it, in its order."""
    main = types.ModuleType("__main__")
    main.__package__, main.__spec__ = None, None
    main.__loader__ = importlib.machinery.SourceFileLoader("__main__", path)
    if "__annotations__" in vars(sys.modules["__main__"]):  # as this python gave the worker's own __main__
        main.__annotations__ = {}
    main.__builtins__ = builtins
    main.__file__, main.__cached__ = path, None
    sys.modules["__main__"] = main
    return main


def end_as_python_does(script_module, watchers):
    """What ``python script.py`` does after the script, as it exits: wait for the threads it started that are no
    daemons (``threading``'s shutdown), run the exit handlers (``atexit``: the script's, torch's), these two with the
    trace and profile functions the script left set (``watchers``) on, as python runs them; flush its output,
    put back python's own ``sys.stdout`` and the rest, then let go of the script's module (``script_module``, a weak
    reference to ``__main__``): what it alone held is collected, finalisers (``__del__``) first, while its globals
    stand; a module something still holds (a signal handler) has its globals cleared then
    (:func:`clear_as_python_does`); then flush again. What they print is the script's output; one that ends the
    process (``os._exit(1)``) ends the script so; what one raises is printed and passed over, as by python. Whether
    its output could be flushed (python exits with :data:`FLUSH_FAILED` where not)."""
    shutdown = getattr(sys.modules.get("threading"), "_shutdown", None)  # the script's own threading
    trace, profile = watchers
    try:  # here, not in a function of the worker's, whose call they would see
        sys.setprofile(profile)
        sys.settrace(trace)
    except Exception:  # noqa: S110 - the script's audit hook refused it: they see none of python's end
        pass
    if shutdown is not None:
        shutdown()
    atexit._run_exitfuncs()
    try:
        sys.settrace(None)
        sys.setprofile(None)
    except Exception:  # noqa: S110 - the script's audit hook refused it: they see the worker's code
        pass
    flushed = flush_as_python_does()
    sys.stdin, sys.stdout, sys.stderr = sys.__stdin__, sys.__stdout__, sys.__stderr__  # python's own, as it ends
    if script_module() is not None and sys.modules.get("__main__") is script_module():
        del sys.modules["__main__"]
    gc.collect()
    held = script_module()
    if held is not None:
        clear_as_python_does(held.__dict__)
        held = None
        gc.collect()
    return flush_as_python_does() and flushed  # again: what the finalisers printed


def flush_as_python_does():
    """Flush ``sys.stdout`` and ``sys.stderr``, whatever the script made them, as python does as it exits: each
    that is neither None nor closed; a failure to flush stdout is printed. Whether both could be flushed."""
    flushed = True
    for stream in (sys.stdout, sys.stderr):
        if stream is None or is_closed(stream):
            continue
        try:
            stream.flush()
        except Exception:
            if stream is sys.stdout:
                with contextlib.suppress(Exception):  # told of where it can be, as python's unraisable hook does
                    traceback.print_exc()
            flushed = False
    return flushed


def is_closed(stream):
    """Whether ``stream`` says it is closed, as python asks it (a stream that cannot say is open)."""
    try:
        return bool(stream.closed)
    except Exception:
        return False


def clear_as_python_does(namespace):
    """Set a module's globals to None as python does at its end: those named with one leading ``_`` first, then all
    but ``__builtins__``."""
    for name in list(namespace):
        if name.startswith("_") and not name.startswith("__"):
            namespace[name] = None
    for name in list(namespace):
        if name != "__builtins__":
            namespace[name] = None


FLUSH_FAILED = 120
"""The exit status of a python whose stdout or stderr could not be flushed as it exited (``Py_RunMain``'s)."""


def redirect_stdout(path):
    """fd 1 (print's and C's stdout) to the file at ``path``; stderr stays the pair's log."""
    sys.stdout.flush()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | getattr(os, "O_BINARY", 0))
    os.dup2(fd, 1)
    os.close(fd)


def exception_answer(error, path, places):
    """A script that raised: AssertionError fails, unittest.SkipTest does not apply, anything else is an error.

    ``places``: the cell's folders, by which a message too long to keep is normalised before its digest is taken.
    """
    text = script_traceback(error, path)
    print_as_python_does(error, text)
    if is_skip(error):
        return {"outcome": UNAVAILABLE, "metrics": {}, "message": tail(said_of(error))}
    outcome = FAIL if isinstance(error, AssertionError) else ERROR
    said = "{}: {}".format(type(error).__name__, said_of(error))
    metrics = dict(traceback=tail(text), **whole_of(said, places))
    return {"outcome": outcome, "metrics": metrics, "message": describe(error)}


def print_as_python_does(error, text):
    """Tell of the script's uncaught ``error`` (``text``: its traceback) as python does: kept in ``sys.last_value``
    and the rest for its exit handlers, then written on ``sys.stderr`` (nowhere where the script made it None), or
    given to the script's own ``sys.excepthook``; a hook that fails, or is None, is told of on python's own stderr,
    and the script ends all the same."""
    sys.last_type, sys.last_value, sys.last_traceback = type(error), error, error.__traceback__
    if sys.version_info >= (3, 12):
        sys.last_exc = error
    hook = sys.excepthook
    try:
        if hook is sys.__excepthook__:
            if sys.stderr is not None:
                sys.stderr.write(text)
        else:
            hook(type(error), error, error.__traceback__)
    except BaseException:  # what the script's hook or stream raised ends nothing, as in python
        told = "Error in sys.excepthook:\n{}\nOriginal exception was:\n{}".format(traceback.format_exc(), text)
        with contextlib.suppress(BaseException):
            sys.__stderr__.write(told)


def whole_of(said, places):
    """What a record keeps of a message longer than it holds: the digest of all of it, which by-output compares."""
    return {"raised_sha256": said_digest(said, places)} if len(said) > MAX_MESSAGE else {}


def is_skip(error):
    """unittest.SkipTest, or pytest's skip (``pytest.skip(..., allow_module_level=True)`` atop a test module that
    pytest, collecting no test from it, left to run as a script)."""
    unittest = sys.modules.get("unittest")  # imported by whatever raised SkipTest
    outcomes = sys.modules.get("_pytest.outcomes")
    return (unittest is not None and isinstance(error, unittest.SkipTest)) or (
        outcomes is not None and isinstance(error, getattr(outcomes, "Skipped", ()))
    )


def script_traceback(error, path):
    """The traceback of ``error`` from the script's first frame on, as python prints it: with each frame's line of
    source where it can be read (an audit hook of the script's may refuse to open the file: python then leaves it
    out, and so does this)."""
    frames = error.__traceback__
    while frames is not None and frames.tb_frame.f_code.co_filename != path:
        frames = frames.tb_next  # this worker's frames are no part of the script's story
    try:
        return "".join(traceback.format_exception(type(error), error, frames))
    except Exception:
        where = ['  File "{}", line {}, in {}\n'.format(frame.f_code.co_filename, line, frame.f_code.co_name)
                 for frame, line in traceback.walk_tb(frames)]  # fmt: skip
        said = traceback.format_exception_only(type(error), error)
        return "".join(["Traceback (most recent call last):\n"] + where + said)


def run_tests(job):
    """Run pytest on ``job["targets"]`` in this process; its plugin writes each test's end to ``job["progress"]``."""
    try:
        import pytest
    except ImportError as error:
        return {"outcome": ERROR, "metrics": {}, "message": "pytest does not import in this cell: {}".format(error)}
    plugin = load_module("torchmatrix_pytest_plugin", PLUGIN_FILE)
    if getattr(sys, "pycache_prefix", None) is None:
        sys.dont_write_bytecode = True  # no __pycache__ in the tests' folders (pytest's rewritten asserts included)
    # pytest finds its root and configuration as by hand; tmp_path and the cache (the `cache` fixture, --lf) are in
    # the pair's own temporary folder (its TMPDIR, which its output is normalised by), never in the folder it runs
    # from: pytest's own numbers tmp_path per run, and empties a basetemp it is given
    scratch = tempfile.gettempdir()
    arguments = ["--continue-on-collection-errors", "-o", "cache_dir=" + os.path.join(scratch, "pytest-cache")]
    arguments += ["--basetemp", os.path.join(scratch, "pytest")]
    progress = plugin.Progress(job["progress"], job["root"])
    try:
        code = pytest.main(arguments + job["targets"], plugins=[plugin, progress])
    except pytest.skip.Exception as skipped:  # a conftest.py that skips at its import: pytest lets it through
        where = skipping_conftest(skipped, job["root"])
        return unavailable("{} skipped every test at its import: {}".format(where, skipped.msg))
    except SystemExit as exit:  # a conftest.py that calls sys.exit() at its import: pytest ends so by hand too
        print_exit_code(exit)
        return {"pytest_exit": exit_status(exit)}
    except (Exception, KeyboardInterrupt) as error:  # a conftest.py's pytest_addoption, or its import's Ctrl-C
        if not raised_by_pytest(error):
            raise  # the worker's own code, or its plugin's, failed
        traceback.print_exc()  # as python prints what ended pytest by hand, which exits 1, or dies of SIGINT
        return {"pytest_exit": 128 + signal.SIGINT if type(error) is KeyboardInterrupt else 1}
    return {"pytest_exit": int(code)}


def raised_by_pytest(error):
    """Whether ``error``, which pytest let through as it began, was raised past torchmatrix's own code (a
    ``conftest.py``, a plugin, pytest itself): by hand too it ends pytest, where the worker's own failure would not."""
    frames = list(traceback.walk_tb(error.__traceback__))
    if not frames:
        return False
    where = os.path.realpath(frames[-1][0].f_code.co_filename)
    own = os.path.realpath(os.path.dirname(os.path.abspath(__file__)))
    return where != os.path.realpath(PLUGIN_FILE) and os.path.dirname(where) != own


def skipping_conftest(skipped, root):
    """The conftest.py (relative to ``root``) whose import raised ``skipped``: the last one in its traceback."""
    files = [frame.f_code.co_filename for frame, _ in traceback.walk_tb(skipped.__traceback__)]
    found = [path for path in files if os.path.basename(path) == "conftest.py"]
    return os.path.relpath(found[-1], root) if found else "a conftest.py"


def spawned_child(job, started_with):
    """A job's process started anew (a new Python running the worker, ``--child``): by Spawning, any job; by
    Forking, a script. Its folder, stdin and log are set. ``started_with``: the modules this Python imported as it
    started.

    Its answer file, made ready (:class:`Reply`), tells the parent that torch is imported: a script's process leaves
    that import to the script (:func:`leave_to_the_script`).
    """
    faulthandler.enable(all_threads=False)
    if job["job"] == SCRIPT:
        leave_to_the_script(started_with)
    else:
        import torch  # noqa: F401 - the import child_main then finds done

    child_main(job)


def leave_to_the_script(started_with):
    """Let the script import the modules this process imported since it started (``started_with``): the worker's,
    and the standard library's it imports (``json``, ``math``, ``threading``, …), as by hand, where a ``json.py`` or
    ``math.py`` beside the script shadows the standard library's. This process's code keeps the modules it holds. A
    module built into the interpreter (``itertools``), which no file shadows, stays."""
    for name, module in list(sys.modules.items()):
        if name not in started_with and not is_built_in(module):
            del sys.modules[name]


def is_built_in(module):
    return origin(getattr(module, "__spec__", None)) == "built-in"
