"""Loaded into pytest by torchmatrix's worker in a pair's process: the torchmatrix_device fixture, a line per event.

Runs on Python 3.6 and newer with pytest 7 and newer; it never imports torchmatrix.

Each event is a line of JSON appended to the progress file, which is opened
and closed for each line, so that whatever ends the process, the worker finds
which tests ended, which one was running, and which were not reached:

    {"collected": [nodeid, ...]}
    {"collected": [nodeid, ...], "distributed": "pytest-xdist"}  (collected in pytest-xdist's processes, where they run)
    {"deselected": [nodeid, ...], "by": "-m 'not slow'"}  (pytest's options deselected them, or a hook removed them)
    {"start": nodeid, "at": time.time()}
    {"ended": "Exit: why"}  (pytest.exit() ended the session in the test running)
    {"collecting": true}  (pytest began to collect)
    {"named_as_tests": bool}  (the path it runs on is a test module by its ``python_files``; before any conftest.py)
    {"conftest_failed": path}  (a conftest.py above that path failed to import, which ended pytest)
    {"test": nodeid, "outcome": ..., "metrics": {...}, "message": ..., "duration": s,
     "printed": captured stdout, "raised": "Type: message", "output_unseen": why (where capture was off)}

Every nodeid is relative to the root torchmatrix names (the matrix's folder),
whichever root pytest found for itself as it does by hand (its configuration
file's folder, a ``setup.py``'s), which decides which ``conftest.py`` it loads.

A test's outcome is pytest's own verdict on its phases (setup, call,
teardown): passed is ``pass``; failed in its call ``fail``; failed in setup or
teardown ``error``; skipped ``unavailable``, the reason its message. An
expected failure that fails (xfail) is ``fail``, said so in its message: the
table says what works where. A file that cannot be collected gets a record
of its own, ``error`` (``unavailable`` if it skipped itself).

What a test printed (pytest's captured stdout, all its phases) and what it
raised (the exception's type and message, as a script's: never the traceback,
whose paths and line numbers are torch's own) go with its end, for
``bisect --by-output`` to compare; the worker normalises them. What a test
printed is seen only where pytest's capture manager captured the file
descriptors as the test was called (``--capture=fd``, pytest's default), as
it says itself: where it is not loaded (``-p no:capture``), captures none
(``-s``, ``--capture=no``), captures ``sys.stdout`` alone (``--capture=sys``,
past which ``os.write(1, ...)``, a C extension and a child process write), or
had stopped capturing (a ``conftest.py`` or plugin that stopped it), what a
test printed went by, never all captured: its end says why
(``output_unseen``), for its record says so rather than that it printed
nothing or part of it; pytest's options are left as the project set them.

A test that fails keeps the rest of what pytest shows under its failure: the
traceback, and the end of what it wrote to stderr and logged
(``captured_stderr``, ``captured_log``: pytest's "Captured stderr call" and
the like, a subprocess's output included, since pytest captures the file
descriptors); its message is pytest's line, then the end of its captured stderr.
"""

import json
import os
import shlex
import time

import pytest

TRACEBACK_LIMIT = 2000


CAPTURED_LIMIT = 2000
"""How much of the end of each stream a failing test printed its record keeps."""


MESSAGE_STDERR = 1000
"""How much of the end of a failing test's stderr its message shows, after pytest's line."""


@pytest.fixture
def torchmatrix_device():
    """The device this run of the tests is for: cpu, cuda or mps."""
    return os.environ.get("TORCHMATRIX_DEVICE", "cpu")


