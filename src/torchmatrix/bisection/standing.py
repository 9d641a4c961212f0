"""Whether a bisection's answers still stand: what the report marks, and what bisect says at its end."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .. import freshness, results
from ..core import Outcome
from . import summaries

if TYPE_CHECKING:
    from ..project import Project


def answers_marked_stale(
    project: Project, bisections: Sequence[summaries.Summary], stored: Sequence[results.CellResult]
) -> list[summaries.Summary]:
    """``bisections``, each answer marked stale that rests on a record stale for its question: freshness's one rule
    (:func:`freshness.marked_stale`), asked with the question's runs per pair and source, which may be other than
    the matrix's; or on a record replaced since by one that shows otherwise (:func:`summaries.contradicted`)."""
    stale_by_question: dict[tuple[object, ...], list[results.CellResult]] = {}
    marked = []
    for summary in bisections:
        question = (summary.machine, summary.repeat, summary.index_url, summary.find_links)
        if question not in stale_by_question:
            machines = [result for result in stored if result.machine == summary.machine]
            stale_by_question[question] = freshness.marked_stale(machines, as_asked(project, summary))
        stale = {
            (result.machine, result.torch, record.probe, record.device): _what_changed(record.message)
            for result in stale_by_question[question]
            if summaries.its_own(summary, result)
            for record in result.records
            if record.outcome is Outcome.STALE
        }
        marked += summaries.marked_stale([summary], {**stale, **summaries.contradicted(summary, stored)})
    return marked


def as_asked(project: Project, summary: summaries.Summary) -> Project:
    """The project as the bisection of ``summary`` ran it: its runs per pair, its index and its find-links."""
    asked = project.with_repeat(summary.repeat) if summary.repeat is not None else project
    find_links = summary.find_links if summary.find_links is not None else asked.find_links
    return asked.with_sources(summary.index_url or asked.matrix.index_url, find_links)


def _what_changed(message: str) -> str:
    """What a stale record's message (``was ✓ pass; the timeout changed: 60 → 30``) says changed."""
    return message.partition("; ")[2] or message
