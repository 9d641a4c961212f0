"""The operator sweep for real: a few operators of torch's op_db on this machine's torch, swept twice.

The torch is one this machine installs without a download (tests/faults/conftest.py's ``local_torch``). The
same release swept twice must show no change on any sample it could compare (zero false drift), and one
edited digest exactly one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from torchmatrix import results
from torchmatrix.checks import checks_of
from torchmatrix.core import Outcome, Record
from torchmatrix.views.sameinputs import compare

from ..conftest import ROOT, rewrite
from ..faults.conftest import local_torch

pytestmark = pytest.mark.integration

# One of each kind: plain arithmetic, a convolution, a reduction, one that returns uninitialised memory, a
# random one (op_db seeds it), and one that raises on a CPU.
OPS = ["add", "mul", "nn.functional.conv2d", "sum", "empty", "normal", "jiterator_unary", "no.such.operator"]


def sweep(tmp_path: Path, torch_entry: str, output: str) -> Record:
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(
        f"torch: [{torch_entry}]\nprobes: [opsweep]\nprobe_options:\n  opsweep: {{ops: {json.dumps(OPS)}}}\n"
        f"devices: [cpu]\noutput: {output}\n"
    )
    environ = dict(os.environ, TORCHMATRIX_MATRIX=str(matrix), TORCHMATRIX_MACHINE="sweep-box")
    command = [sys.executable, "-m", "nox", "-f", str(ROOT / "noxfile.py"), "--envdir", str(tmp_path / ".nox")]
    run = subprocess.run([*command, "-s", "probe"], env=environ, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout + run.stderr
    [result] = results.scan(tmp_path / output / "results").results
    [record] = result.records
    return record


@pytest.fixture(scope="module")
def two_sweeps(tmp_path_factory: pytest.TempPathFactory) -> tuple[Record, Record, Path]:
    folder = tmp_path_factory.mktemp("opsweep")
    torch = local_torch(folder / "cache")
    entry = f'{{version: "{torch.version}", python: "{torch.python}"}}' if torch.python else f'"{torch.version}"'
    return sweep(folder, entry, "first"), sweep(folder, entry, "second"), folder


def test_the_sweep_records_each_operator_asked_for(two_sweeps: tuple[Record, Record, Path]) -> None:
    record, _, _ = two_sweeps
    assert record.outcome is Outcome.PASS, record.message
    checks = checks_of(record)
    found = set(checks)
    assert {"add", "mul", "nn.functional.conv2d", "sum", "empty", "normal"} <= found
    assert record.metrics["not_in_op_db"] == ["no.such.operator"]
    assert record.inputs["options"] == {"ops": OPS}
    add = checks["add"]
    assert add["ok"] is True and 0 <= add["error"] <= 1.0 and len(add["samples"]) == 3
    assert all(len(sample["input"]) == len(sample["output"]) == 16 for sample in add["samples"])
    assert checks["empty"]["nondeterministic"] is True and all(s["output"] is None for s in checks["empty"]["samples"])
    assert checks["normal"]["random"] is True and checks["normal"]["error"] is None  # no float64 to compare with
    if "jiterator_unary" in checks:  # in op_db since torch 1.13; CUDA only
        assert checks["jiterator_unary"]["raised"].startswith("float32: ") and not checks["jiterator_unary"]["ok"]
    assert record.message.startswith(f"{len(checks)} operators, ")


def test_the_same_release_swept_twice_shows_no_change(two_sweeps: tuple[Record, Record, Path]) -> None:
    first, second, _ = two_sweeps
    before, after = checks_of(first), checks_of(second)
    assert before.keys() == after.keys()
    reproducible = sum(s["output"] is not None for check in after.values() for s in check["samples"])
    comparisons = [compare(before[name], after[name], same_probe=True) for name in after]
    assert sum(each.compared for each in comparisons) == reproducible > 0
    assert [name for name, each in zip(after, comparisons, strict=True) if each.changed] == []


def test_one_edited_digest_is_exactly_one_change(two_sweeps: tuple[Record, Record, Path]) -> None:
    first, _, folder = two_sweeps
    [path] = (folder / "second" / "results" / "sweep-box").glob("*.json")
    rewrite(path, lambda stored: stored["records"][0]["metrics"]["checks"][0]["samples"][1].update(output="0" * 16))
    [edited] = results.read(path).records
    before, after = checks_of(first), checks_of(edited)
    changed = {name: compare(before[name], after[name], same_probe=True) for name in after}
    assert {name: each.changed for name, each in changed.items() if each.changed} == {next(iter(after)): 1}
