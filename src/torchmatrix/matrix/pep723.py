"""What a probe says of itself in its inline script metadata (PEP 723): ``# /// script`` … ``# ///``.

    # /// script
    # dependencies = ["scipy>=1.10"]
    #
    # [tool.torchmatrix]
    # opt-in = true
    # devices = ["cpu", "cuda"]
    # ///

Its ``dependencies`` are installed beside torch in every cell that runs the
probe. They need no entry in freshness of their own: they are part of the
probe file, whose sha256 every record of the probe carries.

``opt-in = true`` keeps a probe out of a matrix that lists no ``probes:`` (which
runs every probe in ``probes/``): it runs only where a matrix names it. For
probes that cost minutes, like the operator sweep.

``devices`` names the devices a script runs on, for a script that chooses its
device some other way than reading ``TORCHMATRIX_DEVICE``
(:mod:`torchmatrix.matrix.kinds`).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement

from ..core import DEVICES
from ..errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

# The reference expression of PEP 723.
_BLOCK = re.compile(r"(?m)^# /// (?P<type>[a-zA-Z0-9-]+)$\s(?P<content>(^#(| .*)$\s)+)^# ///$")
_KEYS = ("dependencies", "requires-python", "tool")
_OWN_KEYS = ("opt-in", "devices")
"""What ``[tool.torchmatrix]`` may hold."""


@dataclass(frozen=True)
class ScriptMetadata:
    dependencies: tuple[str, ...] = ()
    opt_in: bool = False
    """Runs only where a matrix names it, never as one of "every probe in probes/"."""
    devices: tuple[str, ...] | None = None
    """The devices it runs on, where it names them; None where it does not."""


def dependencies(path: Path) -> tuple[str, ...]:
    """The ``dependencies`` of the script block of the probe at ``path``; () without one."""
    return read(path).dependencies


def read(path: Path) -> ScriptMetadata:
    """The script block of the probe at ``path``; the defaults without one.

    A block that is not TOML, another key, or a requirement an installer could not read is a
    :class:`ConfigError` naming the probe file and the line of its block.
    """
    text = path.read_text(encoding="utf-8", errors="replace")
    blocks = [match for match in _BLOCK.finditer(text) if match.group("type") == "script"]
    if not blocks:
        return ScriptMetadata()
    if len(blocks) > 1:
        raise _error(path, text, blocks[1].start(), "a second `# /// script` block", "keep one")
    block = blocks[0]

    def error(problem: str, hint: str) -> ConfigError:
        return _error(path, text, block.start(), problem, hint)

    content = "".join(
        line[2:] if line.startswith("# ") else line[1:] for line in block.group("content").splitlines(True)
    )
    try:
        metadata = tomllib.loads(content)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"the script block is not TOML: {exc}", "see PEP 723") from None
    unknown = sorted(set(metadata) - set(_KEYS))
    if unknown:
        raise error(f"unknown key {unknown[0]!r}", f"a probe's block may hold {_KEYS[0]}")
    own = _own_table(metadata, error)
    return ScriptMetadata(_dependencies(metadata, error), _opt_in(own, error), _devices(own, error))


def _dependencies(metadata: dict[str, Any], error: Callable[[str, str], ConfigError]) -> tuple[str, ...]:
    listed = metadata.get("dependencies", [])
    if not isinstance(listed, list) or not all(isinstance(item, str) for item in listed):
        raise error("dependencies is not a list of strings", 'e.g. ["scipy>=1.10"]')
    for item in listed:
        try:
            Requirement(item)
        except InvalidRequirement as exc:
            raise error(f"{item!r} is not a requirement: {exc}", "e.g. scipy>=1.10") from None
    return tuple(listed)


def _own_table(metadata: dict[str, Any], error: Callable[[str, str], ConfigError]) -> dict[str, Any]:
    """``[tool.torchmatrix]``; other tools' tables under ``[tool]`` are theirs."""
    tools = metadata.get("tool", {})
    own = tools.get("torchmatrix", {}) if isinstance(tools, dict) else {}
    if not isinstance(own, dict):
        raise error("tool.torchmatrix is not a table", "write [tool.torchmatrix] and its keys under it")
    unknown = sorted(set(own) - set(_OWN_KEYS))
    if unknown:
        raise error(f"unknown key {unknown[0]!r} in [tool.torchmatrix]", f"it may hold {', '.join(_OWN_KEYS)}")
    return own


def _devices(own: dict[str, Any], error: Callable[[str, str], ConfigError]) -> tuple[str, ...] | None:
    if "devices" not in own:
        return None
    listed = own["devices"]
    hint = f"some of {', '.join(DEVICES)}, e.g. devices = ['cpu', 'cuda']"
    if not isinstance(listed, list) or not listed or not all(item in DEVICES for item in listed):
        raise error(f"devices must be a list of devices, not {listed!r}", hint)
    return tuple(dict.fromkeys(listed))


def _opt_in(own: dict[str, Any], error: Callable[[str, str], ConfigError]) -> bool:
    opt_in = own.get("opt-in", False)
    if not isinstance(opt_in, bool):
        raise error("opt-in is neither true nor false", "e.g. opt-in = true")
    return opt_in


def _error(path: Path, text: str, offset: int, problem: str, hint: str) -> ConfigError:
    return ConfigError(str(path), text.count("\n", 0, offset) + 1, "# /// script", problem, hint)
