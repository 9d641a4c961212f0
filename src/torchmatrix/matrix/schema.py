"""Every key a matrix file may hold, declared once, with how its value is read and an example of it.

The ``*_KEYS`` tables are the schema: :func:`check_mapping` refuses anything
else with the file, line, key path and the closest declared key. Values are
checked as strictly as an installer would read them: a torch version must be a
PEP 440 version and nothing that an installer could take for an option or a
URL. A key's example is the hint for a value of the wrong kind.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse, urlsplit

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from ..core import DEVICES, MAX_REPEAT, STORED_OUTCOMES, Kind, Outcome
from ..errors import ConfigError, did_you_mean
from . import Expectation, PinRule, ProbeEntry, TorchEntry, yamldoc
from .yamldoc import Document, KeyPath

URL_SCHEMES = ("http", "https", "file")
PROBE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
TEST_ID = re.compile(r"^[^\s:][^\n]*\.py(::[^\n]+)?$|^[^\s:][^\n]*/$")
"""What pytest tests are called: a file (``tests/test_dot.py``), a node id in it, or a folder (``tests/``)."""
_PYTHON_VERSION = re.compile(r"^3\.\d{1,2}$")


@dataclass(frozen=True)
class Key:
    parse: Callable[[Document, KeyPath, Any], Any]
    example: str
    """A valid value, as YAML: the hint for a missing or ill-typed value."""
    help: str
    """What the key says, in one line: the docs' key reference shows it beside the example."""
    required: bool = False
    entries: Mapping[str, Key] | None = None
    """For a list whose entries may be mappings: their keys, as ``parse`` checks them (the docs list them too)."""


def fail(doc: Document, path: KeyPath, problem: str, hint: str = "") -> Exception:
    return doc.error(path, problem, hint)


def check_mapping(doc: Document, path: KeyPath, value: Any, keys: dict[str, Key]) -> dict[str, Any]:
    """Parse a mapping against ``keys``: unknown keys are refused with a suggestion.

    A problem found in a key's value without a hint of its own gets the key's example as one.
    """
    if not isinstance(value, dict):
        example = ", ".join(f"{key}: {spec.example}" for key, spec in keys.items() if spec.required)
        raise fail(
            doc, path, f"expected a mapping, got {_kind(value)}", f"e.g. {{{example}}}" if path else f"e.g. {example}"
        )
    for key in value:
        if key not in keys:
            hint = did_you_mean(key, keys, f"known keys: {', '.join(sorted(keys))}")
            raise fail(doc, (*path, key), "unknown key", hint)
    for key, spec in keys.items():
        if spec.required and key not in value:
            raise fail(doc, path, f"missing required key {key!r}", f"e.g. {key}: {spec.example}")
    fields = {}
    for key, item in value.items():
        try:
            fields[key] = keys[key].parse(doc, (*path, key), item)
        except ConfigError as error:
            if error.hint:
                raise
            raise ConfigError(
                error.file, error.line, error.key, error.problem, f"e.g. {key}: {keys[key].example}"
            ) from None
    return fields


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), f"a number ({value!r})" if isinstance(value, (int, float)) else type(value).__name__
    )


def list_of(item: Callable[[Document, KeyPath, Any], Any]) -> Callable[[Document, KeyPath, Any], list[Any]]:
    def parse(doc: Document, path: KeyPath, value: Any) -> list[Any]:
        if not isinstance(value, list):
            raise fail(doc, path, f"expected a list, got {_kind(value)}")
        return [item(doc, (*path, index), element) for index, element in enumerate(value)]

    return parse


def _text(doc: Document, path: KeyPath, value: Any) -> str:
    if isinstance(value, (dict, list)) or value is None:
        raise fail(doc, path, f"expected a single value, got {_kind(value)}")
    return doc.text(path).strip()


def _nonempty_text(doc: Document, path: KeyPath, value: Any) -> str:
    text = _text(doc, path, value)
    if not text or any(ord(char) < 32 for char in text):
        raise fail(doc, path, "expected a non-empty line of text")
    return text


