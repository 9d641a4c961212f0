"""Which samples two records of a sweep ran: a store's capture, replayed by both, or each release's own.

The operator sweep records the store it replayed in ``metrics.store``: the capture's own digest (``capture``),
the releases that captured it (``captured_by``), and ``captured_here`` where the record's own pair captured it.
Two records that replayed one capture ran the same inputs, so all their samples compare; records that ran
each release's own samples, or two captures, compare only where those happen to be the same. The changed-in
views say which, beside how many samples compared. Read from result files: a value of the wrong type is
nothing known.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core import Record

OWN = "each release's own"
"""Where neither record replayed a store: op_db's samples as each release makes them."""


def samples_from(before: Record, after: Record) -> str:
    """Where the samples of ``before`` and ``after`` came from: ``1.13.1's capture`` (one capture for both),
    ``each release's own``, or the two sides where they differ (``1.9.0's capture → 2.0.1's capture``)."""
    first, second = _source(before), _source(after)
    if first == second:
        return first[1]
    if first[1] == second[1]:  # one release captured twice (other options): the digests tell them apart
        return f"{first[1]} {first[0][:6]} → {second[0][:6]}"
    return f"{first[1]} → {second[1]}"


def _source(record: Record) -> tuple[str, str]:
    """The record's capture (its digest, and how the views name it), or :data:`OWN`."""
    store = record.metrics.get("store")
    if not isinstance(store, Mapping):
        return "", OWN
    capture = store.get("capture")
    releases = _releases(store.get("captured_by"))
    named = f"{releases}'s capture" if releases else "a capture"
    return (capture if isinstance(capture, str) else named), named


def _releases(value: Any) -> str:
    if isinstance(value, list) and value and all(isinstance(release, str) for release in value):
        return ", ".join(value)
    return ""
