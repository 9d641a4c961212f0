"""A repro per changed sample: a standalone script that runs one operator of the sweep on one sample's inputs.

Every sample whose output changed between two releases (:func:`.sameinputs.changed_samples`, on the steps a
history marks changed) gets a script, ``repro/<operator>_<input>.py`` beside the reports, that the views
link. It finds the sample in the store of captured inputs (by a path relative to itself; or, for an operator
the sweep ran on op_db's own samples, makes them again from the sweep's seed), checks that its input digest
is the one recorded, runs the operator as the sweep does, and prints the output's digest (the one the sweep
records) and its first elements. Run by hand under the two releases it shows the difference;
``nox -s bisect -- <script> --by-output`` takes it as it is, as its printed lines are what changed.

The scripts import nothing of torchmatrix. The sweep's own functions (the store's reader, the call, the
digests) are copied once from the probe's source into a module beside them, ``repro/<probe>_functions.py``,
which every script imports, so its digest is the sweep's by construction; a script is a few lines of its own
(the sample it is about), runnable from its folder. A pure function of the histories and that source.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .history import History, SincePrevious
from .model import Column, Row, Table
from .sameinputs import changed_samples

FOLDER = "repro"
"""Where the scripts go, in the report's output folder."""
BORROWED = (
    "DIGEST_CHARS",
    "MESSAGE_CHARS",
    "_ADDRESS",
    "load_op_db",
    "full_name",
    "first_samples",
    "call",
    "RandomUse",
    "fresh_copy",
    "random_state",
    "sample_values",
    "STORE_FORMAT",
    "MANIFEST",
    "Store",
    "decode",
    "decode_tensor",
    "sample_seed",
    "digest",
    "feed",
    "tensor_bytes",
    "stable_repr",
    "structured",
    "seed_everything",
    "short",
)
"""What a script takes from the sweep probe's source, by name."""
ELEMENTS = 8
"""How many of each output tensor's first elements a script prints."""


def functions_path(probe: str) -> str:
    """Where the sweep's functions the scripts import lie in the output folder (``repro/opsweep_functions.py``)."""
    return f"{FOLDER}/{probe}_functions.py"


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
    seed: int = 0
    samples: int = 3
    """The sweep's options in the later release: where op_db's own samples are made again."""
    random: bool = False

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
class Sweep:
    """What the scripts are made from: the sweep probe's source, and where things lie from the report."""

    source: str
    """The probe file's text."""
    store: str = ""
    """The store's folder, relative to the scripts' folder (``../inputs/opsweep``); '' for none."""
    folder: str = f"reports/{FOLDER}"
    """The scripts' folder as the project's root sees it, for the bisect command a script suggests."""
    dependencies: tuple[str, ...] = ()
    """The probe's PEP 723 ``dependencies`` (op_db needs them to be imported): the scripts' too."""


def script_path(check: str, input_digest: str, device: str) -> str:
    """Where the repro of ``check``'s sample ``input_digest`` on ``device`` lies in the output folder: a probe name
    (letters, digits and _) so that bisect and a matrix take it."""
    name = re.sub(r"[^A-Za-z0-9]+", "_", check).strip("_") + "_" + re.sub(r"[^A-Za-z0-9]", "", input_digest)
    return f"{FOLDER}/{name}{'' if device == 'cpu' else '_' + re.sub(r'[^A-Za-z0-9]', '', device)}.py"


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
                options = _options(history, row, where)
                for digest, old, new in changed_samples(earlier, step.check):
                    found.append(
                        SampleChange(
                            history.probe,
                            name,
                            where,
                            step.against,
                            row,
                            digest,
                            old,
                            new,
                            _ulps(earlier, digest),
                            _ulps(step.check, digest),
                            seed=_whole(options.get("seed"), 0),
                            samples=_whole(options.get("samples"), 3),
                            random=step.check.get("random") is True,
                        )
                    )
    return tuple(found)


def store_option(table: Table) -> str | None:
    """The ``store`` option (relative to the probe's folder) of the newest record of ``table`` that names one."""
    for (_, _), entry in sorted(table.entries.items(), key=lambda item: item[0][0].sort_key(), reverse=True):
        metrics = entry.record.metrics if entry.record is not None else {}
        options = metrics.get("options") if isinstance(metrics, Mapping) else None
        store = options.get("store") if isinstance(options, Mapping) else None
        if isinstance(store, str) and store:
            return store
    return None


def inputs_store(table: Table) -> tuple[str, str] | None:
    """(machine, folder) of the store beside a machine's results (its inputs folder,
    :func:`torchmatrix.results.inputs_path`) that the newest record of ``table`` replayed, where the sweep was
    given no ``store``; None where none did. The folder is one name, as a result file may say anything."""
    for (_, column), entry in sorted(table.entries.items(), key=lambda item: item[0][0].sort_key(), reverse=True):
        metrics = entry.record.metrics if entry.record is not None else {}
        store = metrics.get("store") if isinstance(metrics, Mapping) else None
        folder = store.get("inputs_folder") if isinstance(store, Mapping) else None
        if isinstance(folder, str) and re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]*", folder):
            return column.machine, folder
    return None


