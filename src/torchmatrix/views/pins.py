"""What a release was installed under besides torch, where its neighbours were not: the constraints, and why.

Every cell is installed with the constraints of the rules that apply to its
release (torchmatrix's known pins, ``known_pins.yaml``, and the matrix's own
``pins:``), which its result keeps among its inputs. Two releases side by side
whose constraints differ did not get the same packages besides torch, and a
difference between them may come from that, not from torch (a library's
undeclared dependency that one constraint happens to supply): the report
says so on the release that had a constraint a neighbour lacked, with the rule
that gave it and the rule's reason.
"""

from __future__ import annotations

from collections.abc import Sequence

from packaging.version import Version

from ..identity import CONSTRAINTS
from ..matrix import PinRule
from ..results import CellResult

KNOWN = "a known pin"
OWN = "the matrix's pin"


def constraints_of(result: CellResult) -> frozenset[str] | None:
    """The constraints ``result``'s cell was installed with; None where its inputs do not say (a torch installed
    already, a result of an older torchmatrix)."""
    said = result.inputs.get(CONSTRAINTS)
    if not isinstance(said, list):
        return None
    return frozenset(str(text) for text in said)


def note(
    release: str,
    version: Version,
    own: frozenset[str],
    neighbours: Sequence[tuple[str, frozenset[str]]],
    known: Sequence[PinRule],
    matrix: Sequence[PinRule],
) -> str:
    """What ``release`` (torch ``version``) was installed under that a neighbour (label, constraints) was not, each
    with why; '' where it had nothing they lacked."""
    said = []
    for pin in sorted(own):
        lacking = [label for label, theirs in neighbours if pin not in theirs]
        if lacking:
            why = reason(pin, version, known, matrix)
            said.append(f"{pin}, unlike {' and '.join(lacking)}" + (f": {why}" if why else ""))
    return f"torch {release} was installed under the constraint {'; '.join(said)}" if said else ""


def reason(pin: str, version: Version, known: Sequence[PinRule], matrix: Sequence[PinRule]) -> str:
    """The rule that gives torch ``version`` the constraint ``pin``, and its reason: the matrix's own first, as the
    plan lets its words bound a package it names; '' where no rule here gives it (one of an older torchmatrix)."""
    for whose, rules in ((OWN, matrix), (KNOWN, known)):
        for rule in rules:
            if rule.applies_to(version) and pin in {str(bound) for bound in rule.constrain}:
                return f"{whose} for torch {rule.torch}" + (f", because {rule.reason}" if rule.reason else "")
    return ""
