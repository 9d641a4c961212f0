"""`nox -s bisect -- …`: its arguments, and the answer a person reads at the end."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.version import Version

from torchmatrix.bisect_session import Request, answer, parse
from torchmatrix.bisection import Observation, Status, Step, Verdict
from torchmatrix.config import Matrix, Probe
from torchmatrix.criteria import Criterion
from torchmatrix.errors import UsageError

MATRIX = Matrix(
    Path("/m/matrix.yaml"),
    (),
    (Probe("autograd_dot", Path("/m/probes/autograd_dot.py")), Probe("batched_matmul", Path("/m/b.py"))),
    ("cpu", "mps"),
    60.0,
    Path("/m/reports"),
    None,
    "https://pypi.org/simple",
    None,
    (),
)


def test_the_arguments_become_a_request() -> None:
    assert parse(["autograd_dot", "--from", "1.9", "--to", "1.12.1"], MATRIX) == Request(
        "autograd_dot", Version("1.9.0"), Version("1.12.1")
    )
    request = parse(
        ["batched_matmul", "--from=2.1.0rc1", "--to", "2.2.0", "--device", "mps", "--metric", "max_abs_diff",
         "--below", "1e-6", "--pre"],
        MATRIX,
    )  # fmt: skip
    assert request == Request(
        "batched_matmul", Version("2.1.0rc1"), Version("2.2.0"), "mps", Criterion("max_abs_diff", 1e-6, False), True
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "the following arguments are required: PROBE, --from, --to"),
        (["autograd_dott", "--from", "1.9.0", "--to", "1.12.1"], "did you mean 'autograd_dot'?"),
        (["autograd_dot", "--from", "1.9.0", "--to", "1.12.1", "--device", "cuda"], "does not run on cuda"),
        (["autograd_dot", "--from", "1.9.0", "--to", "1.12.1", "--device", "tpu"], "invalid choice: 'tpu'"),
        (["autograd_dot", "--from", "latest", "--to", "1.12.1"], "--from 'latest' is not a torch release"),
        (["autograd_dot", "--from", "1.12.1", "--to", "1.12.1"], "--from 1.12.1 must be older than --to 1.12.1"),
        (["autograd_dot", "--from", "1.12.1", "--to", "1.9.0"], "must be older"),
        (["autograd_dot", "--from", "2.1.0rc1", "--to", "2.2.0"], "--from 2.1.0rc1 is a pre-release; add --pre"),
        (["autograd_dot", "--from", "1.9.0", "--to", "1.12.1", "--metric", "x"], "--metric NAME goes with"),
        (["autograd_dot", "--from", "1.9.0", "--to", "1.12.1", "--above", "1"], "--metric NAME goes with"),
        (["autograd_dot", "--from", "1.9.0", "--to", "1.12.1", "--metric", "x", "--above", "nan"], "finite"),
        (
            ["autograd_dot", "--from", "1.9.0", "--to", "1.12.1", "--metric", "x", "--above", "1", "--below", "2"],
            "not allowed with argument",
        ),
        (["autograd_dot", "--from", "1.9.0", "--to", "1.12.1", "--fro", "1"], "unrecognized arguments: --fro"),
    ],  # fmt: skip
)
def test_a_bad_argument_is_one_message_with_the_usage(argv: list[str], message: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse(argv, MATRIX)
    assert message in str(caught.value)
    assert str(caught.value).endswith("usage: nox -s bisect -- PROBE --from OLD --to NEW [--device cpu] "
                                      "[--metric NAME (--above X | --below X)] [--pre]")  # fmt: skip
    assert caught.value.exit_code == 2


V = [Version(v) for v in ("1.9.0", "1.10.0", "1.10.1", "1.11.0", "1.12.0")]
OLD, NEW = Observation("fail", "fail (wrong: y)"), Observation("pass", "pass")
REQUEST = Request("autograd_dot", V[0], V[-1])


def verdict(status: Status, steps: list[tuple[int, Observation]], lo: int | None = None, hi: int | None = None):
    return Verdict(
        status,
        tuple(V),
        tuple(Step(V[i], seen, True) for i, seen in steps),
        5,
        V[lo] if lo is not None else None,
        V[hi] if hi is not None else None,
    )


def test_the_answer_names_the_first_release_with_news_outcome_and_the_last_with_olds() -> None:
    found = verdict(Status.FOUND, [(0, OLD), (4, NEW), (2, OLD), (3, NEW)], 2, 3)
    assert answer(found, REQUEST) == [
        "first release with NEW's outcome (pass): torch 1.11.0",
        "last release with OLD's outcome (fail): torch 1.10.1",
    ]


def test_a_range_names_every_release_that_bounds_it_and_why() -> None:
    untestable = Observation(None, "no-interpreter: torch 1.10.1 needs Python 3.6–3.9")
    bounded = verdict(Status.RANGE, [(0, OLD), (4, NEW), (2, untestable), (3, NEW)], 1, 3)
    assert answer(bounded, REQUEST) == [
        "first release with NEW's outcome (pass): one of 1.10.1, 1.11.0: "
        "the answer is bounded by releases that could not be told apart",
        "    1.10.1: could not be tested: no-interpreter: torch 1.10.1 needs Python 3.6–3.9",
        "last release with OLD's outcome (fail): torch 1.10.0",
    ]


def test_same_outcome_at_both_ends_and_an_untestable_end_say_so() -> None:
    same = verdict(Status.SAME, [(0, NEW), (4, NEW)])
    assert answer(same, REQUEST) == [
        "torch 1.9.0 and 1.12.0 both show pass on cpu: nothing to bisect; "
        "widen the range, or compare a metric (--metric)"
    ]
    by_metric = Request("batched_matmul", V[0], V[-1], criterion=Criterion("max_abs_diff", 1e-6))
    below = Observation("not above 1e-06", "max_abs_diff = 0 (not above 1e-06)")
    assert answer(verdict(Status.SAME, [(0, below), (4, below)]), by_metric) == [
        "torch 1.9.0 and 1.12.0 both show max_abs_diff not above 1e-06 on cpu: nothing to bisect; widen the range"
    ]
    dead = verdict(Status.UNTESTABLE_END, [(0, OLD), (4, Observation(None, "install-error: no space left"))])
    assert answer(dead, REQUEST) == [
        "torch 1.12.0 (--to) could not be tested: install-error: no space left; choose another --to"
    ]