def _version(doc: Document, path: KeyPath, value: Any) -> Version:
    text = _text(doc, path, value)
    if text.startswith("-"):
        raise fail(doc, path, f"{text!r} looks like an installer option, not a version", "write a release, e.g. 1.12.1")
    if "://" in text or "@" in text or "/" in text:
        raise fail(doc, path, f"{text!r} looks like a URL or path, not a version", "write a release, e.g. 1.12.1")
    try:
        return Version(text)
    except InvalidVersion:
        hint = "list exact releases; bisect takes ranges" if text[:1] in "<>=~!" else "e.g. 1.12.1 or 2.2.0"
        raise fail(doc, path, f"{text!r} is not a PEP 440 version", hint) from None


def _python(doc: Document, path: KeyPath, value: Any) -> str:
    text = _text(doc, path, value)
    if not _PYTHON_VERSION.match(text):
        raise fail(doc, path, f"{text!r} is not a Python version like 3.10")
    return text


def _pythons(doc: Document, path: KeyPath, value: Any) -> tuple[str, ...]:
    pythons = list_of(_python)(doc, path, value) if isinstance(value, list) else [_python(doc, path, value)]
    _refuse_duplicates(doc, path, pythons)
    return tuple(pythons)


def _requirement(doc: Document, path: KeyPath, value: Any) -> Requirement:
    text = _text(doc, path, value)
    if text.startswith("-"):
        raise fail(doc, path, f"{text!r} looks like an installer option", "write a requirement, e.g. numpy<2")
    try:
        requirement = Requirement(text)
    except InvalidRequirement as exc:
        raise fail(doc, path, f"{text!r} is not a requirement: {exc}", "e.g. numpy<2") from None
    if requirement.url:
        raise fail(doc, path, f"{text!r} installs from a URL", "name a package and a version range")
    return requirement


def _specifier(doc: Document, path: KeyPath, value: Any) -> SpecifierSet:
    text = _text(doc, path, value)
    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        raise fail(doc, path, f"{text!r} is not a version range", "e.g. '<2.3' or '>=1.12,<2'") from None


