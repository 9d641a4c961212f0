"""The repro scripts: one per sample whose output changed, where the probe's records ask for them."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from torchmatrix.core import Kind
from torchmatrix.matrix import kinds, pep723
from torchmatrix.matrix.schema import PROBE_NAME
from torchmatrix.results import CellResult
from torchmatrix.views import history, model, publish, repro

from ..conftest import ROOT
from .report_data import autograd, cell, operator, swept

SWEEP = (ROOT / "probes" / "opsweep.py").read_text(encoding="utf-8")
PROBE = repro.ProbeSource(SWEEP, Path("/project/probes"), Path("/project/reports/repro"), "reports/repro")
"""The sweep's file, for scripts written into reports/repro beside the probes."""
ASKED = {"function": "reproduce", "arguments": {"seed": 0, "store": "../reports/inputs/opsweep"}, "folders": ["store"]}
"""What the sweep's records ask of their repro scripts."""


def asking(found: list[CellResult], asked: object = ASKED) -> list[CellResult]:
    """``found``, each record asking for repro scripts with ``asked`` as its ``metrics.repro``."""
    for result in found:
        for record in result.records:
            record.metrics["repro"] = asked
    return found


def sweep_history(asked: object = ASKED) -> history.History:
    found = [
        swept("2.0.1", "3.11", [operator("exp2", [("b1e54f21c4cac4e0", "A"), ("s2", "B")])]),
        swept("2.2.0", "3.12", [operator("exp2", [("b1e54f21c4cac4e0", "A*"), ("s2", "B")])], capability="AVX512"),
    ]
    found[0].records[0].metrics["checks"][0]["samples"][0]["ulps"] = 3
    found[1].records[0].metrics["checks"][0]["samples"][0]["ulps"] = 1
    [result] = history.histories(model.build(asking(found, asked)))
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
    probe = dataclasses.replace(PROBE, dependencies=("numpy", "expecttest"))
    files = repro.scripts(repro.sample_changes(sweep_history()), probe)
    copy = files.pop(repro.module_path("opsweep"))
    [(name, text)] = files.items()
    path = tmp_path / name.rpartition("/")[2]
    path.write_text(text)
    assert PROBE_NAME.match(path.stem)
    assert kinds.kind_of_file(path)[0] is Kind.SCRIPT_OR_TESTS  # no run(): no test either, pytest will say
    meta = pep723.read(path)
    assert meta.dependencies == ("numpy", "expecttest") and meta.devices is None  # cpu alone
    for source in (text, copy):
        tree = ast.parse(source)
        imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
        assert not any(module.startswith("torchmatrix") for module in imported)
    assert "from opsweep_probe import reproduce" in text and len(text.splitlines()) < 40
    # The call the record asks for, its folder given from the script's own place.
    assert "reproduce('exp2', 'b1e54f21c4cac4e0', 'cpu', seed=0, store=os.path.join(HERE, '../inputs/opsweep'))" in text
    assert "nox -s bisect -- reports/repro/exp2_b1e54f21c4cac4e0.py --by-output --from 2.0.1 --to 2.2.0" in text
    assert "x86-box, cpu: torch 2.0.1 A (3 ulps) -> torch 2.2.0 A* (1 ulps): closer to exact" in text
    # The probe's own file, copied once beside the scripts: what a script prints is the probe's by construction.
    assert copy.endswith(SWEEP) and copy.count("\n") == SWEEP.count("\n") + 1


def test_a_script_of_another_device_says_it_runs_there(tmp_path: Path) -> None:
    [change] = repro.sample_changes(sweep_history())
    cuda = dataclasses.replace(change, column=model.Column("x86-box", "cuda"))
    files = repro.scripts([cuda], PROBE)
    files.pop(repro.module_path("opsweep"))
    [(name, text)] = files.items()
    assert name == "repro/exp2_b1e54f21c4cac4e0_cuda.py"
    path = tmp_path / "script.py"
    path.write_text(text)
    assert pep723.read(path).devices == ("cuda",)


