"""An interrupt is told from a failure by the exit status a child ended with, and stops the run as Ctrl-C does."""

from __future__ import annotations

import signal

import pytest

from torchmatrix.util import interrupts


@pytest.mark.parametrize(
    "returncode",
    [-signal.SIGINT, -signal.SIGTERM, 128 + signal.SIGINT, 128 + signal.SIGTERM, interrupts.WINDOWS_CTRL_C_EXIT],
)
def test_a_child_a_ctrl_c_or_a_cancelled_job_ended_was_interrupted(returncode: int) -> None:
    assert interrupts.stopped_by_interrupt(returncode)
    with pytest.raises(KeyboardInterrupt):
        interrupts.stop_if_interrupted(returncode)


@pytest.mark.parametrize("returncode", [None, 0, 1, 2, -signal.SIGKILL, -signal.SIGSEGV, 128 + signal.SIGKILL])
def test_a_child_that_failed_or_was_killed_otherwise_was_not(returncode: int | None) -> None:
    """An installer's error, and a kill no person asked for by interrupting (the OOM killer's SIGKILL, a crash)."""
    assert not interrupts.stopped_by_interrupt(returncode)
    interrupts.stop_if_interrupted(returncode)  # returns: the failure is the caller's to report
