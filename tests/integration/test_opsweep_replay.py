"""The operator sweep replays by default, for real: two releases of real torch (1.11.0 and 1.12.1, in uv's cache
after the example's tests) named in a matrix without a ``store:``.

The first cell that runs captures its samples into the store beside the machine's results, the other replays
them: every sample of an operator in both compares, and the records and the report say which release captured.
A changed store makes both records stale. Two cells at once (``nox -j 2``) capture once: the test holds the
store's lock until both cells wait for it (the kernel lists them in /proc/locks), then lets them race.
"""

from __future__ import annotations

import ast
import fcntl
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from torchmatrix import results
from torchmatrix.checks import checks_of
from torchmatrix.core import Record
from torchmatrix.views.sameinputs import compare

from ..conftest import ROOT

pytestmark = pytest.mark.integration

RELEASES = ("1.11.0", "1.12.1")
MACHINE = "sweep-box"
OPS = ["add", "mul", "sum", "nn.functional.conv2d", "nn.functional.gelu", "normal", "cumsum", "index_add"]
CAPTURED = "no samples were captured there yet"


@dataclass(frozen=True)
class Sweeps:
    """Two releases swept into one output folder: their records by release, the report's CHECK-CHANGES.md."""

    folder: Path
    records: dict[str, Record]
    changes: str

    @property
    def store(self) -> Path:
        return self.folder / "out" / "results" / MACHINE / "inputs" / "opsweep"


def nox_environment(folder: Path, output: str) -> dict[str, str]:
    return dict(os.environ, TORCHMATRIX_MATRIX=str(folder / "matrix.yaml"), TORCHMATRIX_MACHINE=MACHINE,
                TORCHMATRIX_OUTPUT=str(folder / output))  # fmt: skip


def nox_command(folder: Path, *arguments: str) -> list[str]:
    """nox on torchmatrix's noxfile, the environments in ``folder``: one for both output folders."""
    return [sys.executable, "-m", "nox", "-f", str(ROOT / "noxfile.py"), "--envdir", str(folder / ".nox"), *arguments]


def nox(folder: Path, *arguments: str, output: str = "out") -> subprocess.CompletedProcess[str]:
    return subprocess.run(nox_command(folder, *arguments), env=nox_environment(folder, output), capture_output=True,
                          text=True, timeout=1500)  # fmt: skip


def swept(folder: Path, output: str = "out") -> dict[str, Record]:
    found = results.scan(folder / output / "results").results
    return {result.torch: record for result in found for record in result.records}


@pytest.fixture(scope="module")
def sweeps(tmp_path_factory: pytest.TempPathFactory) -> Sweeps:
    folder = tmp_path_factory.mktemp("opsweep-replay")
    entries = ", ".join(f'{{version: "{release}", python: "3.10"}}' for release in RELEASES)
    (folder / "matrix.yaml").write_text(
        f"torch: [{entries}]\nprobes: [opsweep]\n"
        f"probe_options:\n  opsweep: {{ops: {json.dumps(OPS)}}}\ndevices: [cpu]\noutput: out\n"
    )
    run = nox(folder, "-s", "probe", "report")
    assert run.returncode == 0, run.stdout + run.stderr
    return Sweeps(folder, swept(folder), (folder / "out" / "CHECK-CHANGES.md").read_text(encoding="utf-8"))


def test_the_first_release_captures_and_the_other_replays_its_capture(sweeps: Sweeps) -> None:
    first, second = (sweeps.records[release] for release in RELEASES)
    assert first.metrics["store"]["captured_here"] == CAPTURED
    assert "captured_here" not in second.metrics["store"]
    assert first.metrics["store"]["captured_by"] == second.metrics["store"]["captured_by"] == ["1.11.0"]
    assert first.metrics["store"]["capture"] == second.metrics["store"]["capture"]
    assert first.message.endswith(f"; captured the samples every other release replays ({CAPTURED})")
    assert second.message.endswith("; replayed the samples torch 1.11.0 captured")
    manifest = json.loads((sweeps.store / "samples.json").read_text())
    assert set(manifest["ops"]) == set(checks_of(first)) and manifest["ops_asked"] == OPS


