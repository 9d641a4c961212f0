"""The progress lines a probe session logs: a line per pair, one per test, and no flood of unavailable tests."""

from __future__ import annotations

from pathlib import Path

from torchmatrix.core import Kind, Outcome, Pair, Probe, Record
from torchmatrix.sessions.common import progress_log, run_pairs


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


def test_a_run_of_pairs_ends_with_done(stub_torch_python: str, tmp_path: Path) -> None:
    probe = tmp_path / "ok.py"
    probe.write_text("def run(device):\n    return {'outcome': 'pass'}\n")
    heard: list[str] = []
    pairs = [Pair(Probe("ok", probe), "cpu")]
    run_pairs(stub_torch_python, pairs, 30.0, 1, lambda event, pair, record: heard.append(event))
    assert heard == ["start", "record", "done"]
