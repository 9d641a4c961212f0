"""The fatal errors a user can cause, each with its own exit code.

They are raised anywhere and caught only at the edge (the noxfile and the CLI),
which prints the message and exits with ``exit_code``: a user's mistake costs
one clear message, never a traceback.
"""

from __future__ import annotations


class TorchmatrixError(Exception):
    """Base of every error that ends a run with a message instead of a traceback."""

    exit_code = 1


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
