"""A probe's checks across releases: each step compared with the previous release on the same inputs only."""

from __future__ import annotations

import copy
import dataclasses

from torchmatrix.views import history, model
from torchmatrix.views.history import SincePrevious
from torchmatrix.views.model import Column, Row

from .report_data import scenario, sweep_scenario

CPU = Column("x86-box", "cpu")
RELEASES = {torch: Row(torch, None) for torch in ("1.9.0", "1.12.1", "2.2.0", "2.13.0")}


def sweep_history(found: list | None = None) -> history.History:
    [found_history] = history.histories(model.build(sweep_scenario() if found is None else found))
    return found_history


def changes(found: history.History, name: str) -> list[SincePrevious | None]:
    steps = [found.steps.get((name, row, CPU)) for row in found.releases[CPU]]
    return [step.change if step else None for step in steps]


def test_each_step_says_how_it_compares_with_the_previous_release() -> None:
    found = sweep_history()
    assert found.probe == "opsweep" and found.columns == (CPU,)
    assert found.releases[CPU] == tuple(RELEASES.values())  # the release whose sweep raised has its column
    same, changed, first, new, not_compared = (
        SincePrevious.SAME,
        SincePrevious.CHANGED,
        SincePrevious.FIRST,
        SincePrevious.NEW,
        SincePrevious.NOT_COMPARED,
    )
    unstable = SincePrevious.UNSTABLE
    assert changes(found, "add") == [first, same, same, None]
    assert changes(found, "mul") == [first, changed, same, None]
    assert changes(found, "nn.functional.conv2d") == [first, not_compared, changed, None]
    assert changes(found, "empty") == [first, unstable, unstable, None]  # its output differs from call to call
    assert changes(found, "nn.functional.gelu") == [None, None, new, None]
    # From an output to raising on the same input and back: refused, not compared; a change of outcome.
    eig = [found.steps["linalg.eig", RELEASES[torch], CPU] for torch in ("1.9.0", "1.12.1", "2.2.0")]
    assert [step.mark.value for step in eig] == ["fail", "error", "fail"]
    assert [step.change for step in eig] == [first, not_compared, not_compared] and eig[2].outcome_changed
    assert [step.comparison.refused for step in eig] == [0, 1, 1]


def test_checks_that_changed_come_first() -> None:
    found = sweep_history()
    assert found.checks[:2] == ("mul", "nn.functional.conv2d")
    assert set(found.checks[2:]) == {"add", "empty", "linalg.eig", "nn.functional.gelu"}
    assert found.changed_checks() == ("mul", "nn.functional.conv2d")


def test_each_transition_counts_what_could_be_compared() -> None:
    first, second, third = sweep_history().transitions
    assert (first.before, first.after) == (RELEASES["1.9.0"], RELEASES["1.12.1"])
    assert (first.in_both, first.compared, first.samples_compared, first.samples, first.refused) == (5, 2, 4, 7, 1)
    assert first.changed == ("mul",) and first.differs == ()
    assert (second.compared, second.samples_compared, second.changed) == (3, 5, ("nn.functional.conv2d",))
    assert second.differs == ("CPU capability AVX2 → AVX512",)  # torch dispatched to other kernels there
    assert (third.after, third.in_both, third.samples, third.changed) == (RELEASES["2.13.0"], 0, 0, ())


def test_the_same_sweep_twice_shows_no_change() -> None:
    """Zero false drift: a release swept twice (here under two Pythons) compares equal everywhere it can."""
    once = sweep_scenario()[2]
    again = copy.deepcopy(once)
    found = sweep_history([once, dataclasses.replace(again, python_request="3.13")])
    assert found.changed_checks() == ()
    [transition] = found.transitions
    assert transition.changed == () and transition.samples_compared == 7  # every reproducible sample


def test_one_edited_digest_is_exactly_one_change() -> None:
    once = sweep_scenario()[2]
    again = copy.deepcopy(once)
    again.records[0].metrics["checks"][0]["samples"][1]["output"] = "edited"
    found = sweep_history([once, dataclasses.replace(again, python_request="3.13")])
    assert found.changed_checks() == ("add",)
    [transition] = found.transitions
    assert transition.changed == ("add",)
    step = found.steps["add", Row("2.2.0", "3.13"), CPU]
    assert (step.comparison.compared, step.comparison.changed) == (2, 1)


def test_checks_without_samples_are_compared_by_their_observed_value() -> None:
    """The probes with a few checks get the same view: batched_matmul's error on the mps of a Mac changed."""
    found = {item.probe: item for item in history.histories(model.build(scenario()))}
    batched = found["batched_matmul"]
    mps = Column("macos-arm64", "mps")
    step = batched.steps["batched vs looped (float32)", Row("2.2.0", None), mps]
    assert step.change is SincePrevious.CHANGED and step.value == "1.2e-06" and step.mark.value == "within-tolerance"
    assert batched.changed_checks(mps) == ("batched vs looped (float32)",)
    assert batched.changed_checks(Column("linux-x86_64", "cpu")) == ()


def test_a_probe_whose_records_hold_no_checks_has_no_history() -> None:
    assert [item.probe for item in history.histories(model.build(sweep_scenario()))] == ["opsweep"]
    assert history.histories(model.build([sweep_scenario()[3]])) == ()  # the sweep that raised
