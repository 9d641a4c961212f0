"""Read a YAML file safely into plain values that remember their line numbers.

Only the safe YAML types are accepted (mappings, sequences, strings, numbers,
booleans, null). Tags such as ``!!python/object``, duplicate keys, oversized
files and alias bombs are refused with a :class:`ConfigError` naming the line.
Every scalar keeps its source text too, so a version written ``1.10`` stays
``"1.10"`` instead of becoming the float ``1.1``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .errors import ConfigError

MAX_BYTES = 1 << 20
MAX_NODES = 100_000

KeyPath = tuple[str | int, ...]

_SAFE_TAGS = {
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:seq",
    "tag:yaml.org,2002:map",
}


def format_path(path: KeyPath) -> str:
    """``("torch", 2, "python")`` -> ``torch[2].python``."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


@dataclass(frozen=True)
class Document:
    """A parsed YAML file: its value, and the line and source text of every node."""

    file: str
    value: Any
    lines: dict[KeyPath, int] = field(repr=False)
    texts: dict[KeyPath, str] = field(repr=False)

    def line(self, path: KeyPath) -> int | None:
        """The 1-based line of ``path``, or of its nearest parent that has one."""
        while path not in self.lines and path:
            path = path[:-1]
        return self.lines.get(path)

    def text(self, path: KeyPath) -> str:
        """The scalar at ``path`` exactly as written in the file."""
        return self.texts[path]

    def error(self, path: KeyPath, problem: str, hint: str = "") -> ConfigError:
        return ConfigError(self.file, self.line(path), format_path(path), problem, hint)


def load(path: Path, display_name: str | None = None) -> Document:
    """Parse ``path`` into a :class:`Document`, refusing anything unsafe."""
    name = display_name or str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(name, None, "", f"cannot read the file: {exc.strerror or exc}") from None
    if len(raw) > MAX_BYTES:
        raise ConfigError(
            name, None, "", f"the file is {len(raw):,} bytes; a matrix file may have at most {MAX_BYTES:,}"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(name, None, "", f"not UTF-8 text (byte {exc.start})") from None
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        raise ConfigError(name, line, "", f"YAML syntax error: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(name, None, "", f"YAML error: {exc}") from None
    builder = _Builder(name)
    value = builder.build(root, ()) if root is not None else None
    return Document(name, value, builder.lines, builder.texts)


class _Builder:
    def __init__(self, file: str) -> None:
        self.file = file
        self.lines: dict[KeyPath, int] = {}
        self.texts: dict[KeyPath, str] = {}
        self.visited = 0
        self.constructor = yaml.SafeLoader("")

    def fail(self, node: yaml.Node, path: KeyPath, problem: str, hint: str = "") -> ConfigError:
        return ConfigError(self.file, node.start_mark.line + 1, format_path(path), problem, hint)

    def build(self, node: yaml.Node, path: KeyPath) -> Any:
        self.visited += 1
        if self.visited > MAX_NODES:
            raise self.fail(node, path, f"more than {MAX_NODES:,} values (an alias bomb?)")
        if node.tag not in _SAFE_TAGS:
            raise self.fail(
                node, path, f"YAML tag {node.tag!r} is not allowed", "a matrix file holds plain values only"
            )
        self.lines[path] = node.start_mark.line + 1
        if isinstance(node, yaml.ScalarNode):
            self.texts[path] = node.value
            return self.constructor.construct_object(node, deep=True)
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*path, index)) for index, item in enumerate(node.value)]
        assert isinstance(node, yaml.MappingNode)  # the three node kinds YAML has
        return self.build_mapping(node, path)

    def build_mapping(self, node: yaml.MappingNode, path: KeyPath) -> dict[str, Any]:
        mapping: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                raise self.fail(key_node, path, "keys must be plain names")
            key = key_node.value
            if key in mapping:
                raise self.fail(
                    key_node, (*path, key), "duplicate key", f"first given on line {self.lines[(*path, key)]}"
                )
            mapping[key] = self.build(value_node, (*path, key))
            self.lines[(*path, key)] = key_node.start_mark.line + 1
        return mapping
