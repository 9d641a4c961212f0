"""A probe's own requirements, from its inline script metadata (PEP 723): ``# /// script`` … ``# ///``.

    # /// script
    # dependencies = ["scipy>=1.10"]
    # ///

They are installed beside torch in every cell that runs the probe. They need
no entry in freshness of their own: they are part of the probe file, whose
sha256 every record of the probe carries.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

from .errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

# The reference expression of PEP 723.
_BLOCK = re.compile(r"(?m)^# /// (?P<type>[a-zA-Z0-9-]+)$\s(?P<content>(^#(| .*)$\s)+)^# ///$")
_KEYS = ("dependencies", "requires-python")


def dependencies(path: Path) -> tuple[str, ...]:
    """The ``dependencies`` of the script block of the probe at ``path``; () without one.

    A block that is not TOML, another key, or a requirement an installer could not read is a
    :class:`ConfigError` naming the probe file and the line of its block.
    """
    text = path.read_text(encoding="utf-8", errors="replace")
    blocks = [match for match in _BLOCK.finditer(text) if match.group("type") == "script"]
    if not blocks:
        return ()
    if len(blocks) > 1:
        raise _error(path, text, blocks[1].start(), "a second `# /// script` block", "keep one")
    block = blocks[0]
    content = "".join(
        line[2:] if line.startswith("# ") else line[1:] for line in block.group("content").splitlines(True)
    )
    try:
        metadata = tomllib.loads(content)
    except tomllib.TOMLDecodeError as exc:
        raise _error(path, text, block.start(), f"the script block is not TOML: {exc}", "see PEP 723") from None
    unknown = sorted(set(metadata) - set(_KEYS))
    if unknown:
        raise _error(path, text, block.start(), f"unknown key {unknown[0]!r}", f"a probe's block may hold {_KEYS[0]}")
    listed = metadata.get("dependencies", [])
    if not isinstance(listed, list) or not all(isinstance(item, str) for item in listed):
        raise _error(path, text, block.start(), "dependencies is not a list of strings", 'e.g. ["scipy>=1.10"]')
    for item in listed:
        try:
            Requirement(item)
        except InvalidRequirement as exc:
            raise _error(
                path, text, block.start(), f"{item!r} is not a requirement: {exc}", "e.g. scipy>=1.10"
            ) from None
    return tuple(listed)


def _error(path: Path, text: str, offset: int, problem: str, hint: str) -> ConfigError:
    return ConfigError(str(path), text.count("\n", 0, offset) + 1, "# /// script", problem, hint)
