"""Parse a session's arguments (what follows ``--`` on the nox command line) with argparse.

A mistake raises :class:`UsageError` (exit code 2) carrying argparse's
message and the usage line, so it ends the run like every other user mistake:
one message, no traceback.
"""

from __future__ import annotations

import argparse
from typing import NoReturn

from ..core import MAX_REPEAT
from ..errors import HelpShown, UsageError


class Parser(argparse.ArgumentParser):
    def __init__(self, usage: str, description: str = "") -> None:
        super().__init__(prog="torchmatrix", usage=usage, description=description, allow_abbrev=False)

    def error(self, message: str) -> NoReturn:
        raise UsageError(with_usage(message, self.usage or ""))

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        """What argparse ends with once it has printed the help (``--help``): the session's end, never the run's."""
        if status:
            raise UsageError(with_usage(message or "", self.usage or ""))
        raise HelpShown


def typed(command: str | None, session: str, arguments: str = "") -> str:
    """How a person starts ``session`` with ``arguments``: ``nox -s report -- --all-cells``, or, from the
    ``command`` that runs the sessions with no noxfile, ``torchmatrix report --all-cells``."""
    if command is None:
        return f"nox -s {session}" + (f" -- {arguments}" if arguments else "")
    return f"{command} {session}" + (f" {arguments}" if arguments else "")


def with_usage(message: str, usage: str) -> str:
    return f"{message}\n  usage: {usage}"


def repeat_count(text: str) -> int:
    """``--repeat N``: how many times each (probe, device) pair runs, as the matrix's ``repeat:`` allows."""
    try:
        count = int(text)
    except ValueError:
        count = 0
    if not 1 <= count <= MAX_REPEAT:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of runs from 1 to {MAX_REPEAT}")
    return count