def can_borrow(source: str) -> bool:
    """Whether ``source`` (a probe's text) defines everything a script takes from the sweep."""
    try:
        _borrowed(source)
    except ValueError:
        return False
    return True


def scripts(changes: Iterable[SampleChange], sweep: Sweep) -> dict[str, str]:
    """Path in the output folder -> the script's text, one per (check, input, device) of ``changes``."""
    grouped: dict[str, list[SampleChange]] = {}
    for change in changes:
        grouped.setdefault(change.script, []).append(change)
    if not grouped:
        return {}
    probe = next(iter(grouped.values()))[0].probe
    shared = functions_path(probe)
    module = shared.rpartition("/")[2].removesuffix(".py")
    found = {path: _script(changes, sweep, module) for path, changes in grouped.items()}
    return {**found, shared: _functions(sweep, probe)}


def _functions(sweep: Sweep, probe: str) -> str:
    """The module every script imports: the sweep's functions, copied, and how a script reproduces its sample."""
    doc = (
        f"The functions of torchmatrix's {probe} probe that its repro scripts share, copied from the probe\n"
        "(so that a script's digest is the sweep's), and how a script reproduces its sample. Generated by\n"
        "torchmatrix's report; it imports nothing of torchmatrix.\n"
    )
    return "\n".join([_docstring(doc), _borrowed(sweep.source), "", f"ELEMENTS = {ELEMENTS}", "", "",
                      _REPRODUCE.strip("\n"), ""])  # fmt: skip


def _script(changes: Sequence[SampleChange], sweep: Sweep, module: str) -> str:
    first = changes[0]
    device = first.column.device
    name = first.script.rpartition("/")[2]
    block = ["# /// script", f"# dependencies = {json.dumps(list(sweep.dependencies))}"]
    if device != "cpu":
        block += ["#", "# [tool.torchmatrix]", f"# devices = {json.dumps([device])}"]
    recorded = "\n".join(
        f"  {change.column.machine}, {change.column.device}: torch {change.before.label} {change.output_before}"
        f"{_ulps_text(change.ulps_before)} -> torch {change.after.label} {change.output_after}"
        f"{_ulps_text(change.ulps_after)}" + (f": {change.exactness}" if change.exactness else "")
        for change in changes
    )
    bisect = f"nox -s bisect -- {sweep.folder}/{name} --by-output --from {first.before.torch} --to {first.after.torch}"
    doc = (
        f"{first.check} on one sample of torch's operator sweep, on {device}: its output changed between releases."
        f"{' The operator draws random numbers, from the seed of the sample.' if first.random else ''}\n\n"
        "What the sweep recorded (the output's digest, and its distance from float64 in ulps):\n"
        f"{recorded}\n\n"
        f"Run it under each release (python {name}): it prints the output's digest as the sweep records it, and\n"
        f"the first elements of each output tensor. Or find the release where it changed:\n\n    {bisect}\n\n"
        f"Generated by torchmatrix's report from the operator sweep; it imports the sweep's functions from\n"
        f"{module}.py beside it, needs torch and what the block above names, and reads the sample from the\n"
        "store of captured inputs at STORE, relative to this file.\n"
    )
    settings = "\n".join(
        [
            "import os",
            "",
            f"from {module} import reproduce",
            "",
            f"OPERATOR = {first.check!r}",
            f"INPUT = {first.input!r}",
            '"""The digest of the sample\'s inputs, as the sweep records it."""',
            f"DEVICE = {device!r}",
            f"STORE = {sweep.store!r}",
            f"SEED, SAMPLES = {first.seed!r}, {first.samples!r}",
            '"""The sweep\'s: where it ran the operator on op_db\'s own samples, they are made again from these."""',
            "",
            'if __name__ == "__main__":',
            '    store = os.path.join(os.path.dirname(os.path.abspath(__file__)), STORE) if STORE else ""',
            "    reproduce(OPERATOR, INPUT, DEVICE, store, SEED, SAMPLES)",
        ]
    )
    return "\n".join([*block, "# ///", _docstring(doc), settings, ""])


def _docstring(text: str) -> str:
    return '"""' + text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"') + '"""\n'


