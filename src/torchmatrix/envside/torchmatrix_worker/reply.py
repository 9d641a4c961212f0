"""The file a pair's process answers in: made, sized and mapped into the process's memory before the pair's code
runs, so that its answer is then stored with no system call, which nothing the pair's code leaves set can refuse."""

import errno
import mmap
import os

from .protocol import MAX_ANSWER_BYTES

MAX_READ_BYTES = 16 << 20
"""The most room for what a pair's process read (:meth:`reads.FilesRead.entries`) beside its answer; what does not
fit is left to the journal it keeps as it reads."""

ROOM = MAX_ANSWER_BYTES + 1 + MAX_READ_BYTES
"""The room of an answer file: a line for the answer (one byte more than it may send, to tell too much), then a line
for each entry of what the process read."""

UNTOLD = ROOM
"""Where an answer file holds the byte that says a process of the pair could not write down a file it read
(:meth:`Reply.untold`): after the room, which the answer never reaches."""

SIZE = ROOM + 1
"""The size of an answer file."""

CHUNK = 1 << 16


class Reply(object):
    """The answer file at ``path``, its room allocated (where the system can: a full disk then fails here, before the
    pair's code, not as the answer is stored) and mapped, its descriptor closed.

    What the pair's code may leave set reaches none of it: descriptors closed (``os.closerange``) or opened in
    their place, an audit hook (``sys.addaudithook``) that refuses opens, a replaced ``open``, a file size limit
    (``RLIMIT_FSIZE``). A child the pair's code forks shares the map, and stores nothing in it but :meth:`untold`.
    """

    def __init__(self, path):
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o600)
        try:
            allocate(fd, SIZE)
            self.memory = mmap.mmap(fd, SIZE)
        finally:
            os.close(fd)

    @staticmethod
    def holds(answer, read):
        """Whether the room holds ``answer`` and ``read`` (:meth:`store`) whole."""
        return len(answer) + len(read) + 2 <= ROOM

    def store(self, answer, read):
        """Store ``answer`` (bytes, JSON, a line) and ``read`` (lines), then a NUL byte, which ends them whatever the
        file held after them; what does not fit is cut off, and then what was read is not all told (:meth:`untold`).
        Neither holds a NUL byte."""
        data = answer + b"\n" + read + b"\0"
        if not self.holds(answer, read):
            self.untold()
        self.memory[: min(len(data), ROOM)] = data[:ROOM]

    def untold(self):
        """Say that a process of the pair (this one, or a child it forked, which shares the map) could not write down
        a file it read: in memory, which a full disk or a file size limit does not refuse. Two processes saying it at
        once say the same."""
        self.memory[UNTOLD] = 1


def allocate(fd, size):
    """Make the file open as ``fd`` ``size`` bytes long, its blocks allocated where the system can."""
    allocating = getattr(os, "posix_fallocate", None)
    try:
        if allocating is not None:
            allocating(fd, 0, size)
            return
    except OSError as error:  # a file system that cannot allocate ahead: sized, as where there is no fallocate
        if error.errno == errno.ENOSPC:
            raise
    os.ftruncate(fd, size)


def read_reply(path):
    """What a job's process stored in its answer file at ``path``: its answer and what it read, each b"" where it
    stored none (the process ended first, or removed the file); and whether a process of the pair could not write
    down a file it read (:meth:`Reply.untold`): what its journal holds is then not all, nor in the order read."""
    chunks, untold = [], False
    try:
        with open(path, "rb") as reply:
            for chunk in iter(lambda: reply.read(CHUNK), b""):  # the room: what follows it is no part of it
                end = chunk.find(b"\0")
                chunks.append(chunk if end < 0 else chunk[:end])
                if end >= 0 or len(chunks) * CHUNK >= ROOM:
                    break
            reply.seek(UNTOLD)
            untold = reply.read(1) not in (b"", b"\0")
    except OSError:
        return b"", b"", False
    answer, _, read = b"".join(chunks)[:ROOM].partition(b"\n")
    return answer, read, untold


def is_ready(path):
    """Whether the job's process made its answer file ready: it has begun its job (a spawned one, torch imported)."""
    try:
        return os.path.getsize(path) == SIZE
    except OSError:
        return False
