"""Where torchmatrix keeps what it can reuse between runs (index listings, interpreter facts)."""

from __future__ import annotations

import os
from pathlib import Path

from .. import variables


def cache_dir() -> Path:
    """``$TORCHMATRIX_CACHE_DIR``, else ``$XDG_CACHE_HOME/torchmatrix``, else ``~/.cache/torchmatrix``."""
    explicit = variables.CACHE_DIR.get(os.environ)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "torchmatrix"
