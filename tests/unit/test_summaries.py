"""Bisect summaries as the reports read them: strictly, safely, finished ones only, the newest per question."""

from __future__ import annotations

import json
import os
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from torchmatrix.bisection import summaries
from torchmatrix.bisection.criteria import Criterion
from torchmatrix.bisection.summaries import BisectedChange, Commits, Side, Summary
from torchmatrix.util import atomicfile

OLD_HASH, NEW_HASH = "a" * 40, "b" * 40
FOUND = BisectedChange(
    "autograd_dot", "cpu", Side("fail", "fail (y = 0)"), Side("pass", "pass"), "1.11.0", "1.12.0", (), 5,
    Commits(OLD_HASH, NEW_HASH),
)  # fmt: skip
BOUNDED = BisectedChange(
    "batched_matmul", "cpu", Side("pass", "pass"), Side("error", "error (boom)"), "2.6.0.dev20241002",
    "2.6.0.dev20241005", ("2.6.0.dev20241003", "2.6.0.dev20241004"),
)  # fmt: skip


def summary_json(finished: str | None = "2026-03-01T00:00:00+00:00", **changes: Any) -> dict[str, Any]:
    """A summary as the bisect session writes it (its steps left out: a reader does not need them)."""
    data = {
        "schema": 2, "machine": "linux-x86_64", "probes": ["autograd_dot", "batched_matmul"], "devices": ["cpu"],
        "all": True, "compare": {"by": "outcome"}, "from": "1.11.0", "to": "2.6.0", "pre": True, "repeat": 5,
        "candidates": ["1.11.0", "1.12.0", "2.6.0"], "budget": 3, "built": 3, "steps": [],
        "changes": [FOUND.to_json(), BOUNDED.to_json()], "started_at": "2026-03-01T00:00:00+00:00",
        "finished_at": finished,
    }  # fmt: skip
    data.update(changes)
    return data


def put(folder: Path, name: str, data: Any, machine: str = "linux-x86_64") -> Path:
    path = folder / machine / name
    atomicfile.write_text(path, data if isinstance(data, str) else json.dumps(data))
    return path


def test_a_summary_reads_back_with_its_changes_and_the_commit_link_made_from_the_hashes(tmp_path: Path) -> None:
    path = put(tmp_path, "all-cpu-1.11.0-2.6.0.json", summary_json())
    (found,), warnings = summaries.scan(tmp_path)
    assert warnings == []
    assert found.path == path and found.changes == (FOUND, BOUNDED)
    assert FOUND.commits is not None
    assert FOUND.commits.url == f"https://github.com/pytorch/pytorch/compare/{OLD_HASH}...{NEW_HASH}"
    assert FOUND.to_json()["commits"]["url"] == FOUND.commits.url
    assert found.describe() == (
        "autograd_dot, batched_matmul on cpu by outcome, torch 1.11.0 to 2.6.0 "
        "(linux-x86_64, finished 2026-03-01T00:00:00+00:00; 3 releases, 3 built of at most 3)"
    )
    assert BOUNDED.cells() == [
        "batched_matmul", "cpu", "pass → error", "2.6.0.dev20241005 (2024-10-05)", "2.6.0.dev20241002 (2024-10-02)",
        "2.6.0.dev20241003 (2024-10-03), 2.6.0.dev20241004 (2024-10-04)", "1",
    ]  # fmt: skip


def test_an_unfinished_summary_answers_nothing_and_the_newest_answers_its_question(tmp_path: Path) -> None:
    put(tmp_path, "running.json", summary_json(finished=None, **{"from": "1.9.0"}))
    put(tmp_path, "older.json", summary_json("2026-02-01T00:00:00+00:00"))
    newer = put(tmp_path, "newer.json", summary_json("2026-03-01T09:00:00+00:00", changes=[]))
    # 10:00 at +02:00 is 08:00 UTC: older than 09:00 UTC, though later as text.
    put(tmp_path, "east.json", summary_json("2026-03-01T10:00:00+02:00"))
    other = put(tmp_path, "metric.json", summary_json(compare={"by": "metric", "metric": "error", "above": 1e-6}))
    found, warnings = summaries.scan(tmp_path)
    assert warnings == []
    assert sorted(summary.path.name for summary in found if summary.path) == sorted([newer.name, other.name])
    metric = next(summary for summary in found if summary.path == other)
    assert metric.compare == Criterion("error", 1e-6, above=True)


