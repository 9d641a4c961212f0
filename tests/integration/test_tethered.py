"""A child command ends with the process that runs it, whatever signal ends that process alone."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ..conftest import FOREGROUND
from ..faults.conftest import wait_until_dead

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not Path("/proc").is_dir(), reason="process checks read /proc"),
]


def started(path: Path, seconds: float = 120.0) -> int:
    """The pid written in ``path``, once it is there."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"nothing wrote {path} in {seconds} s")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGKILL], ids=lambda s: s.name)
def test_a_signal_that_ends_the_parent_alone_ends_its_child_and_the_parent_ends_by_it(
    tmp_path: Path, signum: signal.Signals
) -> None:
    """Sent to the parent's pid alone (``kill PID``, a supervisor, ``Popen.terminate()``): the child ends, never
    to finish what it was doing, and the parent ends as the signal ends a process."""
    pid_file, finished = tmp_path / "child.pid", tmp_path / "finished"
    child = (
        f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
        f"time.sleep(60)\nopen({str(finished)!r}, 'w').close()\n"
    )
    parent = (
        "import sys\nfrom torchmatrix.util import tethered\n"
        f"sys.exit(tethered.run([sys.executable, '-c', {child!r}]))\n"
    )
    with subprocess.Popen([sys.executable, "-c", parent], preexec_fn=FOREGROUND) as running:  # noqa: PLW1509
        pid = started(pid_file)
        running.send_signal(signum)
        assert running.wait(timeout=60) == -signum
    assert wait_until_dead([pid], seconds=60) == []
    assert not finished.exists()


def test_a_signal_the_parent_ignores_reaches_neither(tmp_path: Path) -> None:
    """Under ``nohup`` (SIGHUP ignored) the child goes on as its parent does, and its status is the parent's."""
    child = "import signal, sys\nprint(signal.getsignal(signal.SIGHUP) is signal.SIG_IGN)\nsys.exit(3)\n"
    parent = (
        "import signal, sys\nsignal.signal(signal.SIGHUP, signal.SIG_IGN)\nfrom torchmatrix.util import tethered\n"
        f"sys.exit(tethered.run([sys.executable, '-c', {child!r}]))\n"
    )
    ran = subprocess.run([sys.executable, "-c", parent], capture_output=True, text=True, timeout=120)
    assert (ran.returncode, ran.stdout) == (3, "True\n")


@pytest.mark.parametrize("whom", ["group", "parent"])
def test_ctrl_c_lets_the_child_undo_what_it_holds_before_the_parent_ends(tmp_path: Path, whom: str) -> None:
    """Ctrl-C in a terminal reaches the whole process group: the child (nox) ends as it does on its own, saying it
    stored nothing and removing its temporary folders, not killed first. Sent to the parent alone, it reaches the
    child from the parent."""
    pid_file, undone = tmp_path / "child.pid", tmp_path / "undone"
    child = (
        f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
        "try:\n    time.sleep(60)\n"
        f"except KeyboardInterrupt:\n    time.sleep(1)\n    open({str(undone)!r}, 'w').close()\n"
    )
    parent = (
        "import sys\nfrom torchmatrix.util import tethered\ntethered.GRACE_SECONDS = 5.0\n"
        f"sys.exit(tethered.run([sys.executable, '-c', {child!r}]))\n"
    )
    with subprocess.Popen([sys.executable, "-c", parent], start_new_session=True, preexec_fn=FOREGROUND) as running:  # noqa: PLW1509
        pid = started(pid_file)
        if whom == "group":
            os.killpg(running.pid, signal.SIGINT)
        else:
            running.send_signal(signal.SIGINT)
        running.wait(timeout=60)
    assert wait_until_dead([pid], seconds=60) == []
    assert undone.exists()
