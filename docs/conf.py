"""Sphinx configuration of torchmatrix's documentation: Markdown pages (MyST), built by `nox -s docs`."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "_ext"))

project = "torchmatrix"
copyright = "torchmatrix's authors"

extensions = ["myst_parser", "reference_tables", "example_report"]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build"]

myst_heading_anchors = 3  # `[Results](results.md#per-record-inputs)` links to a heading
smartquotes = False  # `-- --force` and "probe(1.12.1)" are commands: they must show as typed

html_theme = "furo"
html_title = "torchmatrix"
