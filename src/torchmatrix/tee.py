"""Show a child process's output as it comes, and keep its last lines for the record."""

from __future__ import annotations

import collections
import os
import sys
import threading
from typing import IO


class Tee:
    """``with Tee(keep=40) as stdout: run(child, stdout=stdout)``; then ``tee.tail`` holds the last lines."""

    def __init__(self, keep: int) -> None:
        self._lines: collections.deque[str] = collections.deque(maxlen=keep)
        self._writer: IO[str] | None = None
        self._thread: threading.Thread | None = None

    @property
    def tail(self) -> str:
        return "\n".join(self._lines)

    def __enter__(self) -> IO[str]:
        read_end, write_end = os.pipe()
        self._writer = os.fdopen(write_end, "w")
        reader = os.fdopen(read_end, encoding="utf-8", errors="replace")
        self._thread = threading.Thread(target=self._pump, args=(reader,), daemon=True)
        self._thread.start()
        return self._writer

    def __exit__(self, *_exc: object) -> None:
        assert self._writer is not None and self._thread is not None
        self._writer.close()  # the child's copy closed when it exited: the reader now sees the end
        self._thread.join()

    def _pump(self, reader: IO[str]) -> None:
        with reader:
            for line in reader:
                self._lines.append(line.rstrip("\n"))
                sys.stdout.write(line)
                sys.stdout.flush()
