"""The repro scripts: one per sample whose output changed, made from the sweep probe's own functions."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

from torchmatrix import probekinds, scriptmeta
from torchmatrix.core import Kind
from torchmatrix.matrix.schema import PROBE_NAME
from torchmatrix.report import history, model, publish, repro

from ..conftest import ROOT
from .report_data import operator, swept

SWEEP = (ROOT / "probes" / "opsweep.py").read_text(encoding="utf-8")


def sweep_history() -> history.History:
    found = [
        swept("2.0.1", "3.11", [operator("exp2", [("b1e54f21c4cac4e0", "A"), ("s2", "B")])]),
        swept("2.2.0", "3.12", [operator("exp2", [("b1e54f21c4cac4e0", "A*"), ("s2", "B")])], capability="AVX512"),
    ]
    found[0].records[0].metrics["checks"][0]["samples"][0]["ulps"] = 3
    found[1].records[0].metrics["checks"][0]["samples"][0]["ulps"] = 1
    [result] = history.histories(model.build(found))
    return result


def test_each_sample_whose_output_changed_is_one_change_with_its_distance_from_float64() -> None:
    [change] = repro.sample_changes(sweep_history())
    assert (change.check, change.input, change.output_before, change.output_after) == (
        "exp2", "b1e54f21c4cac4e0", "A", "A*"
    )  # fmt: skip
    assert (change.before.torch, change.after.torch) == ("2.0.1", "2.2.0")
    assert change.ulps == "3 → 1 ulps: closer to exact"
    assert change.script == "repro/exp2_b1e54f21c4cac4e0.py"


def test_closer_further_or_as_far_from_exact_and_nothing_where_a_distance_is_unknown() -> None:
    [change] = repro.sample_changes(sweep_history())
    assert dataclasses.replace(change, ulps_after=5).exactness == "further"
    assert dataclasses.replace(change, ulps_after=3).exactness == "as far"
    assert dataclasses.replace(change, ulps_before=None).ulps == ""


def test_a_script_is_a_standalone_script_bisect_takes_as_it_is(tmp_path: Path) -> None:
    sweep = repro.Sweep(SWEEP, "../inputs/opsweep", "reports/repro", ("numpy", "expecttest"))
    files = repro.scripts(repro.sample_changes(sweep_history()), sweep)
    shared = files.pop(repro.functions_path("opsweep"))
    [(name, text)] = files.items()
    path = tmp_path / name.rpartition("/")[2]
    path.write_text(text)
    assert PROBE_NAME.match(path.stem)
    assert probekinds.kind_of_file(path) is Kind.SCRIPT_OR_TESTS  # no run(): no test either, pytest will say
    meta = scriptmeta.read(path)
    assert meta.dependencies == ("numpy", "expecttest") and meta.devices is None  # cpu alone
    for source in (text, shared):
        tree = ast.parse(source)
        imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
        assert not any(module.startswith("torchmatrix") for module in imported)
    assert "from opsweep_functions import reproduce" in text and len(text.splitlines()) < 60
    assert (
        "OPERATOR = 'exp2'" in text and "INPUT = 'b1e54f21c4cac4e0'" in text and "STORE = '../inputs/opsweep'" in text
    )
    assert "nox -s bisect -- reports/repro/exp2_b1e54f21c4cac4e0.py --by-output --from 2.0.1 --to 2.2.0" in text
    assert "x86-box, cpu: torch 2.0.1 A (3 ulps) -> torch 2.2.0 A* (1 ulps): closer to exact" in text
    # The sweep's own functions, copied once beside the scripts: the digest is the sweep's by construction.
    defined = {node.name for node in ast.parse(shared).body if isinstance(node, ast.FunctionDef | ast.ClassDef)}
    assert {"digest", "tensor_bytes", "call", "Store", "decode", "reproduce", "find_sample"} <= defined


def test_the_store_beside_a_machines_results_is_the_newest_replaying_records_one_named_by_one_name() -> None:
    found = [swept("2.0.1", "3.11", [operator("exp2", [("s1", "A")])]), swept("2.2.0", "3.12", [])]
    [table] = model.build(found).tables
    assert repro.inputs_store(table) is None  # each release's own samples
    found[0].records[0].metrics["store"] = {"inputs_folder": "opsweep"}
    [table] = model.build(found).tables
    assert repro.inputs_store(table) == ("x86-box", "opsweep")
    found[0].records[0].metrics["store"] = {"inputs_folder": "../../elsewhere"}  # a result file may say anything
    [table] = model.build(found).tables
    assert repro.inputs_store(table) is None


def test_a_script_of_another_device_says_it_runs_there(tmp_path: Path) -> None:
    [change] = repro.sample_changes(sweep_history())
    cuda = dataclasses.replace(change, column=model.Column("x86-box", "cuda"))
    files = repro.scripts([cuda], repro.Sweep(SWEEP))
    files.pop(repro.functions_path("opsweep"))
    [(name, text)] = files.items()
    assert name == "repro/exp2_b1e54f21c4cac4e0_cuda.py"
    path = tmp_path / "script.py"
    path.write_text(text)
    assert scriptmeta.read(path).devices == ("cuda",)


def test_only_a_probe_that_defines_the_sweeps_functions_can_lend_them() -> None:
    assert repro.can_borrow(SWEEP)
    assert not repro.can_borrow((ROOT / "probes" / "autograd_dot.py").read_text(encoding="utf-8"))


def test_the_views_link_each_changed_sample_to_its_script() -> None:
    found = [
        swept("2.0.1", "3.11", [operator("exp2", [("b1e54f21c4cac4e0", "A")])]),
        swept("2.2.0", "3.12", [operator("exp2", [("b1e54f21c4cac4e0", "A*")])]),
    ]
    files = publish.render(model.build(found), ("html", "changes"), sweeps={"opsweep": repro.Sweep(SWEEP)})
    assert "repro/exp2_b1e54f21c4cac4e0.py" in files
    assert "[exp2_b1e54f21c4cac4e0.py](repro/exp2_b1e54f21c4cac4e0.py)" in files["CHECK-CHANGES.md"]
    assert '<a href="repro/exp2_b1e54f21c4cac4e0.py">' in files["compatibility.html"]
    without = publish.render(model.build(found), ("changes",))
    assert not any(name.startswith("repro/") for name in without) and "](repro/" not in without["CHECK-CHANGES.md"]
