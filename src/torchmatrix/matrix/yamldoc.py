"""Read a YAML file safely into plain values that remember their line numbers.

Only the safe YAML types are accepted (mappings, sequences, strings, numbers,
booleans, null). Tags such as ``!!python/object``, duplicate keys, oversized
files, deep nesting and alias bombs are refused with a :class:`ConfigError`
naming the line. Every scalar keeps its source text too, so a version written
``1.10`` stays ``"1.10"`` instead of becoming the float ``1.1`` (and a date
stays the text it was).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..errors import ConfigError

MAX_BYTES = 1 << 20
MAX_NODES = 100_000
MAX_DEPTH = 64

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
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
"""What YAML makes of an unquoted date: kept as the text written."""


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
        raise ConfigError(name, None, "", f"cannot read the file: {exc.strerror or exc}", "check the path") from None
    if len(raw) > MAX_BYTES:
        raise ConfigError(
            name,
            None,
            "",
            f"the file is {len(raw):,} bytes; a matrix file may have at most {MAX_BYTES:,}",
            "a matrix file lists releases and probes in a few lines: is this the right file?",
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(name, line, "", f"not UTF-8 text (byte {exc.start})", "save the file as UTF-8") from None
    root = _compose(text, name)
    builder = _Builder(name)
    value = builder.build(root, ()) if root is not None else None
    return Document(name, value, builder.lines, builder.texts)


def _compose(text: str, name: str) -> yaml.Node | None:
    """The YAML node tree of ``text``; a syntax error, a forbidden character or deep nesting is a ConfigError."""
    loader: _DepthLimitedLoader | None = None
    try:
        loader = _DepthLimitedLoader(text)  # checks every character first
        return loader.get_single_node()
    except _TooDeep as exc:
        raise ConfigError(
            name, exc.line, "", f"values nested more than {MAX_DEPTH} deep", "a matrix file needs a few levels at most"
        ) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        raise ConfigError(
            name, line, "", f"YAML syntax error: {exc.problem or exc.context}", _syntax_hint(exc)
        ) from None
    except yaml.reader.ReaderError as exc:
        line = text[: exc.position].count("\n") + 1
        raise ConfigError(
            name, line, "", f"character #x{exc.character:04x} is not allowed in YAML", "remove it"
        ) from None
    except yaml.YAMLError as exc:
        raise ConfigError(name, None, "", f"YAML error: {exc}", "check the file's syntax") from None
    finally:
        if loader is not None:
            loader.dispose()


def _syntax_hint(error: yaml.MarkedYAMLError) -> str:
    if error.problem and "'\\t'" in error.problem:
        return "indent with spaces: YAML does not allow tabs"
    if error.context and error.context_mark:
        what = error.context.split(" ", 3)[-1]  # "while parsing a flow sequence" -> "flow sequence"
        return f"check the {what} that starts on line {error.context_mark.line + 1}"
    return "check the quoting and indentation around this line"


class _TooDeep(Exception):
    def __init__(self, line: int) -> None:
        self.line = line


class _DepthLimitedLoader(yaml.SafeLoader):
    """PyYAML composes nodes recursively: stop at MAX_DEPTH instead of running out of stack."""

    depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise _TooDeep(self.peek_event().start_mark.line + 1)
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


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
            raise self.fail(
                node, path, f"more than {MAX_NODES:,} values (an alias bomb?)", "a matrix file holds a few dozen values"
            )
        if node.tag not in _SAFE_TAGS and node.tag != _TIMESTAMP:
            raise self.fail(
                node, path, f"YAML tag {node.tag!r} is not allowed", "a matrix file holds plain values only"
            )
        self.lines[path] = node.start_mark.line + 1
        if isinstance(node, yaml.ScalarNode):
            self.texts[path] = node.value
            if node.tag == _TIMESTAMP:
                return node.value
            return self.constructor.construct_object(node, deep=True)
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*path, index)) for index, item in enumerate(node.value)]
        assert isinstance(node, yaml.MappingNode)  # the three node kinds YAML has
        return self.build_mapping(node, path)

    def build_mapping(self, node: yaml.MappingNode, path: KeyPath) -> dict[str, Any]:
        mapping: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                raise self.fail(key_node, path, "keys must be plain names", "write `name: value`; no `<<` merges")
            key = key_node.value
            if key in mapping:
                raise self.fail(
                    key_node, (*path, key), "duplicate key", f"first given on line {self.lines[(*path, key)]}"
                )
            mapping[key] = self.build(value_node, (*path, key))
            self.lines[(*path, key)] = key_node.start_mark.line + 1
        return mapping