class Progress(object):
    """pytest's hooks that write the progress file."""

    def __init__(self, path, root):
        self.path = path
        self.root = root
        self.rootdir = root
        self.reports = {}
        self.raised = {}
        self.pid = os.getpid()
        self.unseen = {}
        self.crashed = set()
        self.found = []
        self.left_out = set()
        self.imported = set()

    def write(self, event):
        if os.getpid() != self.pid:
            return  # a test's forked child, unwinding through pytest: its outcome is none of the test's
        with open(self.path, "a") as progress:
            progress.write(json.dumps(event) + "\n")

    def pytest_exception_interact(self, node, call, report):
        """A phase that failed (pytest asks no one about a skip or an expected failure): what it raised."""
        error = call.excinfo.value
        self.raised[report.nodeid, report.when] = "{}: {}".format(type(error).__name__, error)

    def pytest_collectreport(self, report):
        if report.failed or report.skipped:
            outcome = "error" if report.failed else "unavailable"
            said = dict(verdict(outcome, report), duration=0.0, tests_because=self.tests_because(report))
            said["test"] = self.named(report.nodeid)
            self.write(dict(said, **self.shown(report, report)))

    def pytest_keyboard_interrupt(self, excinfo):
        """The session ended in a test: ``pytest.exit()`` (or Ctrl-C), whose words pytest writes only to stderr."""
        self.write({"ended": "{}: {}".format(excinfo.typename, getattr(excinfo.value, "msg", excinfo.value))})

    @pytest.hookimpl(hookwrapper=True)
    def pytest_load_initial_conftests(self, early_config):
        """pytest read its configuration and is about to import the ``conftest.py`` files above the path it runs on:
        whether that path is a test module by its ``python_files`` (the project's own ``check_*.py`` as well as
        ``test_*.py``), said before a ``conftest.py`` can skip every test at its import, which ends pytest here; then
        whether one of them failed to import (pytest ends with exit code 4, as it does for a name or an option it
        refuses), and which."""
        given = getattr(getattr(early_config, "known_args_namespace", None), "file_or_dir", None) or ()
        paths = [str(arg).partition("::")[0] for arg in given]
        self.config = early_config
        named = any(os.path.isfile(path) and self.by_name(os.path.abspath(path)) for path in paths)
        self.write({"named_as_tests": named})
        outcome = yield
        failed = outcome.excinfo[1] if outcome.excinfo else None
        if failed is not None and not isinstance(failed, pytest.skip.Exception):
            self.write({"conftest_failed": str(getattr(failed, "path", "") or type(failed).__name__)})

    def pytest_configure(self, config):
        self.config = config
        self.rootdir = str(getattr(config, "rootpath", None) or config.rootdir)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_call(self, item):
        """The test is called, inside pytest's capture of its call: whether that captures what it prints."""
        self.unseen[item.nodeid] = output_unseen(self.config, calling=True)

    def named(self, nodeid):
        """``nodeid`` (relative to the root pytest found) relative to the root torchmatrix names."""
        path, colons, rest = nodeid.partition("::")
        if not path:
            return nodeid
        where = os.path.relpath(os.path.join(self.rootdir, path), self.root).replace(os.sep, "/")
        return where + colons + rest

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection(self, session):
        """pytest begins to collect: what ends it before this is its own configuration (a ``conftest.py``), not the
        file it was asked about. First, before pytest-xdist's, which collects in its own processes and returns."""
        self.write({"collecting": True})

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids):
        """pytest-xdist (``-n 2`` in ``addopts``) collected the tests in a process of its own, where they run: what
        they read there (a helper module, a data file) is read outside the pair's process, which cannot say it."""
        self.write({"collected": [self.named(nodeid) for nodeid in ids], "distributed": "pytest-xdist"})

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem, report, sched):
        """pytest-xdist's process died running ``crashitem``: pytest fails it (``worker 'gw0' crashed while running``)
        by a report of its own, after which no test's end follows; it ends here, as pytest says it failed."""
        duration = sum(getattr(one, "duration", 0.0) for one in self.reports.pop(report.nodeid, []))
        shown = self.shown(report, report)
        self.write(dict(verdict("fail", report), test=self.named(report.nodeid), duration=duration, **shown))
        self.crashed.add(report.nodeid)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_make_collect_report(self, collector):
        """A collector that failed where its module had imported: what failed is collecting the tests it defines."""
        outcome = yield
        report = outcome.get_result()
        module = collector.getparent(pytest.Module) if report.failed else None
        if module is not None and getattr(module, "_obj", None) is not None:
            self.imported.add(report.nodeid)

    def tests_because(self, report):
        """Why a file pytest could not collect is tests it could not run, not a script; '' where it is not: pytest
        takes it for a test module by its name, or it imported and what failed was collecting the tests it defines (a
        parametrize naming no argument of its test). One named otherwise that failed to import is collected only
        because it was named on the command line: a script whose top level raised."""
        if self.by_name(report):
            return "a test module by its name"
        if report.nodeid in self.imported:
            return "the tests it defines, once it imported"
        return ""

    def by_name(self, report):
        """Whether pytest takes the file ``report`` is of (or the path ``report``) for a test module by its name alone
        (its ``python_files``, as it does in a folder it collects)."""
        path = report if isinstance(report, str) else str(getattr(report, "fspath", "") or "")
        try:
            from _pytest.pathlib import fnmatch_ex

            return any(fnmatch_ex(pattern, path) for pattern in self.config.getini("python_files"))
        except Exception:  # a pytest without the rule where it was: its default, test_*.py and *_test.py
            name = os.path.basename(path)
            return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))

    def pytest_itemcollected(self, item):
        """Each test pytest collects, before any ``pytest_collection_modifyitems`` narrows the list."""
        self.found.append(item.nodeid)

    def pytest_collection_finish(self, session):
        self.write({"collected": [self.named(item.nodeid) for item in session.items]})
        kept = set(item.nodeid for item in session.items) | self.left_out
        dropped = [nodeid for nodeid in dict.fromkeys(self.found) if nodeid not in kept]
        if dropped:  # a hook took them out of the list, not telling pytest (``items[:] = ...``): left out all the same
            by = "a pytest_collection_modifyitems hook of a conftest.py or plugin, which removed it"
            self.write({"deselected": [self.named(nodeid) for nodeid in dropped], "by": by})

    def pytest_deselected(self, items):
        """Tests pytest's options leave out (``-m``, ``-k``, ``--deselect`` in its ``addopts``): by hand they do not
        run, and the file is still tests."""
        option = self.config.option
        chosen = [(flag, getattr(option, name, "")) for flag, name in (("-m", "markexpr"), ("-k", "keyword"))]
        by = " ".join("{} {!r}".format(flag, value) for flag, value in chosen if value)
        self.left_out.update(item.nodeid for item in items)
        self.write({"deselected": [self.named(item.nodeid) for item in items], "by": by or "--deselect or a plugin"})

    def pytest_runtest_logstart(self, nodeid, location):
        self.write({"start": self.named(nodeid), "at": time.time()})

    def pytest_runtest_logreport(self, report):
        if report.nodeid in self.crashed:  # its end is written (pytest_handlecrashitem)
            self.crashed.discard(report.nodeid)
            return
        self.reports.setdefault(report.nodeid, []).append(report)

    def pytest_runtest_logfinish(self, nodeid, location):
        reports = self.reports.pop(nodeid, [])
        duration = sum(getattr(report, "duration", 0.0) for report in reports)
        deciding = next((report for report in reports if report.failed), None)
        shown = self.shown(reports[-1], deciding) if reports else {}
        self.write(dict(outcome_of(reports), test=self.named(nodeid), duration=duration, **shown))

    def shown(self, last, failed):
        """What a test showed: all it printed (the ``last`` phase's report holds every phase's), and what the phase
        that ``failed`` raised."""
        raised = self.raised.pop((failed.nodeid, failed.when), "") if failed is not None else ""
        if failed is not None and not raised:  # raised in another process (pytest-xdist's): as its report says
            raised = getattr(getattr(failed.longrepr, "reprcrash", None), "message", None) or ""
        unseen = self.unseen.pop(last.nodeid, None)
        if unseen is None:  # never called (collected, or its setup failed): as pytest captures now
            unseen = output_unseen(self.config)
        said = {"printed": last.capstdout, "raised": raised}
        if unseen:
            said["output_unseen"] = unseen
        return said


