"""How long rendering a report takes: 10,000 synthetic records to every format.

    python benchmarks/render_bench.py [--records N] [--repeat R]

Prints the best of R runs for each step (merge into the model, each renderer,
all together). The target is under 1 s for 10,000 records in all.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from torchmatrix.core import Outcome, Record
from torchmatrix.results import CellResult
from torchmatrix.views import changes, chart, export, history, markdown, model, page, publish, rst

# Machines as CI and a lab would have them, with the devices each really has; the others are `unavailable`.
MACHINES = {
    "ubuntu-latest": ("cpu",),
    "windows-latest": ("cpu",),
    "macos-14": ("cpu", "mps"),
    "H200": ("cpu", "cuda"),
    "A100": ("cpu", "cuda"),
}
DEVICES = ("cpu", "cuda", "mps")
PROBES = tuple(f"probe_{number}" for number in range(8))


def synthetic(records: int, seed: int = 0) -> list[CellResult]:
    """About ``records`` records: every machine runs every probe on every device of each torch release.

    Records look like the seed probes' (half with autograd_dot's 7 checks, half
    with batched_matmul's 12, full-precision floats), so the page carries as
    many numbers as a real report of that size.
    """
    chance = random.Random(seed)
    per_cell = len(PROBES) * len(DEVICES)
    releases = -(-records // (per_cell * len(MACHINES)))
    found = []
    for release in range(releases):
        torch = f"{1 + release // 20}.{release % 20}.0"
        for machine, present in MACHINES.items():
            cell_records = tuple(
                _record(chance, index, probe, device, device in present)
                for index, probe in enumerate(PROBES)
                for device in DEVICES
            )
            found.append(
                CellResult(
                    machine=machine, cell_id=f"torch-{torch}-py3.11", torch=torch, python="3.11", python_request=None,
                    session=f"probe({torch})", outcome=None, message="", records=cell_records,
                    environment={"torch": torch, "python": "3.11.9", "blas": "mkl", "lapack": "mkl", "cuda": "12.4",
                                 "cpu_capability": "AVX2", "os": "Linux-6.8-x86_64-with-glibc2.39",
                                 "devices": {"cpu": "Intel(R) Xeon(R) Processor", "cuda": "NVIDIA H200"}},
                    inputs={}, started_at="2026-11-29T10:00:00+00:00", finished_at="2026-11-29T10:00:00+00:00",
                )
            )  # fmt: skip
    return found


def _record(chance: random.Random, index: int, probe: str, device: str, present: bool) -> Record:
    if not present:
        return Record(probe, device, Outcome.UNAVAILABLE, {}, f"this machine has no usable {device} device", 0.0)
    fails = chance.random() < 0.05
    checks = []
    if index % 2 == 0:  # shaped like autograd_dot's
        for number in range(7):
            exact = number % 2 == 0
            error = 0.0 if exact else chance.random() * 1e-8
            checks.append({"name": f"check {number} of {probe}", "observed": [0.0, 4.0, 8.0, 12.0] if number == 2
                           else 28.0 + error, "expected": 28.0, "error": error,
                           "tolerance": 0.0 if exact else 5.96e-05, "ok": not (fails and number == 0)})  # fmt: skip
        metrics: dict = {"checks": checks}
    else:  # shaped like batched_matmul's
        identical = chance.random() < 0.5
        for number in range(12):
            error = 0.0 if identical and number % 2 == 0 else chance.random() * 1e-6
            check = {"name": f"batched vs looped: case {number} of {probe}", "observed": error,
                     "expected": "<= 3.81e-06", "error": error, "tolerance": 3.814704541596492e-06,
                     "ok": not (fails and number == 1)}  # fmt: skip
            if number % 2 == 0:
                check.update(bit_identical=error == 0.0, max_abs_diff=error * 3.1)
            checks.append(check)
        metrics = {"checks": checks, "bit_identical": identical}
    outcome = Outcome.FAIL if fails else Outcome.PASS
    return Record(probe, device, outcome, metrics, "", chance.random() / 10)


def best(repeat: int, step: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        step()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    arguments = parser.parse_args()
    found = synthetic(arguments.records)
    count = sum(len(result.records) for result in found)
    report = model.build(found)
    charts = chart.charts(report)
    pictures = {probe: chart.file_name(probe) for probe in charts}
    flat = export.rows(report)
    found_histories = history.histories(report)
    steps: dict[str, Callable[[], object]] = {
        "merge (model.build)": lambda: model.build(found),
        "charts (svg)": lambda: chart.charts(report),
        "checks across releases": lambda: history.histories(report),
        "markdown": lambda: markdown.render(report, pictures),
        "rst": lambda: rst.render(report, pictures),
        "html": lambda: page.render(report, charts, found_histories),
        "changes (CHECK-CHANGES.md)": lambda: changes.render(report, found_histories),
        "rows (json and csv)": lambda: export.rows(report),
        "json": lambda: export.to_json(report, flat),
        "csv": lambda: export.to_csv(report, flat),
    }

    def everything() -> None:  # what `nox -s report -- --format all` does between reading and writing files
        publish.render(model.build(found), publish.FORMATS)

    print(f"{count} records, {len(found)} result files, {len(report.tables)} probes, {len(report.columns)} columns")
    for name, step in steps.items():
        print(f"{name:26} {best(arguments.repeat, step) * 1000:8.1f} ms")
    print(f"{'all formats, in all':26} {best(arguments.repeat, everything) * 1000:8.1f} ms  (target: < 1000 ms)")


if __name__ == "__main__":
    main()
