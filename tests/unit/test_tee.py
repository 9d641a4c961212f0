"""What a child's output leaves: redraws reduced to their final lines; off a terminal, a long silence is said."""

from __future__ import annotations

import io
import threading

import pytest

from torchmatrix.util.tee import Redraws, Tee


def reduced(*pieces: str) -> list[str]:
    redraws = Redraws(keep=40)
    for piece in pieces:
        redraws.feed(piece)
    return redraws.lines


def test_a_carriage_return_redraw_leaves_its_final_text() -> None:
    assert reduced("\r 10%\r 50%\r100%\nDone\n") == ["100%", "Done"]


def test_escape_sequences_are_removed() -> None:
    coloured = "\x1b[1mResolved\x1b[0m \x1b[2m1 package\x1b[0m\n\x1b]0;title\x07\x1b[?25lInstalled\x1b[?25h\n"
    assert reduced(coloured) == ["Resolved 1 package", "Installed"]


def test_lines_a_display_moves_back_over_are_taken_back() -> None:
    """A multi-line display (uv's download bars) redraws by moving up and erasing; what stays is what it leaves."""
    drawn = "Resolved 1 package\ntorch 1MiB/8MiB\nnumpy 0MiB/2MiB\n"
    bars = f"{drawn}\x1b[2A\r\x1b[2Ktorch 8MiB/8MiB\n\x1b[2K\n\x1b[2A\x1b[J"
    assert reduced(bars, "Installed 2 packages\n") == ["Resolved 1 package", "Installed 2 packages"]


@pytest.mark.parametrize("cut", range(1, 12))
def test_a_sequence_or_a_line_end_cut_between_reads_is_read_whole(cut: int) -> None:
    stream = "a\r\n\x1b[31mred\x1b[0m\r\n"
    assert reduced(stream[:cut], stream[cut:]) == ["a", "red"]


def test_a_display_that_fills_the_width_to_draw_its_next_row_leaves_the_lines_above_it() -> None:
    """uv draws its bars as one stream padded to the screen's width, moving up and down between them."""
    spinner, bar = "Preparing packages... (0/1)".ljust(30), "torch 1 MiB/8 MiB"
    redraw = f"{spinner}{bar}\x1b[1A\r\x1b[2K\x1b[1B\r\x1b[2K\x1b[1A"
    redraws = Redraws(keep=40, width=30)
    redraws.feed(f"Using Python 3.11\r\nResolved 1 package\r\n{redraw * 3}\r\x1b[2KPrepared 1 package\r\n")
    assert redraws.lines == ["Using Python 3.11", "Resolved 1 package", "Prepared 1 package"]


def test_text_written_over_a_longer_line_leaves_the_rest_of_it_as_a_terminal_does() -> None:
    assert reduced("downloading\rdone\n") == ["doneloading"]
    assert reduced("downloading\r\x1b[Kdone\n") == ["done"]


def test_the_tail_keeps_the_last_lines_with_the_unfinished_one() -> None:
    tee = Tee(keep=2)
    with tee as output:
        output.write("one\ntwo\nthree\nerror: no ")
        output.flush()
    assert tee.tail == "three\nerror: no"


class Watched(io.StringIO):
    """Standard output that says when a line that the install still runs arrives."""

    def __init__(self) -> None:
        super().__init__()
        self.still = threading.Event()

    def write(self, text: str) -> int:
        if text.startswith("still "):
            self.still.set()
        return super().write(text)


def test_off_a_terminal_a_silence_gets_a_plain_line_that_says_the_install_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shown = Watched()
    monkeypatch.setattr("sys.stdout", shown)
    tee = Tee(keep=40, doing="installing torch==2.5.1", quiet_seconds=0.01)
    with tee as output:
        output.write("Resolved 1 package\n")
        output.flush()
        assert shown.still.wait(timeout=60)
    lines = shown.getvalue().splitlines()  # the silence may be said before the reader has copied the line
    assert "Resolved 1 package" in lines
    assert any(line.startswith("still installing torch==2.5.1, 0s so far") for line in lines), lines
    assert "\r" not in shown.getvalue()
    assert tee.tail == "Resolved 1 package"  # the line is the Tee's, not the installer's
