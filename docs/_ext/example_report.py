"""The example report: the results this repository ships in reports/results/, rendered as they were recorded.

At every build of the site, its ``example-report/`` folder gets the HTML page, CHECK-CHANGES.md, the JSON and the
CSV, and the repro scripts the records ask for, with the store of captured inputs they read (reports/inputs/):
they are published with the docs, never committed. What README.md shows, reports/COMPATIBILITY.md and its
pictures, is committed; tests/unit/test_example_report.py renders it again and compares, and ::

    python docs/_ext/example_report.py

writes it again. *As recorded*: every stored cell, each record as its run stored it, never marked stale against
what this checkout would run now (``TORCHMATRIX_OUTPUT=reports nox -s report`` marks them so): the files are a
function of the committed results alone.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

from torchmatrix import results
from torchmatrix.views import model, publish, repro

ROOT = Path(__file__).resolve().parents[2]
REPORTS = ROOT / "reports"
"""Where the example's results, inputs and committed files lie."""
COMMITTED = ("md",)
"""The formats committed in reports/: COMPATIBILITY.md and its pictures."""
PUBLISHED = ("html", "changes", "json", "csv")
"""The formats published with the site."""
SITE_FOLDER = "example-report"
"""The site's folder of the published files."""
INPUTS = "inputs"
"""The folder of reports/ the repro scripts read (the operator sweep's store), published beside them."""


def render(formats: Iterable[str]) -> dict[str, str]:
    """The example report's files in ``formats``, by their paths in reports/."""
    report = model.build(results.scan(REPORTS / "results").results)
    probes = repro.sources(report.tables, lambda name: ROOT / "probes" / f"{name}.py", REPORTS / repro.FOLDER, ROOT)
    return publish.render(report, formats, probes=probes)


def publish_with_the_site(app: Sphinx, exception: Exception | None) -> None:
    """Write the published files, and the inputs their repro scripts read, into the built site."""
    if exception is not None or app.builder.format != "html":
        return
    folder = Path(app.outdir) / SITE_FOLDER
    publish.write(folder, render(PUBLISHED))
    shutil.copytree(REPORTS / INPUTS, folder / INPUTS, dirs_exist_ok=True)


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("build-finished", publish_with_the_site)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


def main() -> None:
    """Write the committed files again from the results (each only where its text changed)."""
    written = publish.write(REPORTS, render(COMMITTED))
    print(f"wrote {', '.join(path.name for path in written)}" if written else f"{REPORTS} is up to date")


if __name__ == "__main__":
    main()
