"""What a script printed, normalised for `bisect --by-output`: noise goes, everything else counts."""

from __future__ import annotations

import pytest

from torchmatrix import printed


@pytest.mark.parametrize("rule", printed.RULES, ids=lambda rule: rule.what)
def test_each_rule_changes_its_example(rule: printed.Rule) -> None:
    assert rule.apply(rule.example) != rule.example


@pytest.mark.parametrize(
    ("line", "becomes"),
    [
        ("<MulBackward0 object at 0x7f3a2c1d5e80>", "<MulBackward0 object at 0x…>"),
        ("tensor(28., grad_fn=<MulBackward0>)", "tensor(28., grad_fn=<MulBackward0>)"),
        ("tensor([0.9609], dtype=torch.bfloat16)", "tensor([0.9609], dtype=torch.bfloat16)"),
        ("wrote /tmp/tmpab12_x9q/out.pt", "wrote <tmp>"),
        ("in /tmp/torchmatrix-worker-k2j4x9_a/torchmatrix-pair-9xq1b2c3", "in <tmp>"),
        ("step took 0.0312 s (12ms on the GPU)", "step took <duration> (<duration> on the GPU)"),
        ("[2026-01-05 14:03:27,118] ready", "[<clock>] ready"),
        ("torch 1.12.1+cu102 on python 3.10", "torch <torch version> on python 3.10"),
        ("0x10 is sixteen", "0x10 is sixteen"),  # too short to be an address
        ("x = 3.5  ", "x = 3.5"),
    ],
)
def test_what_is_normalised_and_what_is_not(line: str, becomes: str) -> None:
    assert printed.normalised([line], ["1.12.1+cu102", "1.12.1"]) == [becomes]


def test_trailing_blank_lines_do_not_count() -> None:
    assert printed.normalised(["a", "", "b", "  ", ""]) == ["a", "", "b"]


def test_what_was_printed_in_a_few_words() -> None:
    assert printed.describe([]) == "prints nothing"
    assert printed.describe(["tensor(28.)", "done"]) == "prints 'tensor(28.)' / 'done'"
    assert printed.describe(["a", "b" * 100]) == "prints 2 lines, the last '" + "b" * 49 + "…'"
    assert printed.describe(["1", "2", "3", "4"]) == "prints 4 lines, the last '4'"


def test_the_first_line_that_differs_is_named() -> None:
    assert printed.first_difference(["tensor(0.)", "x"], ["tensor(28.)", "x"]) == "line 1: 'tensor(0.)' → 'tensor(28.)'"
    assert printed.first_difference(["a"], ["a", "b"]) == "line 2: nothing → 'b'"
    assert printed.first_difference(["a"], ["a"]) == ""