def test_one_question_asked_of_other_releases_or_runs_is_another_question(tmp_path: Path) -> None:
    put(tmp_path, "a.json", summary_json())
    put(tmp_path, "b.json", summary_json(index_url="https://download.pytorch.org/whl/nightly/cpu"))
    put(tmp_path, "c.json", summary_json(find_links=["/wheels"]))
    put(tmp_path, "d.json", summary_json(pre=False))
    put(tmp_path, "e.json", summary_json(repeat=1))
    put(tmp_path, "f.json", summary_json(all=False))
    found, warnings = summaries.scan(tmp_path)
    assert warnings == [] and len(found) == 6


def test_a_schema_1_summary_of_one_probe_reads_as_its_one_change(tmp_path: Path) -> None:
    one = {
        "schema": 1, "probe": "autograd_dot", "device": "cpu", "machine": "linux-x86_64",
        "compare": {"by": "outcome"}, "from": "1.9.0", "to": "1.12.1", "pre": False,
        "candidates": ["1.9.0", "1.10.0", "1.11.0", "1.12.1"], "budget": 4, "built": 3, "status": "range",
        "steps": [], "started_at": "2026-01-01T00:00:00+00:00", "finished_at": "2026-01-01T00:01:00+00:00",
        "old": {"category": "fail", "detail": "fail"}, "new": {"category": "pass", "detail": "pass"},
        "last_old": "1.9.0", "first_new": "1.11.0", "between": [{"version": "1.10.0", "why": "no-interpreter"}],
        "warnings": [],
    }  # fmt: skip
    put(tmp_path, "one.json", one)
    put(tmp_path, "same.json", dict(one, status="same", **{"to": "1.11.0"}))
    found, warnings = summaries.scan(tmp_path)
    assert warnings == []
    assert [summary.changes for summary in found] == [  # the range to 1.11.0 first
        (),
        (
            BisectedChange(
                "autograd_dot", "cpu", Side("fail", "fail"), Side("pass", "pass"), "1.9.0", "1.11.0", ("1.10.0",)
            ),
        ),
    ]


def test_what_does_not_fit_is_named_and_skipped(tmp_path: Path) -> None:
    good = summary_json()
    change = FOUND.to_json()
    broken = {
        "truncated.json": json.dumps(good)[:80],
        "array.json": "[]",
        "newer.json": dict(good, schema=3),
        "machine-number.json": dict(good, machine=7),
        "from-nightly.json": dict(good, **{"from": "nightly"}),
        "no-probes.json": dict(good, probes=[]),
        "compare-odd.json": dict(good, compare={"by": "metric", "metric": "e", "above": 1, "below": 2}),
        "changes-text.json": dict(good, changes="many"),
        "runs-zero.json": dict(good, changes=[dict(change, runs=0)]),
        "between-not-versions.json": dict(good, changes=[dict(change, between=["soon"])]),
        "hash-not-hex.json": dict(good, changes=[dict(change, commits={"old": "main", "new": NEW_HASH})]),
        "link-elsewhere.json": dict(good, changes=[dict(change, commits={"old": "a;b", "new": "c", "url": "x"})]),
        "no-offset.json": dict(good, finished_at="2026-03-01T00:00:00"),
        "nan.json": json.dumps(good).replace('"budget": 3', '"budget": NaN'),
    }
    for name, data in broken.items():
        put(tmp_path, name, data)
    found, warnings = summaries.scan(tmp_path)
    assert found == []
    reasons = {Path(line.split(": ", 1)[0].removeprefix("skipping ")).name: line.split(": ", 1)[1] for line in warnings}
    fits = "does not fit bisect summary schema 2: "
    assert reasons == {
        "truncated.json": reasons["truncated.json"],
        "array.json": "not a JSON object",
        "newer.json": "schema 3 is not 2 (a bisect summary)",
        "machine-number.json": fits + "'machine' is a number",
        "from-nightly.json": fits + "'from' is not a version: 'nightly'",
        "no-probes.json": fits + "'probes' is not a list of names",
        "compare-odd.json": fits + "'compare' is neither by outcome nor by a metric: "
        "{'by': 'metric', 'metric': 'e', 'above': 1, 'below': 2}",
        "changes-text.json": fits + "'changes' is a string",
        "runs-zero.json": fits + "changes[0]: 'runs' is 0",
        "between-not-versions.json": fits + "changes[0]: 'between[0]' is not a version: 'soon'",
        "hash-not-hex.json": fits + "changes[0]: 'commits' holds something other than two git hashes",
        "link-elsewhere.json": fits + "changes[0]: 'commits' holds something other than two git hashes",
        "no-offset.json": fits + "'finished_at' is not an ISO 8601 time with a UTC offset: '2026-03-01T00:00:00'",
        "nan.json": "NaN is not JSON (torchmatrix stores non-finite numbers as the strings 'nan', 'inf')",
    }
    assert reasons["truncated.json"].startswith("not valid JSON")


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and symbolic links")
def test_a_summary_is_read_with_the_limits_of_a_results_folder(tmp_path: Path) -> None:
    folder = tmp_path / "bisect"
    good = put(folder, "good.json", summary_json())
    os.mkfifo(good.parent / "fifo.json")
    elsewhere = put(tmp_path / "elsewhere", "out.json", summary_json())
    (good.parent / "out.json").symlink_to(elsewhere)
    put(folder, "huge.json", " " * (8 << 20) + json.dumps(summary_json()))
    later = (datetime.now(timezone.utc) + timedelta(hours=2)).isoformat(timespec="seconds")
    put(folder, "future.json", summary_json(later))
    put(folder, "stray.json", summary_json(machine="H200"))
    (found,), warnings = summaries.scan(folder)
    assert found.path == good
    shown = "\n".join(warnings)
    assert "fifo.json: not a regular file but a FIFO" in shown
    assert f"out.json: a link to '{elsewhere}', outside the results folder" in shown
    assert "huge.json: larger than a result file may be" in shown
    assert f"future.json: it says it finished at {later}, over 1 h after now" in shown
    assert "stray.json: it names machine 'H200', not that of its folder 'linux-x86_64'" in shown
    assert len(warnings) == 5


