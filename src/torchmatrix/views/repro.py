"""A repro per changed sample: a standalone script that runs one sample again, for a probe whose records ask for it.

A probe asks through its records: ``metrics.repro`` names a function of the probe that runs one sample again,
called as ``function(check, input, device, **arguments)`` (the check's name, the sample's input digest, the
device), the arguments to give it, and which of them are folders relative to the probe's own folder::

    "repro": {"function": "reproduce", "arguments": {"seed": 0, "store": "../inputs"}, "folders": ["store"]}

Every sample whose output changed between two releases (:func:`.sameinputs.changed_samples`, on the steps a
history marks changed) of such a probe gets a script, ``repro/<check>_<input>.py`` beside the reports, that the
views link: a PEP 723 block of the probe's dependencies, what the probe recorded, the ``nox -s bisect`` line that
finds the release where it changed, and the call, made as the later release's record asks, its folders given
relative to the script. The scripts import the probe from one copy of its file the report writes beside them,
``repro/<probe>_probe.py``, so what a script prints is the probe's by construction; they import nothing of
torchmatrix. A record without ``metrics.repro`` gets none. A pure function of the histories and the probe's file.
"""

from __future__ import annotations

import ast
import functools
import json
import keyword
import math
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core import Record
from ..errors import TorchmatrixError
from ..matrix import pep723
from ..matrix.schema import PROBE_NAME
from .history import History, SincePrevious
from .model import Column, Row, Table
from .sameinputs import changed_samples

FOLDER = "repro"
"""Where the scripts go, in the report's output folder."""
MODULE_SUFFIX = "_probe.py"
"""How the copy of a probe the scripts import ends: ``repro/opsweep_probe.py``."""
GIVEN = ("check", "input", "device")
"""What a script gives the probe's function first, in this order; no argument of the record may be named so."""


@dataclass(frozen=True)
class ReproCall:
    """What a record's ``metrics.repro`` asks its scripts to call: the probe's function, and its arguments."""

    function: str
    arguments: Mapping[str, Any]
    """Keyword arguments, each a JSON value the script writes as a Python literal."""
    folders: frozenset[str] = frozenset()
    """The arguments that are folders relative to the probe's folder (or null): the script gives them relative to
    itself."""

    @classmethod
    def of(cls, metrics: Mapping[str, Any]) -> ReproCall | None:
        """The call ``metrics`` (a record's) asks for; None where it asks none, or asks it in another shape: a
        result file is anyone's, and what it names becomes code."""
        asked = metrics.get("repro")
        if not isinstance(asked, Mapping) or not _identifier(asked.get("function")):
            return None
        arguments, folders = asked.get("arguments", {}), asked.get("folders", [])
        if not isinstance(arguments, Mapping) or not isinstance(folders, list):
            return None
        if not all(_identifier(name) and name not in GIVEN and _literal(value) for name, value in arguments.items()):
            return None
        if not all(isinstance(name, str) and name in arguments and isinstance(arguments[name], str | None)
                   for name in folders):  # fmt: skip
            return None
        return cls(asked["function"], dict(arguments), frozenset(folders))


@dataclass(frozen=True)
class SampleChange:
    """One sample whose output changed from one release to the next of a machine and device."""

    probe: str
    check: str
    column: Column
    before: Row
    after: Row
    input: str
    output_before: str
    output_after: str
    ulps_before: int | None = None
    ulps_after: int | None = None
    call: ReproCall | None = None
    """What the later release's record asks a repro script to call; None: it asks for none."""

    @property
    def script(self) -> str:
        """The script's path in the report's output folder (``repro/exp2_b1e54f21c4cac4e0.py``)."""
        return script_path(self.check, self.input, self.column.device)

    @property
    def exactness(self) -> str:
        """``closer to exact`` or ``further`` from float64 (in ulps) than before, ``as far``; '' where unknown."""
        if self.ulps_before is None or self.ulps_after is None:
            return ""
        if self.ulps_after == self.ulps_before:
            return "as far"
        return "closer to exact" if self.ulps_after < self.ulps_before else "further"

    @property
    def ulps(self) -> str:
        """``3 → 0 ulps: closer to exact``; '' where either distance is unknown."""
        if not self.exactness:
            return ""
        return f"{self.ulps_before} → {self.ulps_after} ulps: {self.exactness}"


