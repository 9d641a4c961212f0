"""Same inputs, or no comparison: a check's result changes between two records only where its inputs are the same."""

from __future__ import annotations

import pytest

from torchmatrix import checks
from torchmatrix.views.sameinputs import Comparison, compare


def swept(*samples: tuple[object, object]) -> dict:
    return {"name": "add", "samples": [{"input": given, "output": made} for given, made in samples]}


def test_samples_are_compared_where_their_input_digests_are_equal() -> None:
    before = swept(("i1", "o1"), ("i2", "o2"), ("i3", "o3"))
    after = swept(("i2", "o2"), ("i1", "o1*"), ("i4", "o4"))  # reordered, one changed, one new input
    assert compare(before, after, same_probe=True) == Comparison(compared=2, changed=1)


def test_the_same_outputs_for_the_same_inputs_are_no_change_whatever_the_probe_file() -> None:
    sweep = swept(("i1", "o1"), ("i2", "o2"))
    assert compare(sweep, dict(sweep), same_probe=False) == Comparison(2, 0)


def test_other_inputs_compare_nothing() -> None:
    comparison = compare(swept(("i1", "o1")), swept(("j1", "o1*")), same_probe=True)
    assert comparison == Comparison(0, 0) and not comparison.comparable


def test_an_output_that_is_not_reproducible_is_no_output() -> None:
    assert compare(swept(("i1", None), ("i2", "o2")), swept(("i1", "o1"), ("i2", "o2")), True) == Comparison(1, 0)
    assert compare(swept(("i1", "o1")), swept(("i1", None)), True) == Comparison(0, 0)


def test_an_input_one_release_raised_on_and_the_other_took_is_refused_not_a_change() -> None:
    refused = Comparison(compared=0, changed=0, refused=1)
    assert compare(swept(("i1", "raised TypeError")), swept(("i1", "o1")), True) == refused
    assert compare(swept(("i1", "o1")), swept(("i1", "raised NotImplementedError")), True) == refused
    assert not refused.comparable


def test_the_same_input_raising_in_both_is_compared_by_what_it_raised() -> None:
    before = swept(("i1", "raised RuntimeError"), ("i2", "raised TypeError"))
    after = swept(("i1", "raised RuntimeError"), ("i2", "raised ValueError"))
    assert compare(before, after, True) == Comparison(2, 1)


def test_a_check_without_samples_is_compared_by_its_observed_value_within_one_probe_file() -> None:
    before, after = {"name": "x", "observed": 0.5}, {"name": "x", "observed": 0.25}
    assert compare(before, after, same_probe=True) == Comparison(1, 1)
    assert compare(before, dict(before), same_probe=True) == Comparison(1, 0)
    assert compare(before, after, same_probe=False) == Comparison(0, 0)  # its inputs may have changed with its file
    assert compare({"name": "x"}, {"name": "x"}, same_probe=True) == Comparison(0, 0)


def test_samples_of_the_wrong_shape_are_no_samples() -> None:
    """What a result file holds is not trusted: a malformed sample is skipped, never an error."""
    before = {"samples": [{"input": "i1", "output": "o1"}, "junk", {"input": 3}, {"output": "o"}, {"input": "i2"}]}
    after = {"samples": [{"input": "i1", "output": "o1*"}, {"input": "i2", "output": 7}]}
    assert compare(before, after, True) == Comparison(1, 1)
    assert compare({"samples": "none"}, after, True) == Comparison(0, 0)  # not a list: no samples, no observed
    assert compare(swept(("i1", "o1")), {"observed": "o1"}, True) == Comparison(0, 0)  # one form against the other


@pytest.mark.parametrize(
    ("before", "after", "changed"),
    [
        (-0.0, 0.0, 1),  # the sign of a zero is a change, as `bisect --check NAME --metric observed` sees it
        (1, True, 1),  # a number is not a boolean
        (1, 1.0, 1),  # nor an integer a float
        ([0.0, 1.5], [-0.0, 1.5], 1),
        ({"re": 0.0}, {"re": -0.0}, 1),
        ("nan", "nan", 0),  # NaN, stored as "nan", equals NaN
        (float("nan"), float("nan"), 0),
        (0.1 + 0.2, 0.30000000000000004, 0),
    ],
)
def test_an_observed_value_is_compared_by_type_and_bits(before: object, after: object, changed: int) -> None:
    comparison = compare({"name": "c", "observed": before}, {"name": "c", "observed": after}, same_probe=True)
    assert comparison == Comparison(1, changed)
    by_value = [checks.value_key(before), checks.value_key(after)]
    assert (by_value[0] != by_value[1]) == bool(changed)
