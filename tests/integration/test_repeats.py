"""Repeated runs of a pair in real workers: one seed for every run, and a probe that fails at random is unstable."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from torchmatrix import identity
from torchmatrix.cellrun import progress_log, run_pairs
from torchmatrix.core import Outcome, Pair, Probe
from torchmatrix.worker import repeats

pytestmark = pytest.mark.integration


class Session:
    def __init__(self) -> None:
        self.said: list[str] = []

    def log(self, message: str) -> None:
        self.said.append(message)


FLAKY = """\
import os


def run(device):
    drawn = os.urandom(1)[0]
    said = "" if drawn < 128 else "drew a high byte"
    return {"outcome": "pass" if drawn < 128 else "fail", "metrics": {}, "message": said}
"""


SEEDED = """\
import random


def run(device):
    return {"outcome": "pass", "metrics": {"random": random.random(), "hash": hash("torchmatrix")}}
"""


def test_every_run_of_every_cell_starts_from_one_seed(stub_torch_python: str, tmp_path: Path) -> None:
    """Random numbers are the same in every repeat and every cell: what varies is not the generators' seed. The hash
    seed is one more in each run of a repeat, as each process by hand has its own, and the same in every cell."""
    (tmp_path / "seeded.py").write_text(SEEDED)
    pairs = [Pair(Probe("seeded", tmp_path / "seeded.py"), "cpu")]
    cells = [
        [
            (run["metrics"]["random"], run["metrics"]["hash"])
            for run in repeats.runs_of(
                run_pairs(stub_torch_python, pairs, 30.0, 3, lambda *_: None, workdir=tmp_path).records[0]
            )
        ]
        for _ in range(2)  # two cells, each with its own workers
    ]
    assert cells[0] == cells[1]
    assert {number for number, _ in cells[0]} == {random.Random(identity.SEED).random()}
    assert len({hashed for _, hashed in cells[0]}) == 3


def test_a_probe_that_fails_at_random_is_unstable_and_one_that_does_not_is_not(
    stub_torch_python: str, tmp_path: Path
) -> None:
    (tmp_path / "flaky.py").write_text(FLAKY)
    (tmp_path / "steady.py").write_text("def run(device):\n    return {'outcome': 'pass'}\n")
    pairs = [Pair(Probe(name, tmp_path / f"{name}.py"), "cpu") for name in ("flaky", "steady")]
    session = Session()
    progress = progress_log(session.log, len(pairs), 24)
    cell = run_pairs(stub_torch_python, pairs, 30.0, 24, progress, workdir=tmp_path)
    flaky, steady = cell.records
    assert flaky.outcome is Outcome.UNSTABLE  # all 24 alike by chance: once in 2**23 runs
    seen = Counter(each["outcome"] for each in repeats.runs_of(flaky))
    assert seen.keys() == {"pass", "fail"} and seen.total() == 24
    counts, difference = flaky.message.split("; ")
    assert sorted(counts.split(", ")) == sorted([f"{seen['pass']} pass", f"{seen['fail']} fail"])
    assert difference in (  # a run of the most frequent outcome against one of the other
        "first difference: its message, line 1: nothing → 'drew a high byte'",
        "first difference: its message, line 1: 'drew a high byte' → nothing",
    )
    assert (steady.outcome, len(repeats.runs_of(steady))) == (Outcome.PASS, 24)
    assert "[1/2] flaky on cpu (run 1 of 24) ..." in session.said
    assert "[2/2] steady on cpu (run 24 of 24) ..." in session.said
    assert f"    ± unstable over 24 runs ({flaky.message})" in session.said
    assert "    ✓ pass over 24 runs (24 pass)" in session.said
