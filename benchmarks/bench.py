"""What a torchmatrix matrix costs on this machine, next to its physical limits.

Run by ``nox -s bench`` (arguments after ``--``), or ``python benchmarks/bench.py``
from an environment that has torchmatrix's dependencies. Every comparison is
measured side by side in one run, on real nox, uv, pip and torch wheels; each
figure is a ratio, the best of ``--repeat`` interleaved runs of each side (this
machine is shared: the best run is the one least disturbed by others).
Everything is built in a temporary folder that is deleted afterwards, on the
shared uv cache (warm: the figures are about re-runs and rebuilds).

``--cold-matrix`` adds the cold run of a whole matrix (the default one unless
a file is given) with an empty uv cache, against downloading its wheels alone.
It downloads every wheel of the matrix four times: many GB for the default matrix.

Bisect's cost is counted in builds, on stand-in torch wheels (tests/standin.py)
that install in a second: ``bisect --all`` over nightlies with two known
changes against its bound and against one bisection per change. Repeats are
timed on the first cell's real torch: ``--repeat 5`` (five rounds, each in
workers of its own) against one run per pair.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import datetime
import importlib.metadata
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.tags import Tag
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version
from tabulate import tabulate

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))  # the torchmatrix of this checkout, as the noxfile uses it
sys.path.insert(1, str(ROOT))  # for the tests' stand-in torch wheels

from tests import standin  # noqa: E402
from torchmatrix import core, freshness, interpreters, results  # noqa: E402
from torchmatrix.core import Outcome, Record  # noqa: E402
from torchmatrix.environment import cellenv  # noqa: E402
from torchmatrix.envside.torchmatrix_worker.fingerprint import cpu_name  # noqa: E402 - stdlib only; torch is imported by its main() alone
from torchmatrix.planner import Cell  # noqa: E402
from torchmatrix.project import Project  # noqa: E402
from torchmatrix.project import load as load_project  # noqa: E402
from torchmatrix.worker import runner  # noqa: E402

SEED_PROBES = ("autograd_dot", "batched_matmul")
MACHINE = "bench"

# The limit a cell is measured against: the environment's Python imports torch
# once and runs the same probes directly, on the devices this machine has.
LIMIT_SCRIPT = textwrap.dedent(
    """
    import importlib.util, sys
    import torch
    mps = getattr(torch.backends, "mps", None)
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else []) + (
        ["mps"] if mps is not None and mps.is_available() else [])
    for index, path in enumerate(sys.argv[1:]):
        spec = importlib.util.spec_from_file_location("probe%d" % index, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for device in devices:
            module.run(device)
    """
)

NOOP_PROBE = 'def run(device):\n    return {"outcome": "pass", "metrics": {}, "message": ""}\n'
ISOLATION_PAIRS = 20

# The in-process side of the isolation figure: a probe file loaded and run in a process that imported torch,
# as a worker did before each pair got a process of its own; the median seconds, printed.
IN_PROCESS_SCRIPT = textwrap.dedent(
    """
    import importlib.util, statistics, sys, time
    import torch
    times = []
    for index in range(int(sys.argv[2])):
        started = time.perf_counter()
        spec = importlib.util.spec_from_file_location("noop%d" % index, sys.argv[1])
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        module.run("cpu")
        times.append(time.perf_counter() - started)
    print(statistics.median(times))
    """
)


@dataclass(frozen=True)
class Figure:
    name: str
    measured: str
    target: str
    met: bool | None
    """None for a figure without a target (context)."""
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Run:
    seconds: float
    output: str


class BenchError(Exception):
    """A step of the benchmark failed; its message says which and shows the end of its output."""


class Bench:
    """Runs nox, the limit script and pip in one temporary folder, on the machine's warm uv cache."""

    def __init__(self, folder: Path, repeat: int) -> None:
        self.folder = folder
        self.repeat = repeat
        self.envdir = folder / ".nox"
        # Bytecode caching as users have it: without it every nox start recompiles nox and torchmatrix.
        self.environ = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
        self.environ["TORCHMATRIX_MACHINE"] = MACHINE

    # --- running things -----------------------------------------------------------

    def run(self, command: Sequence[str], what: str, environ: Mapping[str, str] | None = None) -> Run:
        started = time.perf_counter()
        completed = subprocess.run(
            list(command),
            env=dict(environ or self.environ),
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
        )
        seconds = time.perf_counter() - started
        if completed.returncode != 0:
            tail = "\n".join(completed.stdout.strip().splitlines()[-25:])
            raise BenchError(f"{what} failed (exit code {completed.returncode}):\n{tail}")
        return Run(seconds, completed.stdout)

    def nox(
        self, matrix: Path, *args: str, environ: Mapping[str, str] | None = None, envdir: Path | None = None
    ) -> Run:
        environ = dict(environ or self.environ, TORCHMATRIX_MATRIX=str(matrix))
        command = [sys.executable, "-m", "nox", "-f", str(ROOT / "noxfile.py"), "--envdir", str(envdir or self.envdir)]
        return self.run([*command, *args], f"nox {' '.join(args)} ({matrix.name})", environ)

    def best(self, *sides: Callable[[], Run]) -> list[float]:
        """The best time of each side over ``repeat`` rounds, the sides interleaved within a round."""
        times: list[list[float]] = [[] for _ in sides]
        for _ in range(self.repeat):
            for index, side in enumerate(sides):
                times[index].append(side().seconds)
        return [min(each) for each in times]

    # --- the matrices ------------------------------------------------------------

    def matrix(self, name: str, torch: Sequence[str], probes: Sequence[str], output: str) -> Path:
        path = self.folder / f"{name}.yaml"
        path.write_text(
            json.dumps({"torch": list(torch), "probes": list(probes), "timeout": 600, "output": output}, indent=2)
        )
        return path

    def project(self, matrix: Path) -> Project:
        return load_project(ROOT, dict(self.environ, TORCHMATRIX_MATRIX=str(matrix)))


def seconds(value: float) -> str:
    return f"{value:.2f} s"


# --- the figures ----------------------------------------------------------------------


def matrix_figures(bench: Bench, versions: Sequence[str]) -> tuple[list[Figure], Path, Project]:
    """First run, no-change re-run, --force and disk, over a matrix of ``versions``."""
    matrix = bench.matrix("matrix", versions, SEED_PROBES, "out")
    project = bench.project(matrix)
    runnable = [cell for cell in project.cells if not cell.outcome]
    if len(runnable) != len(project.cells):
        problems = "; ".join(f"{cell.id}: {cell.hint}" for cell in project.cells if cell.outcome)
        raise BenchError(f"every cell of the benchmark must be able to run here: {problems}")
    count = len(runnable)
    files = [project.result_file(cell) for cell in runnable]

    first = bench.nox(matrix, "-s", "probe")
    stored = [path.read_bytes() for path in files]
    rerun = bench.nox(matrix, "-s", "probe")
    skipped = sum(
        line.startswith("nox > Session probe(") and " up to date (" in line for line in rerun.output.splitlines()
    )
    untouched = [path.read_bytes() for path in files] == stored
    forced = bench.nox(matrix, "-s", "probe", "--", "--force")
    remeasured = forced.output.count(f": {freshness.FORCE}: re-measuring")
    rewritten = sum(path.read_bytes() != old for path, old in zip(files, stored, strict=True))
    per_cell = rerun.seconds / count
    figures = [
        Figure(
            f"re-run of a finished matrix with no change ({count} cells)",
            f"{seconds(per_cell)} per cell; {skipped}/{count} said up to date, files untouched: {untouched}; "
            f"`-- --force` re-measured {remeasured}/{count} ({rewritten} files rewritten)",
            "<= 1 s per cell, says it skipped; --force re-measures",
            per_cell <= 1.0 and skipped == count and untouched and remeasured == count and rewritten == count,
            (
                f"whole re-run {seconds(rerun.seconds)}; first run {seconds(first.seconds)}; "
                f"--force run {seconds(forced.seconds)}",
            ),
        )  # fmt: skip
    ]

    envs = sorted(path for path in bench.envdir.iterdir() if path.is_dir())  # with .pycache, the envs' bytecode
    cache = uv_cache_dir(bench)
    together = du(cache, *envs)
    extra = sum(together[1:])
    envs_total = sum(du(*envs))
    hardlinked = os.stat(bench.folder).st_dev == os.stat(cache).st_dev
    figures.append(
        Figure(
            f"disk: {count} cells' env folders (and their bytecode) on top of the shared uv cache",
            f"{extra / envs_total:.1%} extra ({mib(extra)} beyond the cache; the envs alone hold {mib(envs_total)})",
            "<= 5% extra",
            extra / envs_total <= 0.05,
            (
                f"`du` over the uv cache ({cache}, {mib(together[0])}) and the env folders together, "
                f"which counts a hard-linked file once; {mib(extra)} is {extra / together[0]:.2%} of the whole cache",
                *([] if hardlinked else ["the temporary folder is not on the uv cache's filesystem: uv copies"]),
            ),
        )  # fmt: skip
    )
    return figures, matrix, project


def env_python(project: Project, cell: Cell) -> Path:
    """The Python of the cell's env, as its stored result names it."""
    return Path(results.read(project.result_file(cell)).environment["python_executable"])


def rerun_figure(bench: Bench, matrix: Path, project: Project, cell: Cell) -> tuple[Figure, float]:
    """A warm re-run of one cell (env kept, --force) against the limit; the figure and the limit."""
    python = env_python(project, cell)
    probe_files = [str(probe.path) for probe in project.matrix.probes]
    prefix = cellenv.pycache_prefix(python.parent.parent)  # the same compiled torch the cell's worker uses
    limit_command = [str(python), "-I", "-X", f"pycache_prefix={prefix}", "-c", LIMIT_SCRIPT, *probe_files]
    kept, limit = bench.best(
        lambda: bench.nox(matrix, "-s", cell.session, "--", "--force"),
        lambda: bench.run(limit_command, "the limit script"),
    )
    figure = Figure(
        f"warm re-run of one cell (env kept), torch {cell.torch}",
        f"{kept / limit:.2f}x the limit ({seconds(kept)} vs {seconds(limit)})",
        "<= 1.3x the limit",
        kept / limit <= 1.3,
        (f"limit: the env's Python imports torch and runs the {len(probe_files)} probes directly, "
         "one process, on the devices present",),
    )  # fmt: skip
    return figure, limit


def cell_figures(bench: Bench, matrix: Path, project: Project, probe_count: int) -> tuple[list[Figure], float]:
    """Every cell's warm re-run vs the limit; for the first cell also a rebuilt env vs pip, and P probes vs 1.

    Also the sum of the cells' limits.
    """
    measured = [rerun_figure(bench, matrix, project, each) for each in project.cells]
    figures = [figure for figure, _ in measured]
    startup, nox_import = bench.best(
        lambda: bench.nox(matrix, "-l"), lambda: bench.run([sys.executable, "-c", "import nox"], "importing nox")
    )
    figures[0] = dataclasses.replace(
        figures[0],
        notes=(
            *figures[0].notes,
            f"nox's start and the plan's load alone (`nox -l`): {seconds(startup)}; "
            f"of which Python starting and importing nox (`python -c 'import nox'`): {seconds(nox_import)}",
        ),
    )
    cell = project.cells[0]
    env = env_python(project, cell).parent.parent
    select = cell.session

    def rebuilt() -> Run:
        shutil.rmtree(env)
        return bench.nox(matrix, "-s", select, "--", "--force")

    kept, deleted = bench.best(lambda: bench.nox(matrix, "-s", select, "--", "--force"), rebuilt)
    rebuild = deleted - kept
    (resolving,) = bench.best(lambda: resolve_only(bench, project, cell))
    pip_seconds, pip_notes = pip_baseline(bench, cell)
    figures.append(
        Figure(
            f"warm env rebuild (env deleted, wheel cache warm), torch {cell.torch}",
            f"{pip_seconds / rebuild:.1f}x faster ({seconds(rebuild)} vs {seconds(pip_seconds)} "
            f"for `python -m venv` + `pip install {' '.join(cell.requirements)}`)",
            ">= 30x faster",
            pip_seconds / rebuild >= 30,
            (
                f"rebuild = the cell's run with its env deleted ({seconds(deleted)}) minus with it kept "
                f"({seconds(kept)}): venv, install from the cache, and anything a first import costs more; "
                f"of which uv's resolution, index queries included: {seconds(resolving)} "
                "(`uv pip install --dry-run` into an empty env)",
                *pip_notes,
            ),
        )  # fmt: skip
    )

    version = str(cell.torch)
    one = bench.matrix("one-probe", [version], ["probes/one_00.py"], "out-probes")
    many = bench.matrix("many-probes", [version], [f"probes/many_{i:02}.py" for i in range(probe_count)], "out-probes")
    source = (ROOT / "probes" / "autograd_dot.py").read_text()
    (bench.folder / "probes").mkdir(exist_ok=True)
    for name in ["one_00", *(f"many_{i:02}" for i in range(probe_count))]:
        (bench.folder / "probes" / f"{name}.py").write_text(source)
    single, multiple = bench.best(
        lambda: bench.nox(one, "-s", select, "--", "--force"),
        lambda: bench.nox(many, "-s", select, "--", "--force"),
    )
    figures.append(
        Figure(
            f"{probe_count} probes in one cell vs 1 probe, torch {cell.torch}",
            f"{multiple / single:.2f}x ({seconds(multiple)} vs {seconds(single)})",
            "<= 1.3x",
            multiple / single <= 1.3,
            ("each probe a copy of autograd_dot, on every device; one `import torch` per cell",),
        )
    )
    return figures, sum(limit for _, limit in measured)


def isolation_figure(bench: Bench, cell: Cell, pairs: int = ISOLATION_PAIRS) -> Figure:
    """What a pair's own process costs: a no-op probe's recorded duration against loading and running it in-process."""
    folder = bench.folder / "probes"
    folder.mkdir(exist_ok=True)
    names = [f"noop_{index:02}" for index in range(pairs)]
    for name in names:
        (folder / f"{name}.py").write_text(NOOP_PROBE)
    matrix = bench.matrix("noop", [str(cell.torch)], [f"probes/{name}.py" for name in names], "out-noop")
    project = bench.project(matrix)
    (noop_cell,) = project.cells
    bench.nox(matrix, "-s", noop_cell.session, "--", "--force")
    records = [record for record in results.read(project.result_file(noop_cell)).records if record.device == "cpu"]
    isolated = statistics.median(record.duration for record in records)
    python = env_python(project, noop_cell)
    prefix = cellenv.pycache_prefix(python.parent.parent)
    command = [str(python), "-I", "-X", f"pycache_prefix={prefix}", "-c", IN_PROCESS_SCRIPT, str(folder / "noop_00.py")]
    in_process = float(bench.run([*command, str(pairs)], "the in-process no-op").output.split()[-1])
    return Figure(
        f"isolation: a pair in a process of its own vs in-process, torch {cell.torch}",
        f"{milliseconds(isolated - in_process)} more per pair ({milliseconds(isolated)} vs {milliseconds(in_process)})",
        "(measured, no target)",
        None,
        (f"median over {len(records)} cpu pairs of a no-op probe: the duration its record holds, which the worker "
         "measures from before it makes the pair's temporary folder to after it removes it, the pair's "
         "processes started, ended and reaped in between; "
         "in-process: the same file loaded and run by the env's Python after `import torch`, as a worker did "
         "before each pair had a process of its own",),
    )  # fmt: skip


KIND_PAIRS = 20
NOOP_SCRIPT = "import torch\n"
"""A script that does nothing but what every bug report's script does first."""
NOOP_TEST = "def test_noop():\n    pass\n"
SPAWNED_SCRIPTS = 5


def probe_kinds_figures(bench: Bench, version: str) -> list[Figure]:
    """What a pair costs by kind of probe: a no-op run() probe, a no-op script, a file of one test; per further test.

    Each pair is timed from its start to its records, as the worker announces them, in one cell's worker.
    """
    folder = bench.folder / "kinds"
    files = {"module": NOOP_PROBE, "script": NOOP_SCRIPT, "test": NOOP_TEST}
    entries = []
    for kind, text in files.items():
        for index in range(KIND_PAIRS):
            name = f"test_{index:02}.py" if kind == "test" else f"{kind}_{index:02}.py"
            (folder / kind).mkdir(parents=True, exist_ok=True)
            (folder / kind / name).write_text(text)
            entries.append(f"kinds/{kind}/{name}")
    many = "".join(f"def test_noop_{index:02}():\n    pass\n\n\n" for index in range(KIND_PAIRS))
    (folder / "many").mkdir()
    (folder / "many" / "test_many.py").write_text(many)
    matrix = bench.matrix("kinds", [version], [*entries, "kinds/many/test_many.py"], "out-kinds")
    project = bench.project(matrix)
    (cell,) = project.cells
    bench.nox(matrix, "-s", cell.session, "--", "--force")  # builds the env, with pytest
    python = env_python(project, cell)
    prefix = cellenv.pycache_prefix(python.parent.parent)
    pairs = [pair for pair in project.pairs() if pair.device == "cpu"]
    rounds = [pair_seconds(python, pairs, prefix) for _ in range(bench.repeat)]

    def best(kind: str) -> float:
        folder = f"kinds/{kind}/"  # a probe is its path from the matrix's folder
        return min(statistics.median(took[name] for name in took if name.startswith(folder)) for took in rounds)

    module, script = best("module"), best("script")
    test = best("test")
    many_tests = min(took["kinds/many/test_many.py"] for took in rounds)
    per_test = (many_tests - test) / (KIND_PAIRS - 1)
    scripts = [pair for pair in pairs if pair.probe.name.startswith("kinds/script/")]
    spawned = spawned_script_seconds(python, scripts, prefix)
    return [
        Figure(
            f"a pair by kind of probe, torch {cell.torch}",
            f"run() probe {milliseconds(module)}; script {milliseconds(script)} ({milliseconds(script - module)} "
            f"more); a file of one test {milliseconds(test)} ({milliseconds(test - module)} more); "
            f"each further test in a file {milliseconds(per_test)}",
            "(measured, no target)",
            None,
            (
                f"the best of {bench.repeat} runs of the median over {KIND_PAIRS} cpu pairs of each kind, each pair "
                "timed from the worker's start message to its records: a no-op run(device), a script of "
                f"`{NOOP_SCRIPT.strip()}`, a test file of one no-op test (pytest starts and collects per pair); "
                f"further tests: a file of {KIND_PAIRS} no-op tests against the file of one",
            ),
        ),  # fmt: skip
        Figure(
            f"a script's pair in a new Python (as on macOS and Windows), torch {cell.torch}",
            f"{milliseconds(spawned)} ({milliseconds(spawned - script)} more than forked: its own `import torch`)",
            "(measured, no target)",
            None,
            (
                f"median over {SPAWNED_SCRIPTS} cpu pairs of the no-op script with $TORCHMATRIX_WORKER_START=spawn; "
                "forked from the worker, a script's `import torch` finds torch imported",
            ),
        ),  # fmt: skip
    ]


def pair_seconds(python: Path, pairs: Sequence[core.Pair], prefix: Path) -> dict[str, float]:
    """Seconds from each pair's start to its records, by probe name, in one worker."""
    started: dict[str, float] = {}
    took: dict[str, float] = {}

    def listen(event: str, pair: core.Pair, _record: object) -> None:
        now = time.perf_counter()
        if event == "start":
            started[pair.probe.name] = now
        elif pair.probe.name not in took:  # a pair's records arrive together: the first says it ended
            took[pair.probe.name] = now - started[pair.probe.name]

    cell = runner.run_cell(str(python), pairs, 600.0, listen, prefix, workdir=pairs[0].probe.path.parent)
    if cell.import_failure or any(record.outcome is not core.Outcome.PASS for record in cell.records):
        raise BenchError(f"the no-op probes did not all pass: {cell.import_failure or cell.records}")
    return took


def spawned_script_seconds(python: Path, scripts: Sequence[core.Pair], prefix: Path) -> float:
    before = os.environ.get("TORCHMATRIX_WORKER_START")
    os.environ["TORCHMATRIX_WORKER_START"] = "spawn"
    try:
        return statistics.median(pair_seconds(python, scripts[:SPAWNED_SCRIPTS], prefix).values())
    finally:
        if before is None:
            del os.environ["TORCHMATRIX_WORKER_START"]
        else:
            os.environ["TORCHMATRIX_WORKER_START"] = before


def milliseconds(value: float) -> str:
    return f"{value * 1000:.2f} ms"


def parallel_figures(bench: Bench, matrix: Path, project: Project, limits: float) -> list[Figure]:
    """The whole matrix re-measured, one cell after another and two at a time, against its cells' limits."""
    count = len(project.cells)
    sequential, parallel = bench.best(
        lambda: bench.nox(matrix, "-s", "probe", "--", "--force"),
        lambda: bench.nox(matrix, "-j", "2", "-s", "probe", "report", "--", "--force"),
    )
    return [
        Figure(
            f"warm re-run of the whole matrix ({count} cells, --force) vs the sum of its cells' limits",
            f"{sequential / limits:.2f}x ({seconds(sequential)} vs {seconds(limits)})",
            "(context: nox starts once per matrix)",
            None,
        ),
        Figure(
            f"`nox -j 2 -s probe report` vs one cell after another ({count} cells, --force)",
            f"{sequential / parallel:.2f}x as fast ({seconds(parallel)} vs {seconds(sequential)})",
            "(measured, no target)",
            None,
            (f"{os.cpu_count()} CPUs; each parallel cell is its own nox process",),
        ),
    ]


SWEEP_TARGET_SECONDS = 180.0
"""The operator sweep of one release should take a few minutes at most on a small machine."""


def sweep_figures(bench: Bench, versions: Sequence[str]) -> list[Figure]:
    """The operator sweep (probes/opsweep.py, every operator) of each cell, re-run with its environment kept."""
    matrix = bench.matrix("sweep", versions, ["opsweep"], "out-sweep")
    project = bench.project(matrix)
    figures = []
    for cell in project.cells:
        walls, pairs = [], []
        for _ in range(bench.repeat):
            walls.append(bench.nox(matrix, "-s", cell.session, "--", "--force").seconds)
            record = sweep_record(project, cell)
            pairs.append(record.duration)
        metrics = record.metrics
        figures.append(
            Figure(
                f"operator sweep of one cell (opsweep on cpu, every operator), torch {cell.torch}",
                f"{seconds(min(pairs))} for {metrics['swept']} operators, {metrics['samples_run']} samples; "
                f"the cell's whole run {seconds(min(walls))}",
                f"<= {SWEEP_TARGET_SECONDS:.0f} s",
                min(pairs) <= SWEEP_TARGET_SECONDS,
                (
                    "the pair's own seconds, as its record has them: importing op_db, then 3 samples of each "
                    "operator, each run twice in float32 and once in float64; the whole run adds nox, the install "
                    "check and `import torch`; each the best of its runs",
                ),
            )
        )
    return figures


def sweep_record(project: Project, cell: Cell) -> Record:
    """The cell's record of the sweep on the CPU; a sweep that did not run stops the benchmark."""
    record = next(
        record
        for record in results.read(project.result_file(cell)).records
        if (record.probe, record.device) == ("opsweep", "cpu")
    )
    if record.outcome is not Outcome.PASS:
        raise BenchError(f"the operator sweep of torch {cell.torch} did not run: {record.message}")
    return record


def repeat_figure(bench: Bench, matrix: Path, project: Project, repeat: int = 5) -> Figure:
    """One cell with each pair run ``repeat`` times against once: each extra run is a round of every pair in workers
    of its own, so it should cost one ``import torch`` and the probes, little more."""
    cell = project.cells[0]
    once, repeated = bench.best(
        lambda: bench.nox(matrix, "-s", cell.session, "--", "--force"),
        lambda: bench.nox(matrix, "-s", cell.session, "--", "--force", "--repeat", str(repeat)),
    )
    stored = results.read(project.result_file(cell))  # the last run's: the repeated one
    per_round = max(repeated - once, 0.0) / (repeat - 1)
    probes = sum(run["duration"] for record in stored.records for run in record.metrics["repeats"][1:])
    imported = float(stored.environment["import_seconds"])
    return Figure(
        f"`--repeat {repeat}` vs one run per pair, torch {cell.torch} ({len(stored.records)} pairs)",
        f"{repeated / once:.2f}x ({seconds(repeated)} vs {seconds(once)}): {seconds(per_round)} per extra round of "
        f"every pair, against {seconds(imported)} for one `import torch`",
        "an extra round < 2 `import torch` + its probes' own time",
        per_round < 2 * imported + probes / (repeat - 1),
        (f"the {repeat - 1} extra rounds took {seconds(repeated - once)} more in all, of which the probes' own "
         f"{seconds(probes)} (their records' seconds); `import torch` as the worker measured it in that run",),
    )  # fmt: skip


def bisect_figure(bench: Bench) -> Figure:
    """``bisect --all`` over stand-in nightlies with two known changes: its builds, its bound, one bisect per change."""
    folder = bench.folder / "standin"
    nightlies = [f"9.1.0.dev202410{day:02}" for day in range(1, 17)]
    changes = {"alpha": nightlies[4], "beta": nightlies[11]}
    for version in nightlies:
        broken = {name: "fail" if Version(version) >= Version(first) else "pass" for name, first in changes.items()}
        standin.wheel(folder / "wheels", version, broken)
    for name in (*changes, "steady"):
        standin.probe(folder, name)
    matrix = folder / "matrix.yaml"
    matrix.write_text(json.dumps({
        "torch": [nightlies[0]], "probes": [f"{name}.py" for name in (*changes, "steady")], "devices": ["cpu"],
        "timeout": 60, "output": "out", "find_links": ["wheels"],
    }))  # fmt: skip

    def bisect(output: str, *question: str) -> tuple[Run, dict[str, Any]]:
        environ = dict(bench.environ, TORCHMATRIX_OUTPUT=str(folder / output))
        span = ["--pre", "--from", nightlies[0], "--to", nightlies[-1]]
        run = bench.nox(matrix, "-s", "bisect", "--", *question, *span, environ=environ)
        return run, json.loads(next((folder / output / "bisect").glob("*/*.json")).read_text())

    every, summary = bisect("all", "--all")
    singles = [bisect(f"only-{name}", f"{name}.py") for name in changes]  # scripts beside the matrix: their paths
    found = {change["probe"]: change["first_new"] for change in summary["changes"]}
    built = [step["version"] for step in summary["steps"] if step["how"] == "built"]
    one_each = [single["built"] for _, single in singles]
    count, budget = summary["built"], summary["budget"]
    once = len(built) == len(set(built))
    return Figure(
        f"`bisect --all` over {len(nightlies)} stand-in nightlies with {len(changes)} known changes",
        f"{count} builds, bound {budget}; one bisect per change: {sum(one_each)} builds "
        f"({' + '.join(map(str, one_each))}); both found at the right nightly: {found == changes}; "
        f"each release built once: {once}",
        "<= the bound, each release once, fewer builds than one bisect per change",
        found == changes and once and count <= budget and count < sum(one_each),
        (f"{seconds(every.seconds)} for --all, {seconds(sum(run.seconds for run, _ in singles))} for the "
         f"{len(changes)} bisects (each from an empty results folder); a stand-in installs in a second, "
         "a real torch release in tens of seconds, so builds are the cost",),
    )  # fmt: skip


def resolve_only(bench: Bench, project: Project, cell: Cell) -> Run:
    """What uv spends resolving the cell's requirements (it queries the index), installing nothing."""
    assert cell.interpreter is not None
    env = bench.folder / "resolve-env"
    shutil.rmtree(env, ignore_errors=True)
    uv = [sys.executable, "-m", "uv"]
    bench.run([*uv, "venv", "-q", "-p", cell.interpreter.path, str(env)], "uv venv")
    python = env / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    command = [*uv, "pip", "install", "--dry-run", "--python", str(python), *cell.requirements]
    return bench.run([*command, *project.installer_options()], "uv pip install --dry-run")


def pip_baseline(bench: Bench, cell: Cell) -> tuple[float, list[str]]:
    """``python -m venv`` + ``pip install`` of the cell's requirements, every wheel already on disk."""
    assert cell.interpreter is not None
    python = cell.interpreter.path
    pip_version = bench.run([python, "-m", "pip", "--version"], "pip --version").output.split()[1]
    wheels = bench.folder / "pip-wheels"
    download = bench.run(
        [python, "-m", "pip", "download", "--no-cache-dir", "--dest", str(wheels), *cell.requirements],
        "pip download",
    )
    venv = bench.folder / "pip-venv"

    def install() -> Run:
        shutil.rmtree(venv, ignore_errors=True)
        made = bench.run([python, "-m", "venv", str(venv)], "python -m venv")
        pip = venv / ("Scripts/pip.exe" if sys.platform == "win32" else "bin/pip")
        installed = bench.run(
            [str(pip), "install", "--no-index", "--find-links", str(wheels), *cell.requirements], "pip install"
        )
        return Run(made.seconds + installed.seconds, installed.output)

    (best,) = bench.best(install)
    shutil.rmtree(venv, ignore_errors=True)
    notes = [
        f"pip {pip_version} on Python {cell.interpreter.minor}, best case: every wheel already on disk "
        f"(`pip download` beforehand, {seconds(download.seconds)}) and no index queries (--no-index); "
        "pip's own HTTP cache plays no part"
    ]
    return best, notes


def cold_nox(bench: Bench, matrix: Path, folder: Path, *args: str) -> tuple[Run, dict[str, str]]:
    """``nox *args`` on ``matrix`` with an empty uv cache, torchmatrix cache, envdir and output, all in ``folder``."""
    environ = dict(
        bench.environ,
        UV_CACHE_DIR=str(folder / "uv-cache"),
        TORCHMATRIX_CACHE_DIR=str(folder / "torchmatrix-cache"),
        TORCHMATRIX_MACHINE=f"bench-cold-{os.getpid()}",
        TORCHMATRIX_OUTPUT=str(folder / "out"),  # not the matrix's own output folder: its reports stay as they are
    )
    return bench.nox(matrix, *args, environ=environ, envdir=folder / ".nox"), environ


def cold_matrix_figures(bench: Bench, matrix: Path) -> list[Figure]:
    """The whole matrix with an empty uv cache, one cell after another and two at a time.

    Against downloading the wheels it installed, in parallel, and against uv alone installing them.
    """
    cold = bench.folder / "cold"
    try:
        run, environ = cold_nox(bench, matrix, cold / "one-after-another", "-s", "probe")
    finally:
        # Loaded after the run, which is timed with the index listing to fetch like the rest.
        project = load_project(ROOT, dict(environ, TORCHMATRIX_MATRIX=str(matrix)))
        envs = [env_of(project, cell) for cell in project.cells if project.result_file(cell).exists()]
    wheels, local = installed_wheels(project, [env for env in envs if env is not None])
    shutil.rmtree(cold / "one-after-another", ignore_errors=True)  # GBs: freed before the next cold run
    parallel, _ = cold_nox(bench, matrix, cold / "two-at-a-time", "-j", "2", "-s", "probe", "report")
    shutil.rmtree(cold / "two-at-a-time", ignore_errors=True)
    download_seconds, size = download_all(wheels, cold / "wheels")
    uv_seconds = uv_alone(bench, project, cold / "uv-alone")
    shutil.rmtree(cold, ignore_errors=True)
    cells = sum(1 for cell in project.cells if not cell.outcome)
    return [
        Figure(
            f"cold run of {matrix.name} ({cells} cells) vs downloading its wheels alone",
            f"{run.seconds / download_seconds:.2f}x ({seconds(run.seconds)} vs {seconds(download_seconds)}); "
            f"{run.seconds / uv_seconds:.2f}x uv alone installing the same ({seconds(uv_seconds)})",
            "<= 1.3x",
            run.seconds / download_seconds <= 1.3,
            (f"empty uv cache and torchmatrix cache; baseline: the {len(wheels)} wheels the run installed "
             f"({mib(size)}), fetched from the index 8 at a time",
             "uv alone: `uv venv` + `uv pip install` of each cell's requirements, one cell after another, into an "
             "empty uv cache of its own: the downloads plus unpacking them, with no nox, no probes, no torch import",
             *([f"{local} distributions came from local files (find-links), not downloaded"] if local else [])),
        ),
        Figure(
            f"cold run of {matrix.name}, `nox -j 2 -s probe report` vs one cell after another",
            f"{run.seconds / parallel.seconds:.2f}x as fast ({seconds(parallel.seconds)} vs {seconds(run.seconds)}); "
            f"{parallel.seconds / download_seconds:.2f}x the download",
            "(measured, no target)",
            None,
            ("its own empty uv cache, torchmatrix cache and environments",),
        ),
    ]  # fmt: skip


def uv_alone(bench: Bench, project: Project, folder: Path) -> float:
    """Seconds for uv by itself to install every runnable cell's requirements, cold, one cell after another."""
    environ = dict(bench.environ, UV_CACHE_DIR=str(folder / "uv-cache"))
    started = time.perf_counter()
    for cell in project.cells:
        if cell.outcome or cell.interpreter is None:
            continue
        env = folder / cell.id
        venv = ["uv", "venv", "-q", "--python", cell.interpreter.path, str(env)]
        bench.run([sys.executable, "-m", *venv], "uv venv", environ)
        install = ["uv", "pip", "install", "-q", "--python", str(env), *cell.requirements, *project.installer_options()]
        bench.run([sys.executable, "-m", *install], f"uv pip install {' '.join(cell.requirements)}", environ)
    return time.perf_counter() - started


def env_of(project: Project, cell: Cell) -> tuple[Cell, Path] | None:
    """The cell and its env folder, as its stored result names the env's Python; None if the cell did not run."""
    python = results.read(project.result_file(cell)).environment.get("python_executable")
    return (cell, Path(python).parent.parent) if python else None


def installed_wheels(project: Project, envs: Sequence[tuple[Cell, Path]]) -> tuple[list[str], int]:
    """The index URL of every wheel installed in the cells' envs (each once), and how many came from elsewhere."""
    index = project.matrix.index_url.rstrip("/")
    platforms = interpreters.host_platforms()
    urls: dict[str, None] = {}
    local = 0
    for cell, env in envs:
        assert cell.interpreter is not None
        preference = {tag: rank for rank, tag in enumerate(cell.interpreter.ordered_tags(platforms))}
        folders = [str(folder) for folder in freshness.site_packages(env)]
        for dist in importlib.metadata.distributions(path=folders):
            url = best_wheel(index, dist.metadata["Name"], Version(dist.version), preference)
            if url is None:
                local += 1
            else:
                urls[url] = None
    return list(urls), local


def best_wheel(index: str, name: str, version: Version, preference: Mapping[Tag, int]) -> str | None:
    """The URL of the wheel an installer picks for ``name==version`` from ``index``; None if it has none."""
    request = urllib.request.Request(
        f"{index}/{canonicalize_name(name)}/",
        headers={"Accept": "application/vnd.pypi.simple.v1+json", "User-Agent": "torchmatrix-bench"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        files = json.load(response).get("files", [])
    ranked = []
    for entry in files:
        if not entry["filename"].endswith(".whl"):
            continue
        _, wheel_version, _, tags = parse_wheel_filename(entry["filename"])
        ranks = [preference[tag] for tag in tags if tag in preference]
        if wheel_version == version and ranks:
            ranked.append((min(ranks), entry["url"]))
    return min(ranked)[1] if ranked else None


def download_all(urls: Sequence[str], folder: Path) -> tuple[float, int]:
    folder.mkdir(parents=True)

    def fetch(url: str) -> int:
        target = folder / url.rsplit("/", 1)[-1].split("#")[0]
        with urllib.request.urlopen(url, timeout=600) as response, target.open("wb") as out:
            shutil.copyfileobj(response, out, 1 << 20)
        size = target.stat().st_size
        target.unlink()  # written like an installer writes it, then freed: the default matrix is many GB
        return size

    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        size = sum(pool.map(fetch, urls))
    return time.perf_counter() - started, size


# --- machine facts -----------------------------------------------------------------


def uv_cache_dir(bench: Bench) -> Path:
    return Path(bench.run([sys.executable, "-m", "uv", "cache", "dir"], "uv cache dir").output.strip().splitlines()[-1])


def du(*paths: Path) -> list[int]:
    """Bytes on disk of each path, as one `du` run counts them: a file hard-linked from an earlier path counts 0."""
    completed = subprocess.run(["du", "-s", "-k", *map(str, paths)], capture_output=True, text=True, check=True)
    return [int(line.split()[0]) * 1024 for line in completed.stdout.splitlines()]


def mib(size: int) -> str:
    return f"{size / 2**20:,.0f} MiB" if size < 2**30 else f"{size / 2**30:.1f} GiB"


def machine_lines(bench: Bench, versions: Sequence[str]) -> list[str]:
    memory = ""
    if hasattr(os, "sysconf") and "SC_PHYS_PAGES" in os.sysconf_names:
        memory = f", {os.sysconf('SC_PHYS_PAGES') * os.sysconf('SC_PAGE_SIZE') / 2**30:.0f} GiB RAM"
    load = ""
    if hasattr(os, "getloadavg"):
        load = ", load average {:.1f} {:.1f} {:.1f} at start".format(*os.getloadavg())
    uv_version = bench.run([sys.executable, "-m", "uv", "--version"], "uv --version").output.strip()
    return [
        f"machine: {cpu_name()}, {os.cpu_count()} CPUs{memory}, {platform.platform()}{load}",
        f"versions: Python {platform.python_version()}, nox {importlib.metadata.version('nox')}, {uv_version}; "
        + ", ".join(versions),
        f"method: best of {bench.repeat} interleaved runs per side; bytecode caching on "
        f"(PYTHONDONTWRITEBYTECODE {'removed' if 'PYTHONDONTWRITEBYTECODE' in os.environ else 'not set'})",
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cells", default="1.9.0,1.12.1,2.2.0", help="torch releases of the matrix figures")
    parser.add_argument("--probes", type=int, default=10, help="P, for P probes vs 1 (default 10)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per side; the best counts (default 3)")
    parser.add_argument(
        "--cold-matrix", nargs="?", const=str(ROOT / "matrix.yaml"), type=Path, metavar="FILE",
        help="also measure a cold run of FILE (default: matrix.yaml) against downloading its wheels: many GB",
    )  # fmt: skip
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder, for a look inside")
    parser.add_argument(
        "--kinds-only", action="store_true", help="only what a pair costs by kind of probe, on the first of --cells"
    )
    options = parser.parse_args(argv)
    versions = [version.strip() for version in options.cells.split(",") if version.strip()]

    folder = Path(tempfile.mkdtemp(prefix="torchmatrix-bench-"))
    bench = Bench(folder, max(1, options.repeat))
    started = datetime.datetime.now(datetime.timezone.utc)
    try:
        print(f"torchmatrix benchmark, {started:%Y-%m-%d %H:%M} UTC, in {folder}", flush=True)
        if options.kinds_only:
            figures = probe_kinds_figures(bench, versions[0])
            header = machine_lines(bench, [f"torch {versions[0]}"])
        else:
            matrix_rows, matrix, project = matrix_figures(bench, versions)
            header = machine_lines(bench, [f"torch {cell.torch} on Python {cell.python}" for cell in project.cells])
            cell_rows, limits = cell_figures(bench, matrix, project, options.probes)
            figures = [*cell_rows, isolation_figure(bench, project.cells[0]), *matrix_rows]
            figures += probe_kinds_figures(bench, versions[0])
            figures += parallel_figures(bench, matrix, project, limits)
            figures += [repeat_figure(bench, matrix, project), bisect_figure(bench), *sweep_figures(bench, versions)]
        if options.cold_matrix:
            figures += cold_matrix_figures(bench, options.cold_matrix.resolve())
    except BenchError as error:
        print(f"bench: {error}", file=sys.stderr)
        return 1
    finally:
        if options.keep:
            print(f"kept {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)
    print("\n".join(header), end="\n\n")
    rows = [[f.name, f.measured, f.target, "-" if f.met is None else ("yes" if f.met else "NO")] for f in figures]
    print(tabulate(rows, headers=["figure", "measured", "target", "met"], tablefmt="github"), end="\n\n")
    for figure in figures:
        for note in figure.notes:
            print(f"- {figure.name}: {note}")
    print(f"\n({(datetime.datetime.now(datetime.timezone.utc) - started).total_seconds():.0f} s in all)")
    return 0 if all(figure.met is not False for figure in figures) else 1


if __name__ == "__main__":
    sys.exit(main())
