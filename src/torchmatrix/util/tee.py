"""Show a child process's output as it comes, and keep its last lines for the record.

On a terminal the child writes to a pseudo-terminal, so that it draws what it
draws for a person (uv: its download bars, bytes of total); those bytes are
forwarded as they come, and the lines kept are what the redraws leave on the
screen. Off a terminal (a CI log) the child writes to a pipe, as it always did,
and a long silence gets a plain line now and then that says it still runs.
"""

from __future__ import annotations

import codecs
import os
import re
import struct
import sys
import threading
import time
from typing import IO

if sys.platform != "win32":
    import fcntl
    import termios

QUIET_SECONDS = 15.0
"""How long a child may print nothing, off a terminal, before a line says it still runs."""

# A CSI sequence (colours, cursor moves, erasures), an OSC one (a window title, a link), another escape,
# a line's end, or a control character that prints nothing.
_CONTROL = re.compile(
    r"\x1b\[(?P<count>[0-9;?]*)(?P<final>[@-~])|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\^_]"
    r"|(?P<newline>\n)|(?P<carriage>\r)|[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f]"
)
_LONGEST_SEQUENCE = 256
"""An escape left open longer than this is no sequence cut by a read, but a stray escape character."""


class Redraws:
    """The lines a stream leaves on a terminal once its redraws are done: ``feed`` it text, read ``lines``.

    The stream is written on a screen ``width`` columns wide (a line that fills it goes on on the next one;
    ``None``: lines never wrap), as a terminal writes it: a carriage return goes back to the line's start
    and what follows overwrites it, cursor moves (``ESC[nA`` up, ``ESC[nB`` down, …) and erasures
    (``ESC[2K``, ``ESC[J``, …) act, every other sequence is dropped: ``"\\r 10%\\r 50%\\r100%\\nDone\\n"``
    leaves ``100%``, ``Done``; a progress display that moves up over its bars and erases them leaves nothing.
    """

    def __init__(self, keep: int, width: int | None = None) -> None:
        self._keep = keep
        self._width = width
        self._rows: list[list[str]] = [[]]
        self._row = 0
        self._column = 0
        self._open = ""  # an escape sequence cut off by the end of what was fed so far

    @property
    def lines(self) -> list[str]:
        """The last ``keep`` lines on the screen, without the blanks the display padded them with."""
        texts = ["".join(row).rstrip() for row in self._rows]
        while texts and not texts[-1]:
            texts.pop()
        return texts[-self._keep :]

    def feed(self, text: str) -> None:
        """Take the next piece of the stream; an escape sequence or a ``\\r\\n`` may be split between pieces."""
        text = self._open + text
        self._open = ""
        start = 0
        for match in _CONTROL.finditer(text):
            self._write(text[start : match.start()])
            self._act(match)
            start = match.end()
        rest = text[start:]
        cut = rest.rfind("\x1b")
        if cut >= 0 and len(rest) - cut < _LONGEST_SEQUENCE:
            self._open = rest[cut:]
            rest = rest[:cut]
        self._write(rest)

    def _write(self, text: str) -> None:
        for char in text.replace("\x1b", ""):  # a stray escape, no sequence's start
            if self._width and self._column >= self._width:  # the line is full: this character wraps
                self._down(1, scroll=True)
                self._column = 0
            row = self._rows[self._row]
            row.extend(" " * (self._column - len(row)))
            row[self._column : self._column + 1] = [char]
            self._column += 1

    def _act(self, match: re.Match[str]) -> None:
        if match["newline"]:
            self._down(1, scroll=True)
            self._column = 0  # a terminal's own output processing makes every line end a carriage return too
        elif match["carriage"]:
            self._column = 0
        elif match["final"]:
            self._csi(match["final"], match["count"])

    def _csi(self, final: str, parameter: str) -> None:
        count = int(parameter) if parameter.isdigit() else 0
        row = self._rows[self._row]
        if final in "AF":
            self._row = max(0, self._row - max(count, 1))
        elif final in "BE":
            self._down(max(count, 1), scroll=False)
        elif final == "C":
            self._column += max(count, 1)
        elif final == "D":
            self._column = max(0, self._column - max(count, 1))
        elif final == "G":
            self._column = max(count, 1) - 1
        elif final == "K" and count == 2:
            row.clear()
        elif final == "K" and count == 1:
            row[: self._column] = [" "] * min(self._column, len(row))
        elif final == "K":
            del row[self._column :]
        elif final == "J":
            del row[self._column :]
            del self._rows[self._row + 1 :]
        if final in "EF":
            self._column = 0

    def _down(self, count: int, scroll: bool) -> None:
        """Move ``count`` lines down; only a line's end or a wrap (``scroll``) adds lines below the last."""
        self._row += count
        if scroll:
            self._rows.extend([] for _ in range(self._row + 1 - len(self._rows)))
            overflow = len(self._rows) - 4 * self._keep  # a display moves back a few lines, never far
            if overflow > 0:
                del self._rows[:overflow]
                self._row -= overflow
        self._row = min(self._row, len(self._rows) - 1)