def test_a_git_hash_is_hex_and_nothing_else() -> None:
    assert summaries.git_hash("7c98e70d44abc7a1aead68b6ea6c8adc8c554db5") == "7c98e70d44abc7a1aead68b6ea6c8adc8c554db5"
    assert summaries.git_hash("7c98e70") == "7c98e70"
    for value in ("stub", "Unknown", None, 7, "7c98e70\n", "7C98E70D", "abc"):
        assert summaries.git_hash(value) is None


def test_summary_and_change_round_trip() -> None:
    data = summary_json()
    found = Summary.from_json(json.loads(json.dumps(data)))
    assert found is not None and [BisectedChange.from_json(c.to_json(), "c") for c in found.changes] == list(
        found.changes
    )


def test_an_answer_resting_on_a_stale_record_is_shown_stale(tmp_path: Path) -> None:
    put(tmp_path, "all-cpu-1.11.0-2.6.0.json", summary_json())
    (found,), _ = summaries.scan(tmp_path)
    stale = {("linux-x86_64", FOUND.first_new, FOUND.probe, FOUND.device)}
    (marked,) = summaries.marked_stale([found], stale)
    assert [change.stale for change in marked.changes] == [True, False]
    assert marked.changes[0].cells()[2] == f"↻ stale: {FOUND.old.category} → {FOUND.new.category}"
    assert summaries.marked_stale([found], set())[0].changes == found.changes


def test_a_stale_answer_says_of_each_end_what_changed_there(tmp_path: Path) -> None:
    """A record at an end stale for a change (its message's), another run again since showing otherwise: the row says
    both, by release, where the notes of the probes' tables speak of other cells."""
    put(tmp_path, "all-cpu-1.11.0-2.6.0.json", summary_json())
    (found,), _ = summaries.scan(tmp_path)
    ends = [("linux-x86_64", end, FOUND.probe, FOUND.device) for end in (FOUND.last_old, FOUND.first_new)]
    why = {ends[0]: "the variables the pairs see changed: XVAR", ends[1]: "its record, run again since, shows fail"}
    (marked,) = summaries.marked_stale([found], why)
    said = marked.changes[0].cells()[2]
    assert said == (
        f"↻ stale: {FOUND.old.category} → {FOUND.new.category} (torch {FOUND.last_old}: the variables the pairs see "
        f"changed: XVAR; torch {FOUND.first_new}: its record, run again since, shows fail)"
    )
    assert "why" not in marked.changes[0].to_json()  # a view's, never stored


def test_a_change_by_output_reads_in_its_row_as_what_it_printed_never_its_digest_and_lines() -> None:
    """``bisect --all --by-output``: an end's category is how it ended, a digest and every line kept; its row shows
    what it printed in a few words, as the bisect's own lines do."""
    from torchmatrix.worker.printed import Printed

    old, new = (Printed("pass", digit * 64, False, (f"x = {digit}",) * 3) for digit in "12")
    change = BisectedChange("repro.py", "cpu", Side(old.category(), old.describe()), Side(new.category(),
                            new.describe()), "1.11.0", "1.12.0", ())  # fmt: skip
    assert change.cells()[2] == f"{old.describe()} → {new.describe()}"
    assert "sha256" not in change.cells()[2] and "\n" not in change.cells()[2]
