"""Write files so that a reader sees the old content or the new, never half of one.

The new content goes to a temporary file in the same folder (``.<name>.<random>.tmp``),
is flushed to disk, and is renamed over the target. A writer killed before the
rename leaves that temporary file behind and the target as it was; readers
never look at names starting with a dot.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

_UMASK = os.umask(0o022)
os.umask(_UMASK)  # os.umask can only be read by setting it: put it back at once


def write_text(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` atomically (a temporary file in the same folder, then rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, 0o666 & ~_UMASK)  # mkstemp makes it private; the file is meant to be shared
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_json(path: Path, value: Any) -> None:
    """Write ``value`` as strict JSON (no NaN), atomically."""
    write_text(path, json_text(value))


def json_text(value: Any) -> str:
    """``value`` as :func:`write_json` writes it."""
    return json.dumps(value, indent=2, sort_keys=True, allow_nan=False) + "\n"


@contextlib.contextmanager
def locked(folder: Path, name: str = ".lock", waiting: Callable[[], None] | None = None) -> Iterator[None]:
    """Hold the lock of ``folder`` (its file ``.lock``, or ``name``) while a read, a change and a write make one step.

    ``waiting`` is called when another holds it, before this waits for it.

    Without ``fcntl`` (Windows) writers are not kept apart: each write is still atomic, the last one wins.
    """
    folder.mkdir(parents=True, exist_ok=True)
    if fcntl is None:
        yield
        return
    path = folder / name
    # Non-blocking and not through a link: a FIFO put there would keep open() waiting for a writer forever.
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NONBLOCK | os.O_NOFOLLOW
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        why = "it is a link" if exc.errno == errno.ELOOP else exc.strerror  # O_NOFOLLOW's word for one
        raise OSError(exc.errno, f"its lock {path} cannot be opened ({why}): delete it") from exc
    with os.fdopen(fd, "a") as lock:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EEXIST, f"its lock {path} is not a regular file: delete it")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if waiting is not None:
                waiting()
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also when the process is killed
        yield
