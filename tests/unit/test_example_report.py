"""The example report README.md shows: reports/COMPATIBILITY.md and its pictures are what the committed results render.

docs/_ext/example_report.py renders them (and, at every build of the site, the files published with it).
"""

from __future__ import annotations

import importlib.util
from types import ModuleType

from ..conftest import ROOT

REGENERATE = "python docs/_ext/example_report.py"


def example_report() -> ModuleType:
    """docs/_ext/example_report.py, which the docs' build loads as an extension."""
    spec = importlib.util.spec_from_file_location("example_report", ROOT / "docs" / "_ext" / "example_report.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_example_table_and_its_pictures_are_what_the_committed_results_render() -> None:
    example = example_report()
    rendered = example.render(example.COMMITTED)
    assert "COMPATIBILITY.md" in rendered
    differ = [name for name, text in rendered.items() if (example.REPORTS / name).read_text("utf-8") != text]
    assert not differ, f"reports/results renders another {', '.join(differ)}: run `{REGENERATE}` and commit them"
    pictures = {path.name for path in example.REPORTS.glob("compatibility-*.svg")}
    extra = pictures - set(rendered)
    assert not extra, f"reports/ holds pictures the table no longer shows: remove {', '.join(sorted(extra))}"


def test_the_committed_table_is_the_results_as_recorded_whatever_this_checkout_would_run() -> None:
    table = (ROOT / "reports" / "COMPATIBILITY.md").read_text("utf-8")
    assert "↻" not in table and "stale" not in table
    assert "Results from 3 machines (H200, linux-x86\\_64-amd-epyc, linux-x86\\_64-intel-xeon)" in table


def test_the_site_gets_the_rest_of_the_report_none_of_it_committed() -> None:
    example = example_report()
    published = example.render(example.PUBLISHED)
    assert {"compatibility.html", "compatibility-opsweep-checks.html", "CHECK-CHANGES.md"} <= set(published)
    assert not set(published) & set(example.render(example.COMMITTED))