def test_a_folder_the_record_names_is_given_relative_to_the_script_and_none_as_none() -> None:
    elsewhere = dataclasses.replace(PROBE, scripts=Path("/elsewhere/out/repro"))
    call = repro.ReproCall("reproduce", {"store": "../reports/inputs", "seed": 1}, frozenset({"store"}))
    assert elsewhere.given(call) == {"store": "../../../project/reports/inputs", "seed": 1}
    asked = dict(ASKED, arguments={"seed": 0, "store": None})
    [(_, text)] = [item for item in repro.scripts(repro.sample_changes(sweep_history(asked)), PROBE).items()
                   if not item[0].endswith(repro.MODULE_SUFFIX)]  # fmt: skip
    assert "reproduce('exp2', 'b1e54f21c4cac4e0', 'cpu', seed=0, store=None)" in text


@pytest.mark.parametrize(
    "asked",
    [
        None,
        "reproduce",
        {"function": "os.system('rm -rf ~')"},
        {"function": "import"},
        {"function": "reproduce", "arguments": {"x) or os.system('x'": 1}},
        {"function": "reproduce", "arguments": {"check": "exp2"}},  # what a script gives first
        {"function": "reproduce", "arguments": {"seed": float("nan")}},
        {"function": "reproduce", "arguments": {"seed": 0}, "folders": ["store"]},  # a folder it does not give
        {"function": "reproduce", "arguments": {"store": 3}, "folders": ["store"]},
        {"function": "reproduce", "arguments": {}, "folders": [{}]},
    ],
)
def test_a_record_that_asks_for_no_script_or_in_another_shape_gets_none(asked: object) -> None:
    changes = repro.sample_changes(sweep_history(asked))
    assert [change.call for change in changes] == [None]
    assert repro.scripts(changes, PROBE) == {}


def test_only_a_function_the_probe_defines_is_called() -> None:
    changes = repro.sample_changes(sweep_history(dict(ASKED, function="no_such_function")))
    assert repro.scripts(changes, PROBE) == {}


def test_the_probes_that_ask_are_found_by_their_records_and_read_from_their_files(tmp_path: Path) -> None:
    found = asking([swept("2.0.1", "3.11", [operator("exp2", [("b1e54f21c4cac4e0", "A")])])])
    found.append(cell("x86-box", "2.2.0", "3.12", (autograd("cpu"),)))  # a probe whose records ask for none
    report = model.build(found)
    files = {"opsweep": ROOT / "probes" / "opsweep.py", "autograd_dot": ROOT / "probes" / "autograd_dot.py"}
    sources = repro.sources(report.tables, files.get, ROOT / "reports" / "repro", ROOT)
    assert list(sources) == ["opsweep"]
    assert sources["opsweep"] == repro.ProbeSource(
        SWEEP, ROOT / "probes", ROOT / "reports" / "repro", "reports/repro",
        pep723.dependencies(ROOT / "probes" / "opsweep.py"),
    )  # fmt: skip
    assert repro.sources(report.tables, lambda name: tmp_path / "absent.py", tmp_path, tmp_path) == {}
    assert repro.sources(report.tables, lambda name: None, tmp_path, tmp_path) == {}


def test_the_views_link_each_changed_sample_to_its_script() -> None:
    found = asking([
        swept("2.0.1", "3.11", [operator("exp2", [("b1e54f21c4cac4e0", "A")])]),
        swept("2.2.0", "3.12", [operator("exp2", [("b1e54f21c4cac4e0", "A*")])]),
    ])  # fmt: skip
    files = publish.render(model.build(found), ("html", "changes"), probes={"opsweep": PROBE})
    assert "repro/exp2_b1e54f21c4cac4e0.py" in files and "repro/opsweep_probe.py" in files
    assert "[exp2_b1e54f21c4cac4e0.py](repro/exp2_b1e54f21c4cac4e0.py)" in files["CHECK-CHANGES.md"]
    assert '<a href="repro/exp2_b1e54f21c4cac4e0.py">' in files["compatibility.html"]
    without = publish.render(model.build(found), ("changes",))
    assert not any(name.startswith("repro/") for name in without) and "](repro/" not in without["CHECK-CHANGES.md"]