@dataclass(frozen=True)
class ProbeSource:
    """What the repro scripts of a probe are made from: its file, and where it and the scripts lie."""

    source: str
    """The probe file's text, which the scripts import a copy of."""
    probe_folder: Path
    """The probe file's folder (absolute): the folders its record names are relative to it."""
    scripts: Path
    """The scripts' folder (absolute): a script gives those folders relative to it."""
    folder: str
    """The scripts' folder, relative to the matrix's: for the bisect command a script suggests."""
    dependencies: tuple[str, ...] = ()
    """The probe's PEP 723 ``dependencies``: the scripts' too."""

    @functools.cached_property
    def functions(self) -> frozenset[str]:
        """The functions the probe's file defines at its top level: those a record may ask a script to call."""
        try:
            tree = ast.parse(self.source)
        except SyntaxError:
            return frozenset()
        return frozenset(node.name for node in tree.body if isinstance(node, ast.FunctionDef))

    def given(self, call: ReproCall) -> dict[str, Any]:
        """The call's arguments, each folder relative to the scripts' folder."""
        return {
            name: Path(os.path.relpath(self.probe_folder / value, self.scripts)).as_posix()
            if name in call.folders and isinstance(value, str) else value
            for name, value in call.arguments.items()
        }  # fmt: skip


def sources(
    tables: Iterable[Table], probe_file: Callable[[str], Path | None], scripts: Path, base: Path
) -> dict[str, ProbeSource]:
    """The file of each probe of ``tables`` whose records ask for repro scripts, by the probe's name:
    ``probe_file(name)``, for scripts written into ``scripts``, the matrix's folder ``base``. A probe without a
    file, or whose file cannot be read or has a malformed script block, gets none."""
    found = {}
    for table in tables:
        path = probe_file(table.probe)
        if path is None or not any(ReproCall.of(_metrics(entry.record)) for entry in table.entries.values()):
            continue
        try:
            source = path.read_text(encoding="utf-8")
            dependencies = pep723.dependencies(path)
        except (OSError, UnicodeDecodeError, TorchmatrixError):
            continue
        folder = Path(os.path.relpath(scripts.absolute(), base.absolute())).as_posix()
        found[table.probe] = ProbeSource(source, path.parent.absolute(), scripts.absolute(), folder, dependencies)
    return found


def script_path(check: str, input_digest: str, device: str) -> str:
    """Where the repro of ``check``'s sample ``input_digest`` on ``device`` lies in the output folder: a probe name
    (letters, digits and _) so that bisect and a matrix take it."""
    name = re.sub(r"[^A-Za-z0-9]+", "_", check).strip("_") + "_" + re.sub(r"[^A-Za-z0-9]", "", input_digest)
    return f"{FOLDER}/{name}{'' if device == 'cpu' else '_' + re.sub(r'[^A-Za-z0-9]', '', device)}.py"


def module_path(probe: str) -> str:
    """Where the copy of ``probe`` the scripts import lies in the output folder (``repro/opsweep_probe.py``)."""
    name = re.sub(r"[^A-Za-z0-9]+", "_", probe).strip("_")
    return f"{FOLDER}/{name if PROBE_NAME.match(name) else 'probe_' + name}{MODULE_SUFFIX}"


def sample_changes(history: History, column: Column | None = None) -> tuple[SampleChange, ...]:
    """Every sample whose output changed in ``history`` (in ``column``), in the order of its checks, then of
    its columns and releases."""
    found = []
    for name in history.changed_checks(column):
        for where in history.columns:
            if column not in (None, where):
                continue
            for row in history.releases[where]:
                step = history.steps.get((name, row, where))
                if step is None or step.change is not SincePrevious.CHANGED or step.against is None:
                    continue
                earlier = history.steps[name, step.against, where].check
                entry = history.entries.get((row, where))
                call = ReproCall.of(_metrics(entry.record if entry is not None else None))
                for digest, old, new in changed_samples(earlier, step.check):
                    change = SampleChange(
                        history.probe, name, where, step.against, row, digest, old, new,
                        _ulps(earlier, digest), _ulps(step.check, digest), call,
                    )  # fmt: skip
                    found.append(change)
    return tuple(found)


