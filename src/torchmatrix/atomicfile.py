"""Write files so that a reader sees the old content or the new, never half of one.

The new content goes to a temporary file in the same folder (``.<name>.<random>.tmp``),
is flushed to disk, and is renamed over the target. A writer killed before the
rename leaves that temporary file behind and the target as it was; readers
never look at names starting with a dot.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

_UMASK = os.umask(0o022)
os.umask(_UMASK)  # os.umask can only be read by setting it: put it back at once


def write_text(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` atomically (a temporary file in the same folder, then rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, 0o666 & ~_UMASK)  # mkstemp makes it private; the file is meant to be shared
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_json(path: Path, value: Any) -> None:
    """Write ``value`` as strict JSON (no NaN), atomically."""
    write_text(path, json.dumps(value, indent=2, sort_keys=True, allow_nan=False) + "\n")
