"""Result files under kill, contention, corruption and hostility: a reader sees whole files or none, and names what
it skips."""

from __future__ import annotations

import dataclasses
import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from torchmatrix import identity, results
from torchmatrix.core import Outcome, Record
from torchmatrix.results import CellResult
from torchmatrix.util import safetext, storedjson

from ..conftest import hostile_result, stored_content
from .conftest import MACHINE, Run, Torch, Workspace

pytestmark = pytest.mark.integration  # real nox, and writers in processes of their own

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


def stop_writer(writer: subprocess.Popen[str]) -> None:
    """Kill ``writer`` at once (SIGKILL); leaving, Popen waits for it and closes the pipe it said "ready" on."""
    with writer:
        writer.kill()


def whole_results(folder: Path, versions: set[str]) -> int:
    """Check that everything a reader finds is a whole file of one of ``versions``; how many it found."""
    scan = results.scan(folder)
    assert scan.warnings == ()
    for found in scan.results:
        assert found.message in versions and len(found.records[0].metrics["blob"]) == 4_000_000
    return len(scan.results)


def temporary_files(folder: Path) -> set[str]:
    return {entry.name for entry in os.scandir(folder) if entry.name.endswith(".tmp")} if folder.is_dir() else set()


def wait_inside_a_write(folder: Path) -> None:
    """Return once a write has a temporary file in ``folder`` that was not there before (or after 5 s)."""
    before, deadline = temporary_files(folder), time.monotonic() + 5
    while not temporary_files(folder) - before and time.monotonic() < deadline:
        pass


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_a_writer_killed_at_any_moment_leaves_the_old_file_or_the_new(tmp_path: Path) -> None:
    # Half of the kills land at a random moment; the other half once a temporary file is seen, so that some
    # land inside a write however fast this machine's disk makes one.
    chance = random.Random(20260101)
    for kill in range(30):
        writer = start_writer(tmp_path, "a", "b")
        time.sleep(chance.uniform(0.0, 0.1))
        if kill % 2:
            wait_inside_a_write(tmp_path / "m")
        stop_writer(writer)
        assert whole_results(tmp_path, {"a", "b"}) <= 1
    leftovers = temporary_files(tmp_path / "m")
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
            stop_writer(writer)
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


@pytest.fixture(scope="module")
def made(
    tmp_path_factory: pytest.TempPathFactory, envdir: Path, suite_cache: Path, torch_here: Torch, warm: None
) -> Path:
    """A result file a real run of the suite's one-probe cell made: a good file, current for that matrix."""
    workspace = Workspace(tmp_path_factory.mktemp("made"), envdir, suite_cache)
    workspace.matrix([torch_here], ["ok"])
    run = workspace.nox("-s", "probe")
    assert run.returncode == 0, run.output
    [result] = workspace.scan().results
    assert result.path is not None
    return result.path


def limits_under(prefix: tuple[str, ...]) -> Any:
    """The resource limits a process started with ``prefix`` runs under, as a record stores them."""
    said = "import json; from torchmatrix import identity; print(json.dumps(identity.resource_limits()))"
    return json.loads(subprocess.run([*prefix, sys.executable, "-c", said], check=True, stdout=subprocess.PIPE).stdout)


def with_good(
    workspace: Workspace, torch_here: Torch, made: Path, under: tuple[str, ...] = ()
) -> tuple[Path, list[str]]:
    """The matrix of ``made``'s cell, ``made`` in its results folder, and the row the terminal's table shows of it;
    as if made under the resource limits of ``under`` (a reader run so reads it as current, not stale)."""
    workspace.matrix([torch_here], ["ok"])
    good = workspace.machine_dir / made.name
    good.parent.mkdir(parents=True, exist_ok=True)
    # Made in another folder: its pairs ran from there and read its probes; here they are this folder's.
    made_in = made.parents[3]  # <folder>/out/results/<machine>/<cell>.json
    moved = made.read_text().replace(json.dumps(str(made_in))[1:-1], json.dumps(str(workspace.folder))[1:-1])
    content = {key: value for key, value in json.loads(moved).items() if key != storedjson.SEAL}
    if under:
        limits = limits_under(under)
        for record in content["records"]:
            record["inputs"][identity.LIMITS] = limits
    good.write_text(json.dumps(storedjson.sealed(content)))
    result = results.read(good)
    return good, [result.torch, result.python or "-", "ok", "✓"]


