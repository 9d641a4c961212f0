"""Each job in a process of its own, from the folder the user runs from, with its own temporary folder and log:
forked on Linux, spawned elsewhere."""

import contextlib
import faulthandler
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

from .pairs import child_main
from .protocol import MODULE, PYTEST, READ_UNTOLD, SCRIPT, WORKER_FAILED, WORKER_FILE, ParentGone
from .reads import entries_in, environment_at_start, excluded_prefixes, files_read, journaled
from .records import Ending, cell_places, exit_code, read_output
from .reply import is_ready, read_reply

try:
    import ctypes
except ImportError:  # a Python built without it: no subreaper, no parent-death signal
    ctypes = None


LOG_TAIL = 2000
"""How much of the end of a crashed pair's log goes into its message (faulthandler's stack is there)."""


KILL_SECONDS = 5.0
"""How long ending a pair's processes may take; a process stuck in the kernel that long is left behind."""


TEMP_PREFIX = "torchmatrix-pair-"


TEMP_VARIABLES = ("TMPDIR", "TEMP", "TMP")
"""Where a process looks for its temporary folder (Python's ``tempfile`` in this order; Windows' programs TEMP)."""


PR_SET_PDEATHSIG = 1


PR_SET_CHILD_SUBREAPER = 36


class Isolation(object):
    """Runs each job in a new process from ``workdir``, with a new, empty temporary folder of its own (its
    TMPDIR, removed afterwards) and its output in a log of its own."""

    def __init__(self, scratch, workdir):
        self.scratch = scratch
        self.workdir = workdir
        self.pid = os.getpid()
        self.subreaper = prctl(PR_SET_CHILD_SUBREAPER, 1)

    def run(self, job, limit, progressed=None):
        """Do ``job`` in a new process, stopped if it runs longer than ``limit`` seconds; an Ending.

        Tests get ``limit`` seconds each, and ``progressed`` is called as each starts and ends.
        Raises ParentGone if the parent went away meanwhile, after ending the job's processes.
        """
        folder = tempfile.mkdtemp(prefix=TEMP_PREFIX, dir=self.scratch)
        log = tempfile.TemporaryFile()  # noqa: SIM115 - closed below, after the whole job
        answer = self.side_file("answer")
        sides = dict((name, self.side_file(name)) for name in SIDE_FILES.get(job["job"], ()))
        places = cell_places(folder, self.scratch)
        job = dict(job, scratch=self.scratch, places=places, answer=answer, **sides)
        try:
            deadline = Deadline(limit, sides.get("progress"), progressed)
            code, timed_out = self.start_and_wait(job, folder, log, deadline)
            began = is_ready(answer)
            log_tail = keep_log(log, job)
            answered, told, untold = read_reply(answer)
            journal = sides.pop("read", None)
            read = self.files_read(told, journal, untold) if journal else (None, {})
            written = dict((name, read_side(name, path, places)) for name, path in sides.items())
            return Ending(code, answered, timed_out, log_tail, written, places, read, began)
        finally:
            log.close()
            shutil.rmtree(folder, ignore_errors=True)
            for path in [answer] + list(sides.values()):
                with contextlib.suppress(OSError):
                    os.unlink(path)

    def side_file(self, name):
        """A new, empty file a job writes to (:data:`SIDE_FILES`, its answer): beside its folder, which it may empty.

        The job's process opens it to write, and closes it, each time, or maps it before the pair's code runs (its
        answer: reply.py): one that closes every descriptor it did not open (``os.closerange(3, 256)``) or opens its
        own files in their place runs as by hand, and loses nothing.
        """
        fd, path = tempfile.mkstemp(prefix=name + "-", dir=self.scratch)
        os.close(fd)
        return path

    def files_read(self, told, journal, untold):
        """What a job's process read and what those files held (:func:`files_read`): as it ``told`` at its end (what
        it holds: reply.py), and as its ``journal`` says, which holds what the children it forked read, and all it
        read where it died or was stopped first, in the order they read it: the journal comes first, so that what
        a child found before its parent changed a file is what counts. The worker works it out, outside the
        process, where nothing the pair's code left set reaches. Where a process could not write down what it read
        (``untold``), :data:`READ_UNTOLD`: no list of files is all it read."""
        try:
            entries = journaled(journal) + entries_in(told.splitlines())
        except ValueError:  # a line that holds no entry: what was read is not all told
            untold = True
        if untold:
            return READ_UNTOLD, {}
        return files_read(entries, excluded_prefixes(self.scratch))

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


SIDE_FILES = {SCRIPT: ("output", "read"), PYTEST: ("progress", "read"), MODULE: ("read",)}
"""The side files of each kind of job: a script's stdout, the tests' progress (pytest_plugin.py), the journal of
what its process and the children it forked read (reads.py)."""


