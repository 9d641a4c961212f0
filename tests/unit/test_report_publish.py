"""Publishing: the files each format gives, written atomically into the output folder."""

from __future__ import annotations

from pathlib import Path

from torchmatrix.report import model, publish

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


def test_rst_alone_comes_with_the_pictures_it_shows() -> None:
    assert sorted(publish.render(model.build(scenario()), ["rst"])) == [
        "COMPATIBILITY.rst", "compatibility-autograd_dot.svg", "compatibility-batched_matmul.svg",
    ]  # fmt: skip
    assert list(publish.render(model.build(scenario()), ["json"])) == ["compatibility.json"]


def test_an_empty_report_still_renders_every_format() -> None:
    files = publish.render(model.build([]), publish.FORMATS)
    assert set(files) == set(publish.FILE_NAMES.values())
    assert "No results yet" in files["COMPATIBILITY.md"]
