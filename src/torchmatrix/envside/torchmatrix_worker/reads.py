"""What a pair's process read outside its environment: the files its records depend on."""

import _imp
import contextlib
import errno
import importlib.machinery
import importlib.util
import io
import json
import operator
import os
import pathlib
import site
import stat
import sys
import sysconfig
import threading
import time

from .protocol import (
    DISTRIBUTIONS_IN,
    FILE_STATED,
    FILE_THERE,
    FOLDER_LISTED,
    INPUTS_VARIABLE,
    LEADS_TO,
    MODULE_LOOKED_FOR,
    SITE_PTH_FILES,
    WORKER_FILE,
    asked_digest,
    asked_path,
    content_written_since,
    file_digest,
)

CHANGED_AFTER_IT_WAS_READ = "changed after the pair read it"
"""What :func:`files_read` says a file held when something else than the pair's process changed it
after the process read it: what it read is known no more, and no file's digest is this."""

READ_ANOTHER_FILE = "led to another file as the pair read it again"
"""What :func:`files_read` says a path held that led the pair to one file, or none, and then to another (a link
pointed elsewhere, a folder renamed in its place, then maybe put back): what it read there is more than one digest
says, and no file's digest is this."""

CHANGED_BY_THE_PAIR = "changed by the pair, too large to hash first"
"""What a file larger than :data:`MAX_HASHED` held before the pair's process changed it (:meth:`FilesRead.changing`):
known no more, and no file's digest is this."""

MAX_HASHED = 256 << 20
"""The most the pair's process hashes, in all, of files it changes, before it changes them (a second or so): more (a
disk image, a data set mapped to update or moved file by file, a long log appended to) would hold the pair up as no
run by hand is."""

MAX_FILES_MOVED = 10_000
"""The most files of a folder a forked child moves that are listed as read, each where it was
(:meth:`FilesRead.linked`): a larger folder (a data set a DataLoader's worker claims) would hold the child up as no
run by hand is."""


