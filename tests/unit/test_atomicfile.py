"""Atomic writes: a reader sees the old file or the new one, never half of one, whatever stops the writer."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from torchmatrix.util import atomicfile


def test_an_interrupted_write_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "result.json"
    atomicfile.write_text(target, "old\n")

    def interrupt(*_args: object) -> None:
        raise KeyboardInterrupt  # what SIGINT raises, here at the worst moment: content written, not renamed

    monkeypatch.setattr(os, "replace", interrupt)
    with pytest.raises(KeyboardInterrupt):
        atomicfile.write_text(target, "new\n" * 1000)
    assert target.read_text() == "old\n"
    assert [path.name for path in tmp_path.iterdir()] == ["result.json"]


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs, and writers are not locked there")
def test_a_lock_that_is_no_file_is_one_error_and_never_a_wait(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / ".lock")  # opening it to write would wait for a reader forever
    fifo = r"its lock .*/\.lock cannot be opened \(No such device or address\): delete it"
    with pytest.raises(OSError, match=fifo), atomicfile.locked(tmp_path):
        pass
    os.unlink(tmp_path / ".lock")
    (tmp_path / ".lock").mkdir()
    with pytest.raises(OSError, match=r"cannot be opened \(Is a directory\)"), atomicfile.locked(tmp_path):
        pass
    (tmp_path / ".lock").rmdir()
    (tmp_path / ".lock").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(OSError, match=r"cannot be opened \(it is a link\)"), atomicfile.locked(tmp_path):
        pass


class Held(Exception):
    """What the test's ``waiting`` raises: it would otherwise wait for itself."""


@pytest.mark.skipif(sys.platform == "win32", reason="writers are not locked there")
def test_one_who_finds_the_lock_held_hears_so_before_waiting(tmp_path: Path) -> None:
    def waiting() -> None:
        raise Held

    def take() -> None:
        with atomicfile.locked(tmp_path, waiting=waiting):
            pass

    take()  # free: nobody waits
    with atomicfile.locked(tmp_path):
        pytest.raises(Held, take)
