"""The fatal errors a user can cause, each with its own exit code.

They are raised anywhere and caught only at the edge: every nox session is
wrapped in :func:`exits_on_error`, which prints the message and exits with
``exit_code``. A user's mistake costs one clear message, never a traceback.
"""

from __future__ import annotations

import difflib
import functools
import sys
from collections.abc import Callable, Iterable
from typing import NoReturn, ParamSpec, TypeVar

from .safetext import for_terminal

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


class UsageError(TorchmatrixError):
    """A command was called with arguments that cannot work."""

    exit_code = 2


def exit_with(error: TorchmatrixError) -> NoReturn:
    """Print ``error`` as one message, unless it was said already, and exit with its code."""
    if not error.said:
        say(error)
    raise SystemExit(error.exit_code)


def say(error: TorchmatrixError) -> None:
    """Print ``error`` as one message on stderr (escaped: it may quote a file's text)."""
    print(f"torchmatrix: error: {for_terminal(str(error))}", file=sys.stderr, flush=True)
    error.said = True


def exits_on_error(function: Callable[P, R]) -> Callable[P, R]:
    """Wrap a session (or the noxfile's loading): a :class:`TorchmatrixError` becomes its message and exit code."""

    @functools.wraps(function)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return function(*args, **kwargs)
        except TorchmatrixError as error:
            exit_with(error)

    return wrapper


def did_you_mean(word: str, choices: Iterable[str], otherwise: str) -> str:
    """``did you mean 'x'?`` with the choice closest to ``word``; ``otherwise`` when none is close."""
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f"did you mean {close[0]!r}?" if close else otherwise
