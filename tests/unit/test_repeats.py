"""Repeated runs of a pair become one record: the outcome they share, or `unstable` with their counts."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from torchmatrix import identity
from torchmatrix.core import Outcome, Probe, Record
from torchmatrix.worker import repeats

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
    assert merged.message == "3 pass, 2 fail", "runs alike but for their outcome: nothing more to name"
    assert [each["outcome"] for each in merged.metrics[repeats.REPEATS]] == ["fail", "pass", "pass", "fail", "pass"]
    assert set(merged.metrics) == {repeats.REPEATS}, "no one run's checks stand for an unstable pair"
    ties = Counter({Outcome.CRASH: 1, Outcome.FAIL: 1, Outcome.PASS: 1})
    assert repeats.counts(ties) == "1 pass, 1 fail, 1 crash"


def test_an_unstable_pair_names_the_first_line_where_a_usual_run_and_another_differ() -> None:
    def script(outcome: Outcome, *lines: str, message: str = "") -> Record:
        return run(outcome, message=message, output=list(lines), output_sha256="x")

    printing = [script(Outcome.PASS, "loss", "0.25"), script(Outcome.FAIL, "loss", "nan", message="exit 1")]
    assert repeats.merge([*printing, printing[0]]).message == (
        "2 pass, 1 fail; first difference: what it printed, line 2: '0.25' → 'nan'"
    )
    told = [run(Outcome.FAIL, message="AssertionError: 0.31\nassert 0.31 < 0.3"), run(Outcome.PASS), run(Outcome.PASS)]
    assert repeats.merge(told).message == (
        "2 pass, 1 fail; first difference: its message, line 1: nothing → 'AssertionError: 0.31'"
    ), "alike in what they printed (here nothing): the messages"


def test_the_records_of_rounds_are_merged_per_pair_in_the_order_of_the_first_round() -> None:
    def other(outcome: Outcome) -> Record:
        return Record("other", "cpu", outcome, {}, "", 0.1)

    rounds = [[run(Outcome.PASS), other(outcome)] for outcome in (Outcome.FAIL, Outcome.TIMEOUT, Outcome.FAIL)]
    merged = repeats.merged([record for each in rounds for record in each], 3)
    assert [(record.probe, record.outcome, record.message) for record in merged] == [
        ("flaky", Outcome.PASS, ""),
        ("other", Outcome.UNSTABLE, "2 fail, 1 timeout"),
    ]
    single = [run(Outcome.PASS, error=1.0)]
    assert repeats.merged(single, 1) == single, "one run per pair is stored as it always was"
    assert repeats.runs_of(single[0]) == [
        {"outcome": "pass", "message": "", "duration": 0.1, "metrics": {"error": 1.0}}
    ]


def test_what_a_pairs_runs_read_is_what_every_run_read() -> None:
    """A run that its own hash seed led to another file than the first run read it: that file is the record's input
    too; one two runs found otherwise is never current; one run whose reads are not told leaves them all untold."""

    def reading(read: dict[str, str | None] | None) -> Record:
        return Record("flaky", "cpu", Outcome.PASS, {}, "", 0.1, {identity.READ: read})

    alpha, eps = {"data/alpha.txt": "a1", "probe.py": "p"}, {"data/eps.txt": "e1", "probe.py": "p"}
    [merged] = repeats.merged([reading(alpha), reading(eps)], 2)
    assert merged.inputs[identity.READ] == {"data/alpha.txt": "a1", "data/eps.txt": "e1", "probe.py": "p"}
    [changed] = repeats.merged([reading(alpha), reading({"data/alpha.txt": "a2"})], 2)
    assert changed.inputs[identity.READ] == {"data/alpha.txt": repeats.READ_OTHERWISE, "probe.py": "p"}
    [untold] = repeats.merged([reading(alpha), reading(None)], 2)
    assert untold.inputs[identity.READ] is None
