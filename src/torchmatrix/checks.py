"""A probe's checks: the entries of a record's ``metrics.checks``, by name, and the outcome of each.

A check is a dict with a ``name``; what a probe records in it is its own
(observed, expected, error, tolerance, ok, and for the operator sweep its
samples' digests). It comes from a result file, so nothing of it is trusted.

A check is found by its name (``bisect --check NAME``, the changed-in view):
a record with two checks of one name is malformed
(:meth:`torchmatrix.core.Record.from_json`). A value a check records is
compared by type and bits (:func:`value_key`), in every view.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .core import Outcome, Record


def checks_of(record: Record) -> dict[str, Mapping[str, Any]]:
    """A record's checks by name (the first of a name counts; one without a name is left out)."""
    checks = record.metrics.get("checks")
    found: dict[str, Mapping[str, Any]] = {}
    for check in checks if isinstance(checks, list) else []:
        if isinstance(check, dict) and isinstance(check.get("name"), str):
            found.setdefault(check["name"], check)
    return found


def check_outcome(check: Mapping[str, Any]) -> Outcome:
    """``error`` where it raised, ``pass`` where it is ok, else ``fail``."""
    if check.get("raised"):
        return Outcome.ERROR
    return Outcome.PASS if check.get("ok") is True else Outcome.FAIL


def value_key(value: Any) -> str:
    """A value a check recorded, as it is compared: by type and bits, so -0.0 is not 0.0, 1 is neither true nor
    1.0; NaN equals NaN (stored as "nan", or a float NaN)."""
    return json.dumps(value, sort_keys=True)
