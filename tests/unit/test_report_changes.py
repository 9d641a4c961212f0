"""CHECK-CHANGES.md: what could be compared between releases, and a table of only the checks that changed."""

from __future__ import annotations

import dataclasses

from torchmatrix.core import Outcome, Record
from torchmatrix.views import changes, history, model

from .report_data import assert_golden, hostile, scenario, sweep_scenario
from .test_report_markdown import html, tables
from .test_results import result


def render(found: list) -> str:
    report = model.build(found)
    return changes.render(report, history.histories(report))


def test_the_scenarios_render_as_their_golden_file() -> None:
    assert_golden("CHECK-CHANGES.md", render([*scenario(), *sweep_scenario()]))


def test_only_the_checks_that_changed_are_listed_a_column_per_later_release() -> None:
    found = tables(html(render(sweep_scenario())))
    compared, changed, samples, legend = found
    assert compared[0] == [
        "from", "to", "checks in both", "compared (same inputs)", "samples compared", "samples from", "refused",
        "changed", "machine",
    ]  # fmt: skip
    own = "each release's own"
    assert compared[1:] == [
        ["1.9.0", "1.12.1", "5", "2", "4 of 7 (57%)", own, "1", "1", "the same"],
        ["1.12.1", "2.2.0", "5", "3", "5 of 7 (71%)", own, "1", "1", "CPU capability AVX2 → AVX512"],
        ["2.2.0", "2.13.0", "0", "0", "0 of 0", "–", "0", "0", "the same"],
    ]
    assert changed == [
        ["check", "1.12.1", "2.2.0", "2.13.0"],
        ["mul", "● 1/2", "", "–"],
        ["nn.functional.conv2d", "◌", "● 1/1", "–"],
    ]
    assert samples == [
        ["check", "from", "to", "input", "output", "ulps from float64", "repro"],
        ["mul", "1.9.0", "1.12.1", "m1", "M1 → M1*", "", ""],
        ["nn.functional.conv2d", "1.12.1", "2.2.0", "c2", "C2 → C2*", "", ""],
    ]
    assert ["◌", "not compared: none of its inputs is the same as in the previous release"] in legend
    assert legend[2][0] == "≈" and legend[2][1].startswith("unstable: ")


def test_each_step_says_which_capture_its_two_releases_replayed() -> None:
    """The samples' source beside how many compared: one release's capture for both, its own, or two captures."""
    first = {"capture": "c" * 16, "captured_by": ["1.9.0"], "captured_here": "no samples were captured there yet"}
    replayed = {"capture": "c" * 16, "captured_by": ["1.9.0"]}
    other = {"capture": "d" * 16, "captured_by": ["2.2.0"]}
    results = [
        dataclasses.replace(result, records=tuple(
            dataclasses.replace(record, metrics={**record.metrics, "store": store}) for record in result.records
        ))
        for result, store in zip(sweep_scenario()[:3], (first, replayed, other), strict=True)
    ]  # fmt: skip
    compared = tables(html(render(results)))[0]
    assert [row[5] for row in compared[1:]] == ["1.9.0's capture", "1.9.0's capture → 2.2.0's capture"]
    recaptured = dataclasses.replace(results[2], records=tuple(
        dataclasses.replace(record, metrics={**record.metrics, "store": {**other, "captured_by": ["1.9.0"]}})
        for record in results[2].records
    ))  # fmt: skip
    compared = tables(html(render([*results[:2], recaptured])))[0]
    assert compared[2][5] == "1.9.0's capture cccccc → dddddd"
    assert "samples from" not in render(scenario())  # no check of theirs holds samples: no column of it


def test_without_checks_or_with_one_release_it_says_so() -> None:
    assert "No stored record holds checks yet" in render([])
    assert "One release only (2.2.0): nothing to compare." in render([sweep_scenario()[2]])
    first = sweep_scenario()[0]
    again = dataclasses.replace(first, torch="1.10.0", cell_id="torch-1.10.0-py3.9")
    assert "No check changed." in render([first, again])


def test_hostile_text_stays_text_and_keeps_the_tables_square() -> None:
    rendered = html(render(hostile()))
    assert "<script" not in rendered and "<a " not in rendered
    for table in tables(rendered):
        assert len({len(row) for row in table}) == 1, table


def test_stale_records_are_said_to_be_left_out_not_passed_over_in_silence() -> None:
    stale = Record("chk", "cpu", Outcome.STALE, {}, "was ✓ pass; probe chk changed", 0.1)
    text = render([result("2.2.0", records=(stale,)), result("2.3.0", records=(stale,))])
    assert "2 stored records are ↻ stale (made from what has changed since), left out here" in text