class FilesRead(object):
    """The files this process opens for reading or imports from outside the environment, the standard library,
    the worker's scratch folder and torchmatrix's worker: what the pair's outcome may depend on besides its probe.

    Python's audit hooks (3.8+) see every ``open`` and every shared library ``ctypes`` loads (``ctypes.dlopen``:
    ``torch.ops.load_library`` loads a custom operator's library so); every module loaded from a file is added by
    its file, as an import may read bytecode compiled elsewhere instead (and ``sitecustomize`` was imported before
    this process was a pair's); a module whose ``__file__`` is no absolute path (``torch.ops``'s ``_ops.py``)
    was loaded from no file. A file is listed by the path it was opened by, links unresolved, so that a link
    pointed elsewhere is a change too; one that was not there is listed as well, since its appearing is one; what
    is no file of content (a device, a pipe, an entry of the kernel's ``/proc`` or ``/sys``) is not. A file the
    process made or emptied before it read it (opened to write; to append, where it was not there), or only wrote,
    is its own; one it changed and read (opened to update, appended to then read, read then rewritten) had content
    before, which it read: its digest as the process first found it is kept (:func:`files_read`), and so is one whose
    times it set (``os.utime``) before it read it. A file is asked how it is when it is first read (its inode, the
    kernel's time of its last change, which no program sets, and of its content's): one whose content was written
    since this process began and before it read it (:func:`written_since`) was made by a program the pair ran
    (``python -m helper``), so is the pair's own; one only made runnable, linked or given attributes meanwhile (its
    content older) is not; one changed after it was read, not by this process, no longer holds what it read. What
    the path of a link of the pair's own (in its temporary folder: ``tmp_path``) or of the kernel's
    (``/proc/self/cwd/…``, ``/proc/self/fd/3/…``) leads to is read by that file's path (:meth:`counted`). Each
    file first read is appended to the ``journal`` (a file in ``scratch``), by the process and by a
    child it forks (a DataLoader's workers keep the hook): the worker reads its children's reads there, and what a
    process that died or was stopped had read until then (:func:`journaled`); what the process itself read it
    says at its end, from what it holds (:meth:`entries`). Where an entry cannot be written, whole (a full disk, a
    file size limit, an audit hook of the pair's that refuses the journal's open), or this hook cannot hear an event
    (the pair's code at the edge of its recursion limit), ``untold`` is called, which says so where no disk is needed
    (:meth:`reply.Reply.untold`): the journal is not all that was read, nor in its order.

    A module the pair imports is looked for folder by folder, through listings the import system caches, and no
    ``open`` tells of the folders where it was not: each folder it was looked for in, up to the one it was found in,
    is listed as ``folder/name.*`` (:data:`MODULE_LOOKED_FOR`), so that a module put where it was looked for first
    (a ``colorsys.py`` beside the script) is a change, as it changes what the import finds. Whether a file exists
    is asked by ``os.stat``, ``os.lstat``, ``os.access`` and ``os.readlink`` (``os.path.exists``, ``Path.is_file``:
    how pytest looks for its configuration and each folder's ``conftest.py``), which no audit event tells: the
    process hears those itself (:func:`watch_lookups`), and a file asked about is listed as one opened is, there or
    not (:meth:`asked`). A folder the pair's own code lists is listed by what is in it (:meth:`listing`).
    """

    def __init__(self, scratch, journal=None, untold=lambda: None, collected=()):
        self.journal = journal or os.path.join(scratch, "read-by-{}".format(os.getpid()))
        self.appending = Appending(self.journal)
        self.untold = untold
        self.collected = tuple(os.path.abspath(target.partition("::")[0]) for target in collected)
        self.reading, self.own = set(), set()
        self.first_seen = {}
        self.began, self.pid = time.time(), os.getpid()
        self.excluded = excluded_prefixes(scratch)
        self.leading_elsewhere = prefixes([scratch]) + KERNEL_PATHS
        shared = os.environ.get(INPUTS_VARIABLE)
        self.shared = os.path.join(os.path.abspath(shared), "") if shared else None
        self.shared_files = set()
        self.thread = threading.local()  # what this hook is doing, per thread: another's events still count
        self.known = hasattr(sys, "addaudithook")
        self.asked_about = {}
        self.found_by_inode, self.links = {}, {}
        self.found_files, self.read_elsewhere, self.hashed = [], set(), 0
        self.found_by_path = set()
        self.environments_code = environments_code()
        self.stdlib = stdlib_prefixes()
        self.not_the_pairs = self.stdlib + ("<frozen ",)  # code the hook's own work runs through
        self.file_of = {}  # whose the code of each file on the way to an event is (file_of), as it was first found
        self.asked_through, self.ended = AskedThrough(), False
        started = environment_at_start()  # as the dynamic linker read it
        self.linker_value = started.get("LD_LIBRARY_PATH", "")
        self.preloaded = preloaded_by_path(started.get("LD_PRELOAD", ""))
        named = self.linker_value.replace(";", ":").split(":") if self.linker_value else []
        self.linker_relative = any(not os.path.isabs(folder) for folder in named)  # looked in from the working folder
        self.linker_searched_from = set()  # the working folders LD_LIBRARY_PATH's were counted from
        self.searched_runpaths = set()  # the libraries whose RPATH and RUNPATH were counted (searched_for)
        if self.known:
            sys.addaudithook(self.heard)
            watch_lookups(self.asked, self.opening_in)
            watch_path_finder(self.path_finder_found)
            watch_file_finder(self.file_finder_looked)
            watch_extension_loads(self.loading, self.loaded_by_the_linker)
            watch_library_loads(self.loaded_by_the_linker)
            watch_exit(self.ending)
            self.asked_through.settle()
            self.write_down(BEGAN, None, self.began)
            self.busy = True  # the hook's own look at what ran before it (a .pth's import), none of the pair's
            try:
                for path in module_files():  # written down in case of a crash
                    if not self.leaves_out(path):  # the environment's and the standard library's: none
                        self.read(archive_of(path) if in_a_file(path) else path)  # one of a zip file: its content
            finally:
                self.busy = False
            self.searched_by_the_linker()

    def searched_by_the_linker(self):
        """Each folder ``LD_LIBRARY_PATH`` names, as this process started with it (``env:`` sets it), counts by what is
        in it (:data:`FOLDER_LISTED`), there or not: the dynamic linker looks every library it loads by name up there
        before its own folders and a library's ``RUNPATH`` (torch's, ``$ORIGIN``), so that a library put there, or
        the folder made since with one in it, is one it would load instead; and so does each folder in it that it
        looks in first (:func:`linker_subfolders`: ``glibc-hwcaps/x86-64-v3``, ``tls``, ``x86_64``). What it loaded
        from there is read by what it mapped (:meth:`read_libraries_mapped`). Each library ``LD_PRELOAD`` names by a
        path is read, there or not: the linker skips one that is not there, and loads it once it is."""
        self.busy = True  # the hook's own look at them
        try:
            value = self.linker_value
            with contextlib.suppress(OSError):
                self.linker_searched_from.add(os.getcwd())
            platform = linker_platform() if value else None
            for named in linker_search_path(value, platform):
                self.searched_by_the_linker_in(named, platform)
            for preloaded in self.preloaded:  # there or not: the linker skips one not there, and loads it once there
                if not self.leaves_out(preloaded):
                    self.read(preloaded)
        finally:
            self.busy = False

    def heard(self, event, arguments):
        """The audit hook: an ``open`` (its path, mode and flags), a ``ctypes.dlopen`` (the library's name), or an
        ``exec`` of code compiled from a file (a module a loader ran, whose source it may never have opened: its
        bytecode was cached, or it was loaded by path and is in no ``sys.modules``)."""
        if event not in HEARD or not self.hears_the_pair():
            return
        self.busy = True
        try:
            if event == "open":
                self.opened(*arguments[:3])
            elif event == "ctypes.dlopen":
                self.loaded(arguments[0])
            elif event == "exec":
                self.executed(arguments[0])
            elif event == "os.rename":  # os.rename and os.replace: (source, target, their dir_fds)
                self.renamed(located(arguments[0], arguments[2]), located(arguments[1], arguments[3]))
            elif event == "os.utime":  # new times, as touch sets them
                self.changed_in_place(located(arguments[0], arguments[3]))
            elif event == "os.truncate":  # os.truncate and os.ftruncate
                self.changed_in_place(located(arguments[0]), arguments[1] == 0, content=True)
            elif event == "os.link":
                self.linked(located(arguments[0], arguments[2]), located(arguments[1], arguments[3]))
            elif event in ("os.chmod", "os.chown"):  # (path, …, dir_fd): a new mode or owner
                self.changed_in_place(located(arguments[0], arguments[-1]))
            elif event in ("os.chflags", "os.setxattr", "os.removexattr"):
                self.changed_in_place(located(arguments[0]))
            elif event in ("os.getxattr", "os.listxattr"):
                self.looked_at(located(os.curdir if arguments[0] is None else arguments[0]))
            elif event == "subprocess.Popen":
                self.started(*arguments[:4])
            elif event == "os.exec":  # execv and the like: a path (os.execvp tried each folder of PATH by path)
                self.read(as_path(arguments[0]))
                self.write_all_down(self.entries(final=False))  # it becomes another program, or goes on where it fails
            elif event == "os.posix_spawn":  # posix_spawn takes a name as a path, posix_spawnp looks it up
                self.read(as_path(arguments[0]))
                self.started(arguments[0], None, None, arguments[2])
            elif event in ("os.listdir", "os.scandir"):
                self.listing(arguments[0])
        except (RecursionError, MemoryError):  # what was heard may be lost: said, as a lost entry is
            self.untold()
        except Exception:  # noqa: S110 - an exception here would be the probe's open's or load's, which it is not
            pass
        finally:
            self.busy = False

    def hears_the_pair(self):
        """Whether what is heard now is the pair's, to be looked at: not this hook's own look at a file (it is busy on
        this thread, :attr:`busy`). Where the pair's code runs in the middle of this hook's work, as the interpreter
        runs a signal handler or a finalizer (``__del__``) between any two lines, or the pair replaced a function this
        hook asks the file system through (:class:`AskedThrough`: a test's ``os.stat`` that says every file is new),
        what it read cannot be told as it is: :attr:`untold`."""
        if self.busy:
            if not self.own_look(sys._getframe(1)):
                self.untold()
            return False
        if not self.asked_through.holds():
            self.untold()
            return False
        return True

    def own_look(self, frame):
        """Whether what is heard in ``frame`` is this hook's own work: the nearest frame that is neither one of its
        :data:`ENTRANCES` nor the standard library's is the worker's, not the pair's code (a signal handler, a
        ``__del__``) run in the middle of it."""
        while frame is not None:
            code = frame.f_code
            if code.co_filename == HOOK_FILE:
                whose = PASSED_THROUGH if code.co_name in ENTRANCES else WORKERS
            else:
                whose = self.file_of.get(code.co_filename)
                if whose is None:
                    whose = self.file_of[code.co_filename] = file_of(code.co_filename, self.not_the_pairs)
            if whose is not PASSED_THROUGH:
                return whose is WORKERS
            frame = frame.f_back
        return True

    @property
    def busy(self):
        """Whether this thread is in this hook's own work, whose looks at files are none of the pair's."""
        return getattr(self.thread, "busy", False)

    @busy.setter
    def busy(self, value):
        self.thread.busy = value

    def asked(self, path, dir_fd=None, link=False):
        """The process asked about the file at ``path`` (whether it exists, what it is, its size, its time, where it
        links to). One not there counts as a file opened and not there does, so that its appearing is a change (a
        ``pytest.toml`` put beside the tests). One there that the pair's own code asked about counts by all that
        ``os.stat`` says of it (:data:`FILE_STATED`): a test may decide by a file's size or time. One the
        environment's code asked about (pytest, as it looks for its configuration in every folder above the tests;
        torch) counts by being there, and what it is (:data:`FILE_THERE`): that is what it decides by, and a helper
        the pair runs may rewrite such a file. A file the pair then reads counts by its content too."""
        if not self.hears_the_pair():
            return
        self.busy = True
        try:
            self.looked_at(located(path, dir_fd), link)
        except (RecursionError, MemoryError):  # what was asked may be lost: said, as a lost entry is
            self.untold()
        except Exception:  # noqa: S110 - an exception here would be the probe's stat's, which it is not
            pass
        finally:
            self.busy = False

    def looked_at(self, path, link=False):
        """The file or folder at ``path`` asked about, not opened (:meth:`asked`), or its extended attributes read
        (``os.getxattr``, ``os.listxattr``), which :data:`FILE_STATED` holds too. A ``link`` the environment's code
        asked where it points (``os.readlink``: ``os.path.realpath``, as ``torch.ops.load_library`` resolves the
        path of a library it loads, a ``libop.so`` linked to ``libop.so.1``) counts by where it leads
        (:data:`LEADS_TO`) too: pointed at another file, it leads the code elsewhere."""
        where, path = path, self.counted(path)
        if path is not None and self.is_shared(path):
            self.sharing(path)
        elif path is not None:
            if not os.path.lexists(where):
                self.read(where)
                return
            by_the_pair = self.asked_by_the_pair()
            self.tell(path + (FILE_STATED if by_the_pair else FILE_THERE))
            if link and not by_the_pair and os.path.islink(where):
                self.tell(path + LEADS_TO)

    def listing(self, folder):
        """A folder listed (``os.listdir``, ``os.scandir``, by its path or a descriptor; ``glob``, ``os.walk`` and
        ``os.fwalk`` list so): by the pair's own code (a test parametrized by the files of a folder), or in what
        pytest was asked to collect (``collected``: a folder of tests and each folder in it, as pytest lists them,
        a linked one too), it counts by what is in it (:data:`FOLDER_LISTED`), so that a file put there is a change
        (a doctest file, a module of tests); listed by ``importlib.metadata`` (pytest looking for its plugins, torch
        for its backends), by the distributions in it (:data:`DISTRIBUTIONS_IN`). What else the environment's code
        lists is its to decide."""
        where = located(os.curdir if folder is None else folder)
        if self.asked_by_the_pair() or self.is_collected(where):
            ending = FOLDER_LISTED
        elif finding_distributions():
            ending = DISTRIBUTIONS_IN
        else:
            return
        path = self.counted(where)
        if path is not None and not self.is_shared(path):
            self.tell(path + ending)

    def is_collected(self, folder):
        """Whether ``folder`` is, or is in, a path pytest was asked to collect."""
        return any(folder == target or folder.startswith(os.path.join(target, "")) for target in self.collected)

    def asked_by_the_pair(self):
        """Whether the code asking now is the pair's own (its probe, tests, helpers, a ``conftest.py``): the nearest
        caller neither this hook's nor the standard library's (``os.path``, ``pathlib``, ``glob``) is outside the
        environment and torchmatrix's worker, or was compiled from text (``<string>``: a ``skipif`` condition pytest
        evaluates, a doctest), and the import system is not on the way to it; or there is none (a thread of the
        standard library's, such as a ``ThreadPoolExecutor`` runs for the pair's code)."""
        frame = sys._getframe(1)
        while frame is not None:
            where = frame.f_code.co_filename
            if where.startswith(self.environments_code) or frame.f_globals.get("__name__") in IMPORT_SYSTEM:
                return False  # the environment's code, or the import system (its lookups count by module)
            if where.startswith("<") and not where.startswith("<frozen "):
                return True  # code compiled from text (a skipif's condition, a doctest), whoever runs it: the pair's
            if where != HOOK_FILE and not where.startswith("<") and not where.startswith(self.stdlib):
                return not where.startswith(self.excluded)
            frame = frame.f_back
        return True  # a thread the standard library runs for the pair (a ThreadPoolExecutor's): its caller is unknown

    def tell(self, entry):
        """Count ``entry`` (a path with one of the endings of ``asked_digest``) as the process first found it, once,
        written down for the worker too; but not a file made or changed since the process began (by it or a program it
        ran: a file it wrote, then asked the size of), which is its own, as a file made before it was read is; one it
        found before it changed it (touched it: :meth:`found_it`) counts as it is, and so does a folder, whatever the
        process wrote in it (a log, a lock file) before it listed it."""
        if entry in self.asked_about:
            return
        path, ending = asked_path(entry)
        state = state_of(path)
        made = ending != FOLDER_LISTED and not os.path.isdir(path)  # a folder counts whatever the pair put in it
        if made and written_since(state, self.began) and not self.found_it(state):
            self.asked_about[entry] = OWN
            return
        self.asked_about[entry] = asked_digest(entry)
        self.write_down(ASKED, entry, self.asked_about[entry])

    def runs(self, script):
        """The pair runs ``script``, whose target's folder Python puts first on ``sys.path`` (a link's): where its
        path leads counts (:data:`LEADS_TO`), so that a link pointed at the same script beside other modules is a
        change."""
        if not self.known:
            return  # a Python without audit hooks: every file of the probe's folder counts
        self.busy = True  # nothing of what follows is the pair's
        try:
            self.tell(os.path.abspath(script) + LEADS_TO)
        finally:
            self.busy = False

    def opening_in(self, dir_fd):
        """``os.open`` is about to open a path relative to the folder open as ``dir_fd`` (None: to the current one),
        which its ``open`` event does not say; what it was told before, which it tells again once it opened it."""
        before, self.thread.dir_fd = getattr(self.thread, "dir_fd", None), dir_fd
        return before

    def opened(self, path, mode, flags):
        """An ``open`` event: ``os.open``'s (``mode`` None), relative to the ``dir_fd`` it was told of, or
        ``open()``'s, which tells the name it was given, before an opener (``open(name, opener=…)``) opens whatever
        it opens, by its own ``os.open``, itself an ``open`` event: the name counts, from the working folder."""
        dir_fd = getattr(self.thread, "dir_fd", None) if mode is None else None
        where = None if isinstance(path, int) else located(path, dir_fd)
        path = self.counted(where)
        if path is None:
            return  # a file descriptor, opened before by a path
        if self.is_shared(path):
            self.sharing(path)
            return
        if fails_to_write(path, mode, flags):
            self.looked_at(where)  # the open raises (FileExistsError, PermissionError): what is there decided it
            return
        if writes(mode, flags) and not self.is_own(path, where) and not self.leaves_out(path):
            self.changing(path, makes_its_own(mode, flags), creates(mode, flags), where)
        if reads(mode, flags):
            self.read(where)

    def changing(self, path, empties, creating, where=None, content=True):
        """The file counted by ``path`` (:meth:`counted`), at ``where`` (where that is another path: a file the pair
        moved or linked), no file of the process's own, about to change: opened to write, one that ``empties`` it or
        may be ``creating`` it; or changed where it is (:meth:`changed_in_place`), in its ``content`` or not.

        One it empties before the process read it by that path is the process's own, and so is one it creates (it
        was not there, nor looked for). Otherwise what the file holds now is what a read depends on, by whichever
        path, in this process or another it forked: it is hashed, once, and told by its inode (:data:`FOUND`), which
        :func:`files_read` finds each path read by (a path may lead to one file, then to another). A pipe or a
        device holds no content, and waits for no one here. Once the process has hashed :data:`MAX_HASHED` so, a
        file is hashed no more as the pair waits: one whose content it changes counts as :data:`CHANGED_BY_THE_PAIR`,
        never current; one whose name, mode, links or times alone it changes is told (:data:`KEPT`), as no file
        written since the pair began."""
        if empties and path not in self.reading:
            self.own.add(path)
            return
        found = stat_or_none(where or path)
        if found is None:
            if creating and path not in self.reading:
                self.own.add(path)
            return
        inode, state = (found.st_dev, found.st_ino), stat_state(found)
        known = self.found_by_inode.get(inode, MISSING)
        if not stat.S_ISREG(found.st_mode) or (known is not MISSING and not (content and known is KEPT_FILE)):
            return  # no content, or found already (a file only moved or touched is found again as it is changed)
        if self.hashed + found.st_size <= MAX_HASHED:
            self.hashed += found.st_size
            self.tell_found(FOUND, path, state, file_digest(where or path))  # its open is this hook's, busy
        elif content:
            self.tell_found(FOUND, path, state, CHANGED_BY_THE_PAIR)
        else:
            self.tell_found(KEPT, path, state, None)

    def tell_found(self, kind, path, state, digest):
        """The file in ``state`` (:func:`state_of`), at ``path``, found holding what ``digest`` says (or
        :data:`KEPT`): kept by its device and inode, and written down with the state it was found in."""
        inode = file_in(state)
        self.found_by_inode[inode] = KEPT_FILE if kind == KEPT else digest
        self.found_files.append([kind, path, [inode[0], inode[1], digest, list(state)]])
        self.write_down(*self.found_files[-1])

    def changed_in_place(self, path, empties=False, content=False):
        """A file changed where it is, not opened to write: given new times (``os.utime``, as ``touch`` gives them),
        a new mode, owner, name or link (``os.chmod``, ``os.rename``, ``os.link``), or a new length (``os.truncate``,
        its ``content``; one that ``empties`` it). What it held before is what a later read depends on
        (:meth:`changing`)."""
        where, path = path, self.counted(path)
        if path is not None and not self.is_own(path, where) and not self.leaves_out(path):
            self.changing(path, empties, False, where, content)

    def linked(self, source, link):
        """A hard link made (``os.link``), which changes the file's time of its last change (:meth:`changed_in_place`):
        what is read at ``link`` counts by the path it was taken from, while it is that file (:meth:`counted`). A file
        taken into the pair's own folder (``tmp_path``), where what is read counts for nothing, is read where it was
        taken from, as it was, whoever reads it there later (a child the pair forked took it, the pair reads it)."""
        self.changed_in_place(source)
        if source is None or link is None:
            return
        link = in_its_real_folder(link)
        if os.getpid() != self.pid:
            self.read_all_of(source)  # a forked child's links end with it: what it took counts where it was
        elif link.startswith(self.leading_elsewhere) and not os.path.isdir(source):
            self.read(source)
        inside = os.path.join(source, "")
        for moved in [path for path in self.links if path.startswith(inside)]:  # a folder moved: what is in it
            self.links[os.path.join(link, moved[len(inside) :])] = self.links[moved]
        taken = self.counted(source)
        self.links[link] = (taken, inode_of(source), taken is not None and self.is_own(taken, source))

    def counted(self, path):
        """The path the file at ``path`` counts by: the one the pair took it from, where it linked or moved it there
        (:meth:`taken_from`); where ``path`` is the pair's own or the kernel's, the file it leads to, where that is
        neither: a link the pair made in its temporary folder (``tmp_path / "data"``), ``/proc/self/cwd/data``,
        ``/proc/self/fd/3/data``. Such a path means something in this process alone; the file it reaches is
        anyone's. Else ``path`` itself."""
        if path is None:
            return None
        taken = self.taken_from(path) if self.links else None
        if taken is not None:
            return taken
        if not path.startswith(self.leading_elsewhere):
            return path
        resolved = os.path.realpath(path)
        if resolved.startswith(self.leading_elsewhere) or resolved.endswith(" (deleted)"):
            return path
        return (self.taken_from(resolved) if self.links else None) or resolved

    def taken_from(self, path):
        """Where the file at ``path``, or the folder it is in, was before the pair linked or moved it there
        (:meth:`linked`, :meth:`renamed`: ``os.rename("data", tmp)``, then ``tmp/x.txt`` read), while it is that file
        or folder; None where the pair did not take it so, or the path goes up out of that folder (``moved/../x``).
        Both are paths in their folders' real places (:func:`in_its_real_folder`): a link or a move through a linked
        folder is read by its own path, and the other way round."""
        folder, below = in_its_real_folder(path), ""
        while os.pardir not in below.split(os.sep):
            source, inode, _ = self.links.get(folder, (None, None, None))
            if source is not None and inode is not None and inode_of(folder) == inode:
                return source + below  # not a link that failed, nor one removed or replaced since
            parent, name = os.path.split(folder)
            if parent == folder:
                return None
            folder, below = parent, os.sep + name + below
        return None

    def renamed(self, source, target):
        """A file or folder moved (``os.rename``, ``os.replace``), as one linked, then removed (:meth:`linked`); one
        moved into place among the shared inputs (as a file is written whole) is one."""
        if target is not None and self.is_shared(target):
            self.sharing(target)
        self.linked(source, target)

    def sharing(self, path):
        """One of the shared inputs touched: kept, and written down, so that a process that dies still names it."""
        if path not in self.shared_files:
            self.shared_files.add(path)
            self.write_down(SHARED, path, None)

    def is_shared(self, path):
        """Whether ``path`` is in the folder of inputs every cell of this machine shares (:data:`INPUTS_VARIABLE`):
        what a pair makes there it makes for every release, itself included, so whoever wrote it, each file there
        the pair touched is an input, as the pair left it."""
        return self.shared is not None and path.startswith(self.shared)

    def loaded(self, name):
        """A library ``ctypes`` loads by its path is read; one named without a folder (``libm.so.6``) is the
        system's: the dynamic linker looks it up in its own folders, as ``dlopen`` does a name without a slash."""
        path = as_path(name)
        if path is not None and has_folder(name):
            self.read(path)

    def loaded_by_the_linker(self, origin=None):
        """A library ``ctypes`` loaded, or an extension module loaded from ``origin`` outside the environment and the
        standard library: the libraries the dynamic linker loaded for it are read as they are now
        (:meth:`read_libraries_mapped`), in this process, whatever ends it, and before the pair may unload or rewrite
        them. (What the environment's extension modules load is read as the process ends.) Where ``LD_LIBRARY_PATH``
        names a folder by a relative path, which the linker looks in from the working folder of now, and the pair
        has changed folder since, that folder counts too (:meth:`searched_by_the_linker`)."""
        if not self.busy and self.linker_relative:
            with contextlib.suppress(OSError):  # a working folder removed: the linker finds nothing from there
                if os.getcwd() not in self.linker_searched_from:
                    self.searched_by_the_linker()
        if not self.busy and not (isinstance(origin, str) and self.leaves_out(origin)):
            self.busy = True
            try:
                self.read_libraries_mapped()
            finally:
                self.busy = False

    def loading(self, origin):
        """An extension module about to be loaded from ``origin``, which no audit event tells: read as it is now."""
        if not isinstance(origin, str) or not self.hears_the_pair():
            return
        self.busy = True
        try:
            self.read(origin)
        finally:
            self.busy = False

    def started(self, executable, args, cwd, env):
        """A program the pair starts (``subprocess``, ``os.exec*``, ``os.posix_spawn``) is a file it read: by its
        path, or where its name alone is looked up along ``PATH`` (``env``'s, else this process's), each folder it
        was looked for in up to the one it was found in, there or not, so a tool put earlier on ``PATH`` is a change.
        What the program itself reads is not seen."""
        program = executable
        if program is None:
            program = args if isinstance(args, (str, bytes)) or not args else args[0]
        program = os.fsdecode(program)
        if has_folder(program):
            self.read(as_path(os.path.join(os.fsdecode(cwd) if cwd else os.getcwd(), program)))
            return
        folders = search_path(env)
        for folder in folders:
            candidate = as_path(os.path.join(folder or os.curdir, program))
            self.read(candidate)
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return

    def executed(self, code):
        """Code run from a file is that file read: its ``co_filename`` where it names one (not ``<string>``)."""
        where = getattr(code, "co_filename", None)
        if isinstance(where, str) and os.path.isabs(where) and not in_a_file(where):  # a zip file's module: the zip's
            self.read(where)

    def read(self, where):
        """The file at ``where`` read (or looked for, and not there), by the path it counts by (:meth:`counted`), as
        it is where it is now."""
        path = self.counted(where)
        if path is None or self.is_own(path, where) or self.leaves_out(path):
            return
        if path in self.reading:
            self.read_again(path, state_of(where))
            return
        self.first_seen[path] = state_of(where)
        self.write_down(READ, path, self.first_seen[path])
        self.reading.add(path)

    def ending(self):
        """The process ends by ``os._exit`` (:func:`watch_exit`): a child it forked, whose reads are written down as
        they are, reads the libraries it mapped; the pair's process, where it did not tell what it holds at its end
        (:meth:`entries`: a script that leaves by ``os._exit``), writes that down."""
        self.busy = True  # nothing of what follows is the pair's
        if not self.asked_through.holds():
            self.untold()
        if os.getpid() != self.pid:
            self.read_libraries_mapped()
        elif not self.ended:
            self.write_all_down(self.entries() or [])

    def write_all_down(self, entries):
        """Write each of ``entries`` (:meth:`entries`) down in the journal: what the process cannot tell at its end."""
        for entry in entries:
            self.write_down(*entry)

    def read_libraries_mapped(self):
        """Each file the process has mapped to run (the kernel's ``/proc/self/maps``, its executable mappings) is
        read: the libraries the dynamic linker loaded for one ``ctypes`` or an extension module loaded by its path,
        which no audit event tells, and the folders each has the linker look its libraries up in, the environment's
        libraries' too (:meth:`searched_for`). The linker's own folders (:data:`SYSTEM_LIBRARIES`) hold the system's,
        as a library named without a folder is (:meth:`loaded`). One replaced since it was mapped (``(deleted)``) is not
        what its path now holds: where it was not read as it was loaded (an extension module is), what was read is
        not told (:attr:`untold`)."""
        for path in mapped_to_run():
            replaced = path.endswith(DELETED)
            path = path[: -len(DELETED)] if replaced else path
            if is_the_systems(path):
                continue
            if not replaced and not self.is_the_interpreters(path):  # the environment's too
                self.searched_for(path)
            if self.leaves_out(path):
                continue
            if not replaced:
                self.read(path)
            elif path not in self.reading:
                self.untold()

    def is_the_interpreters(self, library):
        """Whether ``library`` is one of the standard library's extension modules (``lib-dynload``), not the
        environment's (in a venv, Python's folder of the standard library's platform files is the venv's
        ``lib/python3.X``, which holds its site folder)."""
        return library.startswith(self.stdlib) and not library.startswith(self.environments_code)

    def searched_for(self, library):
        """The folders the ``library`` mapped (:meth:`read_libraries_mapped`) has the dynamic linker look the
        libraries it links up in (its ``RPATH`` or ``RUNPATH``, :func:`elf_search_path`: ``$ORIGIN/lib``), each
        with the folders in it the linker looks in first (:func:`linker_subfolders`), count by what is in them, as
        those of ``LD_LIBRARY_PATH`` do: a library put in a folder it names before the one it found a library in is
        the one it would load instead. Not the system's folders, whose libraries are the system's, nor those of the
        interpreter's own program and ``libpython``, which are the interpreter's (:func:`interpreter_files`)."""
        if library in self.searched_runpaths or library in INTERPRETER_FILES:
            return
        self.searched_runpaths.add(library)
        named = ":".join(elf_search_path(library))
        platform = linker_platform() if named else None
        for folder in linker_search_path(named, platform, origin=os.path.dirname(library)):
            self.searched_by_the_linker_in(folder, platform)

    def searched_by_the_linker_in(self, folder, platform):
        """``folder``, where the dynamic linker looks libraries up, and each folder in it it looks in first
        (:func:`linker_subfolders`), count by what is in them; not one of the system's folders
        (:data:`SYSTEM_LIBRARIES`), whose libraries are the system's, nor what this hook leaves out."""
        if folder in SYSTEM_LIBRARIES:
            return
        for each in linker_subfolders(folder, platform):
            if not self.leaves_out(each):
                self.tell(each + FOLDER_LISTED)

    def read_all_of(self, source):
        """The file at ``source`` read, or each file in the folder there (a folder moved), up to
        :data:`MAX_FILES_MOVED`: where there are more, what was read there is not told (:attr:`untold`)."""
        if not os.path.isdir(source):
            self.read(source)
            return
        inside = (os.path.join(folder, name) for folder, _, names in os.walk(source) for name in names)
        for count, path in enumerate(inside):
            if count == MAX_FILES_MOVED:
                self.untold()
                return
            self.read(path)

    def read_again(self, path, now):
        """A path read before (or looked for, and not there) that leads to another file ``now``: a link made or
        pointed elsewhere, a file or folder moved in its place, maybe to be put back. What was read there is more
        than one file: told (:data:`AGAIN`), so that its record is never current."""
        first = self.first_seen.get(path)
        if path in self.read_elsewhere or now is None:
            return
        if first is None or file_in(first) != file_in(now):
            self.read_elsewhere.add(path)
            self.write_down(AGAIN, path, None)

    def leaves_out(self, path):
        """Whether ``path`` is in a folder whose files identify nothing (:func:`excluded_prefixes`), as it is written;
        one that goes up (``..``) is asked where it leads, by the worker (:func:`is_input`)."""
        return path.startswith(self.excluded) and not goes_up(path)

    def is_own(self, path, where=None):
        """Whether the file at ``path`` (at ``where``, where the pair moved or linked it) is what this process made:
        it took the path for its own (:meth:`changing`), and the file there was written since the process began. An
        open to write that then failed (its folder missing, the file a running program's), or a path that leads
        elsewhere by now (a link, a folder moved in), leaves a file that was not: it is read as any other, and so is
        a file the pair moved away from a path it then made its own, or one it found before it changed it
        (:meth:`found_it`: touched, then opened to write by an open that failed). One not there (yet: ``a+`` is making
        it) is its own."""
        source, inode, own = self.links.get(where, (None, None, None))
        if source is not None and inode is not None and inode_of(where) == inode:
            return own  # the very file the pair moved or linked there: its own as it was where it took it from
        if path not in self.own:
            return False
        state = state_of(where or path)
        return state is None or (written_since(state, self.began) and not self.found_it(state))

    def path_finder_found(self, name, path, spec):
        """Python's path-based finder looked ``name`` up in ``path`` (``sys.path`` where None) and found ``spec``
        (None: nothing), whichever finder asked it (the import system, pytest's assertion rewriting, a type checker's
        import hook put first): each folder it looked in, up to the one it found the module in, counts
        (:data:`LOOKED_FOR`), written down as it looks, whatever holds that name by the end."""
        if self.busy:
            return  # this hook's own import
        try:
            found_in = folder_of(spec) if spec is not None else None
            for folder in absolute_folders(sys.path if path is None else path):
                looked = os.path.join(folder, name.rpartition(".")[2] + MODULE_LOOKED_FOR)
                if looked not in self.found_by_path and not self.leaves_out(looked):
                    self.found_by_path.add(looked)
                    self.write_down(LOOKED_FOR, looked, folder)
                if folder == found_in:
                    break
        except Exception:  # what was looked for may be lost: said, as a lost entry is
            self.untold()

    def file_finder_looked(self, name, folder, suffixes=()):
        """Python's file finder looked ``name`` up in ``folder``, whichever finder asked it: the path-based finder for
        each folder it searched, or a finder of the pair's that walks folders itself (``sys.path``, a plugin folder)
        and never asks the path-based finder. The folder counts (:data:`LOOKED_FOR`), found there or not: a module
        put there is one the lookup would find. So does each file of the module's name that it looked for there
        by another ending than Python's own (``suffixes``: ``name.hy``, where the pair added ``.hy`` to
        ``importlib.machinery.SOURCE_SUFFIXES``, as Hy does), which the forms of a module do not name: there or
        not, as a file read."""
        if self.busy:
            return  # this hook's own import
        self.busy = True
        try:
            for where in absolute_folders([folder]):
                tail = name.rpartition(".")[2]
                looked = os.path.join(where, tail + MODULE_LOOKED_FOR)
                if looked not in self.found_by_path and not self.leaves_out(looked):
                    self.found_by_path.add(looked)
                    self.write_down(LOOKED_FOR, looked, where)
                for suffix in suffixes:
                    self.read(os.path.join(where, tail + suffix))
                    self.read(os.path.join(where, tail, "__init__" + suffix))
        except Exception:  # what was looked for may be lost: said, as a lost entry is
            self.untold()
        finally:
            self.busy = False

    def found_it(self, state):
        """Whether the file in ``state`` (:func:`state_of`) is one the process found before it changed it
        (:meth:`changing`): its times may be new (the process touched it), its content is not the process's."""
        return file_in(state) in self.found_by_inode

    def write_down(self, *entry, dumps=json.dumps):
        """Append ``entry`` to the journal (one write, one line of JSON, by ``json.dumps`` as this module was imported:
        a test's mock of it reaches none of it), which outlives this process."""
        if getattr(self.thread, "telling", False):
            return  # this very append's own open
        self.thread.telling = True
        try:
            self.appending.append(dumps(entry).encode("ascii") + b"\n")
        except Exception:  # a full disk, a file size limit, an audit hook that refuses the journal's open
            self.untold()
        finally:
            self.thread.telling = False

    def entries(self, final=True):
        """What this process read, as it knows it itself, in the journal's entries (:data:`READ` and the rest; None
        where this Python has no audit hooks): the worker makes of them and of its children's journal what was read
        (:func:`files_read`), outside this process, which nothing the pair's code left set there reaches. Each of
        its modules is read (:data:`MODULE`); the folders each was looked for in were written down as Python's finders
        looked (:meth:`path_finder_found`, :meth:`file_finder_looked`). ``final``: the process ends; else it may go
        on (an ``exec`` that fails)."""
        if not self.known:
            return None
        self.busy = True  # nothing of what follows is the pair's
        self.ended = self.ended or final
        if not self.asked_through.holds():
            self.untold()
        self.read_libraries_mapped()
        entries = [[BEGAN, None, self.began]]
        entries += [[READ, path, self.first_seen.get(path)] for path in sorted(self.reading)]
        entries += list(self.found_files)
        entries += [[AGAIN, path, None] for path in sorted(self.read_elsewhere)]
        entries += [[SHARED, path, None] for path in sorted(self.shared_files)]
        entries += [[ASKED, entry, digest] for entry, digest in list(self.asked_about.items()) if digest is not OWN]
        entries += [[MODULE, path, None] for path in sorted(set(module_files()))]
        return [entry for entry in entries if entry[1] is None or not self.leaves_out(entry[1])]