def test_the_report_names_and_skips_every_corrupt_file(workspace: Workspace, torch_here: Torch, made: Path) -> None:
    good, row = with_good(workspace, torch_here, made)
    # Valid, as if merged from another machine, with hostile names; a torch version holding escapes is refused.
    results.write(workspace.results_dir, dataclasses.replace(hostile_result(MACHINE), torch="2.0.0"))
    data = stored_content(good)
    folder = good.parent
    corrupt = {
        "truncated.json": good.read_text()[: len(good.read_text()) // 2],
        "empty.json": "",
        "not-json.json": "<html>502 Bad Gateway</html>",
        "wrong-schema.json": json.dumps({"schema": 2, "machine": MACHINE}),
        "newer-schema.json": json.dumps(dict(data, schema=3)),
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

    run = workspace.nox("-s", "report", "--", "--all-cells")  # the other machine's hostile cell shown too

    assert run.returncode == 0, run.output
    assert "Traceback" not in run.output
    warnings = [line for line in run.output.splitlines() if "skipping " in line]
    assert len(warnings) == len(corrupt) + 2  # binary.json, and the other machine's file
    for name in [*corrupt, "binary.json", "other-box/torch-1.9.0-py3.9.json"]:
        shown = name.replace("\x1b", r"\x1b").replace("\x07", r"\x07")
        assert sum(f"/{shown}: " in line for line in warnings) == 1, name
    assert "does not fit schema 2: no 'outcome'" in run.output
    assert "schema 3 is newer than this torchmatrix reads (2); upgrade torchmatrix" in run.output
    assert "'python' is a number" in run.output
    assert ".tmp" not in run.output
    rows = [line.split() for line in run.stdout.splitlines()]
    assert row in rows
    assert "'torch' is not a version: '2.1.0\\x1b[2J" in run.output
    assert "\x1b" not in run.output and r"hostilebell\x07" in run.stdout


# --- hostile entries: each is named and skipped, and the good result beside it is shown ----------------------------

READ_TIMEOUT = 60
"""Seconds a report, verify or bisect over a few small files may take; one that waits on a FIFO never ends."""
MEMORY_CAP = ("prlimit", f"--as={2 << 30}") if shutil.which("prlimit") else ()
"""A reader that reads /dev/zero dies of MemoryError under it instead of taking the machine's memory."""
FORGED = "nox > Session probe(9.9.9) was successful in 1 second."
"""A line nox itself could print, hidden in a folder's or a machine's name after a newline."""
DIGITS_400 = int("9" * 400)


@dataclasses.dataclass(frozen=True)
class Hostile:
    """An entry of a results folder that is no result: how to make it beside a good one, and the reason it gets."""

    id: str
    reason: str
    """What the warning's reason says (the start of it, or all)."""
    make: Callable[[Path, dict[str, Any]], Path]
    """Given the good result's file and its data, make the entry; its path."""


def _beside(good: Path, name: str, data: dict[str, Any], **changes: Any) -> Path:
    """A file named ``name`` beside ``good`` holding ``data`` with ``changes``: by default another cell's result."""
    path = good.parent / name
    other_cell = dict(torch="2.0.0", cell_id="torch-2.0.0-py3.11", session="probe(2.0.0)")
    path.write_text(json.dumps(dict(data, **{**other_cell, **changes})), encoding="utf-8")  # data: stored_content
    return path


def _with_record(good: Path, name: str, data: dict[str, Any], **changes: Any) -> Path:
    """Another cell's result whose one record has ``changes``."""
    return _beside(good, name, data, records=[dict(data["records"][0], **changes)])


def _failing(**check: Any) -> dict[str, Any]:
    """A record's fields for a failing check with the values ``check`` gives."""
    fields = dict(name="y", observed=0.0, expected=1.0, error=1.0, tolerance=0.0, ok=False)
    return {"outcome": "fail", "metrics": {"checks": [dict(fields, **check)]}}


def _nested(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


def _duration_of_400_digits(good: Path, data: dict[str, Any]) -> Path:
    return _with_record(good, "duration.json", data, duration=DIGITS_400)


def _check_error_of_400_digits(good: Path, data: dict[str, Any]) -> Path:
    return _with_record(good, "error.json", data, **_failing(error=DIGITS_400))


def _nan_duration(good: Path, data: dict[str, Any]) -> Path:
    return _with_record(good, "nan.json", data, duration=float("nan"))


def _lists_200000_deep(good: Path, data: dict[str, Any]) -> Path:
    path = _beside(good, "deep.json", data, environment={"x": "here"})
    path.write_text(path.read_text().replace('"here"', "[" * 200_000 + "]" * 200_000))  # too deep for json.dumps
    return path


def _lists_600_deep(good: Path, data: dict[str, Any]) -> Path:
    # The parser copes; a renderer that recurses into a failing check's observed value does not.
    return _with_record(good, "deep-check.json", data, **_failing(observed=_nested(600)))


def _fifo(good: Path, data: dict[str, Any]) -> Path:
    os.mkfifo(good.parent / "fifo.json")
    return good.parent / "fifo.json"


def _link_to_dev_zero(good: Path, data: dict[str, Any]) -> Path:
    (good.parent / "zero.json").symlink_to("/dev/zero")
    return good.parent / "zero.json"


def _directory(good: Path, data: dict[str, Any]) -> Path:
    (good.parent / "folder.json").mkdir()
    return good.parent / "folder.json"


def _tens_of_mb(good: Path, data: dict[str, Any]) -> Path:
    # Valid JSON, a valid result: only its size is wrong.
    return _beside(good, "big.json", data, message="x" * (storedjson.MAX_FILE_BYTES + 1))


def _latin_1(good: Path, data: dict[str, Any]) -> Path:
    path = good.parent / "latin-1.json"
    path.write_bytes(json.dumps(dict(data, message="café"), ensure_ascii=False).encode("latin-1"))
    return path


def _torch_nightly(good: Path, data: dict[str, Any]) -> Path:
    return _beside(good, "nightly.json", data, torch="nightly")


def _folder_with_newline(good: Path, data: dict[str, Any]) -> Path:
    folder = good.parent.parent / f"box\n{FORGED}"
    folder.mkdir()
    (folder / "torch-2.0.0-py3.11.json").write_text("{")
    return folder / "torch-2.0.0-py3.11.json"


def _finished_in_the_future(good: Path, data: dict[str, Any]) -> Path:
    # The good result's cell, failing: accepted, it would stand for the cell until the year 2999.
    same_cell = {key: data[key] for key in ("torch", "cell_id", "session")}
    records = [dict(data["records"][0], outcome="fail")]
    return _beside(good, "future.json", data, **same_cell, records=records, finished_at="2999-01-01T00:00:00+00:00")


def _other_machine(good: Path, data: dict[str, Any]) -> Path:
    return _beside(good, "other.json", data, machine="other-box")


HOSTILE = [
    Hostile("duration-of-400-digits", "an integer of 400 digits (at most 20, as", _duration_of_400_digits),
    Hostile("check-error-of-400-digits", "an integer of 400 digits", _check_error_of_400_digits),
    Hostile("nan-duration", "NaN is not JSON", _nan_duration),
    Hostile("lists-200000-deep", f"lists and objects nested more than {storedjson.MAX_DEPTH} deep", _lists_200000_deep),
    Hostile("lists-600-deep", f"lists and objects nested more than {storedjson.MAX_DEPTH} deep", _lists_600_deep),
    Hostile("fifo", "not a regular file but a FIFO", _fifo),
    Hostile("link-to-dev-zero", "a link to '/dev/zero', outside the results folder", _link_to_dev_zero),
    Hostile("directory", "not a regular file but a directory", _directory),
    Hostile("tens-of-mb", f"larger than a result file may be ({storedjson.MAX_FILE_BYTES >> 20} MiB", _tens_of_mb),
    Hostile("not-utf8", "not UTF-8 text", _latin_1),
    Hostile("torch-not-a-version", "'torch' is not a version: 'nightly'", _torch_nightly),
    Hostile("folder-name-with-newline", "not valid JSON", _folder_with_newline),
    Hostile(
        "finished-in-the-future",
        "it says it finished at 2999-01-01T00:00:00+00:00, over 1 h after now by this machine's clock",
        _finished_in_the_future,
    ),
    Hostile("another-machines-name", "it names machine 'other-box', not that of its folder 'faults'", _other_machine),
]

POSIX_ONLY = {"fifo", "link-to-dev-zero", "folder-name-with-newline"}


def hostile_folder(
    workspace: Workspace, torch_here: Torch, made: Path, hostile: list[Hostile]
) -> tuple[list[str], list[Path]]:
    """A matrix, a good result and ``hostile`` beside it: the good result's row in the table, the hostile paths."""
    good, row = with_good(workspace, torch_here, made, MEMORY_CAP)  # read under the cap
    data = stored_content(good)
    return row, [case.make(good, data) for case in hostile]


def skipped(run: Run) -> list[str]:
    return [line for line in run.output.splitlines() if "skipping " in line]


def assert_named(run: Run, path: Path, reason: str) -> None:
    """One warning names ``path`` (escaped, on one line) with ``reason``; no line is forged, no traceback shown."""
    shown = f"skipping {safetext.for_terminal(str(path), keep_newlines=False)}: "
    naming = [line for line in skipped(run) if shown in line]
    assert len(naming) == 1, run.output
    assert reason in naming[0].split(shown, 1)[1], run.output
    assert "Traceback" not in run.output
    assert not any(line.startswith(FORGED) for line in run.output.splitlines())


def posix_only(hostile: list[Hostile]) -> list[Any]:
    skip = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs, /dev/zero, newlines in names")
    return [pytest.param(case, id=case.id, marks=[skip] if case.id in POSIX_ONLY else []) for case in hostile]


@pytest.mark.parametrize("hostile", posix_only(HOSTILE))
def test_the_report_names_and_skips_a_hostile_file_and_shows_the_good_one(
    workspace: Workspace, torch_here: Torch, made: Path, hostile: Hostile
) -> None:
    row, (path,) = hostile_folder(workspace, torch_here, made, [hostile])

    run = workspace.nox("-s", "report", prefix=MEMORY_CAP, timeout=READ_TIMEOUT)

    assert run.returncode == 0, run.output
    assert_named(run, path, hostile.reason)
    assert len(skipped(run)) == 1
    rows = [line.split() for line in run.stdout.splitlines()]
    assert row in rows
    assert "2.0.0" not in run.stdout and "other-box" not in run.stdout


def with_expectation(matrix: Path) -> None:
    with matrix.open("a", encoding="utf-8") as file:
        file.write("expect:\n  - {probe: ok, device: cpu, outcome: pass}\n")


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs, /dev/zero, newlines in names")
def test_verify_names_every_hostile_file_and_checks_the_good_result(
    workspace: Workspace, torch_here: Torch, made: Path
) -> None:
    _, paths = hostile_folder(workspace, torch_here, made, HOSTILE)
    with_expectation(workspace.matrix_file)
    # Valid, in its machine's folder, but the machine's name holds a line of its own.
    good = results.read(made)
    newline = dataclasses.replace(good, machine=f"box\n{FORGED}", path=None)
    results.write(workspace.results_dir, newline)

    run = workspace.nox("-s", "verify", prefix=MEMORY_CAP, timeout=READ_TIMEOUT)

    assert run.returncode == 0, run.output
    for case, path in zip(HOSTILE, paths, strict=True):
        assert_named(run, path, case.reason)
    assert len(skipped(run)) == len(HOSTILE)
    assert "(machines: box\\nnox > Session probe(9.9.9) was successful in 1 second., faults)" in run.output
    assert f"✓ ok on cpu, torch (any): pass: holds for {good.cell_id} [box\\nnox > Session" in run.stdout
    assert f"{good.cell_id} [faults]" in run.stdout


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs, /dev/zero, newlines in names")
def test_bisect_names_every_hostile_file_and_goes_on(workspace: Workspace, torch_here: Torch, made: Path) -> None:
    _, paths = hostile_folder(workspace, torch_here, made, HOSTILE)
    # Torch 1.9.0 on a Python no machine has: the plan rules it out, so the bisection ends at once, building nothing.
    matrix = workspace.matrix_file.read_text().replace(torch_here.entry, '{version: "1.9.0", python: "3.5"}')
    workspace.matrix_file.write_text(matrix)

    run = workspace.nox(
        "-s", "bisect", "--", "ok", "--from", "1.9.0", "--to", "1.10.0", prefix=MEMORY_CAP, timeout=READ_TIMEOUT
    )

    assert run.returncode == 1, run.output
    for case, path in zip(HOSTILE, paths, strict=True):
        assert_named(run, path, case.reason)
    assert len(skipped(run)) == len(HOSTILE)
    assert "torch 1.9.0 (--from) could not be tested: no-" in run.output


def test_a_cell_whose_file_a_newer_torchmatrix_wrote_stops_and_keeps_it(
    workspace: Workspace, torch_here: Torch, warm: None
) -> None:
    workspace.matrix([torch_here], ["ok"])
    cell_id = f"torch-{torch_here.version}-py{torch_here.python}"
    path = results.write(workspace.results_dir, valid_result(torch_here.version, cell_id=cell_id))
    newer = dict(json.loads(path.read_text()), schema=results.SCHEMA_VERSION + 1)
    path.write_text(json.dumps(newer))

    run = workspace.nox("-s", "probe")

    assert run.returncode == 1, run.output
    assert f"{cell_id}: {path} holds a newer torchmatrix's result (schema 3 is newer than" in run.output
    assert "Traceback" not in run.output and "running:" not in run.output
    assert json.loads(path.read_text()) == newer
