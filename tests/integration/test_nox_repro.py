"""Real nox on two stand-in releases: a probe's records ask for repro scripts, and `nox -s report` writes them.

The probe is none the report knows: its records hold a check with samples, one of whose outputs changes between
the releases, and ``metrics.repro`` naming its own function. The script written for that sample, run with the
Python of the later release's environment, calls it, the folder the record names found from the script's place.
"""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import pytest

from torchmatrix.environment import disk

from .. import standin
from . import nox

pytestmark = pytest.mark.integration

PROBE = '''\
import os

import torch


def output(sample):
    """A sample's output: s1's changes in 9.1.0, s2's does not."""
    return sample.upper() + ("*" if sample == "s1" and torch.__version__ == "9.1.0" else "")


def run(device):
    samples = [{"input": sample, "output": output(sample)} for sample in ("s1", "s2")]
    check = {"name": "op.variant", "samples": samples, "observed": "", "expected": "", "ok": True}
    repro = {"function": "again", "arguments": {"data": "data", "times": 2}, "folders": ["data"]}
    return {"outcome": "pass", "metrics": {"checks": [check], "repro": repro}, "message": ""}


def again(check, input, device, data, times):
    print(check, input, device, sorted(os.listdir(data)), times, output(input))
'''
MATRIX = """
torch: [9.0.0, 9.1.0]
probes: [sampled.py]
devices: [cpu]
timeout: 60
output: out
find_links: [wheels]
"""


def test_the_report_writes_the_script_a_record_asks_for_and_it_calls_the_probes_own_function(tmp_path: Path) -> None:
    for version in ("9.0.0", "9.1.0"):
        standin.wheel(tmp_path / "wheels", version, {})
    (tmp_path / "sampled.py").write_text(PROBE)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "samples.json").write_text("{}")
    (tmp_path / "matrix.yaml").write_text(textwrap.dedent(MATRIX))
    run = nox(tmp_path, tmp_path / "matrix.yaml", "-s", "probe")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "and 1 repro script(s) in repro/" in run.stdout + run.stderr
    repro = tmp_path / "out" / "repro"
    assert sorted(path.name for path in repro.iterdir()) == ["op_variant_s1.py", "sampled_py_probe.py"]
    assert "(repro/op_variant_s1.py)" in (tmp_path / "out" / "CHECK-CHANGES.md").read_text(encoding="utf-8")
    python = disk.environment_of(tmp_path / ".nox", "9.1.0") / "bin" / "python"  # named by nox's rule
    ran = subprocess.run([str(python), "repro/op_variant_s1.py"], cwd=tmp_path / "out", capture_output=True,
                         text=True, timeout=60)  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stdout == "op.variant s1 cpu ['samples.json'] 2 S1*\n"