class Tee:
    """``with Tee(keep=40) as stdout: run(child, stdout=stdout)``; then ``tee.tail`` holds the last lines.

    ``doing`` says what the child does (``"installing torch==2.5.1"``): off a terminal, after
    ``quiet_seconds`` of silence, a line says it is still doing it and for how long (``still installing
    torch==2.5.1, 1m 15s so far``). No thread and no pseudo-terminal outlive the block.
    """

    def __init__(self, keep: int, doing: str = "", quiet_seconds: float = QUIET_SECONDS) -> None:
        self._keep = keep
        self._redraws = Redraws(keep)
        self._doing = doing
        self._quiet_seconds = quiet_seconds
        self._writer: IO[str] | None = None
        self._threads: list[threading.Thread] = []
        self._done = threading.Event()
        self._shown = threading.Lock()  # one writer at a time: the child's bytes, or the line that it still runs
        self._last_output = 0.0
        self._at_line_start = True

    @property
    def tail(self) -> str:
        """The last lines the child left, without escape sequences or overwritten redraws."""
        return "\n".join(self._redraws.lines)

    def __enter__(self) -> IO[str]:
        terminal = on_a_terminal()
        read_end, write_end = os.openpty() if terminal else os.pipe()
        self._redraws = Redraws(self._keep, _copy_window_size(write_end) if terminal else None)
        self._writer = os.fdopen(write_end, "w")
        self._last_output = time.monotonic()
        self._threads = [threading.Thread(target=self._pump, args=(read_end,), daemon=True)]
        if self._doing and not terminal:  # on a terminal the child's own display shows it runs
            self._threads.append(threading.Thread(target=self._say_still_running, daemon=True))
        for thread in self._threads:
            thread.start()
        return self._writer

    def __exit__(self, *_exc: object) -> None:
        assert self._writer is not None
        self._writer.close()  # the child's copy closed when it exited: the reader now sees the end
        self._done.set()
        for thread in self._threads:
            thread.join()

    def _pump(self, read_end: int) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        try:
            while chunk := _read(read_end):
                text = decoder.decode(chunk)
                with self._shown:
                    sys.stdout.write(text)
                    sys.stdout.flush()
                    self._last_output = time.monotonic()
                    self._at_line_start = text.endswith("\n") if text else self._at_line_start
                self._redraws.feed(text)
            self._redraws.feed(decoder.decode(b"", final=True))
        finally:
            os.close(read_end)

    def _say_still_running(self) -> None:
        started = time.monotonic()
        wait = self._quiet_seconds
        while not self._done.wait(wait):
            with self._shown:
                now = time.monotonic()
                wait = self._last_output + self._quiet_seconds - now
                if wait > 0:
                    continue
                if self._at_line_start:  # a line the child left halfway is not cut in two
                    sys.stdout.write(f"still {self._doing}, {_duration(now - started)} so far\n")
                    sys.stdout.flush()
                self._last_output, wait = now, self._quiet_seconds


def on_a_terminal() -> bool:
    """Whether a person watches: standard output and error are terminals that can draw (``TERM`` is not dumb)."""
    return (
        sys.platform != "win32"
        and sys.stdout.isatty()
        and sys.stderr.isatty()
        and os.environ.get("TERM", "dumb") != "dumb"
    )


def _copy_window_size(pseudo_terminal: int) -> int:
    """Give the pseudo-terminal the real one's size, so that the child draws its bars to fit the screen: its width.

    A terminal that tells no size (0 columns) is taken for the 80 × 24 of old, so that the width is known.
    """
    size = os.get_terminal_size(sys.stdout.fileno())
    columns, lines = (size.columns, size.lines) if size.columns else (80, 24)
    if sys.platform != "win32":
        fcntl.ioctl(pseudo_terminal, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
    return columns


def _read(read_end: int) -> bytes:
    try:
        return os.read(read_end, 65536)
    except OSError:  # a pseudo-terminal's end reads EIO once no process holds the other end open
        return b""


def _duration(seconds: float) -> str:
    minutes, seconds = divmod(int(seconds), 60)
    return f"{minutes}m {seconds:02d}s" if minutes else f"{seconds}s"
