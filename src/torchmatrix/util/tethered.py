"""A child command that outlives no end of the process that runs it.

``torchmatrix probe`` runs nox, and ``nox -s bisect`` a nox of its own for its cells. A signal that ends the parent
alone (``kill PID``, a supervisor's SIGTERM, SIGHUP as its terminal closes, SIGKILL) would leave that child running
on, storing results and writing reports after the command that started them has ended. So the signal is passed on,
and the parent ends as the signal would have ended it once its child has, what it holds unwound first (a temporary
folder of its own removed); and on Linux, where a process can ask it, the kernel sends the child SIGTERM should the
parent end otherwise.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

PASSED_ON = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))
"""What ends a process but a terminal's Ctrl-C (SIGINT reaches the child too, from the terminal: it ends the child
as ``subprocess.run`` does) and SIGKILL (which nothing hears)."""

PR_SET_PDEATHSIG = 1


def run(argv: Sequence[str], **options: Any) -> int:
    """Run ``argv`` (with ``subprocess.Popen``'s ``options``) to its end, and return its exit status.

    A signal of :data:`PASSED_ON` that this process gets meanwhile is sent to the child; once the child has ended,
    this process ends by the signal too (or does what its handler of it before said): :func:`_end_by`. Ctrl-C lets
    the child end as it does on its own first (:func:`_let_end`)."""
    heard: list[int] = []
    child = subprocess.Popen(argv, preexec_fn=_ends_with(os.getpid()), **options)
    with child, _passing_on(child, heard):
        try:
            status = child.wait()
        except KeyboardInterrupt:
            _let_end(child)
            raise
        except BaseException:
            child.kill()
            raise
    for signum in heard[:1]:
        _end_by(signum)
    return status


GRACE_SECONDS = 10.0
"""How long an interrupted child is given to end by itself (nox: ``interrupted: nothing stored``, its temporary
folders removed), before it is sent Ctrl-C itself, and then again before it is killed."""


def _let_end(child: subprocess.Popen[Any]) -> None:
    """Ctrl-C reached this process: in a terminal it reached the child too (the terminal sends it to the whole
    process group), which ends as it does on its own, what it holds undone; where it was sent to this process
    alone, the child is sent it after :data:`GRACE_SECONDS`; killed where it has not ended as long after that, or
    at a second Ctrl-C."""
    try:
        for interrupt in (False, True):
            if interrupt:
                child.send_signal(signal.SIGINT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(timeout=GRACE_SECONDS)
                return
    finally:
        if child.poll() is None:
            child.kill()


def _end_by(signum: int) -> NoReturn:
    """End this process as ``signum`` ends it, once what its code holds has unwound: ``SystemExit`` goes up through
    nox and every ``with``, then, as Python exits, the signal is sent again, to its handler as it was before (by
    default, this process ends so)."""
    atexit.register(_signalled, signum)
    raise SystemExit(128 + signum)


def _signalled(signum: int) -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os.kill(os.getpid(), signum)


class _passing_on:
    """While in this context, each signal of :data:`PASSED_ON` is sent to ``child`` and noted in ``heard``; only in the
    main thread, the one that may set handlers."""

    def __init__(self, child: subprocess.Popen[Any], heard: list[int]) -> None:
        self.child, self.heard = child, heard
        self.before: dict[int, Any] = {}

    def pass_on(self, signum: int, frame: object) -> None:
        self.heard.append(signum)
        self.child.send_signal(signum)  # no wait here: the main thread's wait holds the child's lock

    def __enter__(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for signum in PASSED_ON:
            if signal.getsignal(signum) is not signal.SIG_IGN:  # ignored (nohup's SIGHUP): the child ignores it too
                self.before[signum] = signal.signal(signum, self.pass_on)

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self.before.items():
            signal.signal(signum, handler)


def _ends_with(parent: int) -> Callable[[], None] | None:
    """What the child runs before its command, on Linux: SIGTERM to it when ``parent``'s thread that started it ends,
    the kernel's to send (``PR_SET_PDEATHSIG``), or at once where ``parent`` ended already. None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up before the fork

    def tether() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGTERM)

    return tether
