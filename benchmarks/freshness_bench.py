"""How long telling stale records from current ones takes for a test suite's cell.

    python benchmarks/freshness_bench.py [--tests N] [--files F] [--repeat R]

A suite run as one pytest pair stores a record per test, and every record
lists the same files read (the suite's modules, its conftest, its data). Marks
N such records against F real files on disk, as `nox -s report` does for every
stored result, and prints the best of R runs. A file is hashed once per pass,
however many records list it.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from torchmatrix import freshness, identity
from torchmatrix.core import Outcome, Record
from torchmatrix.results import CellResult

MACHINE = "bench"


class Suite:
    """What a run now would do: run every test of one suite, from the inputs its records were made from."""

    machine = MACHINE

    def __init__(self, inputs: Mapping[str, Any]) -> None:
        self.inputs = inputs

    def owner(self, record_name: str) -> object:
        return self

    def identity_now(self, result: CellResult, record: Record) -> Mapping[str, Any]:
        return self.inputs


def suite_result(tests: int, read: dict[str, str | None]) -> CellResult:
    inputs = {"probe": "0" * 64, identity.READ: read}
    records = tuple(
        Record(f"tests/test_suite.py::test_{n}", "cpu", Outcome.PASS, {}, "", 0.01, inputs) for n in range(tests)
    )
    return CellResult(
        machine=MACHINE, cell_id="torch-2.13.0-py3.11", torch="2.13.0", python="3.11", python_request=None,
        session="probe(2.13.0)", outcome=None, message="", records=records,
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=2000)
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for number in range(options.files):
            path = Path(folder) / f"module_{number}.py"
            path.write_text(f"VALUE = {number}\n" * 200, encoding="utf-8")
            paths.append(str(path))
        result = suite_result(options.tests, identity.files_read(paths))
        current = Suite({"probe": "0" * 64})
        best = float("inf")
        for _ in range(options.repeat):
            started = time.perf_counter()
            marked = freshness.marked_stale([result], current)
            best = min(best, time.perf_counter() - started)
        assert not any(record.outcome is Outcome.STALE for record in marked[0].records)
    print(
        f"{options.tests} records reading {options.files} files each: marked in {best:.3f} s (best of {options.repeat})"
    )


if __name__ == "__main__":
    main()
