"""Repeated runs of a pair become one record: the outcome they share, or `unstable` with their counts."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

from torchmatrix import identity, repeats
from torchmatrix.core import Outcome, Pair, Probe, Record
from torchmatrix.sessions.common import progress_log, run_pairs

PROBE = Probe("flaky", Path("flaky.py"))


def run(outcome: Outcome, seconds: float = 0.1, message: str = "", **metrics: object) -> Record:
    return Record("flaky", "cpu", outcome, dict(metrics), message, seconds)


def test_runs_that_agree_are_their_outcome_with_every_run_kept() -> None:
    runs = [run(Outcome.PASS, 0.1, "fine", error=0.5), run(Outcome.PASS, 0.3, "fine", error=0.7)]
    merged = repeats.merge(runs)
    assert (merged.outcome, merged.message, merged.duration) == (Outcome.PASS, "fine", 0.3)
    assert merged.metrics["error"] == 0.5, "the first run's metrics, for the tables"
    assert [each["metrics"]["error"] for each in repeats.runs_of(merged)] == [0.5, 0.7]


def test_runs_that_disagree_are_unstable_with_the_counts_most_frequent_first() -> None:
    runs = [run(Outcome.FAIL), run(Outcome.PASS), run(Outcome.PASS), run(Outcome.FAIL), run(Outcome.PASS)]
    merged = repeats.merge(runs)
    assert merged.outcome is Outcome.UNSTABLE
    assert merged.message == "3 pass, 2 fail"
    assert [each["outcome"] for each in merged.metrics[repeats.REPEATS]] == ["fail", "pass", "pass", "fail", "pass"]
    assert set(merged.metrics) == {repeats.REPEATS}, "no one run's checks stand for an unstable pair"
    ties = Counter({Outcome.CRASH: 1, Outcome.FAIL: 1, Outcome.PASS: 1})
    assert repeats.counts(ties) == "1 pass, 1 fail, 1 crash"


def test_the_runners_records_are_merged_per_pair_in_the_order_listed() -> None:
    other = Probe("other", Path("other.py"))
    pairs = [Pair(PROBE, "cpu"), Pair(other, "cpu")]
    assert repeats.listed(pairs, 3) == [pairs[0]] * 3 + [pairs[1]] * 3
    records = [run(Outcome.PASS)] * 3 + [Record("other", "cpu", o, {}, "", 0.1) for o in (Outcome.FAIL,) * 2]
    records.append(Record("other", "cpu", Outcome.TIMEOUT, {}, "", 0.1))
    merged = repeats.merged(records, 3)
    assert [(record.probe, record.outcome, record.message) for record in merged] == [
        ("flaky", Outcome.PASS, ""),
        ("other", Outcome.UNSTABLE, "2 fail, 1 timeout"),
    ]
    single = [run(Outcome.PASS, error=1.0)]
    assert repeats.merged(single, 1) == single, "one run per pair is stored as it always was"
    assert repeats.runs_of(single[0]) == [
        {"outcome": "pass", "message": "", "duration": 0.1, "metrics": {"error": 1.0}}
    ]


class Session:
    def __init__(self) -> None:
        self.said: list[str] = []

    def log(self, message: str) -> None:
        self.said.append(message)


FLAKY = """\
import os


def run(device):
    return {"outcome": "pass" if os.urandom(1)[0] < 128 else "fail", "metrics": {}, "message": ""}
"""
SEEDED = """\
import random


def run(device):
    return {"outcome": "pass", "metrics": {"random": random.random(), "hash": hash("torchmatrix")}}
"""


def test_every_run_of_every_cell_starts_from_one_seed(stub_torch_python: str, tmp_path: Path) -> None:
    """Random numbers and the hash seed are the same in every repeat and every cell: what varies is not the seed."""
    (tmp_path / "seeded.py").write_text(SEEDED)
    pairs = [Pair(Probe("seeded", tmp_path / "seeded.py"), "cpu")]
    seen = [
        (run["metrics"]["random"], run["metrics"]["hash"])
        for _ in range(2)  # two cells, each with its own worker
        for run in repeats.runs_of(run_pairs(stub_torch_python, pairs, 30.0, 3, lambda *_: None).records[0])
    ]
    assert len(seen) == 6 and len(set(seen)) == 1
    assert seen[0][0] == random.Random(identity.SEED).random()


def test_a_probe_that_fails_at_random_is_unstable_and_one_that_does_not_is_not(
    stub_torch_python: str, tmp_path: Path
) -> None:
    (tmp_path / "flaky.py").write_text(FLAKY)
    (tmp_path / "steady.py").write_text("def run(device):\n    return {'outcome': 'pass'}\n")
    pairs = [Pair(Probe(name, tmp_path / f"{name}.py"), "cpu") for name in ("flaky", "steady")]
    session = Session()
    cell = run_pairs(stub_torch_python, pairs, 30.0, 40, progress_log(session, len(pairs), 40))  # type: ignore[arg-type]
    flaky, steady = cell.records
    assert flaky.outcome is Outcome.UNSTABLE  # all 40 alike by chance: once in 2**39 runs
    seen = Counter(each["outcome"] for each in repeats.runs_of(flaky))
    assert seen.keys() == {"pass", "fail"} and seen.total() == 40
    assert sorted(flaky.message.split(", ")) == sorted([f"{seen['pass']} pass", f"{seen['fail']} fail"])
    assert (steady.outcome, len(repeats.runs_of(steady))) == (Outcome.PASS, 40)
    assert "[1/2] flaky on cpu (run 1 of 40) ..." in session.said
    assert "[2/2] steady on cpu (run 40 of 40) ..." in session.said
    assert f"    ± unstable over 40 runs ({flaky.message})" in session.said
    assert "    ✓ pass over 40 runs (40 pass)" in session.said
