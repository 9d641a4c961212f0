"""Result files under kill, contention and corruption: a reader sees whole files or none, and names what it skips."""

from __future__ import annotations

import dataclasses
import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from torchmatrix import results
from torchmatrix.core import Outcome, Record
from torchmatrix.results import CellResult

from ..conftest import hostile_result
from .conftest import MACHINE, Torch, Workspace

# A writer of one cell's result, over and over, alternating two versions of it. Each is megabytes, so that a
# write takes long enough for a kill to land inside it.
WRITER = """
import sys
from pathlib import Path
from torchmatrix import results
from torchmatrix.core import Outcome
from torchmatrix.results import CellResult
from torchmatrix.core import Record

folder, versions = Path(sys.argv[1]), sys.argv[2:]
record = Record("p", "cpu", Outcome.PASS, {"blob": "x" * 4_000_000}, "", 0.1)
finished = results.now_iso()
cells = [
    CellResult("m", "torch-1.0.0", "1.0.0", "3.9", None, "probe(1.0.0)", None, v, (record,), finished_at=finished)
    for v in versions
]
print("ready", flush=True)
while True:
    for cell in cells:
        results.write(folder, cell)
"""


def start_writer(folder: Path, *versions: str) -> subprocess.Popen[str]:
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(folder), *versions], stdout=subprocess.PIPE, text=True)
    assert writer.stdout is not None and writer.stdout.readline() == "ready\n"
    return writer


def whole_results(folder: Path, versions: set[str]) -> int:
    """Check that everything a reader finds is a whole file of one of ``versions``; how many it found."""
    scan = results.scan(folder)
    assert scan.warnings == ()
    for found in scan.results:
        assert found.message in versions and len(found.records[0].metrics["blob"]) == 4_000_000
    return len(scan.results)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_a_writer_killed_at_any_moment_leaves_the_old_file_or_the_new(tmp_path: Path) -> None:
    chance = random.Random(20260101)
    for _ in range(30):
        writer = start_writer(tmp_path, "a", "b")
        time.sleep(chance.uniform(0.0, 0.1))
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        assert whole_results(tmp_path, {"a", "b"}) <= 1
    leftovers = [path.name for path in (tmp_path / "m").iterdir() if path.name.endswith(".tmp")]
    assert leftovers, "no kill landed inside a write: the test proved nothing"
    assert all(name.startswith(".torch-1.0.0.json.") for name in leftovers)


def test_two_writers_and_a_reader_at_once_see_only_whole_files(tmp_path: Path) -> None:
    writers = [start_writer(tmp_path, "a"), start_writer(tmp_path, "b")]
    try:
        deadline = time.monotonic() + 3
        reads = 0
        while time.monotonic() < deadline:
            reads += whole_results(tmp_path, {"a", "b"})
    finally:
        for writer in writers:
            writer.kill()
            writer.wait()
    assert reads > 10


def valid_result(torch: str, **changes: object) -> CellResult:
    fields: dict = dict(
        machine=MACHINE, cell_id=f"torch-{torch}-py3.11", torch=torch, python="3.11", python_request="3.11",
        session=f"probe({torch})", outcome=None, message="",
        records=(Record("ok", "cpu", Outcome.PASS, {}, "fine", 0.1),),
        finished_at="2026-01-01T00:00:00+00:00",
    )  # fmt: skip
    fields.update(changes)
    return CellResult(**fields)


@pytest.mark.integration
def test_the_report_names_and_skips_every_corrupt_file(workspace: Workspace, torch_here: Torch, warm: None) -> None:
    workspace.matrix([torch_here], ["ok"])
    good = results.write(workspace.results_dir, valid_result("1.9.0"))
    # Valid, as if merged from another machine, with hostile names; a torch version holding escapes is refused.
    results.write(workspace.results_dir, dataclasses.replace(hostile_result(MACHINE), torch="2.0.0"))
    data = json.loads(good.read_text())
    folder = good.parent
    corrupt = {
        "truncated.json": good.read_text()[: len(good.read_text()) // 2],
        "empty.json": "",
        "not-json.json": "<html>502 Bad Gateway</html>",
        "wrong-schema.json": json.dumps({"schema": 1, "machine": MACHINE}),
        "newer-schema.json": json.dumps(dict(data, schema=2)),
        "python-number.json": json.dumps(dict(data, python=3.11)),
        "evil\x1b[2J\x1b]0;title\x07.json": "{",
        "torch-escapes.json": json.dumps(hostile_result(MACHINE, "2.1.0").to_json()),
    }
    for name, text in corrupt.items():
        (folder / name).write_text(text)
    (folder / "binary.json").write_bytes(bytes(range(256)))
    (folder / f".{good.name}.abc123.tmp").write_text(good.read_text()[:10])  # a killed writer's leftover
    (workspace.results_dir / "other-box").mkdir()
    (workspace.results_dir / "other-box" / "torch-1.9.0-py3.9.json").write_text("{")

    run = workspace.nox("-s", "report")

    assert run.returncode == 0, run.output
    assert "Traceback" not in run.output
    warnings = [line for line in run.output.splitlines() if "skipping " in line]
    assert len(warnings) == len(corrupt) + 2  # binary.json, and the other machine's file
    for name in [*corrupt, "binary.json", "other-box/torch-1.9.0-py3.9.json"]:
        shown = name.replace("\x1b", r"\x1b").replace("\x07", r"\x07")
        assert sum(f"/{shown}: " in line for line in warnings) == 1, name
    assert "does not fit schema 1: no 'outcome'" in run.output
    assert "schema 2 is newer than this torchmatrix reads (1); upgrade torchmatrix" in run.output
    assert "'python' is a number" in run.output
    assert ".tmp" not in run.output
    rows = [line.split() for line in run.stdout.splitlines()]
    assert ["1.9.0", "3.11", "ok", "✓"] in rows
    assert "'torch' is not a version: '2.1.0\\x1b[2J" in run.output
    assert "\x1b" not in run.output and r"hostilebell\x07" in run.stdout