def output_unseen(config, calling=False):
    """Why pytest did not see all a test printed, as its capture manager (the plugin ``capturemanager``) says;
    '' where it captures the file descriptors (``--capture=fd``), and has not stopped: ``calling`` (as the test is
    called), it is capturing them then.

    Anything else misses output: no capture manager (``-p no:capture``), none (``-s``, ``--capture=no``), or
    ``sys.stdout`` alone (``--capture=sys``, ``tee-sys``: ``os.write(1, ...)``, a C extension and a child
    process write past it); or its capture stopped before the test was called (a ``conftest.py`` or plugin that
    called ``stop_global_capturing()``).
    """
    capman = config.pluginmanager.getplugin("capturemanager")
    if capman is None:
        return "pytest's capture is off (-p no:capture in {})".format(
            set_where(config, lambda read: "no:capture" in (getattr(read, "plugins", None) or []))
        )
    method = getattr(capman, "_method", None)
    if method == "no":
        return "pytest's capture is off (-s or --capture=no in {})".format(
            set_where(config, lambda read: read.capture == "no")
        )
    if method != "fd":
        return "pytest captures sys.stdout alone, not the file descriptors (--capture={} in {})".format(
            method, set_where(config, lambda read: read.capture == method)
        )
    capturing = getattr(capman, "_global_capturing", None)
    if capturing is None or (calling and getattr(capturing, "_state", "started") != "started"):
        return "pytest's capture was stopped before the test was called (by a conftest.py or a plugin)"
    return ""