def scripts(changes: Iterable[SampleChange], probe: ProbeSource) -> dict[str, str]:
    """Path in the output folder -> the script's text, one per (check, input, device) of ``changes`` whose record
    asks for one of a function ``probe`` defines; and the copy of the probe they import."""
    grouped: dict[str, list[SampleChange]] = {}
    for change in changes:
        if change.call is not None and change.call.function in probe.functions:
            grouped.setdefault(change.script, []).append(change)
    if not grouped:
        return {}
    module = module_path(next(iter(grouped.values()))[0].probe)
    found = {path: _script(group, probe, module) for path, group in grouped.items()}
    return {**found, module: _copy(probe, module)}


def _copy(probe: ProbeSource, module: str) -> str:
    """The probe's file as it is, under a line that says what it is here."""
    name = module.rpartition("/")[2]
    return f"# {name}: a copy of the probe the repro scripts beside it import, by torchmatrix's report.\n{probe.source}"


def _script(changes: Sequence[SampleChange], probe: ProbeSource, module: str) -> str:
    first = changes[0]
    assert first.call is not None  # scripts() groups only the changes whose record asks for one
    device = first.column.device
    name = first.script.rpartition("/")[2]
    block = ["# /// script", f"# dependencies = {json.dumps(list(probe.dependencies))}"]
    if device != "cpu":
        block += ["#", "# [tool.torchmatrix]", f"# devices = {json.dumps([device])}"]
    recorded = "\n".join(
        f"  {change.column.machine}, {change.column.device}: torch {change.before.label} {change.output_before}"
        f"{_ulps_text(change.ulps_before)} -> torch {change.after.label} {change.output_after}"
        f"{_ulps_text(change.ulps_after)}" + (f": {change.exactness}" if change.exactness else "")
        for change in changes
    )
    bisect = f"nox -s bisect -- {probe.folder}/{name} --by-output --from {first.before.torch} --to {first.after.torch}"
    imported = module.rpartition("/")[2].removesuffix(".py")
    doc = (
        f"{first.check} on one sample of the probe {first.probe}, on {device}: its output changed between releases.\n\n"
        f"What {first.probe} recorded (the output's digest, and its distance from float64 in ulps where recorded):\n"
        f"{recorded}\n\n"
        f"Run it under each release (python {name}), or find the release where it changed:\n\n    {bisect}\n\n"
        f"Generated by torchmatrix's report, as the probe's record asks: it calls {first.call.function}() of\n"
        f"{imported}.py beside it, a copy of the probe, and needs torch and what the block above names.\n"
    )
    arguments = [repr(first.check), repr(first.input), repr(device)] + [
        f"{key}=os.path.join(HERE, {value!r})" if key in first.call.folders and isinstance(value, str)
        else f"{key}={value!r}"
        for key, value in probe.given(first.call).items()
    ]  # fmt: skip
    code = [
        "import os",
        "",
        f"from {imported} import {first.call.function}",
        "",
        "HERE = os.path.dirname(os.path.abspath(__file__))",
        "",
        'if __name__ == "__main__":',
        f"    {first.call.function}({', '.join(arguments)})",
    ]
    return "\n".join([*block, "# ///", _docstring(doc), *code, ""])


def _docstring(text: str) -> str:
    return '"""' + text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"') + '"""\n'


def _identifier(name: Any) -> bool:
    return isinstance(name, str) and name.isidentifier() and name.isascii() and not keyword.iskeyword(name)


def _literal(value: Any) -> bool:
    """Whether ``value`` (JSON) reads back as itself from its ``repr`` in every Python: a finite number, text,
    true, false, null, or a list or mapping of them."""
    if value is None or isinstance(value, bool | int | str):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_literal(item) for item in value)
    return isinstance(value, Mapping) and all(isinstance(key, str) and _literal(item) for key, item in value.items())


def _metrics(record: Record | None) -> Mapping[str, Any]:
    return record.metrics if record is not None else {}


def _ulps(check: Mapping[str, Any], input_digest: str) -> int | None:
    for sample in check.get("samples") or ():
        if isinstance(sample, Mapping) and sample.get("input") == input_digest:
            ulps = sample.get("ulps")
            return ulps if type(ulps) is int else None
    return None


def _ulps_text(ulps: int | None) -> str:
    return "" if ulps is None else f" ({ulps} ulps)"
