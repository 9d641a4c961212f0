"""The progress lines a probe session logs: a line per pair, one per test, and no flood of unavailable tests."""

from __future__ import annotations

import random
from pathlib import Path

from torchmatrix.core import Kind, Outcome, Pair, Probe, Record
from torchmatrix.safetext import unsafe
from torchmatrix.sessions.common import progress_log


class Session:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def log(self, line: str) -> None:
        self.lines.append(line)


def a_test(name: str, device: str, outcome: Outcome, message: str = "") -> Record:
    return Record(f"tests/test_a.py::{name}", device, outcome, {}, message, 0.0)


def test_each_test_is_a_line_and_tests_unavailable_for_one_reason_are_counted() -> None:
    session = Session()
    listen = progress_log(session, 3)  # type: ignore[arg-type]
    tests = Probe("tests/test_a.py", Path("tests/test_a.py"), kind=Kind.PYTEST)
    module = Probe("dot", Path("dot.py"))
    absent = "this torch build has no MPS support"
    events = [
        ("start", Pair(tests, "cpu"), None),
        ("record", Pair(tests, "cpu"), a_test("test_x", "cpu", Outcome.PASS)),
        ("record", Pair(tests, "cpu"), a_test("test_y", "cpu", Outcome.FAIL, "assert 1 == 2\nmore")),
        ("start", Pair(tests, "mps"), None),
        *[("record", Pair(tests, "mps"), a_test(name, "mps", Outcome.UNAVAILABLE, absent)) for name in "xyz"],
        ("start", Pair(module, "cpu"), None),
        ("record", Pair(module, "cpu"), Record("dot", "cpu", Outcome.PASS, {}, "fine", 0.01)),
    ]
    for event in events:
        listen(*event)
    assert session.lines == [
        "[1/3] tests/test_a.py on cpu ...",
        "    ✓ pass (0.00 s) tests/test_a.py::test_x",
        "    ✗ fail (0.00 s) tests/test_a.py::test_y: assert 1 == 2",
        "        more",
        "[2/3] tests/test_a.py on mps ...",
        f"    – unavailable (0.00 s) tests/test_a.py::x: {absent}",
        "    … and 2 more unavailable for the same reason",
        "[3/3] dot on cpu ...",
        "    ✓ pass (0.01 s) fine",
    ]


def test_the_count_of_unavailable_tests_of_the_last_pair_is_said_at_the_end() -> None:
    session = Session()
    listen = progress_log(session, 1)  # type: ignore[arg-type]
    tests = Probe("tests/test_a.py", Path("tests/test_a.py"), kind=Kind.PYTEST)
    listen("start", Pair(tests, "mps"), None)
    for name in "xyz":
        listen("record", Pair(tests, "mps"), a_test(name, "mps", Outcome.UNAVAILABLE, "no MPS"))
    listen("done", Pair(tests, "mps"), None)
    assert session.lines[-1] == "    … and 2 more unavailable for the same reason"


HOSTILE = [
    *map(chr, range(0x20)), "\x7f", "\x85", "\x9b", "\u2028", "\u2029", "\u202e", "\u200b", "\ud800",
    "\u061c", "\xad", "\ufff9", "\U000e0041", "\ue000", "\ufffe",
    "\x1b[2J", "\x1b]0;title\x07", "\r\x1b[K", "\nnox > Session probe(2.13.0) was successful.\n",
]  # fmt: skip


def fuzzed(rng: random.Random) -> str:
    return "".join(rng.choice([*HOSTILE, "a", "b", ":", "[", "]", "/", " ", "✓"]) for _ in range(rng.randint(1, 12)))


def test_no_progress_line_lets_a_terminal_act_on_a_name_or_a_message() -> None:
    rng = random.Random(19)
    for _ in range(300):
        session = Session()
        repeat = rng.choice([1, 2])
        listen = progress_log(session, 2, repeat)  # type: ignore[arg-type]
        name, message = fuzzed(rng), fuzzed(rng)
        tests = Pair(Probe(name, Path("t.py"), kind=Kind.PYTEST), fuzzed(rng))
        script = Pair(Probe(name, Path("s.py"), kind=Kind.SCRIPT), "cpu")
        listen("start", tests, None)
        for outcome in (Outcome.FAIL, Outcome.UNAVAILABLE, Outcome.UNAVAILABLE):
            listen("record", tests, Record(f"{name}::{fuzzed(rng)}", tests.device, outcome, {}, message, 0.0))
        for _ in range(repeat):
            listen("start", script, None)
            listen("record", script, Record(name, "cpu", rng.choice(list(Outcome)), {}, message, 0.0))
        listen("done", script, None)
        for line in session.lines:
            assert not [char for char in line if unsafe(char)], repr(line)


def test_a_failed_tests_multi_line_exception_is_shown_whole_under_its_line() -> None:
    session = Session()
    listen = progress_log(session, 2)  # type: ignore[arg-type]
    tests = Probe("tests/test_a.py", Path("tests/test_a.py"), kind=Kind.PYTEST)
    raised = "AssertionError: values differ\nassert 0.9642857 == 0.9642858\n +  where 0.9642857 = f()"
    listen("start", Pair(tests, "cpu"), None)
    listen("record", Pair(tests, "cpu"), a_test("test_v", "cpu", Outcome.FAIL, raised))
    script = Probe("s", Path("s.py"), kind=Kind.SCRIPT)
    listen("start", Pair(script, "cpu"), None)
    listen("record", Pair(script, "cpu"), Record("s", "cpu", Outcome.ERROR, {}, "\n".join(map(str, range(20))), 0.0))
    assert session.lines[1:4] == [
        "    ✗ fail (0.00 s) tests/test_a.py::test_v: AssertionError: values differ",
        "        assert 0.9642857 == 0.9642858",
        "         +  where 0.9642857 = f()",
    ]
    assert session.lines[5:] == [
        "    E error (0.00 s) 0",
        *(f"        {n}" for n in range(1, 13)),
        "        … 7 more lines in the result file",
    ]