def _positive_seconds(doc: Document, path: KeyPath, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 86400:
        hint = ""
        with contextlib.suppress(ValueError):
            written = float(value) if isinstance(value, str) else 0.0
            if 0 < written < 86400:  # YAML 1.1 reads 1e3 (no dot) as text; inf and nan are no limit
                hint = f"YAML reads {value} as text: write a number such as {written:.1f}"
        raise fail(doc, path, f"expected seconds between 0 and 86400, got {_kind(value)}", hint)
    return float(value)


def _repeat(doc: Document, path: KeyPath, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_REPEAT:
        raise fail(doc, path, f"expected a number of runs from 1 to {MAX_REPEAT}, got {_kind(value)}")
    return value


def _flag(doc: Document, path: KeyPath, value: Any) -> bool:
    if not isinstance(value, bool):
        raise fail(doc, path, f"expected true or false, got {_kind(value)}")
    return value


def _devices(doc: Document, path: KeyPath, value: Any) -> tuple[str, ...]:
    if value == "auto":
        return DEVICES
    devices = list_of(_device)(doc, path, value) if isinstance(value, list) else [_device(doc, path, value)]
    if not devices:
        raise fail(doc, path, "no device: a matrix runs on one at least", f"use 'auto' or some of {', '.join(DEVICES)}")
    _refuse_duplicates(doc, path, devices)
    return tuple(devices)


def _device(doc: Document, path: KeyPath, value: Any) -> str:
    text = _text(doc, path, value)
    if text not in DEVICES:
        hint = did_you_mean(text, DEVICES, f"use 'auto' or some of {', '.join(DEVICES)}")
        raise fail(doc, path, f"unknown device {text!r}", hint)
    return text


def url_problem(text: str) -> str:
    """Why ``text`` is no http(s) or file URL an installer can be pointed at; '' when it is one."""
    parts = urlsplit(text)
    if (
        parts.scheme not in URL_SCHEMES
        or not (parts.netloc or parts.scheme == "file")
        or any(c.isspace() for c in text)
    ):
        return f"{text!r} is not an http(s) or file URL"
    return ""


def location_problem(text: str) -> str:
    """Why ``text`` cannot be a find-links entry (a folder of wheels, or a URL); '' when it can."""
    if text.startswith("-"):
        return f"{text!r} looks like an installer option"
    return url_problem(text) if "://" in text else ""


def folder_problem(link: str) -> str:
    """Why the find-links folder ``link`` (a path or a file:// URL) cannot be listed: it is not there; '' when it
    is, or when ``link`` is a web page (read when the releases are listed)."""
    if "://" in link and not link.startswith("file://"):
        return ""
    folder = Path(unquote(urlparse(link).path)) if link.startswith("file://") else Path(link)
    if folder.is_dir():
        return ""
    what = "is not a folder" if folder.exists() else "does not exist"
    shown = f" ({folder.absolute()})" if str(folder.absolute()) != link else ""
    return f"{link!r}: the folder{shown} {what}; name a folder of torch wheels, or a URL"


_URL_EXAMPLE = "e.g. https://download.pytorch.org/whl/cpu"


def _url(doc: Document, path: KeyPath, value: Any) -> str:
    text = _nonempty_text(doc, path, value)
    problem = url_problem(text)
    if problem:
        raise fail(doc, path, problem, _URL_EXAMPLE)
    return text


def _location(doc: Document, path: KeyPath, value: Any) -> str:
    text = _nonempty_text(doc, path, value)
    problem = location_problem(text)
    if problem:
        raise fail(doc, path, problem, "name a folder of wheels or a URL" if text.startswith("-") else _URL_EXAMPLE)
    return text


def _refuse_duplicates(doc: Document, path: KeyPath, items: list[Any]) -> None:
    for index, item in enumerate(items):
        if item in items[:index]:
            raise fail(doc, (*path, index), f"{item} is listed twice", f"first at {path[-1]}[{items.index(item)}]")


def _outcome(doc: Document, path: KeyPath, value: Any) -> Outcome:
    text = _text(doc, path, value)
    names = [outcome.value for outcome in STORED_OUTCOMES]
    if text not in names:
        raise fail(doc, path, f"unknown outcome {text!r}", did_you_mean(text, names, f"one of {', '.join(names)}"))
    return Outcome(text)


def _one_device(doc: Document, path: KeyPath, value: Any) -> str:
    if value == "auto":
        raise fail(doc, path, "an expectation is about one device", f"one of {', '.join(DEVICES)}")
    return _device(doc, path, value)


def _probe_name(doc: Document, path: KeyPath, value: Any) -> str:
    """A probe's name, or a test's node id (``tests/test_dot.py::test_grad``): what its records are called."""
    text = _text(doc, path, value)
    if not (PROBE_NAME.match(text) or TEST_ID.match(text)):
        raise fail(
            doc, path, f"{text!r} is not a probe name", "name a probe of this matrix (e.g. autograd_dot) or a test id"
        )
    return text


def _plain_data(doc: Document, path: KeyPath, value: Any) -> Any:
    """``value`` as a probe is handed it, in JSON: no infinity, no NaN.

    (The YAML reader gives nothing but text, numbers, booleans, null, lists and mappings with text for keys.)
    """
    if isinstance(value, dict):
        return {key: _plain_data(doc, (*path, key), item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain_data(doc, (*path, index), item) for index, item in enumerate(value)]
    if isinstance(value, float) and not math.isfinite(value):
        raise fail(doc, path, f"{value} is no number JSON can hold", "write a finite number")
    return value


def _probe_options(doc: Document, path: KeyPath, value: Any) -> dict[str, dict[str, Any]]:
    if not isinstance(value, dict):
        raise fail(doc, path, f"expected a mapping of probe names to their options, got {_kind(value)}")
    options = {}
    for name, given in value.items():
        if not isinstance(name, str) or not (PROBE_NAME.match(name) or TEST_ID.match(name)):
            raise fail(doc, (*path, name), f"{name!r} is not a probe name", "name a probe of this matrix")
        if not isinstance(given, dict):
            raise fail(doc, (*path, name), f"expected a mapping of options, got {_kind(given)}", 'e.g. {ops: "add"}')
        options[name] = _plain_data(doc, (*path, name), given)
    return options


_VARIABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
MAX_VARIABLE_BYTES = 32 << 10
"""The longest value ``env:`` may set: every system takes one that long (Linux: up to 128 KiB each)."""
MACHINE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
"""What a machine's name may be: one folder name under results/, the same on every system."""


def machine_name_problem(name: str) -> str:
    """Why ``name`` cannot name a machine's results folder ('' when it can)."""
    if MACHINE_NAME.match(name):
        return ""
    return f"{name!r} cannot name a results folder: use letters, digits and . _ + -"


def machine_name_example(name: str) -> str:
    """A name like ``name`` that can name a machine: what a message suggests instead."""
    return re.sub(r"[^A-Za-z0-9._+-]+", "_", name).strip("._-+") or "my-box"


def _machine(doc: Document, path: KeyPath, value: Any) -> str:
    text = _nonempty_text(doc, path, value)
    problem = machine_name_problem(text)
    if problem:
        raise fail(doc, path, problem, f"e.g. machine: {machine_name_example(text)}")
    return text


_VARIABLE_PATTERN = re.compile(r"^[A-Za-z_*][A-Za-z0-9_*]*$")
_BUILT_VARIABLES = (
    "VIRTUAL_ENV", "PYTHONHASHSEED", "TORCHMATRIX_DEVICE", "TORCHMATRIX_PROBE_OPTIONS", "TORCHMATRIX_INPUTS",
)  # fmt: skip
"""What torchmatrix sets for every pair itself: the cell's, the seed's, the pair's (see identity and the worker)."""


def _variables(doc: Document, path: KeyPath, value: Any) -> dict[str, str]:
    """``env:``: variable names to the text every pair finds in them."""
    if not isinstance(value, dict):
        raise fail(doc, path, f"expected a mapping of variable names to values, got {_kind(value)}")
    found = {}
    for name, given in value.items():
        where = (*path, name)
        if not isinstance(name, str) or not _VARIABLE_NAME.match(name):
            raise fail(doc, where, f"{name!r} is not a variable name", "letters, digits and _, e.g. MY_BACKEND")
        if name in _BUILT_VARIABLES or name == "PATH":
            raise fail(doc, where, f"{name} is set by torchmatrix for every pair", _built_hint(name))
        if isinstance(given, (dict, list)) or given is None:
            raise fail(doc, where, f"expected a single value, got {_kind(given)}", 'write it as text, e.g. "1"')
        text = given if isinstance(given, str) else doc.text(where).strip()
        if "\0" in text:
            raise fail(doc, where, "a variable cannot hold a NUL character")
        try:
            handed = os.fsencode(text)  # the bytes a process is handed: "\udce9" (YAML's escape) is the byte 0xe9
        except UnicodeEncodeError:
            hint = 'write a byte that is no UTF-8 as "\\udcXX" (0xe9: "\\udce9")'
            raise fail(doc, where, f"{text!r} holds a character no process can be handed", hint) from None
        if len(handed) > MAX_VARIABLE_BYTES:
            raise fail(doc, where, f"longer than {MAX_VARIABLE_BYTES >> 10} KiB, more than a process may be handed",
                       "put it in a file and name the file")  # fmt: skip
        found[name] = text
    return found


def _passed_variable(doc: Document, path: KeyPath, value: Any) -> str:
    """``pass_env:``: a variable name, or a pattern with ``*`` (``MY_*``), taken from the caller's environment."""
    text = _text(doc, path, value)
    if not _VARIABLE_PATTERN.match(text) or text.strip("*") == "":
        raise fail(doc, path, f"{text!r} is not a variable name or pattern", "e.g. MY_BACKEND, or MY_* for several")
    if text in _BUILT_VARIABLES:
        raise fail(doc, path, f"{text} is set by torchmatrix for every pair", _built_hint(text))
    return text


def _built_hint(name: str) -> str:
    if name == "PATH":
        return "the cell's bin folder comes first on PATH; `pass_env: [PATH]` appends your PATH after it"
    return "leave it out: see docs/identity.md, what a pair sees"


def _torch_entry(doc: Document, path: KeyPath, value: Any) -> TorchEntry:
    if not isinstance(value, dict):
        return TorchEntry(_version(doc, path, value), line=doc.line(path))
    fields = check_mapping(doc, path, value, TORCH_ENTRY_KEYS)
    return TorchEntry(fields["version"], fields.get("python", ()), tuple(fields.get("pins", ())), doc.line(path))


def _torch_entries(doc: Document, path: KeyPath, value: Any) -> tuple[TorchEntry, ...]:
    entries = list_of(_torch_entry)(doc, path, value)
    if not entries:
        raise fail(doc, path, "lists no torch release", "e.g. torch: [1.12.1, 2.2.0]")
    _refuse_duplicates(doc, path, [entry.version for entry in entries])
    return tuple(entries)


PROBE_KINDS = {"script": Kind.SCRIPT, "tests": Kind.PYTEST}
"""What ``kind:`` may say of a probe, for the rare file that is both: the word, and the kind it runs as."""


def _probe_kind(doc: Document, path: KeyPath, value: Any) -> Kind:
    text = _text(doc, path, value)
    if text not in PROBE_KINDS:
        hint = did_you_mean(text, PROBE_KINDS, f"one of {', '.join(PROBE_KINDS)}")
        raise fail(doc, path, f"unknown kind {text!r}", hint)
    return PROBE_KINDS[text]


def _probe_entry(doc: Document, path: KeyPath, value: Any) -> ProbeEntry:
    """An entry of ``probes:``: a name or a path, or a mapping that says its kind as well."""
    if not isinstance(value, dict):
        return ProbeEntry(_text(doc, path, value))
    fields = check_mapping(doc, path, value, PROBE_ENTRY_KEYS)
    return ProbeEntry(fields["probe"], fields.get("kind"))


def pin_rule(doc: Document, path: KeyPath, value: Any) -> PinRule:
    fields = check_mapping(doc, path, value, PIN_RULE_KEYS)
    if "require" not in fields and "constrain" not in fields:
        raise fail(doc, path, "names no requirement", 'e.g. require: ["torchvision==0.17.*"] or constrain: ["numpy<2"]')
    return PinRule(
        fields["torch"], tuple(fields.get("require", ())), fields.get("reason", ""), tuple(fields.get("constrain", ()))
    )


def _expectation(doc: Document, path: KeyPath, value: Any) -> Expectation:
    fields = check_mapping(doc, path, value, EXPECTATION_KEYS)
    return Expectation(
        probe=fields["probe"],
        device=fields["device"],
        torch=fields.get("torch", SpecifierSet()),
        outcome=fields["outcome"],
        python=fields.get("python"),
        machine=fields.get("machine"),
        reason=fields.get("reason", ""),
        where=f"{Path(doc.file).name}:{doc.line(path)} {yamldoc.format_path(path)}",
    )


TORCH_ENTRY_KEYS = {
    "version": Key(_version, "2.2.0", "the torch release, a PEP 440 version", required=True),
    "python": Key(
        _pythons,
        '["3.10", "3.12"]',
        "the Pythons to run it on, one cell each; default: the newest one here with a wheel of it",
    ),
    "pins": Key(
        list_of(_requirement),
        '["numpy==1.26.4"]',
        "requirements for this release alone; they win over the matrix's `pins:` and the known pins",
    ),
}
PROBE_ENTRY_KEYS = {
    "probe": Key(_text, "my_probes/check.py", "a name in probes/, or a .py path relative to this file", required=True),
    "kind": Key(
        _probe_kind,
        "script",
        "for a file that is both: `script` runs one pytest would collect tests from as a script, `tests` runs a "
        "run(device) probe's tests with pytest; default: run(device) if it defines one, else what pytest says",
    ),
}
PIN_RULE_KEYS = {
    "torch": Key(_specifier, '"<2.3"', "the torch releases the rule is for, a version range", required=True),
    "require": Key(list_of(_requirement), '["torchvision==0.17.*"]', "the requirements installed beside each of them"),
    "constrain": Key(
        list_of(_requirement),
        '["numpy<2"]',
        "bounds on packages their cells install for another reason (a probe's, the project's); they add none",
    ),
    "reason": Key(_nonempty_text, "built against NumPy 1.x", "why they are needed"),
}
EXPECTATION_KEYS = {
    "probe": Key(_probe_name, "autograd_dot", "a probe of this matrix, or one of its tests by node id", required=True),
    "device": Key(_one_device, "mps", "one device of this matrix", required=True),
    "torch": Key(_specifier, '">=1.12"', "the releases it speaks of, a version range; default: every release"),
    "outcome": Key(_outcome, "pass", "the outcome the probe must have there", required=True),
    "python": Key(_python, '"3.10"', "only cells of this Python"),
    "machine": Key(_nonempty_text, "darwin-arm64", "only results filed under this machine"),
    "reason": Key(_nonempty_text, "torch.dot returned 0 before 1.12", "shown beside a violation"),
}
MATRIX_KEYS = {
    "torch": Key(
        _torch_entries,
        "[1.12.1, 2.2.0]",
        "the torch releases, one cell each: a version, or a mapping that pins Pythons or requirements",
        required=True,
        entries=TORCH_ENTRY_KEYS,
    ),
    "probes": Key(
        list_of(_probe_entry),
        "[autograd_dot, my_probes/check.py, {probe: both.py, kind: script}]",
        "the probes to run: a name in probes/, or a .py path relative to this file, or a mapping that says its "
        "kind too; default: every probes/*.py",
        entries=PROBE_ENTRY_KEYS,
    ),
    "devices": Key(
        _devices, "[cpu, cuda]", "the devices to run on: a list, or `auto` for cpu, cuda and mps; default: auto"
    ),
    "timeout": Key(
        _positive_seconds,
        "300",
        "seconds one (probe, device) pair may run (importing torch gets at least 300); default: 300",
    ),
    "repeat": Key(
        _repeat,
        "5",
        "runs of each (probe, device) pair, each in a fresh process; differing ones are `unstable`; default: 1",
    ),
    "strict": Key(
        _flag,
        "true",
        "fail a probe session on a fail, error, crash, timeout, unstable pair, install-error or missing Python "
        "no `expect:` entry allows (as `-- --strict` does); default: false",
    ),
    "output": Key(
        _nonempty_text, "reports", "the folder results and reports go to, relative to this file; default: reports"
    ),
    "probes_root": Key(
        _nonempty_text,
        "..",
        "the folder probe paths are relative to and probes are named from (a path outside it starts with ..), "
        "relative to this file; default: this file's folder",
    ),
    "machine": Key(
        _machine, "H200", "the name results are filed under; default: `<os>-<arch>-<cpu>-<widest ISA>[-<gpu>]-<digest>`"
    ),
    "index_url": Key(
        _url, "https://download.pytorch.org/whl/cpu", "where torch comes from; default: https://pypi.org/simple"
    ),
    "find_links": Key(
        list_of(_location),
        "[wheels]",
        "local wheel folders or pages, relative to this file; default: those pip is configured with",
    ),
    "pins": Key(
        list_of(pin_rule),
        '[{torch: "==2.2.*", require: ["torchvision==0.17.*"]}]',
        "requirements (`require:`) or constraints (`constrain:`) for a range of torch releases; each replaces the "
        "known pins' of the packages it names",
        entries=PIN_RULE_KEYS,
    ),
    "expect": Key(
        list_of(_expectation),
        '[{probe: autograd_dot, device: mps, torch: ">=1.12", outcome: pass}]',
        "what `nox -s verify` checks against the stored results",
        entries=EXPECTATION_KEYS,
    ),
    "project": Key(
        _location,
        ".",
        "your own project's folder, relative to this file: built once into a wheel, installed in every cell",
    ),
    "requires": Key(list_of(_requirement), '["pytest>=7"]', "requirements installed in every cell, beside torch"),
    "env": Key(
        _variables,
        "{MY_BACKEND: torch}",
        "variables every pair finds set, whatever the caller's shell says; a record depends on them",
    ),
    "pass_env": Key(
        list_of(_passed_variable),
        "[MY_BACKEND, MY_*]",
        "variables taken from the caller's environment (a name, or a pattern with *); a record depends on their "
        "values (stored as digests)",
    ),
    "probe_options": Key(
        _probe_options,
        '{opsweep: {ops: "add|mul.*"}}',
        "options handed to each named probe (as JSON in $TORCHMATRIX_PROBE_OPTIONS); a record depends on its probe's",
    ),
}