def test_every_sample_of_an_operator_in_both_releases_compares(sweeps: Sweeps) -> None:
    before, after = (checks_of(sweeps.records[release]) for release in RELEASES)
    both = [name for name in after if name in before]
    assert len(both) >= 6
    assert all("inputs" not in after[name] for name in both)  # none of op_db's own: all replayed
    outputs = [{(name, sample["input"]): sample["output"] for name in both for sample in checks[name]["samples"]}
               for checks in (before, after)]  # fmt: skip
    assert outputs[0].keys() == outputs[1].keys()  # the same inputs, sample for sample
    with_outputs = sum(outputs[0][key] is not None and outputs[1][key] is not None for key in outputs[1])
    comparisons = [compare(before[name], after[name], same_probe=True) for name in both]
    assert sum(each.compared + each.refused for each in comparisons) == with_outputs > 10


def test_the_report_says_which_release_captured_the_samples_compared(sweeps: Sweeps) -> None:
    rows = [line for line in sweeps.changes.splitlines() if line.startswith("| 1.11.0 (py3.10) | 1.12.1 (py3.10) |")]
    assert len(rows) == 1 and "(100%) | 1.11.0's capture |" in rows[0], sweeps.changes
    # A changed sample's repro finds it in that store (nn.functional.gelu's outputs changed in 1.12).
    scripts = [path for path in (sweeps.folder / "out" / "repro").glob("*.py") if not path.name.endswith("_probe.py")]
    assert scripts
    for script in scripts:  # the call the record asks for, its store given from the script's own folder
        [folder] = re.findall(r"store=os\.path\.join\(HERE, ('[^']*')\)", script.read_text())
        assert (script.parent / ast.literal_eval(folder)).resolve() == sweeps.store.resolve()


def test_both_records_depend_on_the_store_and_a_changed_store_makes_them_stale(sweeps: Sweeps) -> None:
    manifest = str(sweeps.store / "samples.json")
    for record in sweeps.records.values():  # the record of the cell that captured it too
        assert manifest in record.inputs["read"]
    with open(manifest, "a") as stream:
        stream.write("\n")  # the same samples, another file
    run = nox(sweeps.folder, "-s", "probe")
    assert run.returncode == 0, run.stdout + run.stderr
    for release in RELEASES:
        assert f"torch-{release}-py3.10: running: " in run.stdout + run.stderr
    assert (run.stdout + run.stderr).count(f"{manifest} changed") >= len(RELEASES)
    again = swept(sweeps.folder)
    assert all("captured_here" not in record.metrics["store"] for record in again.values())  # both replayed it


class HeldLock:
    """The lock of a store, held by this test until :meth:`release`, as the sweep takes it."""

    def __init__(self, store: Path) -> None:
        store.mkdir(parents=True)
        self.store = store
        self.fd: int | None = os.open(store / ".lock", os.O_WRONLY | os.O_CREAT, 0o644)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        self.inode = os.fstat(self.fd).st_ino

    def waiting(self) -> int:
        """How many processes wait for it (the ``->`` lines of /proc/locks that name its file)."""
        lines = Path("/proc/locks").read_text().splitlines()
        return sum("->" in line and line.split()[-3].endswith(f":{self.inode}") for line in lines)

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


@pytest.fixture
def held_lock(sweeps: Sweeps) -> Iterator[HeldLock]:
    """The lock of the store of another output folder, ``parallel``, held."""
    lock = HeldLock(sweeps.folder / "parallel" / "results" / MACHINE / "inputs" / "opsweep")
    try:
        yield lock
    finally:
        lock.release()


@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="the kernel lists its locks in /proc/locks on Linux")
def test_two_cells_at_once_capture_once_and_the_other_replays(sweeps: Sweeps, held_lock: HeldLock) -> None:
    process = subprocess.Popen(nox_command(sweeps.folder, "-j", "2", "-s", "probe"),
                               env=nox_environment(sweeps.folder, "parallel"), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)  # fmt: skip
    while held_lock.waiting() < len(RELEASES):  # both cells' pairs are at the store: let them race for it
        assert process.poll() is None, process.communicate()[0]
        time.sleep(0.1)
    held_lock.release()
    output, _ = process.communicate(timeout=900)
    assert process.returncode == 0, output
    records = swept(sweeps.folder, "parallel")
    captured = [release for release, record in records.items() if "captured_here" in record.metrics["store"]]
    assert len(captured) == 1, output
    assert len({record.metrics["store"]["capture"] for record in records.values()}) == 1
    assert all(record.metrics["store"]["captured_by"] == captured for record in records.values())