_REPRODUCE = '''
def reproduce(operator, input_digest, device, store, seed, samples):
    """Run ``operator`` on the sample whose inputs' digest is ``input_digest``; print the output's digest and its
    first elements on stdout (which bisect --by-output compares), the release on stderr. Exit 125 (bisect's "skip")
    where this release cannot run it."""
    sys.stderr.write("torch {}\\n".format(torch.__version__))
    try:
        op_db = load_op_db()
    except RuntimeError as error:
        sys.stderr.write("{}\\n".format(error))
        sys.exit(125)
    ops = [op for op in op_db if full_name(op) == operator]
    if not ops:
        sys.stderr.write("this torch's op_db has no operator {}\\n".format(operator))
        sys.exit(125)
    found = find_sample(ops[0], input_digest, device, store, seed, samples)
    if found is None:
        sys.stderr.write("no sample of {} with the input {} here\\n".format(operator, input_digest))
        sys.exit(125)
    values, seeded_with = found
    print("{} on {}: input {}".format(operator, device, input_digest))
    try:
        output, _ = call(ops[0], values, seeded_with)
    except Exception as error:
        print("output raised " + type(error).__name__)
        sys.stderr.write(short(error) + "\\n")
        return
    print("output " + digest(output))
    for line in elements(output, "output"):
        print(line)


def find_sample(op, input_digest, device, store, seed, samples):
    """The sample's values and seed: from the store, else from op_db's own samples; None where neither has it."""
    if store:
        stored = Store(store)
        for sample in (stored.samples(full_name(op)) or {}).get("samples", []):
            try:
                values = stored.decode(sample["value"], device)
            except Exception:  # a dtype this release lacks
                continue
            if digest(values, with_strides=True) == input_digest:
                return values, sample_seed(sample["key"])
    try:
        made = first_samples(op, device, {"samples": samples, "seed": seed})
    except Exception:
        return None
    for sample in made:
        values = sample_values(sample)
        if digest(values, with_strides=True) == input_digest:
            return values, seed
    return None


def elements(value, where):
    """A line per output tensor: its dtype, shape and first elements, as Python prints them in any release."""
    if isinstance(value, torch.Tensor):
        tensor = value.detach().cpu()
        if tensor.layout != torch.strided:
            tensor = tensor.to_dense()
        for resolve in ("resolve_conj", "resolve_neg"):
            if hasattr(tensor, resolve):
                tensor = getattr(tensor, resolve)()
        flat = tensor.reshape(-1)
        shown = " ".join(repr(item) for item in flat[:ELEMENTS].tolist())
        more = " ..." if flat.numel() > ELEMENTS else ""
        dtype = str(tensor.dtype).replace("torch.", "")
        yield "{} {} {}: {}{}".format(where, dtype, list(tensor.shape), shown, more)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            for line in elements(item, "{}[{}]".format(where, index)):
                yield line
    else:
        yield "{} {}".format(where, stable_repr(value))
'''


def _borrowed(source: str) -> str:
    """The imports and definitions of :data:`BORROWED` from the probe's ``source``, in its order; the imports
    only of the modules they use (and ``os``, ``sys`` and ``torch``, which the script's own code uses)."""
    tree = ast.parse(source)
    kept, names = [], set()
    for node in tree.body:
        defined = _defines(node)
        if defined & set(BORROWED):
            kept.append(node)
            names |= defined
    missing = [name for name in BORROWED if name not in names]
    if missing:
        raise ValueError(f"the probe defines no {', '.join(missing)}")
    used = {node.id for part in kept for node in ast.walk(part) if isinstance(node, ast.Name)} | {"os", "torch"}
    imports = [
        ast.get_source_segment(source, node) or ""
        for node in tree.body
        if isinstance(node, ast.Import | ast.ImportFrom)
        and any((alias.asname or alias.name).split(".")[0] in used for alias in node.names)
    ]
    imports = sorted({*imports, "import sys"}, key=lambda line: (line == "import torch", line))
    parts = [ast.get_source_segment(source, node) or "" for node in kept]
    return "\n".join(imports) + "\n\n\n" + "\n\n\n".join(parts)


def _defines(node: ast.stmt) -> set[str]:
    if isinstance(node, ast.FunctionDef | ast.ClassDef):
        return {node.name}
    if isinstance(node, ast.Assign):
        return {
            item.id
            for target in node.targets
            for item in ast.walk(target)
            if isinstance(item, ast.Name) and isinstance(item.ctx, ast.Store)
        }
    return set()


def _options(history: History, row: Row, column: Column) -> Mapping[str, Any]:
    entry = history.entries.get((row, column))
    metrics = entry.record.metrics if entry is not None and entry.record is not None else {}
    options = metrics.get("options") if isinstance(metrics, Mapping) else None
    return options if isinstance(options, Mapping) else {}


def _ulps(check: Mapping[str, Any], input_digest: str) -> int | None:
    for sample in check.get("samples") or ():
        if isinstance(sample, Mapping) and sample.get("input") == input_digest:
            ulps = sample.get("ulps")
            return ulps if type(ulps) is int else None
    return None


def _whole(value: Any, default: int) -> int:
    return value if type(value) is int and value >= 0 else default


def _ulps_text(ulps: int | None) -> str:
    return "" if ulps is None else f" ({ulps} ulps)"
