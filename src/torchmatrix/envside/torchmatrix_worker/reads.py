"""What a pair's process read outside its environment: the files its records depend on."""

import importlib.machinery
import os
import sys
import sysconfig

from .protocol import MODULE_LOOKED_FOR, WORKER_FILE


class FilesRead(object):
    """The files this process opens for reading or imports from outside the environment, the standard library,
    the worker's scratch folder and torchmatrix's worker: what the pair's outcome may depend on besides its probe.

    Python's audit hooks (3.8+) see every ``open`` and every shared library ``ctypes`` loads (``ctypes.dlopen``:
    ``torch.ops.load_library`` loads a custom operator's library so); every module loaded from a file is added by
    its file, as an import may read bytecode compiled elsewhere instead (and ``sitecustomize`` was imported before
    this process was a pair's). A file is listed by the path it was opened by, links unresolved, so that a link
    pointed elsewhere is a change too; one that was not there is listed as well, since its appearing is one. A file
    the process made or emptied (opened to write, or to append, before it read it) is its own. A child the process
    forks (a DataLoader's workers) keeps the hook: what it reads it appends to a file in ``scratch``, which the
    pair's process reads at its end.

    A module the pair imports is looked for folder by folder, through listings the import system caches, and no
    ``open`` tells of the folders where it was not: each folder it was looked for in, up to the one it was found in,
    is listed as ``folder/name.*`` (:data:`MODULE_LOOKED_FOR`), so that a module put where it was looked for first
    (a ``colorsys.py`` beside the script) is a change, as it changes what the import finds.
    """

    def __init__(self, scratch):
        self.scratch = scratch
        self.pid = os.getpid()
        self.of_children = os.path.join(scratch, "read-by-children-of-{}".format(self.pid))
        self.reading, self.own = set(), set()
        self.telling = False
        self.known = hasattr(sys, "addaudithook")
        self.lookups = []
        if self.known:
            sys.addaudithook(self.heard)
            sys.meta_path.insert(0, ModuleLookups(self.lookups))

    def heard(self, event, arguments):
        """The audit hook: an ``open`` (its path, mode and flags), a ``ctypes.dlopen`` (the library's name), or an
        ``exec`` of code compiled from a file (a module a loader ran, whose source it may never have opened: its
        bytecode was cached, or it was loaded by path and is in no ``sys.modules``)."""
        try:
            if event == "open":
                self.opened(*arguments[:3])
            elif event == "ctypes.dlopen":
                self.loaded(arguments[0])
            elif event == "exec":
                self.executed(arguments[0])
        except Exception:  # noqa: S110 - an exception here would be the probe's open's or load's, which it is not
            pass

    def opened(self, path, mode, flags):
        path = as_path(path)
        if path is None:
            return  # a file descriptor: opened before, by path
        if not makes_its_own(mode, flags):
            self.read(path)
        elif path not in self.reading:
            self.own.add(path)

    def loaded(self, name):
        """A library ``ctypes`` loads by its path is read; one named without a folder (``libm.so.6``) is the
        system's: the dynamic linker looks it up in its own folders, as ``dlopen`` does a name without a slash."""
        path = as_path(name)
        if path is not None and has_folder(name):
            self.read(path)

    def executed(self, code):
        """Code run from a file is that file read: its ``co_filename`` where it names one (not ``<string>``)."""
        where = getattr(code, "co_filename", None)
        if isinstance(where, str) and os.path.isabs(where):
            self.read(where)

    def read(self, path):
        if path not in self.own:
            self.reading.add(path)
            if os.getpid() != self.pid:
                self.tell_parent(path)

    def tell_parent(self, path):
        """In a forked child: append ``path`` to the pair's list of what its children read (one write, one line)."""
        if self.telling:
            return  # this very append's own open
        self.telling = True
        try:
            fd = os.open(self.of_children, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, os.fsencode(path) + b"\n")
            finally:
                os.close(fd)
        finally:
            self.telling = False

    def paths(self):
        """Every file read (or looked for and not there), sorted; None where this Python has no audit hooks."""
        if not self.known:
            return None
        found = set(self.reading) | set(self.read_by_children()) | set(self.modules_looked_for())
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

    def modules_looked_for(self):
        """``folder/name.*`` for each folder each module the pair imported was looked for in, up to and with the one
        it was found in (a form that comes first there, a package before a module, would be found instead); every
        folder where it was not found at all. A built-in or frozen module is found before any folder is searched."""
        for name, folders in self.lookups:
            spec = getattr(sys.modules.get(name), "__spec__", None)
            if getattr(spec, "origin", None) in ("built-in", "frozen"):
                continue
            found_in = folder_of(spec)
            for folder in folders:
                folder = os.path.abspath(folder or os.curdir)
                if os.path.isdir(folder):
                    yield os.path.join(folder, name.rpartition(".")[2] + MODULE_LOOKED_FOR)
                if folder == found_in:
                    break

    def read_by_children(self):
        try:
            with open(self.of_children, "rb") as told:
                return [os.fsdecode(line) for line in told.read().splitlines() if line]
        except OSError:
            return []


