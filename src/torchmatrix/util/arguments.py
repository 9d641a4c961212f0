"""Parse a session's arguments (what follows ``--`` on the nox command line) with argparse.

A mistake raises :class:`UsageError` (exit code 2) carrying argparse's
message and the usage line, so it ends the run like every other user mistake:
one message, no traceback.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import NoReturn

from ..core import MAX_REPEAT
from ..errors import HelpShown, UsageError, did_you_mean


class Parser(argparse.ArgumentParser):
    def __init__(self, usage: str, description: str = "") -> None:
        super().__init__(prog="torchmatrix", usage=usage, description=description, allow_abbrev=False)

    def parse(self, argv: Sequence[str]) -> argparse.Namespace:
        """``argv`` read, an option it does not declare refused first with the closest one it does: argparse would
        report a required option as missing where only its spelling is wrong (``--frm 1.9``: ``--from``)."""
        declared = self._option_string_actions
        value_of: argparse.Action | None = None  # the option the word is the value of, which argparse judges
        for word in argv:
            if word == "--":  # what follows is no option
                break
            option, given, _ = word.partition("=")
            if option.startswith("--") and value_of is None and option not in declared:
                self.error(f"unknown option {option}: {did_you_mean(option, declared, '--help lists the options')}")
            action = declared.get(option) if value_of is None else None
            value_of = action if action is not None and action.nargs != 0 and not given else None
        return self.parse_args(list(argv))

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
