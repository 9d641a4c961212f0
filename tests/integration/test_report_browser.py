"""compatibility.html in a real headless Chromium: its script runs under its own policy, cells, legend and details.

Needs a Chromium (Debian: `apt-get install chromium`); without one the tests skip and say so.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from torchmatrix import results
from torchmatrix.views import model, publish
from torchmatrix.views import page as report_page

from ..conftest import ROOT
from ..unit.report_data import HOSTILE, hostile, scenario, sweep_scenario
from ..unit.test_report_front import many_skipped

pytestmark = pytest.mark.integration

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
BROWSER = next((found for found in map(shutil.which, BROWSERS) if found), None)
needs_browser = pytest.mark.skipif(
    BROWSER is None,
    reason=f"no Chromium on PATH (looked for {', '.join(BROWSERS)}); on Debian: apt-get install chromium",
)
PASS_GREEN = (0xDA, 0xFB, 0xE1)  # .o-pass
FAIL_RED = (0xFF, 0xCE, 0xCB)  # .o-fail


def chromium(tmp_path: Path, *args: str) -> str:
    assert BROWSER is not None
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    command = [
        BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={profile}", *args,
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def page(tmp_path: Path, found: list) -> Path:
    folder = tmp_path / "out"
    publish.write(folder, publish.render(model.build(found), ["html"]))
    return folder / "compatibility.html"


MEASURE = """
var found = {height: document.documentElement.scrollHeight};
var cell = document.querySelector("table.front tbody td"), more = document.querySelector("table.front details");
if (cell) { found.border = getComputedStyle(cell).borderTopStyle + " " + getComputedStyle(cell).borderTopWidth; }
if (more) { found.collapsed = !more.open && more.querySelector("summary").textContent; }
var names = document.querySelectorAll(".history-table tbody th"), line = 0;
names.forEach(function (name) { line = Math.max(line, name.getBoundingClientRect().height); });
found.tallest_name = line;
document.body.setAttribute("data-measured", JSON.stringify(found));
"""
"""What the tests measure of a page as laid out: its height, the front table's border, its collapsed lists, the
tallest check name (one line is about 30 px)."""


def measured(tmp_path: Path, html: Path, width: int = 1400) -> dict:
    """:data:`MEASURE` of ``html`` as laid out ``width`` px wide: run in a copy of the page without its policy, which
    lets no other script run."""
    text = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html.read_text(encoding="utf-8"))
    copy = html.with_name(f"measured-{html.name}")
    copy.write_text(text.replace("</body>", f"<script>{MEASURE}</script></body>"), encoding="utf-8")
    dom = chromium(tmp_path, "--dump-dom", f"--window-size={width},2000", copy.as_uri())
    found = re.search(r'data-measured="([^"]*)"', dom)
    assert found, "the measuring script did not run"
    return json.loads(found.group(1).replace("&quot;", '"'))


def pixels(png: bytes) -> list[tuple[int, int, int]]:
    """The RGB pixels of an 8-bit, non-interlaced RGB or RGBA PNG (what Chromium's screenshots are)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    position, data, width, height, channels = 8, b"", 0, 0, 0
    while position < len(png):
        (length,) = struct.unpack(">I", png[position : position + 4])
        kind, body = png[position + 4 : position + 8], png[position + 8 : position + 8 + length]
        position += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour in (2, 6) and interlace == 0
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            data += body
    raw, stride, found, previous = zlib.decompress(data), width * channels, [], bytearray(width * channels)
    for row in range(height):
        kind, line = raw[row * (stride + 1)], bytearray(raw[row * (stride + 1) + 1 : (row + 1) * (stride + 1)])
        for index in range(stride):
            left = line[index - channels] if index >= channels else 0
            up, corner = previous[index], previous[index - channels] if index >= channels else 0
            if kind == 1:
                line[index] = (line[index] + left) & 0xFF
            elif kind == 2:
                line[index] = (line[index] + up) & 0xFF
            elif kind == 3:
                line[index] = (line[index] + (left + up) // 2) & 0xFF
            elif kind == 4:
                estimate = left + up - corner  # Paeth: the nearest of left, up and corner, in that order on a tie
                candidates = [(abs(estimate - value), order, value) for order, value in enumerate((left, up, corner))]
                line[index] = (line[index] + min(candidates)[2]) & 0xFF
        found += [tuple(line[index : index + 3]) for index in range(0, stride, channels)]
        previous = line
    return found  # type: ignore[return-value]


@needs_browser
def test_the_script_runs_and_shows_cells_legend_filters_and_details(tmp_path: Path) -> None:
    report = model.build(scenario())
    html = page(tmp_path, scenario())
    data = json.loads(re.search(r'id="torchmatrix-data">(.*?)</script>', html.read_text()).group(1))  # type: ignore[union-attr]
    failing = next(index for index, entry in enumerate(data["entries"]) if entry["mark"] == "fail")
    dom = chromium(tmp_path, "--dump-dom", f"{html.as_uri()}#hide=device%3Amps&cell={failing}")

    assert '<nav id="filters" aria-label="Filters">' in dom  # shown by the script: it ran under the page's policy
    probe_cell = (
        r'<td class="cell o-[^"]*" data-machine="[^"]*" data-device="[^"]*" data-i="\d+" tabindex="0" title="torch'
    )
    assert len(re.findall(probe_cell, dom)) == len(data["entries"])  # the probes' tables, not their histories
    legend = re.search(r'<section id="legend">(.*?)</section>', dom, re.S).group(1)  # type: ignore[union-attr]
    assert re.findall(r'<span class="cell o-([a-z-]+)">', legend) == [mark.value for mark in report.marks]
    assert "<b>within-tolerance</b>: right within the rounding tolerance, but not bit-identical" in legend
    # The fragment's filter hid every mps column; the fragment's cell is open in the details panel.
    mps = re.findall(r'<(?:t[hd]|g)[^>]*data-device="mps"[^>]*>', dom)  # table columns and chart series
    assert any(tag.startswith("<g") for tag in mps) and all(" hidden" in tag for tag in mps)
    details = re.search(r'<aside id="details"[^>]*>(.*?)</aside>', dom, re.S)
    assert details and "hidden" not in dom[details.start() : details.start() + 40]
    assert "autograd_dot · torch 1.9.0 · macos-arm64 · mps" in details.group(1)
    assert "y = 2 * dot(x, x)" in details.group(1) and "Environment" in details.group(1)


@needs_browser
def test_the_checks_across_releases_filter_by_name_and_by_change(tmp_path: Path) -> None:
    html = page(tmp_path, [*scenario(), *sweep_scenario()])
    everything = chromium(tmp_path, "--dump-dom", html.as_uri())
    sweep = re.search(r'<div class="history" data-probe="opsweep">(.*?)</table>', everything, re.S).group(1)  # type: ignore[union-attr]
    assert '<div class="history-filters">' in sweep  # shown by the script
    assert "8 of 8 checks shown" in sweep
    assert re.findall(r'<tr data-check="([^"]+)"', sweep)[:3] == ["mul", "nn.functional.conv2d", "linalg.eig"]
    assert re.search(r'<td class="cell o-pass changed"[^>]*>0.01 ●</td>', sweep)

    changed = chromium(tmp_path, "--dump-dom", f"{html.as_uri()}#changed=1&check=^(mul|add)$")
    sweep = re.search(r'<div class="history" data-probe="opsweep">(.*?)</table>', changed, re.S).group(1)  # type: ignore[union-attr]
    shown = re.findall(r'<tr data-check="([^"]+)" data-changed="[01]">', sweep)
    assert shown == ["mul"] and "1 of 8 checks shown" in sweep
    batched = re.search(r'<div class="history" data-probe="batched_matmul">(.*?)</table>', changed, re.S).group(1)  # type: ignore[union-attr]
    assert "0 of 2 checks shown" in batched  # one filter for every probe's checks


@needs_browser
def test_a_screenshot_shows_the_colours_of_the_cells(tmp_path: Path) -> None:
    html = page(tmp_path, scenario())
    shot = tmp_path / "page.png"
    chromium(tmp_path, f"--screenshot={shot}", "--window-size=1200,900", html.as_uri())
    colours = pixels(shot.read_bytes())
    assert colours.count(PASS_GREEN) > 2000 and colours.count(FAIL_RED) > 200


@needs_browser
def test_hostile_text_is_shown_as_text_and_runs_nothing(tmp_path: Path) -> None:
    html = page(tmp_path, hostile())
    dom = chromium(tmp_path, "--dump-dom", f"{html.as_uri()}#cell=0")
    assert dom.count("<script") == 2
    details = re.search(r'<aside id="details"[^>]*>(.*?)</aside>', dom, re.S)
    assert details and "&lt;script&gt;alert(1)&lt;/script&gt; | *x*" in details.group(1)
    assert "\x1b" not in dom and "\u202e" not in dom
    assert HOSTILE not in dom


@needs_browser
def test_a_hand_edited_address_and_windows_line_ends_are_shown_as_meant(tmp_path: Path) -> None:
    found = scenario()
    record = dataclasses.replace(found[0].records[0], message="first line\r\nsecond line\rthird\x0cfourth")
    found[0] = dataclasses.replace(found[0], records=(record, *found[0].records[1:]))
    html = page(tmp_path, found)
    data = json.loads(re.search(r'id="torchmatrix-data">(.*?)</script>', html.read_text()).group(1))  # type: ignore[union-attr]
    index = next(i for i, entry in enumerate(data["entries"]) if entry["message"].startswith("first line"))
    dom = chromium(tmp_path, "--dump-dom", f"{html.as_uri()}#hide=%E0%A4%A&cell={index}")  # `%A`: not an escape
    details = re.search(r'<aside id="details"[^>]*>(.*?)</aside>', dom, re.S)
    assert details and "hidden" not in dom[details.start() : details.start() + 40], "the address stopped the script"
    assert "<pre>first line\nsecond line\nthird\ufffdfourth</pre>" in details.group(1)


@needs_browser
def test_the_shipped_results_page_is_light_and_the_sweep_s_checks_have_their_own(tmp_path: Path) -> None:
    report = model.build(results.scan(ROOT / "reports" / "results").results)
    folder = tmp_path / "out"
    publish.write(folder, publish.render(report, ["html"]))
    home, sweep = folder / "compatibility.html", folder / report_page.checks_page("opsweep")
    assert home.stat().st_size < 1 << 20 and sweep.is_file()
    assert f'<a href="{sweep.name}">' in home.read_text(encoding="utf-8")
    assert measured(tmp_path, home)["height"] < 20_000  # it was 174,000 px with the sweep's thousand checks
    for width in (1400, 1920):
        assert measured(tmp_path, sweep, width)["tallest_name"] < 40  # each check's name on one line


@needs_browser
def test_the_front_table_has_borders_and_keeps_a_long_list_behind_a_click(tmp_path: Path) -> None:
    found = measured(tmp_path, page(tmp_path, many_skipped()))
    assert found["border"] == "solid 1px"
    assert found["collapsed"] == "and 4 more"
