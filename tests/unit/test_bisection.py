"""Bisection against scripted oracles: what it finds, what it builds, and what it says when it cannot."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence

import pytest
from packaging.version import Version

from torchmatrix.bisection.search import (
    Look,
    Observation,
    Status,
    Step,
    Verdict,
    budget_for,
    candidates,
    describe_budget,
    search,
)
from torchmatrix.index.releases import Listing, _wheels

PASS, FAIL = Observation("pass", "pass"), Observation("fail", "fail (wrong: y)")
NO_PYTHON = Observation(None, "no-interpreter: torch needs Python 3.6–3.9")


def releases(count: int) -> list[Version]:
    return [Version(f"1.{minor}.0") for minor in range(count)]


class Script:
    """An oracle that answers from a list, one observation per release, and remembers what it was asked."""

    def __init__(self, versions: list[Version], observations: list[Observation]) -> None:
        self.answers = dict(zip(versions, observations, strict=True))
        self.asked: list[Version] = []

    def __call__(self, version: Version) -> Observation:
        self.asked.append(version)
        return self.answers[version]


ONE = "the one question"


def bisect(
    versions: Sequence[Version],
    run: Callable[[Version], Observation],
    known: Mapping[Version, Observation] | None = None,
    *,
    budget: int | None = None,
    on_step: Callable[[Step], None] | None = None,
) -> Verdict:
    """The search for one question: ``versions`` between the outcome of the first and of the last."""

    def heard(look: Look[str]) -> None:
        if on_step:
            on_step(Step(look.version, look.observations[ONE], look.built))

    found = search(
        versions,
        lambda version: {ONE: run(version)},
        [ONE],
        {version: {ONE: observation} for version, observation in (known or {}).items()},
        budget=budget,
        on_look=heard,
    )
    return found.verdicts[ONE]


def change_at(count: int, first_new: int) -> list[Observation]:
    return [PASS] * first_new + [FAIL] * (count - first_new)


@pytest.mark.parametrize("count", range(2, 18))
def test_a_monotone_change_is_found_exactly_within_the_budget(count: int) -> None:
    versions = releases(count)
    for first_new in range(1, count):
        oracle = Script(versions, change_at(count, first_new))
        verdict = bisect(versions, oracle)
        assert verdict.status is Status.FOUND
        assert (verdict.last_old, verdict.first_new) == (versions[first_new - 1], versions[first_new])
        assert verdict.between == ()
        assert verdict.built == len(oracle.asked) <= budget_for(count) == min(count, math.ceil(math.log2(count)) + 2)
        assert len(set(oracle.asked)) == len(oracle.asked), "a release was built twice"


def test_the_ends_come_first_then_the_middle() -> None:
    versions = releases(9)
    oracle = Script(versions, change_at(9, 6))
    steps = []
    verdict = bisect(versions, oracle, on_step=steps.append)
    assert oracle.asked[:3] == [versions[0], versions[8], versions[4]]
    assert [step.version for step in steps] == oracle.asked
    assert verdict.old == PASS and verdict.new == FAIL


def test_a_skipped_release_at_the_boundary_makes_the_answer_a_range_that_names_it() -> None:
    versions = releases(8)
    script = change_at(8, 4)
    script[4] = NO_PYTHON  # the very release that changed cannot be tested
    verdict = bisect(versions, Script(versions, script))
    assert verdict.status is Status.RANGE
    assert (verdict.last_old, verdict.first_new) == (versions[3], versions[5])
    assert verdict.between == (versions[4],)
    assert verdict.why_unresolved(versions[4]) == f"could not be tested: {NO_PYTHON.detail}"


def test_a_skipped_release_in_the_middle_is_stepped_around() -> None:
    versions = releases(9)
    script = change_at(9, 6)
    script[4] = NO_PYTHON  # the first midpoint
    oracle = Script(versions, script)
    verdict = bisect(versions, oracle)
    assert verdict.status is Status.FOUND
    assert (verdict.last_old, verdict.first_new) == (versions[5], versions[6])
    assert oracle.asked[2:4] == [versions[4], versions[3]], "after a skip, the next release nearest the middle"


def test_a_third_outcome_is_neither_old_nor_new_and_is_skipped() -> None:
    versions = releases(5)
    script = change_at(5, 3)
    script[2] = Observation("error", "error (RuntimeError: boom)")
    verdict = bisect(versions, Script(versions, script))
    assert verdict.status is Status.RANGE
    assert verdict.between == (versions[2],)
    assert "gave error (RuntimeError: boom), neither OLD's outcome nor NEW's" in verdict.why_unresolved(versions[2])


def test_a_release_that_shows_both_ends_outcomes_is_skipped_and_said_ambiguous() -> None:
    """Where one outcome may be the same as two that are not (by output, what varies between runs matches
    anything), a release the same as OLD's and NEW's is neither: skipped, never put on a side."""
    versions = releases(5)
    script = change_at(5, 3)
    script[2] = Observation("either", "pass or fail")
    found = search(versions, lambda version: {ONE: Script(versions, script)(version)}, [ONE],
                   same=lambda one, other: one == other or "either" in (one, other))  # fmt: skip
    verdict = found.verdicts[ONE]
    assert verdict.status is Status.RANGE and verdict.between == (versions[2],) and verdict.both == (versions[2],)
    assert "OLD's outcome and NEW's alike" in verdict.why_unresolved(versions[2])
    same_ends = search(versions[:2], lambda version: {ONE: Observation("either" if version == versions[0] else "fail")},
                       [ONE], same=lambda one, other: one == other or "either" in (one, other))  # fmt: skip
    assert same_ends.verdicts[ONE].status is Status.SAME


def test_all_skipped_bounds_the_answer_by_the_ends_and_stops_at_the_budget() -> None:
    versions = releases(8)
    oracle = Script(versions, [PASS] + [NO_PYTHON] * 6 + [FAIL])
    verdict = bisect(versions, oracle)
    assert verdict.status is Status.RANGE
    assert (verdict.last_old, verdict.first_new) == (versions[0], versions[7])
    assert verdict.between == tuple(versions[1:7])
    assert verdict.built == budget_for(8) == 5
    reasons = [verdict.why_unresolved(version) for version in verdict.between]
    assert reasons.count(f"could not be tested: {NO_PYTHON.detail}") == 3
    assert reasons.count("not tested: the budget of 5 cells was spent") == 3


def test_an_untestable_end_stops_before_building_anything_else() -> None:
    versions = releases(6)
    oracle = Script(versions, [NO_PYTHON] + [FAIL] * 5)
    verdict = bisect(versions, oracle)
    assert verdict.status is Status.UNTESTABLE_END
    assert oracle.asked == [versions[0]]
    assert verdict.old == NO_PYTHON and verdict.new is None


def test_equal_endpoints_are_said_and_nothing_in_between_is_built() -> None:
    versions = releases(6)
    oracle = Script(versions, [PASS] * 6)
    verdict = bisect(versions, oracle)
    assert verdict.status is Status.SAME
    assert oracle.asked == [versions[0], versions[5]]
    assert verdict.last_old is None and verdict.first_new is None and not verdict.warnings


def test_equal_endpoints_warn_when_a_known_release_in_between_differs() -> None:
    versions = releases(6)
    verdict = bisect(versions, Script(versions, [PASS] * 6), known={versions[2]: FAIL})
    assert verdict.status is Status.SAME
    (warning,) = verdict.warnings
    assert "1.2.0 showed fail (wrong: y)" in warning and "changes back" in warning


def test_known_observations_cost_nothing_and_come_first() -> None:
    versions = releases(9)
    script = change_at(9, 3)
    known = {versions[0]: PASS, versions[8]: FAIL, versions[2]: PASS}
    oracle = Script(versions, script)
    verdict = bisect(versions, oracle, known=known)
    assert (verdict.last_old, verdict.first_new) == (versions[2], versions[3])
    assert oracle.asked == [versions[5], versions[3]]
    assert [(step.version, step.built) for step in verdict.steps] == [
        (versions[0], False),
        (versions[8], False),
        (versions[2], False),
        (versions[5], True),
        (versions[3], True),
    ]


def test_a_non_monotone_sequence_is_warned_about() -> None:
    versions = releases(9)
    #        0     1     2     3     4     5     6     7     8
    truth = [PASS, PASS, FAIL, PASS, PASS, FAIL, FAIL, FAIL, FAIL]
    known = {versions[2]: FAIL, versions[3]: PASS}  # e.g. stored by an earlier probe run
    verdict = bisect(versions, Script(versions, truth), known=known)
    assert verdict.status is Status.FOUND
    assert (verdict.last_old, verdict.first_new) == (versions[4], versions[5])
    (warning,) = verdict.warnings
    assert warning.startswith("not monotone: 1.2.0 already showed NEW's outcome (fail (wrong: y)) before 1.4.0")


def test_a_known_old_outcome_after_the_change_is_warned_about() -> None:
    versions = releases(5)
    truth = [PASS, FAIL, FAIL, FAIL, FAIL]
    verdict = bisect(versions, Script(versions, truth), known={versions[1]: FAIL, versions[3]: PASS})
    assert (verdict.last_old, verdict.first_new) == (versions[0], versions[1])
    (warning,) = verdict.warnings
    assert warning.startswith("not monotone: 1.3.0 showed OLD's outcome (pass) again after 1.1.0")


@pytest.mark.parametrize("first_new", range(1, 8))
def test_with_any_releases_skipped_the_answer_brackets_the_change_and_stays_in_budget(first_new: int) -> None:
    versions = releases(8)
    for skipped in itertools.chain.from_iterable(itertools.combinations(range(1, 7), k) for k in range(7)):
        script = change_at(8, first_new)
        for index in skipped:
            script[index] = NO_PYTHON
        verdict = bisect(versions, Script(versions, script))
        assert verdict.built <= budget_for(8)
        assert verdict.last_old is not None and verdict.first_new is not None
        assert verdict.last_old < versions[first_new] <= verdict.first_new
        assert (verdict.status is Status.FOUND) == (verdict.between == ())


def test_fewer_than_two_or_unordered_versions_are_refused() -> None:
    with pytest.raises(ValueError, match="at least two versions"):
        bisect(releases(1), Script(releases(1), [PASS]))
    with pytest.raises(ValueError, match="increasing order"):
        bisect(releases(3)[::-1], Script(releases(3), [PASS] * 3))


class Many:
    """An oracle for several keys: ``truth[key]`` lists what each release shows of it; it remembers what it built."""

    def __init__(self, versions: list[Version], truth: dict[str, list[Observation]]) -> None:
        self.versions = versions
        self.truth = truth
        self.asked: list[Version] = []

    def __call__(self, version: Version) -> dict[str, Observation]:
        self.asked.append(version)
        index = self.versions.index(version)
        return {key: observations[index] for key, observations in self.truth.items()}


@pytest.mark.parametrize("count", [2, 3, 5, 8, 9, 16, 17])
def test_every_change_is_found_building_each_release_once_and_within_the_bound(count: int) -> None:
    versions = releases(count)
    for a, b in itertools.product(range(1, count), repeat=2):
        truth = {"a": change_at(count, a), "b": [FAIL] * b + [PASS] * (count - b), "same": [PASS] * count}
        oracle = Many(versions, truth)
        found = search(versions, oracle, list(truth))
        assert found.changes == ["a", "b"]
        assert (found.verdicts["a"].last_old, found.verdicts["a"].first_new) == (versions[a - 1], versions[a])
        assert (found.verdicts["b"].last_old, found.verdicts["b"].first_new) == (versions[b - 1], versions[b])
        assert found.verdicts["same"].status is Status.SAME
        assert len(set(oracle.asked)) == len(oracle.asked) == found.built, "a release was built twice"
        assert found.built <= found.budget == budget_for(count, 2) <= count
        assert found.budget == min(count, 2 + 2 * math.ceil(math.log2(count)))


@pytest.mark.parametrize("count", range(2, 18))
def test_when_one_thing_changed_it_builds_what_a_bisection_of_that_one_builds(count: int) -> None:
    versions = releases(count)
    for first_new in range(1, count):
        truth = {"same": [FAIL] * count, "changed": change_at(count, first_new), "gone": [NO_PYTHON] * count}
        many = Many(versions, truth)
        found = search(versions, many, list(truth))
        one = Script(versions, change_at(count, first_new))
        bisect(versions, one)
        assert many.asked == one.asked
        assert found.built <= found.budget == min(count, math.ceil(math.log2(count)) + 2)
        assert found.verdicts["changed"].status is Status.FOUND
        assert found.verdicts["gone"].status is Status.UNTESTABLE_END


def test_the_next_build_is_the_middle_that_splits_the_most_open_brackets() -> None:
    versions = releases(9)
    truth = {"a": change_at(9, 2), "b": change_at(9, 6), "c": change_at(9, 7)}
    oracle = Many(versions, truth)
    looks = []
    found = search(versions, oracle, list(truth), on_look=looks.append)
    # 4 is every bracket's middle; then a's middle is 2, b's and c's is 6: 6 splits two brackets, 2 one.
    assert oracle.asked[:4] == [versions[0], versions[8], versions[4], versions[6]]
    assert [look.splits for look in looks[:4]] == [(), (), ("a", "b", "c"), ("b", "c")]
    assert [(v.last_old, v.first_new) for v in found.verdicts.values()] == [
        (versions[1], versions[2]),
        (versions[5], versions[6]),
        (versions[6], versions[7]),
    ]
    assert found.built == len(oracle.asked) == 8 <= found.budget == 9


def test_what_is_known_of_some_keys_costs_nothing_and_a_release_known_in_part_is_built_once() -> None:
    versions = releases(9)
    truth = {"a": change_at(9, 3), "b": change_at(9, 5)}
    known = {versions[0]: {"a": PASS, "b": PASS}, versions[8]: {"a": FAIL, "b": FAIL}, versions[4]: {"a": FAIL}}
    oracle = Many(versions, truth)
    found = search(versions, oracle, list(truth), known)
    assert [(look.version, look.built) for look in found.looks] == [
        (versions[0], False),
        (versions[8], False),
        (versions[4], False),  # known of a: free, first
        (versions[2], True),
        (versions[3], True),
        (versions[5], True),
        (versions[4], True),  # not known of b: built when b needs it
    ]
    assert set(found.looks[-1].observations) == {"b"}, "a look shows only what was not seen there before"
    assert len(set(oracle.asked)) == len(oracle.asked) == found.built
    assert [(v.last_old, v.first_new) for v in found.verdicts.values()] == [
        (versions[2], versions[3]),
        (versions[4], versions[5]),
    ]


def test_a_key_untestable_at_an_end_gets_no_bracket_and_the_others_go_on() -> None:
    versions = releases(8)
    unstable = Observation(None, "unstable: 3 pass, 2 fail", runs=5, unstable=True)
    truth = {"flaky": [unstable] + [FAIL] * 7, "changed": change_at(8, 5)}
    found = search(versions, Many(versions, truth), list(truth))
    assert found.verdicts["flaky"].status is Status.UNTESTABLE_END
    assert found.verdicts["flaky"].old == unstable
    assert found.verdicts["changed"].first_new == versions[5]
    assert found.changes == ["changed"]


def test_a_skip_for_one_key_is_a_step_for_another() -> None:
    versions = releases(9)
    truth = {"a": change_at(9, 6), "b": change_at(9, 2)}
    truth["a"][4] = NO_PYTHON  # the shared middle cannot tell a anything, but narrows b
    oracle = Many(versions, truth)
    found = search(versions, oracle, list(truth))
    assert found.verdicts["a"].first_new == versions[6] and found.verdicts["b"].first_new == versions[2]
    assert found.verdicts["a"].observation(versions[4]) == NO_PYTHON
    assert len(set(oracle.asked)) == len(oracle.asked) <= found.budget


LISTING = Listing(
    _wheels(
        [
            "torch-1.9.0-cp39-cp39-manylinux1_x86_64.whl",
            "torch-1.9.1-cp39-none-macosx_11_0_arm64.whl",  # not for Linux
            "torch-1.10.0-cp39-cp39-manylinux1_x86_64.whl",
            "torch-1.11.0rc1-cp310-cp310-manylinux1_x86_64.whl",
            "torch-1.11.0-cp310-cp310-manylinux1_x86_64.whl",
            "torch-1.11.0-cp39-cp39-manylinux1_x86_64.whl",
            "torch-1.12.1-cp310-cp310-manylinux1_x86_64.whl",
        ],
        "https://pypi.example/simple",
    )
    + _wheels(["torch-1.12.0+cpu-cp310-cp310-linux_x86_64.whl"], "/opt/wheels")
)


def test_candidates_are_this_platforms_final_releases_in_the_range_in_order() -> None:
    linux = ["manylinux1_x86_64", "linux_x86_64"]
    found = candidates(LISTING, linux, Version("1.9.0"), Version("1.12.0"), pre=False)
    assert found == [Version(v) for v in ("1.9.0", "1.10.0", "1.11.0", "1.12.0")]
    with_pre = candidates(LISTING, linux, Version("1.10"), Version("1.12.1"), pre=True)
    assert with_pre == [Version(v) for v in ("1.10.0", "1.11.0rc1", "1.11.0", "1.12.0", "1.12.1")]
    assert candidates(LISTING, ["macosx_11_0_arm64"], Version("1.9.0"), Version("2.0"), pre=False) == [Version("1.9.1")]


def test_the_budget_says_how_it_comes_to_its_number() -> None:
    assert describe_budget(16, 2) == "2 ends + 2 × ⌈log₂ 16⌉ = 10"
    assert describe_budget(16, 0) == "2 ends + 1 × ⌈log₂ 16⌉ = 6"
    assert describe_budget(8, 2) == "the 8 candidates; 2 ends + 2 × ⌈log₂ 8⌉ = 8"
    assert describe_budget(3) == "the 3 candidates; 2 ends + 1 × ⌈log₂ 3⌉ = 4"