def set_where(config, sets):
    """Where pytest's options were set as ``sets`` (called with what pytest's parser read) says: the configuration
    file's ``addopts``, ``PYTEST_ADDOPTS``, else elsewhere (a plugin, a ``conftest.py``), asked of pytest's own
    parser, source by source."""
    inifile = getattr(config, "inipath", None) or getattr(config, "inifile", None)
    sources = [
        ("addopts of " + os.path.basename(str(inifile)), config.getini("addopts") if inifile else []),
        ("PYTEST_ADDOPTS", shlex.split(os.environ.get("PYTEST_ADDOPTS", ""))),
    ]
    return next((where for where, arguments in sources if parsed_as(config, arguments, sets)), "pytest's options")


def parsed_as(config, arguments, sets):
    """Whether pytest's parser reads ``arguments`` as ``sets`` says; False where it cannot be asked."""
    try:
        return bool(arguments) and bool(sets(config._parser.parse_known_args(list(arguments))))
    except Exception:  # a pytest whose parser is not where it was
        return False


def outcome_of(reports):
    """One test's phases (and subtests) as one outcome, as pytest's exit status judges them: the first that failed
    decides, else the first that skipped (a subtest skipped before another failed hides no failure)."""
    for report in [report for report in reports if report.failed] + [report for report in reports if report.skipped]:
        if report.failed:
            return verdict("fail" if report.when == "call" else "error", report)
        if hasattr(report, "wasxfail"):
            return {"outcome": "fail", "metrics": {}, "message": "xfail: expected to fail: " + report.wasxfail}
        return verdict("unavailable", report)
    passed_xfail = [report for report in reports if hasattr(report, "wasxfail")]
    return {"outcome": "pass", "metrics": {}, "message": "xpass: passed, expected to fail" if passed_xfail else ""}


def verdict(outcome, report):
    if outcome == "unavailable":
        return {"outcome": outcome, "metrics": {}, "message": skip_reason(report)}
    text = report.longreprtext
    metrics = dict(captured(report), when=report.when, traceback=text[-TRACEBACK_LIMIT:])
    return {"outcome": outcome, "metrics": metrics, "message": with_stderr(crash_line(report, text), report)}


def captured(report):
    """What pytest shows a failure wrote besides its stdout (the test's ``printed``): "Captured stderr call", "Captured
    log call" and the like, the end of each."""
    printed = {"stderr": report.capstderr, "log": report.caplog}
    return dict(("captured_" + name, text[-CAPTURED_LIMIT:]) for name, text in printed.items() if text)


def with_stderr(line, report):
    """``line``, then the end of what the test wrote to stderr, which pytest shows under it: the error of a
    subprocess the test ran (``subprocess.run(..., check=True)``) is there, not in the traceback."""
    stderr = report.capstderr.strip()
    if not stderr:
        return line
    cut = "\u2026" if len(stderr) > MESSAGE_STDERR else ""
    return "{}\nCaptured stderr:\n{}{}".format(line, cut, stderr[-MESSAGE_STDERR:])


def skip_reason(report):
    """A skip's reason: pytest keeps it as (path, line, "Skipped: reason")."""
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return reason[len("Skipped: ") :] if reason.startswith("Skipped: ") else reason


def crash_line(report, text):
    """What went wrong, in a line: pytest's own (``assert -inf > -1000.0``), else the report's last line."""
    crash = getattr(report.longrepr, "reprcrash", None)
    message = getattr(crash, "message", None)
    if message:
        return message
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else report.when + " failed"
