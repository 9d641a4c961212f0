"""What a release was installed under besides torch, where its neighbours were not: the constraints, and why.

Every cell is installed with the constraints of the rules that apply to its
release (torchmatrix's known pins, ``known_pins.yaml``, and the matrix's own
``pins:``), which its result keeps among its inputs, each with the rule that
gave it and the rule's reason then (:attr:`CellResult.constrained_by`). Two
releases side by side whose constraints differ did not get the same packages
besides torch, and a difference between them may come from that, not from torch
(a library's undeclared dependency that one constraint happens to supply): the
report says so on the release that had a constraint a neighbour lacked, with
the rule that gave it and the rule's reason, as its result recorded them. A
result that records no rules (an older torchmatrix's) is explained by today's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from packaging.version import Version

from ..core import Constraint, PinSource
from ..identity import CONSTRAINTS
from ..matrix import PinRule
from ..results import CellResult, version_of

WHOSE = {PinSource.KNOWN: "a known pin", PinSource.MATRIX: "the matrix's pin"}
"""How a note names the source of a rule."""


def constraints_of(result: CellResult) -> frozenset[str] | None:
    """The constraints ``result``'s cell was installed under; None where its inputs do not say (a torch installed
    already, a result of an older torchmatrix)."""
    said = result.inputs.get(CONSTRAINTS)
    if not isinstance(said, list):
        return None
    return frozenset(str(text) for text in said)


def reasons_of(result: CellResult, known: Sequence[PinRule], matrix: Sequence[PinRule]) -> dict[str, str] | None:
    """Each constraint ``result``'s cell was installed under, with why (:func:`why`, '' where nothing says): the
    rule its result recorded, or, in a result that records none, the rule here that gives it (:func:`today`).
    None where its inputs name no constraints (:func:`constraints_of`)."""
    constraints = constraints_of(result)
    if constraints is None:
        return None
    if result.constrained_by is not None:
        recorded = {given.text: why(given) for given in result.constrained_by}
        return {pin: recorded.get(pin, "") for pin in constraints}
    version = version_of(result.torch)
    return {pin: why(today(pin, version, known, matrix)) for pin in constraints}


def note(release: str, own: Mapping[str, str], neighbours: Sequence[tuple[str, frozenset[str]]]) -> str:
    """What ``release`` was installed under (``own``: each constraint with why) that a neighbour (label,
    constraints) was not, each with why; '' where it had nothing they lacked."""
    said = []
    for pin in sorted(own):
        lacking = [label for label, theirs in neighbours if pin not in theirs]
        if lacking:
            said.append(f"{pin}, unlike {' and '.join(lacking)}" + (f": {own[pin]}" if own[pin] else ""))
    return f"torch {release} was installed under the constraint {'; '.join(said)}" if said else ""


def why(given: Constraint | None) -> str:
    """``a known pin for torch <2.3, because …``: the rule that gave a constraint, and its reason; '' for none."""
    if given is None:
        return ""
    return f"{WHOSE[given.source]} for torch {given.torch}" + (f", because {given.reason}" if given.reason else "")


def today(pin: str, version: Version, known: Sequence[PinRule], matrix: Sequence[PinRule]) -> Constraint | None:
    """The rule here that gives torch ``version`` the constraint ``pin``: the matrix's own first, as the plan lets
    its words bound a package it names; None where none does (one of an older torchmatrix, or an older matrix)."""
    for source, rules in ((PinSource.MATRIX, matrix), (PinSource.KNOWN, known)):
        for rule in rules:
            if rule.applies_to(version) and pin in {str(bound) for bound in rule.constrain}:
                return Constraint(pin, source, str(rule.torch), rule.reason)
    return None
