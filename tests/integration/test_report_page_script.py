"""The HTML page's own script, run by Node on the page's own data: it shows a text as the Python side's
report_lines does, for fuzzed text of every unsafe class (tests/unit/test_safetext_fuzz.py).

Needs Node.js on PATH; without it the test skips and says so.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from torchmatrix.util.safetext import page_patterns, report_lines
from torchmatrix.views import model, page

from ..unit.test_safetext_fuzz import STORABLE, fuzzed_results, shown_unsafe, texts

pytestmark = pytest.mark.integration

NODE = shutil.which("node")


@pytest.mark.skipif(NODE is None, reason="no Node.js on PATH (node) to run the page's script")
def test_the_pages_script_shows_a_message_as_report_lines_does() -> None:
    rendered = page.render(model.build(fuzzed_results(seed=8, count=6)))
    assert shown_unsafe(rendered) == []
    data = re.search(r'<script type="application/json" id="torchmatrix-data">(.*?)</script>', rendered, re.S)
    assert data is not None
    clean = re.search(r"\n  var escapeSequence.*?\n  }\n", page.asset("page.js"), re.S)
    assert clean is not None
    carried = json.loads(data.group(1))
    messages = [entry["message"] for entry in carried["entries"]] + texts(300, seed=7, pieces=STORABLE)
    script = (
        "var data = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        + clean.group(0)
        + "process.stdout.write(JSON.stringify(data.messages.map(clean)));"
    )
    assert carried["text"] == page_patterns()
    given = json.dumps({"text": carried["text"], "messages": messages})
    shown = subprocess.run([str(NODE), "-e", script], input=given, capture_output=True, text=True, check=True).stdout
    assert json.loads(shown) == [report_lines(message) for message in messages]
