"""matrix.yaml as a JSON Schema, generated from the key tables of :mod:`torchmatrix.matrix.schema`, for editors.

``python -m torchmatrix.matrix.json_schema matrix.schema.json`` writes the file this
repository keeps at its root (``--check``: exit 1 when it differs from what
would be written); with no file it prints the schema. An editor with a YAML
language server then completes keys, shows each key's help and example, and
marks an unknown key or a value of the wrong kind as it is typed.

Each key's value is described from the function that parses it, as closely as
a JSON Schema can say it: kinds, names, enumerations and patterns. What needs
more than that (a PEP 440 version, a probe that exists, an expectation about a
device the matrix runs on) is still judged by the loader, which stays the one
judge of a matrix. The schema is meant to accept every matrix the loader
accepts (and so to leave out what it cannot say exactly), and refuses the
common mistakes: tests/unit/test_json_schema.py checks both.
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from ..core import DEVICES, MAX_REPEAT, STORED_OUTCOMES
from ..util.atomicfile import write_text
from . import schema
from .schema import Key

Fragment = dict[str, Any]
Parse = Callable[..., Any]

DIALECT = "http://json-schema.org/draft-07/schema#"
"""Draft 7: the newest draft every YAML language server reads (cibuildwheel's schema uses it too)."""

_TEXT = ["string", "number", "boolean"]
"""A value read as the text written (``_text``): YAML may read ``1.10`` or ``yes`` as no string, the loader does not.

No ``uniqueItems`` where numbers may stand in a list for that reason: ``[1.1, 1.10]`` are two floats equal in
JSON, and two releases to the loader."""


def _anycase(word: str) -> str:
    """A pattern for ``word`` in any case: URL schemes are (JSON Schema patterns take no flags)."""
    return "".join(f"[{char.lower()}{char.upper()}]" for char in word)


_URL = {
    "type": "string",
    "pattern": rf"^\s*({_anycase('http')}[sS]?://[^\s/?#]|{_anycase('file')}:)\S*\s*$",
}
_VERSION = {"type": ["string", "number"], "pattern": r"^\s*[vV]?([0-9]+!)?[0-9]"}
_PYTHON = {"type": ["string", "number"], "pattern": r"^\s*3\.\d{1,2}\s*$"}
_DEVICE = {"enum": list(DEVICES)}
_PROBE_NAME = f"(?:{schema.PROBE_NAME.pattern})|(?:{schema.TEST_ID.pattern})"
"""A probe's name in probes/, or its path (a test's node id): what an expectation and ``probe_options`` name."""

_VALUES: dict[Parse, Fragment] = {
    schema._text: {"type": _TEXT},
    schema._nonempty_text: {"type": _TEXT, "pattern": r"^[^\x00-\x1f]*\S[^\x00-\x1f]*$"},
    schema._machine: {"type": _TEXT, "pattern": schema.MACHINE_NAME.pattern},
    schema._version: _VERSION,
    schema._python: _PYTHON,
    schema._pythons: {"anyOf": [_PYTHON, {"type": "array", "items": _PYTHON}]},
    schema._requirement: {"type": _TEXT, "pattern": r"^\s*[A-Za-z0-9][^@]*$"},
    schema._specifier: {"type": "string", "pattern": r"^[\s,]*((~=|===?|!=|<=?|>=?)\s*[^,\s]+[\s,]*)*$"},
    schema._positive_seconds: {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 86400},
    schema._repeat: {"type": "integer", "minimum": 1, "maximum": MAX_REPEAT},
    schema._flag: {"type": "boolean"},
    schema._devices: {
        "anyOf": [{"const": "auto"}, _DEVICE, {"type": "array", "items": _DEVICE, "minItems": 1, "uniqueItems": True}]
    },
    schema._one_device: _DEVICE,
    schema._outcome: {"enum": [outcome.value for outcome in STORED_OUTCOMES]},
    schema._url: _URL,
    schema._location: {
        "type": _TEXT,
        "pattern": r"^\s*[^\s-]",
        "anyOf": [{"not": {"type": "string", "pattern": "://"}}, _URL],
    },
    schema._probe_name: {"type": _TEXT, "pattern": _PROBE_NAME},
    schema._probe_kind: {"enum": list(schema.PROBE_KINDS)},
    schema._probe_options: {
        "type": "object",
        "propertyNames": {"pattern": _PROBE_NAME},
        "additionalProperties": {"type": "object"},
    },
    schema._variables: {
        "type": "object",
        "propertyNames": {
            "pattern": schema._VARIABLE_NAME.pattern,
            "not": {"enum": [*schema._BUILT_VARIABLES, "PATH"]},
        },
        "additionalProperties": {"type": _TEXT, "pattern": r"^[^\x00]*$"},
    },
    schema._passed_variable: {
        "type": _TEXT,
        "pattern": schema._VARIABLE_PATTERN.pattern,
        "not": {"anyOf": [{"enum": list(schema._BUILT_VARIABLES)}, {"type": "string", "pattern": r"^\*+$"}]},
    },
}
"""Each parser of a single value, and what JSON Schema can say of what it accepts."""

_MAPPINGS: tuple[Parse, ...] = (schema.pin_rule, schema._expectation)
"""Parsers of a mapping checked against the ``entries`` of their key."""
_VALUE_OR_MAPPING: dict[Parse, Fragment] = {schema._probe_entry: {"type": _TEXT}}
"""Parsers of a single value, or of a mapping checked against the ``entries`` of their key."""

_REFUSED_BY_THE_LOADER: dict[str, Fragment] = {"probes": {"minItems": 1}}
"""What ``loader.load_matrix`` refuses beyond the key's parser: a ``probes:`` that lists none."""


def json_schema() -> Fragment:
    """matrix.yaml's JSON Schema: every key of ``MATRIX_KEYS`` and of its entries, with its help and example."""
    top = _mapping(schema.MATRIX_KEYS)
    for name, refused in _REFUSED_BY_THE_LOADER.items():
        top["properties"][name].update(refused)
    return {
        "$schema": DIALECT,
        "title": "torchmatrix matrix.yaml",
        "description": "What torchmatrix runs: torch releases, probes, devices. Generated from "
        "src/torchmatrix/matrix/schema.py by `python -m torchmatrix.matrix.json_schema`; see docs/matrix.md.",
        **top,
    }


def property_schema(key: Key) -> Fragment:
    """What ``key``'s value may be, with the key's help and example."""
    return {
        "description": key.help,
        "examples": [yaml.safe_load(key.example)],
        **_value(key.parse, key.entries),
    }


def _mapping(keys: Mapping[str, Key]) -> Fragment:
    properties = {name: property_schema(key) for name, key in keys.items()}
    required = [name for name, key in keys.items() if key.required]
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def _value(parse: Parse, entries: Mapping[str, Key] | None) -> Fragment:
    element = _listed(parse)
    if element is not None:
        return {"type": "array", "items": _value(element, entries)}
    if parse is schema._torch_entries or parse in _MAPPINGS or parse in _VALUE_OR_MAPPING:
        if entries is None:
            raise LookupError(f"{parse.__name__} reads a mapping, but its key declares no entries")
        if parse in _MAPPINGS:
            return _mapping(entries)
        if parse in _VALUE_OR_MAPPING:
            return {"anyOf": [_VALUE_OR_MAPPING[parse], _mapping(entries)]}
        return {"type": "array", "minItems": 1, "items": {"anyOf": [_VERSION, _mapping(entries)]}}
    if parse not in _VALUES:
        name = getattr(parse, "__qualname__", repr(parse))
        raise LookupError(f"no JSON Schema for values parsed by schema.{name}: add it to json_schema._VALUES")
    return dict(_VALUES[parse])


def _listed(parse: Parse) -> Parse | None:
    """The parser of each element when ``parse`` is ``schema.list_of(element)``; None otherwise."""
    if getattr(parse, "__qualname__", "") != f"{schema.list_of.__qualname__}.<locals>.parse":
        return None
    element: Parse = inspect.getclosurevars(parse).nonlocals["item"]
    return element


def text() -> str:
    """The schema as the file holds it: indented JSON, keys in the order the tables declare them."""
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m torchmatrix.matrix.json_schema [FILE] [--check]``: write, print or check the schema."""
    parser = argparse.ArgumentParser(
        prog="python -m torchmatrix.matrix.json_schema", description=__doc__.splitlines()[0]
    )
    parser.add_argument("file", nargs="?", type=Path, help="where to write it (default: print it)")
    parser.add_argument("--check", action="store_true", help="write nothing: exit 1 when FILE differs")
    options = parser.parse_args(argv)
    if options.file is None:
        if options.check:
            parser.error("--check needs the FILE to compare, e.g. matrix.schema.json")
        sys.stdout.write(text())
        return 0
    if options.file.is_dir():
        parser.error(f"{options.file} is a folder: name the file, e.g. {options.file / 'matrix.schema.json'}")
    if options.check:
        current = options.file.read_text(encoding="utf-8") if options.file.is_file() else ""
        if current != text():
            print(f"{options.file} is out of date: run python -m torchmatrix.matrix.json_schema {options.file}")
            return 1
        return 0
    try:
        write_text(options.file, text())
    except OSError as exc:
        parser.exit(1, f"{parser.prog}: error: cannot write {options.file}: {exc.strerror or exc}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