class ModuleLookups(object):
    """A finder that finds nothing: first on ``sys.meta_path``, it hears every module looked for, with the folders
    it is looked for in (``sys.path`` then, or its package's ``__path__``), and leaves the finding to the others."""

    def __init__(self, lookups):
        self.lookups = lookups

    def find_spec(self, name, path=None, target=None):
        folders = sys.path if path is None else path
        self.lookups.append((name, [folder for folder in folders if isinstance(folder, str)]))
        return None


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
    """A loader that neither reads nor writes cached bytecode (SourceLoader skips both without the source's stats)."""

    def path_stats(self, path):
        raise OSError("compiled from its source every time")


def as_path(name):
    """``name`` (str or bytes) as an absolute path; None for what names no file (a descriptor, None)."""
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    return os.path.abspath(name) if isinstance(name, str) else None


def has_folder(name):
    """Whether a library's ``name`` holds a folder: a path, not a name for the dynamic linker to look up."""
    text = os.fsdecode(name)
    return os.sep in text or bool(os.altsep and os.altsep in text)


def makes_its_own(mode, flags):
    """Whether an ``open`` with ``mode`` (``open()``'s) or ``flags`` (``os.open``'s) makes or empties the file,
    or only adds to it: what it held before is then none of the reader's business."""
    if isinstance(mode, str):
        return "w" in mode or "x" in mode or ("a" in mode and "+" not in mode)
    access = flags & 3
    return access == os.O_WRONLY or bool(flags & os.O_TRUNC) or bool(flags & getattr(os, "O_EXCL", 0))


def is_bytecode(path):
    """A module's cached bytecode (in a ``__pycache__`` folder): what it holds is its source's, which counts by the
    module's file. A ``.pyc`` with no source beside it is a module's only file, and counts."""
    return path.endswith((".pyc", ".pyo")) and os.path.basename(os.path.dirname(path)) == "__pycache__"


def excluded_folders(scratch):
    """Where a pair's process reads nothing that identifies what it ran: what the environment's identity covers
    (the environment, and the interpreter's standard library; not the rest of the prefix it is installed in, such as
    ``/usr/local``, whose other files are anyone's), the pairs' own folders (in ``scratch``), the worker's, and the
    kernel's."""
    stdlib = [sysconfig.get_path(name) for name in ("stdlib", "platstdlib")]
    folders = [sys.prefix, sys.exec_prefix, *[folder for folder in stdlib if folder],
               os.path.dirname(WORKER_FILE), scratch, "/proc", "/sys", "/dev"]  # fmt: skip
    prefix = getattr(sys, "pycache_prefix", None)
    given = folders + ([prefix] if prefix else [])
    return sorted(set(given + [os.path.realpath(folder) for folder in given]))
