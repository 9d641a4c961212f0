"""A repro script for real: generated for a sample the operator sweep replayed from the store, run by hand.

The torch is one this machine installs without a download (tests/faults/conftest.py's ``local_torch``). The sweep
replays the committed store's samples of one operator; the script its record asks for one of them, run with the
Python of the sweep's environment, prints the output digest the sweep recorded.
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
from torchmatrix.environment import disk
from torchmatrix.views import model, repro
from torchmatrix.views.model import Column, Row

from ..conftest import ROOT
from ..faults.conftest import local_torch

pytestmark = pytest.mark.integration

OPERATOR = "exp2"
STORE = ROOT / "reports" / "inputs" / "opsweep"


def test_a_generated_script_prints_the_digest_the_sweep_recorded(tmp_path: Path) -> None:
    torch = local_torch(tmp_path / "cache")
    entry = f'{{version: "{torch.version}", python: "{torch.python}"}}' if torch.python else f'"{torch.version}"'
    matrix = tmp_path / "matrix.yaml"
    options = {"ops": [OPERATOR], "store": os.path.relpath(STORE, ROOT / "probes")}
    matrix.write_text(
        f"torch: [{entry}]\nprobes: [opsweep]\nprobe_options:\n  opsweep: {json.dumps(options)}\n"
        "devices: [cpu]\noutput: out\n"
    )
    environ = dict(os.environ, TORCHMATRIX_MATRIX=str(matrix), TORCHMATRIX_MACHINE="repro-box")
    command = [sys.executable, "-m", "nox", "-f", str(ROOT / "noxfile.py"), "--envdir", str(tmp_path / ".nox")]
    run = subprocess.run([*command, "-s", "probe"], env=environ, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout + run.stderr
    [result] = results.scan(tmp_path / "out" / "results").results
    [record] = result.records
    sample = checks_of(record)[OPERATOR]["samples"][-1]
    assert not sample["output"].startswith("raised"), sample

    # The script the record asks for (its metrics.repro), made from the probe's file as the report finds it.
    scripts = tmp_path / "out" / repro.FOLDER
    sources = repro.sources(model.build([result]).tables, lambda name: ROOT / "probes" / f"{name}.py", scripts, ROOT)
    change = repro.SampleChange(
        "opsweep", OPERATOR, Column("repro-box", "cpu"), Row("0.0.0", None), Row(torch.version, None),
        sample["input"], "0" * 16, sample["output"], call=repro.ReproCall.of(record.metrics),
    )  # fmt: skip
    files = repro.scripts([change], sources["opsweep"])
    scripts.mkdir(parents=True)
    for name, text in files.items():
        (tmp_path / "out" / name).write_text(text)
    [script] = [tmp_path / "out" / name for name in files if not name.endswith(repro.MODULE_SUFFIX)]

    python = disk.environment_of(tmp_path / ".nox", torch.version) / "bin" / "python"  # named by nox's rule
    # By hand, from elsewhere: the script finds the store from its own place.
    ran = subprocess.run(
        [str(python), str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600, env=environ
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    lines = ran.stdout.splitlines()
    assert lines[0] == f"{OPERATOR} on cpu: input {sample['input']}"
    assert lines[1] == f"output {sample['output']}"
    assert lines[2].startswith("output float32 [")  # its first elements, as Python prints them
    assert f"torch {torch.version}" in ran.stderr  # the release on stderr: bisect --by-output compares stdout