class Appending(object):
    """Appends lines to the file at ``path`` (made where it is not there), one write each, by a descriptor opened at
    the first, which the children a process forks share; opened again where the pair's code closed it, or opened a
    file of its own in its place. An audit hook of the pair's code that refuses opens (a write is no audit event) or
    an ``os.open`` or ``os.write`` it replaced (the functions are ``os``'s as this module was imported) stops none
    of it."""

    def __init__(self, path):
        self.path = path
        self.fd, self.identity = None, None

    def append(self, line, open_file=os.open, write=os.write):
        """Append ``line``; an ``OSError`` where it is not all written (a file size limit cuts it short)."""
        if not self.is_open():
            self.fd = open_file(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            self.identity = self.file_of(self.fd)
        if write(self.fd, line) != len(line):
            raise OSError(errno.EFBIG, "the journal's line was cut short")

    def is_open(self):
        """Whether the descriptor is still the one it opened, of the same file."""
        return self.fd is not None and self.file_of(self.fd) == self.identity

    @staticmethod
    def file_of(fd, stat_of=os.fstat):
        """The device and inode of the file open as ``fd``; None where none is."""
        try:
            found = stat_of(fd)
        except OSError:
            return None
        return found.st_dev, found.st_ino


def watch_lookups(asked, opening_in):
    """Have ``os.stat``, ``os.lstat``, ``os.access``, ``os.readlink`` and ``os.fstat`` tell ``asked`` each path they
    are asked about (a path, relative to a ``dir_fd`` or not, or a descriptor), and ``os.open`` tell ``opening_in``
    the ``dir_fd`` a path it opens is relative to. Each stands where the original did: in ``os``, in pathlib's
    accessor where it holds its own (Python 3.10 and older), and in the sets ``os`` says its functions' abilities by
    (``os.supports_dir_fd``, …), so code that asks them (``shutil``) runs as it would have."""
    for name in ("stat", "lstat", "access", "readlink", "fstat"):
        stand_in(name, Watched(getattr(os, name), asked))
    stand_in("open", OpensAt(os.open, opening_in))


def stand_in(name, watched):
    """Put ``watched`` where ``os``'s function ``name`` (its ``original``) was."""
    abilities = (os.supports_fd, os.supports_dir_fd, os.supports_follow_symlinks, os.supports_effective_ids)
    for ability in abilities:
        if watched.original in ability:
            ability.add(watched)
    setattr(os, name, watched)
    accessor = getattr(pathlib, "_NormalAccessor", None)
    if getattr(accessor, name, None) is watched.original:
        setattr(accessor, name, watched)


class Watched(object):
    """``original`` (``os.stat``, ``os.lstat``, ``os.access``, …), telling ``asked`` each path it is asked about, and
    the ``dir_fd`` it is relative to. Like the built-in it stands for, it is no method when a class holds it, pickles
    by its name, and says its signature; only ``is`` tells them apart."""

    def __init__(self, original, asked):
        self.original, self.asked = original, asked
        self.parameter = "fd" if original.__name__ == "fstat" else "path"  # the name of its first parameter
        self.__name__ = self.__qualname__ = original.__name__
        self.__module__, self.__doc__ = "os", original.__doc__
        self.__self__ = getattr(original, "__self__", None)
        self.__text_signature__ = getattr(original, "__text_signature__", None)

    def __call__(self, *arguments, **options):
        arguments, options, path = path_given(arguments, options, self.parameter)
        try:
            return self.original(*arguments, **options)
        finally:
            if path is not None:
                self.asked(path, options.get("dir_fd"), self.__name__ == "readlink")

    @property
    def __signature__(self):
        import inspect

        return inspect.signature(self.original)

    def __reduce__(self):
        return self.__qualname__

    def __repr__(self):
        return repr(self.original)


METADATA_MODULES = ("importlib.metadata", "importlib_metadata")
"""Where Python (and its backport) finds the distributions installed on ``sys.path``, by listing its folders."""


def finding_distributions():
    """Whether ``importlib.metadata`` is on the way to this moment: it lists a folder to find distributions."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_globals.get("__name__") or ""
        if name in METADATA_MODULES or name.startswith(tuple(module + "." for module in METADATA_MODULES)):
            return True
        frame = frame.f_back
    return False


IMPORT_SYSTEM = ("importlib._bootstrap", "importlib._bootstrap_external", "_frozen_importlib",
                 "_frozen_importlib_external", "zipimport")  # fmt: skip
"""The modules of the import system, which looks modules up folder by folder (counted as :data:`MODULE_LOOKED_FOR`)."""


class OpensAt(Watched):
    """``os.open``, telling ``asked`` the ``dir_fd`` a path it opens is relative to before it opens it (the ``open``
    audit event names the path alone), and what it was told before, after."""

    def __call__(self, *arguments, **options):
        arguments, options, _ = path_given(arguments, options, self.parameter)
        before = self.asked(options.get("dir_fd"))
        try:
            return self.original(*arguments, **options)
        finally:
            self.asked(before)


def path_given(arguments, options, parameter):
    """The ``arguments`` and ``options`` of a call to an ``os`` function whose first parameter is ``parameter``, with
    the path they give made text or bytes, once (an ``os.PathLike``'s ``__fspath__`` runs once, as in the call
    alone), and that path; None where they give none (a wrong call, which the function tells of as it would)."""
    if arguments:
        path = as_given(arguments[0])
        return (path,) + tuple(arguments[1:]), options, path
    if parameter in options:
        path = as_given(options[parameter])
        return arguments, dict(options, **{parameter: path}), path
    return arguments, options, None


def as_given(name):
    """``name`` as ``os.fspath`` makes it; as it is where it is no path (a descriptor, or what the function refuses)."""
    try:
        return os.fspath(name)
    except TypeError:
        return name


HEARD = frozenset(
    ("open", "ctypes.dlopen", "exec", "os.rename", "os.utime", "os.truncate", "os.link", "os.chmod", "os.chown",
     "os.chflags", "os.setxattr", "os.removexattr", "os.getxattr", "os.listxattr", "subprocess.Popen", "os.exec",
     "os.posix_spawn", "os.listdir", "os.scandir")
)  # fmt: skip
"""The audit events :meth:`FilesRead.heard` looks at."""

HOOK_FILE = Watched.__call__.__code__.co_filename
"""This file, as the interpreter names its code: frames of it are this hook's, not the pair's."""

WORKER_PACKAGE = os.path.join(os.path.dirname(HOOK_FILE), "")
"""The folder of the worker's modules, this hook's among them."""

ENTRANCES = ("hears_the_pair", "heard", "asked", "loading", "create_module", "__call__")
"""The functions of this file through which what is heard comes in (the audit hook, the stand-ins for ``os``'s
functions, the extension modules' loader), from the pair's code and this hook's alike."""


PASSED_THROUGH, WORKERS, PAIRS = "passed through", "the worker's", "the pair's"
"""Whose code on the way to what is heard is: this hook's :data:`ENTRANCES` and the standard library's are passed
through by the hook's own work and the pair's alike (:meth:`FilesRead.own_look`, :func:`file_of`)."""


def file_of(where, passed_through):
    """Whose the code of the file ``where`` is (by its name: a code object's equality leaves its file out): code
    of ``passed_through`` (the standard library's, frozen or not), through which the hook's own work and the pair's
    alike pass; the worker's; or the pair's."""
    if where.startswith(passed_through):
        return PASSED_THROUGH
    return WORKERS if where.startswith(WORKER_PACKAGE) else PAIRS


class AskedThrough(object):
    """The functions this hook asks the file system through, directly or by ``os.path`` (``posixpath`` and
    ``genericpath`` look ``os.stat`` up in ``os`` as they call it), as they were once it stood in for ``os``'s (it
    opens files by ``os.open`` and ``open`` as this module was imported, which the pair's replace not):
    :meth:`holds` says whether they still are. One the pair replaced (a test's mock of ``os.stat``, pyfakefs) would
    have this hook ask the pair's code what a file is, and take what it says."""

    NAMES = (
        (os, ("path", "stat", "lstat", "fstat", "access", "readlink", "listdir", "scandir", "walk", "getcwd",
              "getpid", "fspath", "fsdecode", "fsencode", "getxattr", "listxattr")),
        (os.path, ("abspath", "realpath", "normpath", "join", "split", "dirname", "basename", "isabs", "isdir",
                   "isfile", "exists", "lexists")),
        (io, ("FileIO",)),
    )  # fmt: skip

    def __init__(self):
        self.asked = [(namespace, operator.attrgetter(*names)) for namespace, names in self.NAMES]
        self.originals = None

    def settle(self):
        """Take the functions as they are now, the hook's stand-ins standing."""
        self.originals = self.now()

    def now(self):
        return [get(namespace) for namespace, get in self.asked]

    def holds(self):
        return self.originals is None or self.now() == self.originals


def as_first_found(paths, found, first_seen):
    """Of ``paths``, each not as a process first found it: changed by it (``found``: what it held before), else
    changed since it was read (``first_seen``: its :func:`state_of` then), by what :func:`files_read` says."""
    changed = {}
    for path in paths:
        if path in found:
            changed[path] = found[path]
        elif path in first_seen and state_of(path) != first_seen[path]:
            changed[path] = None if first_seen[path] is None else CHANGED_AFTER_IT_WAS_READ
    return changed


READ, FOUND, KEPT, AGAIN, SHARED, ASKED = "read", "found", "kept", "read again", "shared", "asked"
BEGAN, MODULE, LOOKED_FOR = "began", "module", "looked for"
"""The entries of a journal, and of what a process says it read at its end (:meth:`FilesRead.entries`): ``[READ,
path, state]`` (:func:`state_of`, as the file was first read), ``[FOUND, path, [device, inode, digest, state]]``
(what the file of that inode held before the process changed it, whatever path reads it, and its state then),
``[KEPT, path, [device, inode, None, state]]`` (a file whose name, mode or times alone the process changed, not
hashed), ``[AGAIN, path, None]`` (a
path that led to another file as it was read again), ``[SHARED, path, None]`` (one of the shared inputs it touched,
an input as it is left: :meth:`FilesRead.is_shared`), ``[ASKED, path + ending, digest]`` (a file asked about or a
folder listed, as first found: :meth:`FilesRead.tell`), ``[BEGAN, None, time]`` (when the process began to watch),
``[MODULE, path, None]`` (the file of a module it holds), ``[LOOKED_FOR, folder/name.*, folder]`` (a module looked
for in a folder, which counts where the folder is one, not a zip file)."""

MISSING, KEPT_FILE = object(), object()
"""What :meth:`FilesRead.changing` finds of a file it has not seen, and of one it has kept (:data:`KEPT`)."""

OWN = object()
"""What :meth:`FilesRead.tell` keeps for a file or folder the process asked about that it made or changed itself."""


def journaled(journal):
    """The entries the ``journal`` of a :class:`FilesRead` holds, from its process and its forked children."""
    try:
        with open(journal, "rb") as told:
            return entries_in(told.read().splitlines())
    except OSError:
        return []


def entries_in(lines):
    """The entries that ``lines`` (bytes, JSON, one entry each: a journal's, what a process told at its end) hold.
    A ``ValueError`` where one holds none: what a process read is then not all told (a line cut short, written by
    what the pair's code put in the place of this hook's functions)."""
    entries = []
    for line in lines:
        entry = json.loads(line.decode("ascii"))
        kind, path = (entry[0], entry[1]) if isinstance(entry, list) and len(entry) == 3 else (None, None)
        if kind not in KINDS or not isinstance(path, (str, NONE)):
            raise ValueError("no entry of what was read: {!r}".format(line[:80]))
        entries.append(entry)
    return entries


KINDS = (READ, FOUND, KEPT, AGAIN, SHARED, ASKED, BEGAN, MODULE, LOOKED_FOR)


NONE = type(None)


def files_read(entries, excluded):
    """What a pair's processes read, from the ``entries`` they told (their journal's, the process's own at its end),
    outside the folders ``excluded`` (:func:`excluded_prefixes`): the files, sorted (None where none told any: a
    Python without audit hooks), and of them each that no longer holds what was read, with the sha256 of what was
    first found (:func:`as_first_found`; one of the shared inputs by what it holds now). A file written since the
    process began and before it first read it, not by the process itself (by a program the pair ran: ``python -m
    helper``), is the pair's own."""
    if not entries:
        return None, {}
    began = min([value for kind, _, value in entries if kind == BEGAN and isinstance(value, (int, float))] or [None])
    first, asked, read, shared, files, kept_files, again = {}, {}, set(), set(), {}, set(), set()
    read_at, found_as, zipped = {}, {}, {}
    for index, (kind, path, value) in enumerate(entries):
        if kind == READ:
            state = tuple(value) if value else None
            if path in first and (state and file_in(state)) != (first[path] and file_in(first[path])):
                again.add(path)  # read by two processes, each where another file was
            first.setdefault(path, state)
            read_at.setdefault(path, index)
        elif kind in (FOUND, KEPT) and isinstance(value, list) and len(value) == 4:
            inode = tuple(value[:2])
            found_as.setdefault(inode, (index, tuple(value[3]) if isinstance(value[3], list) else None))
            if kind == KEPT:
                kept_files.add(inode)
            else:
                files.setdefault(inode, value[2])
        elif kind == AGAIN:
            again.add(path)
        elif kind == ASKED:
            asked.setdefault(path, value)
        elif kind == SHARED:
            shared.add(path)
        elif kind == MODULE and in_a_file(path):
            continue  # a module imported from a zip file: what is in it is the file's content, which its import read
        elif kind == LOOKED_FOR and isinstance(value, str) and os.path.isfile(value):
            zipped[path] = value  # a zip file on sys.path: by what was looked for in it, where it was not read
        if kind in (READ, SHARED, MODULE, LOOKED_FOR):
            read.add(path)
    read -= set(path for path, archive in zipped.items() if archive in read)  # read: counted by its content
    inodes = dict((path, file_in(state)) for path, state in first.items() if state)
    found = dict((path, files[inode]) for path, inode in inodes.items() if inode in files)  # by any path, any process
    for path, inode in inodes.items():  # read, then changed unheard (by a program, through a link) before it was found
        at, state = found_as.get(inode, (None, None))
        if at is not None and read_at[path] < at and state != first[path]:
            found[path] = CHANGED_AFTER_IT_WAS_READ
    made = set(path for path in first if path not in found and inodes.get(path) not in kept_files
               and written_since(first[path], began)) - again  # fmt: skip
    kept = [path for path in inputs_of(read, excluded) if path not in made]
    counted = asked_inputs(asked, read, excluded)
    changed = as_first_found(kept, found, first)
    changed.update((path, file_digest(path)) for path in kept if path in shared)
    changed.update((path, READ_ANOTHER_FILE) for path in kept if path in again)
    for path in kept:  # only moved or touched past what was hashed as the pair waited: as it is, where nothing
        taken_as_kept = path not in found and path not in again and inodes.get(path) in kept_files
        if taken_as_kept and state_of(path) == first[path]:  # changed it since it was read (cp -p sets its times)
            changed[path] = file_digest(path)
    changed.update((entry, asked[entry]) for entry in counted)
    return sorted(kept + counted + site_startup_files()), changed


def in_a_file(path):
    """Whether ``path`` goes into a file (``lib.zip/module.py``, a module imported from a zip file, whose content is
    the zip file's, which the import opened): it is not there, and the nearest of its folders that is there is a
    file."""
    return not os.path.lexists(path) and os.path.isfile(archive_of(path))


def archive_of(path):
    """The file ``path`` goes into (:func:`in_a_file`): the zip file of a module imported from one, whose content
    ``zipimport`` read (before the hook heard anything, for a ``sitecustomize`` on ``PYTHONPATH``)."""
    folder = os.path.dirname(path)
    while folder != os.path.dirname(folder) and not os.path.lexists(folder):
        folder = os.path.dirname(folder)
    return folder


def written_since(state, began):
    """Whether a file found in ``state`` (:func:`state_of`) had its content written since ``began``, as its times say
    (:func:`content_written_since`)."""
    return state is not None and content_written_since(state[1], state[2], began)


def inputs_of(paths, excluded):
    """Of ``paths``, sorted, the files of content outside the folders ``excluded`` (:func:`excluded_prefixes`),
    links resolved or not."""
    kernels = kernel_devices()
    return sorted(path for path in set(paths) if is_input(path, excluded, kernels))


def asked_inputs(entries, read, excluded):
    """Of ``entries`` (paths with one of the endings of ``asked_digest``), sorted, those of files and folders outside
    the folders ``excluded``; but a file only found there that the process ``read`` too, which counts by its
    content."""
    kernels = kernel_devices()
    kept = []
    for entry in set(entries):
        path, ending = asked_path(entry)
        counted = ending is not None and not (ending == FILE_THERE and path in read)
        if counted and is_input(path, excluded, kernels, folders=True):
            kept.append(entry)
    return sorted(kept)


def is_input(path, excluded_folders, kernels, folders=False):
    """Whether ``path`` is outside the folders ``excluded_folders`` (and none of them), its folders' links resolved or
    not (a link of one's own that points into them counts by its own path), and names a file of content (or a folder,
    where ``folders``), or none."""
    folder, name = os.path.split(path)
    resolved = os.path.join(os.path.realpath(folder), name)
    said = (resolved,) if goes_up(path) else (path, resolved)  # ``..``: where it leads, not what it is written as
    outside = not any(os.path.join(each, "").startswith(excluded_folders) for each in said)
    return not is_bytecode(path) and outside and holds_content(path, kernels, folders)


def goes_up(path):
    """Whether ``path`` holds a ``..`` (kept where a link may come before it: :func:`as_path`)."""
    return os.pardir in path.split(os.sep)


def site_startup_files():
    """``folder/*.pth`` (:data:`SITE_PTH_FILES`) for each site folder this interpreter's ``site`` ran the ``.pth``
    files of as it started, before any audit hook: ``site.getsitepackages()``, the user's
    (``site.getusersitepackages()``) where it is enabled, and each other folder of ``sys.path`` then outside the
    standard library, which a ``.pth`` file's ``import`` line may have added by ``site.addsitedir``, whose ``.pth``
    files ``site`` runs too, there or not (``site.addsitedir`` adds a folder not there yet; one put in a folder
    added otherwise, which ``site`` runs not, counts as well; not a zip file's, such as the standard library's
    ``python311.zip``); and
    ``folder/sitecustomize.*`` and ``folder/usercustomize.*`` (:data:`MODULE_LOOKED_FOR`) for each folder of
    ``sys.path`` then, which ``site`` imports them from (a folder a ``.pth`` file adds too, a zip file
    ``PYTHONPATH`` names), but the worker's own, and the file of each it imported, by its content, the
    environment's too; none where ``site`` was not imported at start (``-S``). They are
    in the environment, or named by it, yet what they run (an ``import`` line, a ``sitecustomize``) changes what
    the pair sees."""
    if sys.flags.no_site:
        return []
    sites = list(getattr(site, "getsitepackages", lambda: [])())
    if site.ENABLE_USER_SITE:
        sites.append(site.getusersitepackages())
    searched = sites + [folder for folder in sys.path if folder and folder != os.path.dirname(WORKER_FILE)]
    modules = ("sitecustomize" + MODULE_LOOKED_FOR, "usercustomize" + MODULE_LOOKED_FOR)
    stdlib = stdlib_prefixes()
    added = [folder for folder in searched if not os.path.join(folder, "").startswith(stdlib)]  # site.addsitedir's?
    found = [os.path.join(os.path.abspath(folder), SITE_PTH_FILES) for folder in sites + added
             if os.path.isdir(folder) or not (os.path.lexists(folder) or folder.endswith(".zip"))]  # fmt: skip
    found += [os.path.join(os.path.abspath(folder), name) for folder in searched
              if os.path.isdir(folder) or os.path.isfile(folder) for name in modules]  # fmt: skip
    for name in ("sitecustomize", "usercustomize"):  # what it ran, by its content, in the environment too
        where = module_attribute(sys.modules.get(name), "__file__")
        if isinstance(where, str) and os.path.isabs(where) and os.path.isfile(where):
            found.append(os.path.abspath(where))
    return sorted(set(found))


def watch_exit(ending):
    """Have ``os._exit`` (``posix._exit`` too, the same function) call ``ending`` first: it ends a process without
    its end (a ``DataLoader``'s worker, a script that leaves at once), where what it holds would be lost."""
    original = os._exit

    def _exit(status):
        with contextlib.suppress(Exception):
            ending()
        original(status)

    _exit.__doc__, _exit.__module__ = original.__doc__, "os"
    os._exit = _exit
    if os.name == "posix":
        sys.modules["posix"]._exit = _exit


def watch_path_finder(found):
    """Tell ``found`` of each lookup of Python's path-based finder (``importlib.machinery.PathFinder.find_spec``),
    with what it found, whichever finder asks it: the import system's turn of it, and a finder put before every other
    (pytest's assertion rewriting, a type checker's import hook) that asks it itself."""
    finder = importlib.machinery.PathFinder
    original = finder.find_spec

    def find_spec(cls, name, path=None, target=None):
        spec = original(name, path, target)
        found(name, path, spec)
        return spec

    finder.find_spec = classmethod(find_spec)


def watch_file_finder(looked):
    """Tell ``looked`` of each folder Python's file finder (``importlib.machinery.FileFinder.find_spec``) looks a
    module up in, with the module's name, whichever code asks it: the path-based finder, folder by folder, and a
    finder that makes file finders itself (one walking ``sys.path`` first on ``sys.meta_path``), which the
    path-based finder never hears of. Its own looks at the folder (``posix.stat``, ``os.listdir``) are the import
    system's, which count by module alone."""
    finder = importlib.machinery.FileFinder
    original = finder.find_spec

    def find_spec(self, fullname, target=None):
        try:
            return original(self, fullname, target)
        finally:
            loaders = getattr(self, "_loaders", ())
            looked(fullname, self.path, [suffix for suffix, _ in loaders if suffix not in PYTHONS_SUFFIXES])

    finder.find_spec = find_spec


PYTHONS_SUFFIXES = frozenset(
    _imp.extension_suffixes() + importlib.machinery.SOURCE_SUFFIXES + importlib.machinery.BYTECODE_SUFFIXES
)
"""The endings of a module's file Python's file finder takes by itself (an extension module's, ``.py``, ``.pyc``),
as the worker found them, before a pair's code could add one: a module's forms in a folder (``folder/name.*``)."""


def watch_library_loads(loaded):
    """Tell ``loaded`` once ``ctypes`` has loaded a library (``ctypes.CDLL``, ``torch.ops.load_library``,
    ``_ctypes.dlopen``), through the ``dlopen`` of ``_ctypes`` that every ``CDLL`` calls (torch imports ``ctypes``
    as it is imported, so its import costs no pair)."""
    import _ctypes
    import ctypes

    original = _ctypes.dlopen

    def dlopen(*given, **options):
        try:
            return original(*given, **options)
        finally:
            loaded()

    _ctypes.dlopen = ctypes._dlopen = dlopen


def system_library_folders():
    """The folders the dynamic linker looks a library named without a folder up in by itself, the system's: ``/lib``,
    ``/usr/lib`` and their ``32`` and ``64`` forms, each with the platform's multiarch folder in it."""
    folders = ["/lib", "/lib32", "/lib64", "/usr/lib", "/usr/lib32", "/usr/lib64"]
    multiarch = sysconfig.get_config_var("MULTIARCH")
    return frozenset(folders + ([os.path.join(folder, multiarch) for folder in folders] if multiarch else []))


SYSTEM_LIBRARIES = system_library_folders()
"""The folders of the system's libraries (:func:`system_library_folders`)."""


def is_the_systems(library):
    """Whether the library at ``library`` is the system's: in one of :data:`SYSTEM_LIBRARIES`, not a folder inside
    one (``/usr/lib/myproject/libdep.so``, which a library's ``RPATH`` names)."""
    return os.path.dirname(library) in SYSTEM_LIBRARIES


DELETED = " (deleted)"
"""What ``/proc/self/maps`` says after the path of a file removed or replaced since it was mapped."""


def mapped_to_run(open_file=os.open, read=os.read, close=os.close):
    """The paths of the files this process has mapped to run (``/proc/self/maps``: an ``x`` in a mapping's
    permissions), each once; none where the kernel has no such file. Read by ``os``'s functions as this module was
    imported, which no ``open`` of the pair's replaces."""
    try:
        fd = open_file("/proc/self/maps", os.O_RDONLY)
    except OSError:
        return []
    try:
        chunks = list(iter(lambda: read(fd, 1 << 16), b""))
    finally:
        close(fd)
    paths = []
    for line in b"".join(chunks).decode("utf-8", "surrogateescape").splitlines():
        fields = line.split(None, 5)
        if len(fields) == 6 and "x" in fields[1] and fields[5].startswith("/"):
            paths.append(fields[5])
    return list(dict.fromkeys(paths))


def watch_extension_loads(loading, loaded):
    """Tell ``loading`` of each extension module's file as Python loads it (``ExtensionFileLoader.create_module``),
    before it does: with how the file is then, so that one rebuilt after (by a program the pair runs) is a change,
    not the pair's own file; and ``loaded`` once it did."""
    loader = importlib.machinery.ExtensionFileLoader
    create = loader.create_module

    def create_module(self, spec):
        loading(getattr(spec, "origin", None))
        try:
            return create(self, spec)
        finally:
            loaded(getattr(spec, "origin", None))

    loader.create_module = create_module


def absolute_folders(folders):
    """Each of ``folders`` that is text, as an absolute path, from the working folder of now, where a relative one is
    looked in (``""``: the working folder itself); one relative to a working folder that is gone names none."""
    found = []
    for folder in list(folders):
        if isinstance(folder, str):
            with contextlib.suppress(OSError):
                found.append(os.path.abspath(folder or os.curdir))
    return found


def folder_of(spec):
    """The folder a module of ``spec`` was found in: its file's, or its package's; None for a namespace package,
    which any module of its name found later would have replaced."""
    origin = getattr(spec, "origin", None)
    if not isinstance(origin, str) or not os.path.isabs(origin):
        return None
    folder = os.path.dirname(origin)
    return os.path.dirname(folder) if spec.submodule_search_locations else folder


class FromSources(object):
    """A finder that compiles every module outside ``excluded`` (the environment, the standard library) from its
    source, never from bytecode cached before: a source replaced by one of the same size and modification time
    would run as the old one, while the record names the new one.

    It stands in Python's PathFinder's place (:meth:`install`) and finds what it would: each module is looked
    up once, and only the loader of one outside ``excluded`` is another."""

    def __init__(self, excluded):
        self.excluded = tuple(os.path.join(folder, "") for folder in excluded)

    def install(self):
        """Go just before PathFinder: the finders before it (built-in and frozen modules, …) keep their turn."""
        finders = sys.meta_path
        here = next((i for i, finder in enumerate(finders) if finder is importlib.machinery.PathFinder), len(finders))
        finders.insert(here, self)

    def find_spec(self, name, path=None, target=None):
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        loader = getattr(spec, "loader", None)
        if type(loader) is importlib.machinery.SourceFileLoader and not spec.origin.startswith(self.excluded):
            spec.loader = SourceOnly(loader.name, loader.path)
        return spec  # None: the finders after PathFinder (an editable install's, …) have their turn


class SourceOnly(importlib.machinery.SourceFileLoader):
    """A loader that neither reads nor writes cached bytecode (SourceLoader skips both without the source's stats);
    but one Python runs whatever its source says (:func:`runs_unchecked`) it runs, as Python does, and the pair then
    read it (:func:`is_bytecode`)."""

    def path_stats(self, path):
        if runs_unchecked(importlib.util.cache_from_source(path)):
            return importlib.machinery.SourceFileLoader.path_stats(self, path)
        raise OSError("compiled from its source every time")


def descriptor_path(fd):
    """The path of the file or folder open as ``fd``, as the kernel says (Linux's ``/proc/self/fd``); None where it
    cannot say, or the file is gone."""
    try:
        path = os.readlink("/proc/self/fd/{}".format(fd))
    except OSError:
        return None
    return None if path.endswith(" (deleted)") or not os.path.isabs(path) else path


def located(name, dir_fd=None):
    """The absolute path (:func:`as_path`) of ``name``: a path (text, bytes, a ``Path``), relative to the folder open
    as ``dir_fd`` where one is given (a negative one, as audit events say none and ``AT_FDCWD`` is, is the working
    folder), or a descriptor; None where it names none."""
    if isinstance(name, int):
        return descriptor_path(name)
    name = os.fsdecode(os.fspath(name))
    if isinstance(dir_fd, int) and dir_fd >= 0 and not os.path.isabs(name):
        folder = descriptor_path(dir_fd)
        if folder is None:
            return None
        name = os.path.join(folder, name)
    return as_path(name)


def stat_or_none(path):
    """What ``os.stat`` says of the file at ``path``, links followed; None where there is none."""
    try:
        return os.stat(path)
    except OSError:
        return None


def inode_of(path):
    """The device and inode of the file at ``path``, links followed; None where there is none."""
    found = stat_or_none(path)
    return None if found is None else (found.st_dev, found.st_ino)


def as_path(name):
    """``name`` (str or bytes) as an absolute path, as the kernel follows it; None for what names no file (a
    descriptor, None). A ``..`` stays where a link may come before it (``link/../data.txt`` is the file beside what
    ``link`` points to, not ``data.txt`` here); only ``.`` and repeated separators go."""
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    if not isinstance(name, str):
        return None
    path = name if os.path.isabs(name) else os.path.join(os.getcwd(), name)
    if os.pardir not in path.split(os.sep):
        return os.path.normpath(path)
    drive, rest = os.path.splitdrive(path)
    parts = [part for part in rest.replace(os.altsep or os.sep, os.sep).split(os.sep) if part not in ("", os.curdir)]
    return drive + os.sep + os.sep.join(parts)


def search_path(env):
    """The folders a program's name is looked up in: ``PATH`` of ``env`` (the started program's environment, keys
    text or bytes) where given, else of this process; as ``os.get_exec_path`` says."""
    if env is not None:
        env = dict((os.fsdecode(key), os.fsdecode(value)) for key, value in env.items())
    return os.get_exec_path(env)


def preloaded_by_path(value):
    """The libraries ``value`` of ``LD_PRELOAD`` names by a path (split at ``:`` and white space, as the dynamic
    linker splits it), absolute; one named without a folder is looked up in the system's folders."""
    return [os.path.abspath(name) for name in value.replace(":", " ").split() if has_folder(name)]


def linker_search_path(value, platform=None, origin=None):
    """The folders ``value`` of ``LD_LIBRARY_PATH`` names, as the dynamic linker reads it (split at ``:`` and ``;``;
    an empty one is the working folder), absolute, each with its tokens expanded as the linker expands them
    (:func:`linker_tokens`): ``$ORIGIN`` the folder of the program the process runs, ``$PLATFORM`` ``platform``
    (the kernel's ``AT_PLATFORM``: :func:`linker_platform`), ``$LIB`` each folder of libraries the linker may mean
    by it."""
    if not value:
        return []
    folders = []
    for folder in value.replace(";", ":").split(":"):
        folders += [os.path.abspath(each or os.curdir) for each in linker_tokens(folder, platform, origin)]
    return list(dict.fromkeys(folders))


LINKER_TOKENS = ("ORIGIN", "PLATFORM", "LIB")
"""The dynamic string tokens the linker expands in ``LD_LIBRARY_PATH`` (``$ORIGIN`` or ``${ORIGIN}``)."""


def linker_tokens(folder, platform=None, origin=None):
    """``folder`` with each token of :data:`LINKER_TOKENS` expanded, in each way the linker may expand it: the
    folder of the program the process runs (or ``origin``, a library's own) for ``$ORIGIN``, ``platform`` for
    ``$PLATFORM``, and for ``$LIB``
    each of the system's folders of libraries (``lib``, ``lib64``, the multiarch ``lib/x86_64-linux-gnu``: which,
    the linker was built to say)."""
    values = {
        "ORIGIN": [origin or os.path.dirname(running_program())],
        "PLATFORM": [platform or "$PLATFORM"],
        "LIB": sorted(folder.strip("/") for folder in SYSTEM_LIBRARIES if folder.startswith("/lib")),
    }
    expanded = [folder]
    for token in LINKER_TOKENS:
        expanded = [
            each.replace("${" + token + "}", value).replace("$" + token, value) if "$" in each else each
            for each in expanded for value in values[token]
        ]  # fmt: skip
    return list(dict.fromkeys(expanded))


LINKER_SUBFOLDERS = ("tls", "x86_64", "avx512_1", "haswell", "xeon_phi", "i386", "i486", "i586", "i686")
"""The folders of a folder of ``LD_LIBRARY_PATH`` that the dynamic linker looks a library up in before the folder
itself (glibc before 2.37, its legacy ``hwcaps``: ``tls/x86_64``, ``x86_64/x86_64``, by the CPU's abilities),
with the kernel's ``AT_PLATFORM`` and the machine's name (:func:`linker_subfolders`)."""


def environment_at_start(open_file=os.open, read=os.read, close=os.close):
    """The variables this process started with, as the kernel says them (``/proc/self/environ``), before ``site``
    and what it ran (a ``.pth`` file's line, ``sitecustomize``) changed ``os.environ``; ``os.environ``'s where the
    kernel cannot be asked."""
    try:
        fd = open_file("/proc/self/environ", os.O_RDONLY)
    except OSError:
        return dict(os.environ)
    try:
        chunks = []
        while True:
            chunk = read(fd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        close(fd)
    found = {}
    for entry in b"".join(chunks).split(b"\0"):
        key, equals, value = entry.partition(b"=")
        if equals:
            found.setdefault(os.fsdecode(key), os.fsdecode(value))  # the first of a name, as getenv reads it
    return found


def running_program(readlink=os.readlink):
    """The program this process runs, as the kernel says it (``/proc/self/exe``): its folder is the dynamic linker's
    ``$ORIGIN`` for ``LD_LIBRARY_PATH``; where the kernel cannot be asked, where ``sys.executable`` leads."""
    try:
        return readlink("/proc/self/exe")
    except OSError:
        return os.path.realpath(sys.executable)


def has_legacy_hwcaps(version=None):
    """Whether the dynamic linker also looks a library up in the legacy ``hwcaps`` folders (``tls``, ``x86_64``,
    ``haswell``): glibc before 2.37 does (``os.confstr("CS_GNU_LIBC_VERSION")``: ``glibc 2.36``); where the C library
    is no glibc or cannot be asked, taken to, as counting more folders only re-runs more."""
    try:
        version = version or os.confstr("CS_GNU_LIBC_VERSION")
    except (AttributeError, OSError, ValueError):
        return True
    name, _, number = (version or "").partition(" ")
    try:
        return name != "glibc" or tuple(int(part) for part in number.split(".")[:2]) < (2, 37)
    except ValueError:
        return True


def linker_subfolders(folder, platform=None, depth=3):
    """``folder``, and each folder in it where the dynamic linker looks a library up first, there: every folder of
    its ``glibc-hwcaps`` (``glibc-hwcaps/x86-64-v3``: glibc 2.33 and newer, which looks in those the CPU
    supports), and the legacy ``hwcaps`` ones where it has them (:func:`has_legacy_hwcaps`), up to ``depth`` deep
    (:data:`LINKER_SUBFOLDERS`). One not there
    counts by its folder's names, as it appears."""
    found = [folder]
    names = set(LINKER_SUBFOLDERS) | {platform, machine_name()} if has_legacy_hwcaps() else set()
    hwcaps = os.path.join(folder, "glibc-hwcaps")
    with contextlib.suppress(OSError):  # a folder not there, or not to be listed: counted by what is in it
        if os.path.isdir(hwcaps):
            found.append(hwcaps)
            found += sorted(os.path.join(hwcaps, name) for name in os.listdir(hwcaps)
                            if os.path.isdir(os.path.join(hwcaps, name)))  # fmt: skip
        for name in sorted(os.listdir(folder)) if depth and os.path.isdir(folder) else []:
            if name in names and os.path.isdir(os.path.join(folder, name)):
                found += linker_subfolders(os.path.join(folder, name), platform, depth - 1)
    return list(dict.fromkeys(found))


def interpreter_files():
    """The interpreter's own program and shared library (``libpython3.11.so.1.0``), links resolved: what the dynamic
    linker loads for them is the interpreter's, part of a record's identity by its exact version."""
    library = sysconfig.get_config_var("INSTSONAME")
    folder = sysconfig.get_config_var("LIBDIR")
    files = [sys.executable] + ([os.path.join(folder, library)] if library and folder else [])
    return frozenset(os.path.realpath(path) for path in files if path)


INTERPRETER_FILES = interpreter_files()
"""The interpreter's own files (:func:`interpreter_files`)."""

DT_NULL, DT_RPATH, DT_RUNPATH, DT_STRTAB = 0, 15, 29, 5
"""The entries of an ELF file's dynamic section: its end, the folders its libraries are looked up in, and where
the text they point into is."""


def elf_search_path(path, open_file=os.open, pread=os.pread, close=os.close):
    """The folders the ELF file at ``path`` names in its ``RUNPATH``, else its ``RPATH`` (``$ORIGIN:$ORIGIN/lib``),
    as it says them, tokens and all; none where it is no ELF file or names none. Read as the dynamic linker reads
    it (its dynamic section up to its ``DT_NULL``; an ``RPATH`` beside a ``RUNPATH`` is ignored), by ``os``'s
    functions as this module was imported."""
    import struct

    try:
        fd = open_file(path, os.O_RDONLY)
    except OSError:
        return []
    try:
        header = pread(fd, 64, 0)
        if len(header) < 52 or header[:4] != b"\x7fELF" or header[4] not in (1, 2) or header[5] not in (1, 2):
            return []
        wide, order = header[4] == 2, "<" if header[5] == 1 else ">"
        at, count_at = (0x20, 0x36) if wide else (0x1C, 0x2A)
        (table,) = struct.unpack_from(order + ("Q" if wide else "I"), header, at)
        size, count = struct.unpack_from(order + "HH", header, count_at)
        entry = order + ("IIQQQQQQ" if wide else "IIIIIIII")
        segments = [struct.unpack_from(entry, pread(fd, size, table + size * index)) for index in range(count)]
        if wide:  # (type, offset, address, size in the file) of each segment
            segments = [(kind, offset, address, filesz) for kind, _, offset, address, _, filesz, _, _ in segments]
        else:
            segments = [(kind, offset, address, filesz) for kind, offset, address, _, filesz, _, _, _ in segments]
        dynamic = next(((offset, filesz) for kind, offset, _, filesz in segments if kind == 2), None)  # PT_DYNAMIC
        if dynamic is None:
            return []
        pair = order + ("qQ" if wide else "iI")
        step = struct.calcsize(pair)
        table = pread(fd, dynamic[1], dynamic[0])
        tags = [struct.unpack_from(pair, table, at) for at in range(0, len(table) - step + 1, step)]
        tags = tags[: next((index for index, (tag, _) in enumerate(tags) if tag == DT_NULL), len(tags))]
        strings = next((value for tag, value in tags if tag == DT_STRTAB), None)
        if strings is None:
            return []
        loaded = [offset + strings - address for kind, offset, address, filesz in segments
                  if kind == 1 and address <= strings < address + filesz]  # fmt: skip
        if not loaded:  # no PT_LOAD segment holds the text
            return []
        named = dict((tag, value) for tag, value in tags if tag in (DT_RPATH, DT_RUNPATH))
        chosen = named.get(DT_RUNPATH, named.get(DT_RPATH))  # the linker ignores an RPATH where a RUNPATH is
        if chosen is None:
            return []
        text = pread(fd, 4096, loaded[0] + chosen).partition(b"\0")[0]
        return os.fsdecode(text).split(":")
    except (OSError, ValueError, struct.error):
        return []
    finally:
        close(fd)


def linker_platform(known=[]):  # noqa: B006 - asked of the kernel once a process
    """What the kernel told the dynamic linker the platform is (``AT_PLATFORM``: ``x86_64``, ``haswell``), which it
    expands ``$PLATFORM`` to and looks in a folder of that name for; the machine's name where it cannot be asked."""
    if not known:
        known.append(auxiliary_platform())
    return known[0]


def auxiliary_platform():
    """:func:`linker_platform`, asked of the kernel."""
    try:
        import ctypes

        getauxval = ctypes.CDLL(None).getauxval
        getauxval.restype, getauxval.argtypes = ctypes.c_char_p, [ctypes.c_ulong]
        platform = getauxval(15)  # AT_PLATFORM
    except (AttributeError, ImportError, OSError, TypeError):
        platform = None
    return os.fsdecode(platform) if platform else machine_name()


def machine_name():
    """The machine's name as the kernel says it (``uname -m``: ``x86_64``, ``aarch64``); None where none does."""
    return os.uname().machine if hasattr(os, "uname") else None


def has_folder(name):
    """Whether a library's ``name`` holds a folder: a path, not a name for the dynamic linker to look up."""
    text = os.fsdecode(name)
    return os.sep in text or bool(os.altsep and os.altsep in text)


def state_of(path):
    """How the file at ``path`` is: its inode, the kernel's time of its last change (``st_ctime``: a write, a
    rename, new times or permissions), the time of its content's (``st_mtime``) and its device; None where there is
    none."""
    found = stat_or_none(path)
    return None if found is None else stat_state(found)


def stat_state(found):
    """What :func:`state_of` says of a file ``os.stat`` found so."""
    return found.st_ino, found.st_ctime, found.st_mtime, found.st_dev


def in_its_real_folder(path):
    """``path`` in its folder's real place, links resolved (``here/x`` where ``here`` links to ``.``: ``./x``); the
    name itself, which may be a link, kept."""
    folder, name = os.path.split(path)
    return os.path.join(os.path.realpath(folder), name) if name else path


def file_in(state):
    """The device and inode of the file a :func:`state_of` says (as :func:`inode_of` and the :data:`FOUND` entries
    name a file)."""
    return state[-1], state[0]


def module_attribute(module, name):
    """The attribute ``name`` of ``module`` (any object in ``sys.modules``) as its namespace holds it; None where it
    holds none. Asked of its ``__dict__`` alone, so that nothing its class does on a lookup runs: a lazy module's
    ``__getattr__`` that imports or raises, ``importlib.util.LazyLoader``'s module, which a lookup loads."""
    try:
        return object.__getattribute__(module, "__dict__").get(name)
    except Exception:
        return None


def module_files():
    """The file each module in ``sys.modules`` was loaded from: its ``__file__``, where that is an absolute path.
    A module object made by hand may name none, or a relative one that is no file it was loaded from (torch's
    ``torch.ops`` and ``torch.classes`` say ``_ops.py`` and ``_classes.py``)."""
    for module in list(sys.modules.values()):
        where = module_attribute(module, "__file__")
        if isinstance(where, str) and os.path.isabs(where):
            yield os.path.abspath(where)


def reads(mode, flags):
    """Whether an ``open`` with ``mode`` (``open()``'s) or ``flags`` (``os.open``'s) lets the process read."""
    if isinstance(mode, str):
        return "r" in mode or "+" in mode
    return flags & 3 != os.O_WRONLY


def writes(mode, flags):
    """Whether an ``open`` with ``mode`` or ``flags`` lets the process write (or empties the file)."""
    if isinstance(mode, str):
        return any(letter in mode for letter in "wxa+")
    return flags & 3 != os.O_RDONLY or bool(flags & os.O_TRUNC)


def creates(mode, flags):
    """Whether an ``open`` with ``mode`` or ``flags`` makes the file where it is not there."""
    if isinstance(mode, str):
        return any(letter in mode for letter in "wxa")
    return bool(flags & os.O_CREAT)


def fails_to_write(path, mode, flags):
    """Whether an ``open`` of ``path`` with ``mode`` or ``flags`` to write will raise before it touches the file: one
    that makes it only where it is not there (``x``, ``O_EXCL``) of a file that is; one this process may not write.
    (One that fails otherwise, a folder's, or a file's in a folder that is none, leaves the file as it was: it is
    no file of the process's own, :meth:`FilesRead.is_own`.)"""
    if not writes(mode, flags):
        return False
    exclusive = "x" in mode if isinstance(mode, str) else bool(flags & getattr(os, "O_EXCL", 0) and flags & os.O_CREAT)
    if os.path.lexists(path):
        return exclusive or not os.access(path, os.W_OK)
    return False


def makes_its_own(mode, flags):
    """Whether an ``open`` with ``mode`` (``open()``'s) or ``flags`` (``os.open``'s) makes or empties the file:
    what it held before is then none of the reader's business."""
    if isinstance(mode, str):
        return "w" in mode or "x" in mode
    excludes = getattr(os, "O_EXCL", 0)  # which makes the file with O_CREAT alone: the kernel ignores it without
    return bool(flags & os.O_TRUNC) or (bool(flags & excludes) and bool(flags & os.O_CREAT))


def holds_content(path, kernels, folders=False):
    """Whether ``path`` names a file of content (or a folder, where ``folders``), or none (there or not): not a
    device (``/dev/null``, ``/dev/urandom``), a pipe or a socket, nor an entry of one of the kernel's filesystems (on
    ``kernels``, the devices :func:`kernel_devices` says), whose content the kernel makes as it is read. A link is
    asked of what it points to and of the folder it is in (``/dev/stdin`` is the kernel's); a file not there, of
    the folder it would be in."""
    try:
        found = os.stat(path)
    except OSError:
        found = None
    if found is not None and not (stat.S_ISREG(found.st_mode) or (folders and stat.S_ISDIR(found.st_mode))):
        return False
    folder = os.path.dirname(path)
    while not os.path.isdir(folder):
        folder = os.path.dirname(folder)
    return not ((found is not None and found.st_dev in kernels) or os.stat(folder).st_dev in kernels)


KERNEL_PATHS = ("/proc/", "/sys/", "/dev/fd/")
"""What a path into the kernel's own filesystems begins with, where a link may lead to a file of anyone's."""


def kernel_devices(open_file=io.open):
    """The devices of the kernel's own filesystems: the ones mounted at ``/proc`` and ``/sys`` and inside them
    (``/sys/fs/cgroup``, …), as the kernel's table of this process's mounts says, else as ``/proc`` and ``/sys``
    themselves say (none where there are none, as on macOS)."""
    kernels = ("/proc", "/sys")
    try:
        with open_file("/proc/self/mountinfo") as mounts:
            table = [line.split() for line in mounts]
    except OSError:
        return set(os.stat(folder).st_dev for folder in kernels if os.path.isdir(folder))
    return set(
        os.makedev(*(int(number) for number in fields[2].split(":"))) for fields in table
        if len(fields) > 4 and (fields[4] in kernels or fields[4].startswith(("/proc/", "/sys/")))
    )  # fmt: skip


def is_bytecode(path):
    """A module's cached bytecode (in a ``__pycache__`` folder): what it holds is its source's, which counts by the
    module's file; but one Python runs whatever its source says (:func:`runs_unchecked`) counts by its own content.
    A ``.pyc`` with no source beside it is a module's only file, and counts."""
    cached = path.endswith((".pyc", ".pyo")) and os.path.basename(os.path.dirname(path)) == "__pycache__"
    return cached and not runs_unchecked(path)


def runs_unchecked(bytecode, open_file=io.FileIO):
    """Whether Python runs the bytecode at ``bytecode`` without asking its source: a hash-based ``.pyc`` whose flags
    say unchecked (PEP 552: ``compileall --invalidation-mode unchecked-hash``), unless ``--check-hash-based-pycs
    always``. Read as Python's import reads it, not by an ``open`` the pair's code may have replaced."""
    if sys.version_info < (3, 7) or getattr(_imp, "check_hash_based_pycs", "default") == "always":
        return False
    try:
        with open_file(bytecode) as cached:
            header = cached.read(8)
    except OSError:
        return False
    return len(header) == 8 and int.from_bytes(header[4:8], "little") & 0b11 == 0b01


def stdlib_prefixes():
    """What a file of the interpreter's standard library begins with (``os.path``, ``pathlib``, ``glob``)."""
    return prefixes(sysconfig_folders("stdlib", "platstdlib"))


def environments_code():
    """What a file of a package installed in the environment begins with (its site folders: pytest, torch)."""
    return prefixes(list(getattr(site, "getsitepackages", lambda: [])()) + sysconfig_folders("purelib", "platlib"))


def sysconfig_folders(*names):
    """The folders ``sysconfig`` names so, where it names one."""
    return [folder for folder in (sysconfig.get_path(name) for name in names) if folder]


def prefixes(folders):
    """What a path in one of ``folders`` begins with, links resolved or not."""
    return tuple(sorted(set(os.path.join(folder, "") for folder in folders + [os.path.realpath(f) for f in folders])))


def excluded_prefixes(scratch):
    """What a path in one of :func:`excluded_folders` begins with."""
    return tuple(os.path.join(folder, "") for folder in excluded_folders(scratch))


def environment_folders():
    """The folders of the environment the pair runs in: its site folders, whose packages its identity covers, not the
    rest of its prefix: a virtual environment's folder may hold a project (``python -m venv .`` in one)."""
    return list(getattr(site, "getsitepackages", lambda: [])()) + sysconfig_folders("purelib", "platlib")


def excluded_folders(scratch):
    """Where a pair's process reads nothing that identifies what it ran: what the environment's identity covers
    (the environment's site folders, and the interpreter's standard library; not the rest of the prefix either is
    in, such as ``/usr/local`` or a virtual environment's folder, whose other files are anyone's), the pairs' own
    folders (in ``scratch``) and the worker's."""
    folders = [*environment_folders(), *sysconfig_folders("stdlib", "platstdlib"), os.path.dirname(WORKER_FILE),
               scratch]  # fmt: skip
    prefix = getattr(sys, "pycache_prefix", None)
    given = folders + ([prefix] if prefix else [])
    return sorted(set(given + [os.path.realpath(folder) for folder in given]))
