"""The fatal errors a user can cause, each with its own exit code.

They are raised anywhere and caught only at the edge. A nox session is
wrapped in :meth:`SessionErrors.fail_session`: its error is printed once and
fails that session alone, as nox fails any session, so nox runs the others,
prints its summary and writes its ``--report``; the run's exit status is then
the highest code of the errors its sessions met. A user's mistake costs one
clear message, never a traceback.
"""

from __future__ import annotations

import atexit
import difflib
import functools
import os
import signal
import sys
import types
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Concatenate, ParamSpec, TypeVar

from .util.safetext import for_terminal

if TYPE_CHECKING:
    import nox

P = ParamSpec("P")
R = TypeVar("R")


class TorchmatrixError(Exception):
    """Base of every error that ends a run with a message instead of a traceback."""

    exit_code = 1
    said = False
    """Whether its message was printed already (:func:`say`): it ends the run without printing it again."""


class ConfigError(TorchmatrixError):
    """The matrix file (or another file a user wrote) is invalid."""

    exit_code = 2

    def __init__(self, file: str, line: int | None, key: str, problem: str, hint: str = "") -> None:
        self.file = file
        self.line = line
        self.key = key
        self.problem = problem
        self.hint = hint
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        key = f" {self.key}:" if self.key else ""
        hint = f"\n  hint: {self.hint}" if self.hint else ""
        return f"{where}:{key} {self.problem}{hint}"


class HelpShown(Exception):
    """A session's arguments asked for its help (``-- --help``), which is printed: the session ends there, and
    succeeded."""


class UsageError(TorchmatrixError):
    """A command was called with arguments that cannot work."""

    exit_code = 2


def say(error: TorchmatrixError) -> None:
    """Print ``error`` as one message on stderr (escaped: it may quote a file's text)."""
    print(f"torchmatrix: error: {for_terminal(str(error))}", file=sys.stderr, flush=True)
    error.said = True


Session = TypeVar("Session", bound="nox.Session")


class SessionErrors:
    """The exit codes of the torchmatrix errors that failed this nox run's sessions.

    nox ends a run with 1 when a session failed; a mistake's own code (2) says more to a script or a CI job.
    Once nox has run every session, printed its summary and written its report, and ends, the run ends with the
    highest of these codes instead. An interrupted run keeps nox's status (130), wherever the interrupt came: in a
    wrapped session, in another one, or while nox made an environment.
    """

    def __init__(self) -> None:
        self.codes: list[int] = []
        self.interrupted = False
        self._hear_interrupts()
        atexit.register(self._end)

    def _hear_interrupts(self) -> None:
        """Note every Ctrl-C before Python's own handler (which raises KeyboardInterrupt) or nox's acts on it."""
        acting = signal.getsignal(signal.SIGINT)
        if not callable(acting):  # ignored, or the OS's default: no KeyboardInterrupt, no status of nox's to keep
            return

        def heard(signum: int, frame: types.FrameType | None) -> None:
            self.interrupted = True
            acting(signum, frame)

        signal.signal(signal.SIGINT, heard)

    def fail_session(self, function: Callable[Concatenate[Session, P], R]) -> Callable[Concatenate[Session, P], R]:
        """Wrap a session: a :class:`TorchmatrixError` is said once and fails that session, never the run."""

        @functools.wraps(function)
        def wrapper(session: Session, /, *args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return function(session, *args, **kwargs)
            except HelpShown:
                return None  # type: ignore[return-value]  # a session returns nothing
            except TorchmatrixError as error:
                if not error.said:
                    say(error)
                self.codes.append(error.exit_code)
                session.error()  # nox: "Session … aborted.", and on to the next session
            except KeyboardInterrupt:
                self.interrupted = True
                raise

        return wrapper

    def _end(self) -> None:
        if self.codes and not self.interrupted:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(max(self.codes))  # nox has set its status already; nothing else is left to run


def did_you_mean(word: str, choices: Iterable[str], otherwise: str, part: Callable[[str], str] = str) -> str:
    """``did you mean 'x'?`` with the choice closest to ``word``; ``otherwise`` when none is close.

    ``part``: what of a word is compared, where all share the rest (a test id's name after its file's).
    """
    by_part = {part(choice): choice for choice in choices}
    close = difflib.get_close_matches(part(word), list(by_part), n=1)
    return f"did you mean {by_part[close[0]]!r}?" if close else otherwise
