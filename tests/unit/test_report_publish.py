"""Publishing: the files each format gives, written atomically into the output folder."""

from __future__ import annotations

import os
from pathlib import Path

from torchmatrix.views import model, publish

from .report_data import scenario


def test_default_formats_write_the_tables_page_data_and_pictures(tmp_path: Path) -> None:
    files = publish.render(model.build(scenario()))
    assert sorted(files) == [
        "CHECK-CHANGES.md", "COMPATIBILITY.md", "compatibility-autograd_dot.svg", "compatibility-batched_matmul.svg",
        "compatibility.csv", "compatibility.html", "compatibility.json",
    ]  # fmt: skip
    assert "](compatibility-batched_matmul.svg)" in files["COMPATIBILITY.md"]
    assert "<svg" in files["compatibility.html"]  # the page has its pictures inline
    written = publish.write(tmp_path / "out", files)
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == sorted(files)
    assert all(path.read_text(encoding="utf-8") == files[path.name] for path in written)


def test_a_file_that_holds_its_text_already_is_not_written_again(tmp_path: Path) -> None:
    files = publish.render(model.build(scenario()))
    publish.write(tmp_path, files)
    table = tmp_path / "COMPATIBILITY.md"
    os.utime(table, (0, 0))
    changed = {**files, "compatibility.csv": files["compatibility.csv"] + "\n"}
    assert publish.write(tmp_path, changed) == [tmp_path / "compatibility.csv"]
    assert table.stat().st_mtime == 0  # untouched: its content was the same


def test_rst_alone_comes_with_the_pictures_it_shows() -> None:
    assert sorted(publish.render(model.build(scenario()), ["rst"])) == [
        "COMPATIBILITY.rst", "compatibility-autograd_dot.svg", "compatibility-batched_matmul.svg",
    ]  # fmt: skip
    assert list(publish.render(model.build(scenario()), ["json"])) == ["compatibility.json"]


def test_an_empty_report_still_renders_every_format() -> None:
    files = publish.render(model.build([]), publish.FORMATS)
    assert set(files) == set(publish.FILE_NAMES.values())
    assert "No results yet" in files["COMPATIBILITY.md"]
