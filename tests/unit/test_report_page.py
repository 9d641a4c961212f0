"""compatibility.html: one self-contained page whose only markup and script are its own."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from html.parser import HTMLParser

from torchmatrix.views import chart, history, model, page

from .report_data import HOSTILE, assert_golden, hostile, scenario, sweep_scenario

OWN_TAGS = {
    "html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "nav", "fieldset", "legend", "label",
    "input", "section", "ul", "li", "span", "b", "div", "table", "thead", "tbody", "tr", "th", "td", "sup", "ol",
    "aside", "button", "script", "figure",
    "svg", "g", "rect", "text", "line", "polyline", "circle", "polygon",
}  # fmt: skip


class Parsed(HTMLParser):
    """Every start tag with its attributes, and the text of each <script> and <style>."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.raw: dict[str, list[str]] = {"script": [], "style": []}
        self._inside: str | None = None
        self.tables: list[str] = []
        """The class of each table the parser is in, innermost last."""
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append(dict(attrs).get("class") or "")
        self.tags.append((tag, dict(attrs, **({"in-table": self.tables[-1]} if self.tables else {}))))
        self._inside = tag if tag in self.raw else None

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self.tables.pop()
        self._inside = None

    def handle_data(self, data: str) -> None:
        if self._inside:
            self.raw[self._inside].append(data)


def render(found: list) -> str:
    report = model.build(found)
    return page.render(report, chart.charts(report), history.histories(report))


def test_the_scenario_renders_as_its_golden_file() -> None:
    assert_golden("compatibility.html", render(scenario()))


def test_the_page_fetches_nothing_and_runs_only_its_own_style_and_script() -> None:
    parsed = Parsed(render(scenario()))
    policy = next(
        attrs["content"] for tag, attrs in parsed.tags if attrs.get("http-equiv") == "Content-Security-Policy"
    )
    assert policy and "default-src 'none'" in policy
    [style], [data, script] = parsed.raw["style"], parsed.raw["script"]
    for text in (style, script):
        digest = base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in policy
    for tag, attrs in parsed.tags:
        assert not any(name in attrs for name in ("src", "href", "style")) or tag == "meta", (tag, attrs)
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
    assert json.loads(data)["entries"]


def test_cells_are_colour_coded_and_point_at_their_details() -> None:
    parsed = Parsed(render(scenario()))
    cells = [attrs for tag, attrs in parsed.tags if tag == "td" and "data-i" in attrs and attrs["in-table"] == "matrix"]
    data = json.loads(parsed.raw["script"][0])
    assert [int(attrs["data-i"] or -1) for attrs in cells] == list(range(len(data["entries"])))
    fail = next(attrs for attrs in cells if "o-fail" in (attrs["class"] or ""))
    entry = data["entries"][int(fail["data-i"] or -1)]
    assert (entry["probe"], entry["device"], data["cells"][entry["cell"]]["machine"]) == (
        "autograd_dot",
        "mps",
        "macos-arm64",
    )
    assert entry["metrics"]["checks"][0]["observed"] == 0.0 and entry["note"] == 2
    assert "torch 1.9.0 · macos-arm64 · mps: fail" in (fail["title"] or "")
    assert data["cells"][entry["cell"]]["environment"]["blas"] == "mkl"


def test_filters_name_every_probe_device_and_machine() -> None:
    parsed = Parsed(render(scenario()))
    boxes = {
        (attrs["data-kind"], attrs["value"]) for tag, attrs in parsed.tags if tag == "input" and "data-kind" in attrs
    }
    assert boxes == {
        ("probe", "autograd_dot"), ("probe", "batched_matmul"), ("device", "cpu"), ("device", "cuda"),
        ("device", "mps"), ("machine", "H200"), ("machine", "linux-x86_64"), ("machine", "macos-arm64"),
    }  # fmt: skip


def test_hostile_text_adds_no_markup_and_cannot_end_the_data_early() -> None:
    text = render(hostile())
    parsed = Parsed(text)
    assert {tag for tag, _ in parsed.tags} <= OWN_TAGS
    assert len(parsed.raw["script"]) == 2
    data = json.loads(parsed.raw["script"][0])
    assert data["entries"][0]["message"] == HOSTILE  # kept whole for the details panel, which shows it as text
    assert "</script>" not in parsed.raw["script"][0] and re.search(r"<script>alert", text) is None


def test_the_checks_across_releases_open_the_record_they_come_from() -> None:
    parsed = Parsed(render([*scenario(), *sweep_scenario()]))
    data = json.loads(parsed.raw["script"][0])
    rows = [attrs for tag, attrs in parsed.tags if tag == "tr" and "data-check" in attrs]
    assert [attrs["data-check"] for attrs in rows][-6:-3] == ["mul", "nn.functional.conv2d", "linalg.eig"]
    assert {attrs["data-check"] for attrs in rows if attrs["data-changed"] == "1"} == {
        "mul", "nn.functional.conv2d", "y = 2 * dot(x, x)", "batched vs looped (float32)",
    }  # fmt: skip
    changed = [attrs for tag, attrs in parsed.tags if tag == "td" and "changed" in (attrs.get("class") or "")]
    entry = data["entries"][int(changed[-1]["data-i"] or -1)]
    assert (entry["probe"], data["cells"][entry["cell"]]["torch"]) == ("opsweep", "2.2.0")
    # The panel counts a check's samples; their digests stay in the result file.
    assert entry["metrics"]["checks"][0] == dict(sweep_scenario()[2].records[0].metrics["checks"][0], samples=2)
    assert "0.01 ●" in render(sweep_scenario())


def test_a_probe_with_many_checks_has_them_across_releases_on_a_page_of_its_own(monkeypatch) -> None:
    report = model.build(sweep_scenario())
    histories = history.histories(report)
    [swept] = histories
    monkeypatch.setattr(page, "MANY_CHECKS", len(swept.checks) - 1)
    files = page.pages("compatibility.html", report, chart.charts(report), histories)
    apart = page.checks_page(swept.probe)
    assert set(files) == {"compatibility.html", apart}
    home, own = files["compatibility.html"], files[apart]
    table = '<table class="matrix history-table">'
    assert table not in home and f'<a href="{apart}">Its {len(swept.checks)} checks' in home
    assert table in own and '<a href="compatibility.html">The whole report.</a>' in own
    data = json.loads(Parsed(home).raw["script"][0])
    said = [entry["metrics"]["checks"] for entry in data["entries"] if "checks" in entry["metrics"]]
    assert said and all(re.fullmatch(rf"\d+, on {re.escape(apart)}", text) for text in said)  # not every check
    monkeypatch.setattr(page, "MANY_CHECKS", len(swept.checks))
    assert set(page.pages("compatibility.html", report, chart.charts(report), histories)) == {"compatibility.html"}