def read_side(name, path, places):
    """What a job wrote to its side file: a script's output as :func:`read_output` reads it; the tests' progress."""
    with open(path, "rb") as side:
        return read_output(side, places) if name == "output" else side.read()


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


class Forking(Isolation):
    """Each job in a child forked from this worker, which waits on it, its own stdin and SIGCHLD alone; a script's
    child runs a new Python (:func:`child_command`), which imports what the script imports, torch included.

    The worker starts no thread (a fork in a process with threads can deadlock
    its child): one select() watches the child's end (a SIGCHLD handler wakes
    it), not its answer file's, which its own forked children may hold, and the
    parent's end (stdin closes).
    """

    def __init__(self, scratch, workdir, parent_fd, channel_fd):
        Isolation.__init__(self, scratch, workdir)
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
        pid = os.fork()
        if pid == 0:
            try:
                self.enter_child(folder, log.fileno(), self.private)
                if job["job"] == SCRIPT:  # as python runs it: in a new interpreter, which its own import torch loads
                    command = child_command(job)
                    os.execve(command[0], command, child_environment(folder))
                child_main(job)
            finally:  # never back into the worker's code: its cleanup is the worker's, not this child's
                os._exit(WORKER_FAILED)
        try:
            with contextlib.suppress(OSError):
                os.setpgid(pid, pid)  # as the child does itself: whichever runs first, it leads its own group
            timed_out = self.timed_out(pid, deadline)
        finally:
            code = self.end(pid)
        return code, timed_out

    def enter_child(self, folder, log_fd, inherited):
        """Make this forked child a pair's process: own group, own temporary folder, own log, nothing of the
        parent's; in the folder the pairs run from."""
        os.setpgid(0, 0)
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        if prctl(PR_SET_PDEATHSIG, signal.SIGKILL) and os.getppid() != self.pid:
            os._exit(WORKER_FAILED)  # the worker died before the signal was armed
        for fd in inherited:
            os.close(fd)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)  # stdin was the parent's pipe: the worker's alone
        os.close(devnull)
        sys.stdin = open(os.devnull)  # noqa: SIM115 - lives as long as the process
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        faulthandler.enable(all_threads=False)  # its stack on a crash, into the log
        os.environ.update(temporary_folder(folder))
        tempfile.tempdir = None  # the worker's own, cached: asked again, as a new process would, from TMPDIR
        os.chdir(self.workdir)

    def timed_out(self, pid, deadline):
        """Wait for the child ``pid`` to end (SIGCHLD wakes the wait) until ``deadline``; whether it passed first."""
        while not ended(pid):
            left = deadline.remaining()
            if left <= 0:
                return True
            readable = select.select([self.parent_fd, self.wakeup], [], [], deadline.pause(left))[0]
            if self.parent_fd in readable and not os.read(self.parent_fd, 4096):
                raise ParentGone()
            if self.wakeup in readable:
                drain(self.wakeup)
        return False

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


def drain(fd):
    try:
        while os.read(fd, 4096):
            pass
    except BlockingIOError:
        pass


class Spawning(Isolation):
    """Each job in a new Python running this file, which imports torch again: no fork, nothing inherited.

    A job's time limit starts once its process has imported torch (which may take
    up to ``startup`` seconds), as it would in a forked child; a script's, once its
    Python started: its own ``import torch`` is its time, as in a forked child. A thread waits for
    the parent's end (stdin closes), then ends the running job's processes and the worker.
    """

    def __init__(self, scratch, workdir, parent_fd, startup):
        Isolation.__init__(self, scratch, workdir)
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
        os._exit(WORKER_FAILED)

    def start_and_wait(self, job, folder, log, deadline):
        try:
            self.process = subprocess.Popen(
                child_command(job),
                cwd=self.workdir, env=child_environment(folder),
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, **own_process_group()
            )  # fmt: skip
            timed_out = not self.imported(self.process, job["answer"]) or not ended_within(self.process, deadline)
            self.end(self.process)
            return self.process.returncode, timed_out
        finally:
            if self.process is not None and self.process.returncode is None:  # the parent left while it waited
                self.end(self.process)
            self.process = None

    def imported(self, process, answer_path):
        """Whether ``process`` imported torch within the startup allowance (or ended before)."""
        deadline = time.monotonic() + self.startup
        while not is_ready(answer_path):  # it makes its answer file ready once torch is imported
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


def temporary_folder(folder):
    """The variables that make ``folder`` a process's temporary folder, and its children's."""
    return dict((name, folder) for name in TEMP_VARIABLES)


def size_of(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


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


def child_environment(folder):
    """The variables a job's new Python starts with: those the worker started with, which the parent built (the
    pair's environment: :func:`environment_at_start`), not what the worker's own ``site`` and imports left in
    ``os.environ`` (a ``.pth`` file's line that changed it would change it twice, by hand once), with its own
    temporary folder (``folder``)."""
    return dict(environment_at_start(), **temporary_folder(folder))


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
