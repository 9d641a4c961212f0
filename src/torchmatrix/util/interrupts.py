"""Whether an interrupt stopped a command (a terminal's Ctrl-C, a cancelled job), rather than the command failing.

An interrupt is no outcome: nothing a command it stopped was doing is a result, and the run stops as it does at
Ctrl-C. Where the interrupt reaches nox itself, nox raises ``KeyboardInterrupt``; where it reaches only the child
(a signal sent to the installer alone, by a person or by what cancels a job), nox sees a command that failed with
the signal's exit status: this module is the one place that tells the two apart.
"""

from __future__ import annotations

import signal

INTERRUPTS = (signal.SIGINT, signal.SIGTERM)
"""What stops a run: a terminal's Ctrl-C, and what a CI service sends to cancel a job."""
WINDOWS_CTRL_C_EXIT = 0xC000013A
"""``STATUS_CONTROL_C_EXIT``: the exit status of a Windows process that Ctrl-C ended."""
_STATUSES = frozenset(
    [*(-signum for signum in INTERRUPTS), *(128 + signum for signum in INTERRUPTS), WINDOWS_CTRL_C_EXIT]
)


def stopped_by_interrupt(returncode: int | None) -> bool:
    """Whether a child's exit status says that an interrupt ended it: killed by SIGINT or SIGTERM (``-2``,
    ``-15``), the status a shell gives such a death (``130``, ``143``), or Windows' status for Ctrl-C."""
    return returncode in _STATUSES


def stop_if_interrupted(returncode: int | None) -> None:
    """Stop the run as Ctrl-C does where ``returncode`` says that an interrupt ended the child: nox takes the
    ``KeyboardInterrupt`` for its own, ends with exit status 130 and runs no later session."""
    if stopped_by_interrupt(returncode):
        raise KeyboardInterrupt
