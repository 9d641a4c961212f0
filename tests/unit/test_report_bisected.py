"""The "changed in" section of COMPATIBILITY.md and the page: one table per stored bisection, its links made here."""

from __future__ import annotations

import base64
import hashlib
import re

from torchmatrix.bisection.criteria import Criterion
from torchmatrix.bisection.summaries import Summary
from torchmatrix.views import bisected, chart, markdown, model, page

from .report_data import HOSTILE, scenario
from .test_report_markdown import html, tables
from .test_report_page import OWN_TAGS, Parsed
from .test_summaries import BOUNDED, FOUND, NEW_HASH, OLD_HASH

COMPARE = f"https://github.com/pytorch/pytorch/compare/{OLD_HASH}...{NEW_HASH}"


def summary(
    *found: object, probes: tuple[str, ...] = ("autograd_dot", "batched_matmul"), old: str = "1.11.0"
) -> Summary:
    return Summary(
        "linux-x86_64", probes, ("cpu",), Criterion(), old, "2.6.0", 12, 7, 10, tuple(found),  # type: ignore[arg-type]
        "2026-03-01T00:00:00+00:00",
    )  # fmt: skip


def test_each_bisection_is_a_table_of_its_changes_after_the_probes_tables() -> None:
    report = model.build(scenario())
    found = [summary(FOUND, BOUNDED), summary(old="2.5.0")]
    rendered = markdown.render(report, {}, found)
    section = "\n".join(bisected.markdown(found)) + "\n"
    assert rendered.replace(section, "") == markdown.render(report, {}), "the rest of the file is as it was"
    assert rendered.index("## Changed in") < rendered.index("## Notes"), "after the tables, before the notes"
    shown = html(rendered)
    (
        *_,
        first,
    ) = tables(shown)[:3]
    assert first[0] == [*bisected.HEADER]
    assert first[1] == ["autograd_dot", "cpu", "fail → pass", "1.12.0", "1.11.0", "", "5", "aaaaaaaaaaaa…bbbbbbbbbbbb"]
    assert first[2][:6] == [
        "batched_matmul", "cpu", "pass → error", "2.6.0.dev20241005 (2024-10-05)", "2.6.0.dev20241002 (2024-10-02)",
        "2.6.0.dev20241003 (2024-10-03), 2.6.0.dev20241004 (2024-10-04)",
    ]  # fmt: skip
    assert f'<a href="{COMPARE}">' in shown
    assert "<h3>autograd_dot, batched_matmul on cpu by outcome, torch 2.5.0 to 2.6.0 (linux-x86_64" in shown
    assert bisected.NONE_CHANGED in shown


def test_without_bisections_neither_file_has_the_section() -> None:
    report = model.build(scenario())
    assert "Changed in" not in markdown.render(report, {}, [])
    assert 'id="changed-in"' not in page.render(report, {}, bisections=[])


def test_the_page_shows_the_section_styled_by_its_policy_and_links_only_to_the_commits() -> None:
    report = model.build(scenario())
    text = page.render(report, chart.charts(report), bisections=[summary(FOUND, BOUNDED)])
    parsed = Parsed(text)
    [style] = parsed.raw["style"]
    digest = base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()
    assert f"style-src 'sha256-{digest}'" in text and "#changed-in table" in style
    links = [{name: attrs[name] for name in ("href", "rel")} for tag, attrs in parsed.tags if tag == "a"]
    assert links == [{"href": COMPARE, "rel": "noreferrer"}]
    assert re.search(r'<section id="changed-in"><h2>Changed in</h2>', text)


def test_hostile_names_from_a_summary_stay_text() -> None:
    hostile = FOUND.__class__(HOSTILE, "cpu", FOUND.old, FOUND.new, FOUND.last_old, FOUND.first_new)
    found = [summary(hostile, probes=(HOSTILE,))]
    rendered = html(markdown.render(model.build([]), {}, found))
    assert "<script>" not in rendered and "href" not in rendered, "no markup, and no link but a commit range's"
    (table,) = tables(rendered)
    assert len(table[1]) == len(bisected.HEADER), "a | in a name cannot split a cell"
    parsed = Parsed(page.render(model.build([]), {}, bisections=found))
    assert {tag for tag, _ in parsed.tags} <= OWN_TAGS | {"h3", "code"}
    assert not [attrs for tag, attrs in parsed.tags if tag == "a"], "no commits: no link"
