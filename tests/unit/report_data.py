"""Results for the report tests: three machines, every outcome, and a set of hostile ones.

Built in code rather than stored, so each test says what it depends on; the
golden files in tests/data/report/ are rendered from :func:`scenario`.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

from torchmatrix.core import Outcome, Record
from torchmatrix.identity import READ
from torchmatrix.results import CellResult, record_inputs

from ..conftest import DATA

GOLDEN = DATA / "report"
UPDATE_GOLDEN = "TORCHMATRIX_UPDATE_GOLDEN"

HOSTILE = "<script>alert(1)</script> | *x* `y` [z](javascript:alert(1)) \x1b[31mred\x1b[0m\u202eevil\n=HYPERLINK(1)"
"""Markup of every format, a table separator, a terminal escape, a bidirectional override, a newline, a formula."""


def check(name: str, observed: Any, expected: Any, ok: bool, error: float = 0.0, tolerance: float = 0.0,
          **extra: Any) -> dict[str, Any]:  # fmt: skip
    return dict(name=name, observed=observed, expected=expected, error=error, tolerance=tolerance, ok=ok, **extra)


def autograd(device: str, *, broken: bool = False) -> Record:
    if broken:  # the Apple Silicon report: 2 * dot(x, x) gave 0
        checks = [
            check("y = 2 * dot(x, x)", 0.0, 28.0, False, error=28.0),
            check("x.grad after y.backward()", [0.0, 0.0, 0.0, 0.0], [0.0, 4.0, 8.0, 12.0], False, error=12.0),
            check("y without requires_grad", 0.0, 28.0, False, error=28.0),
            check("dot of 1000 random floats", 246.19, 246.19, True, error=2.2e-9, tolerance=5.96e-05),
        ]
        return Record("autograd_dot", device, Outcome.FAIL, {"checks": checks}, "y = 2 * dot(x, x): 0.0 != 28.0", 0.02)
    checks = [
        check("y = 2 * dot(x, x)", 28.0, 28.0, True),
        check("dot of 1000 random floats", 246.19, 246.19, True, error=2.2e-9, tolerance=5.96e-05),
    ]
    return Record("autograd_dot", device, Outcome.PASS, {"checks": checks}, "", 0.01)


def batched(device: str, identical: bool = True, between: float = 0.0) -> Record:
    checks = [
        check("batched vs looped (float32)", between, "<= 3.81e-06", True, error=between, tolerance=3.81e-06,
              bit_identical=identical, max_abs_diff=between * 4),
        check("batched vs float64 reference (float32)", 1.9e-07, "<= 1.91e-06", True, error=1.9e-07,
              tolerance=1.91e-06),
    ]  # fmt: skip
    message = "bit-identical" if identical else "within rounding, not bit-identical"
    return Record("batched_matmul", device, Outcome.PASS, {"checks": checks, "bit_identical": identical}, message, 0.03)


def unavailable(probe: str, device: str) -> Record:
    return Record(probe, device, Outcome.UNAVAILABLE, {}, f"this torch build has no {device.upper()} support", 0.0)


def cell(machine: str, torch: str, python: str | None, records: tuple[Record, ...] = (), *,
         outcome: Outcome | None = None, message: str = "", finished: str = "2026-11-20T10:00:00+00:00",
         **changes: Any) -> CellResult:  # fmt: skip
    cell_id = f"torch-{torch}" + (f"-py{python}" if python else "")
    fields: dict[str, Any] = dict(
        machine=machine, cell_id=cell_id, torch=torch, python=python, python_request=None,
        session=f"probe({torch})", outcome=outcome, message=message, records=records,
        environment={"torch": torch, "python": f"{python}.1", "blas": "mkl", "devices": {"cpu": "Test CPU"}}
        if records else {},
        inputs={"devices": ["cpu", "cuda", "mps"], "probes": {"autograd_dot": "0" * 64, "batched_matmul": "1" * 64}},
        started_at=finished, finished_at=finished,
    )  # fmt: skip
    fields.update(changes)
    # Each record made from the cell's inputs, as a run stores it, with what its pair read where it says.
    fields["records"] = tuple(
        dataclasses.replace(record, inputs={**record_inputs(fields["inputs"], record.probe), **read_of(record)})
        for record in fields["records"]
    )
    return CellResult(**fields)


def read_of(record: Record) -> dict[str, Any]:
    """What ``record`` says its pair read (:data:`identity.READ`), where it says."""
    return {READ: record.inputs[READ]} if READ in record.inputs else {}


def everywhere(device_records: dict[str, tuple[Record, Record]]) -> tuple[Record, ...]:
    """Both probes on cpu, cuda and mps; a device not given is unavailable."""
    found: list[Record] = []
    for probe_index, probe in enumerate(("autograd_dot", "batched_matmul")):
        for device in ("cpu", "cuda", "mps"):
            given = device_records.get(device)
            found.append(given[probe_index] if given else unavailable(probe, device))
    return tuple(found)


def scenario() -> list[CellResult]:
    """Three machines; every outcome; an older file that a newer one replaces."""
    linux = "linux-x86_64"
    mac = "macos-arm64"
    gpu = "H200"
    return [
        cell(linux, "1.9.0", "3.9", everywhere({"cpu": (autograd("cpu"), batched("cpu"))})),
        cell(linux, "1.12.1", "3.10", everywhere({"cpu": (autograd("cpu"), batched("cpu"))})),
        cell(linux, "2.2.0", "3.12", everywhere({"cpu": (autograd("cpu"), batched("cpu"))})),
        cell(linux, "2.99.0", None, outcome=Outcome.NO_WHEEL,
             message="the index has no torch 2.99.0 wheel for this platform"),  # fmt: skip
        cell(mac, "1.9.0", "3.9", everywhere({
            "cpu": (autograd("cpu"), batched("cpu")),
            "mps": (autograd("mps", broken=True), batched("mps")),
        })),  # fmt: skip
        cell(mac, "1.12.1", "3.10", everywhere({
            "cpu": (autograd("cpu"), batched("cpu")), "mps": (autograd("mps"), batched("mps")),
        })),  # fmt: skip
        cell(mac, "2.2.0", "3.11", everywhere({
            "cpu": (autograd("cpu"), batched("cpu")),
            "mps": (autograd("mps"), batched("mps", identical=False, between=1.2e-06)),
        })),  # fmt: skip
        # H200, torch 2.2.0: an old run that crashed, replaced by a newer one.
        cell(gpu, "2.2.0", "3.12", everywhere({
            "cpu": (autograd("cpu"), Record("batched_matmul", "cpu", Outcome.CRASH, {"exit_code": -11},
                                            "the worker died with SIGSEGV while running batched_matmul on cpu", 0.5)),
        }), finished="2026-11-01T10:00:00+00:00"),  # fmt: skip
        cell(gpu, "2.2.0", "3.12", everywhere({
            "cpu": (autograd("cpu"), batched("cpu")),
            "cuda": (
                Record("autograd_dot", "cuda", Outcome.ERROR, {"traceback": "Traceback ...\n" + HOSTILE},
                       "RuntimeError: " + HOSTILE, 0.2),
                batched("cuda", identical=False, between=4.8e-07),
            ),
        }), finished="2026-11-21T10:00:00+00:00"),  # fmt: skip
        cell(gpu, "1.12.1", "3.10", everywhere({
            "cpu": (autograd("cpu"), Record("batched_matmul", "cpu", Outcome.CRASH, {"exit_code": -11},
                                            "the worker died with SIGSEGV while running batched_matmul on cpu:\n"
                                            "Segmentation fault (core dumped)", 0.4)),
            "cuda": (Record("autograd_dot", "cuda", Outcome.TIMEOUT, {"limit": 300.0}, "stopped after 300 s", 300.0),
                     batched("cuda")),
        })),  # fmt: skip
        cell(gpu, "1.9.0", "3.9", outcome=Outcome.INSTALL_ERROR,
             message="Resolved 3 packages\n  × Failed to download torch==1.9.0\n  ╰─▶ connection reset by peer"),
    ]  # fmt: skip


def hostile() -> list[CellResult]:
    """A result whose every field that came from a file is hostile."""
    records = (
        Record(HOSTILE, HOSTILE, Outcome.FAIL, {"checks": [check(HOSTILE, HOSTILE, HOSTILE, False)]}, HOSTILE, 0.1),
        Record(HOSTILE, "cpu", Outcome.ERROR, {HOSTILE: HOSTILE}, HOSTILE, 0.1),
    )
    return [
        cell(HOSTILE, HOSTILE, HOSTILE, records, environment={HOSTILE: HOSTILE}, session=HOSTILE, cell_id=HOSTILE),
        cell("=cmd|' /C calc'!A0", "1.0", "3.9", outcome=Outcome.INSTALL_ERROR, message=HOSTILE),
    ]


def assert_golden(name: str, text: str) -> None:
    """``text`` must equal tests/data/report/<name>; with $TORCHMATRIX_UPDATE_GOLDEN set, it becomes the file."""
    path = GOLDEN / name
    if os.environ.get(UPDATE_GOLDEN):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
    expected = path.read_text(encoding="utf-8")
    assert text == expected, (
        f"{name} differs from {path}; if the change is meant, rerun with {UPDATE_GOLDEN}=1 and review"
    )


SWEEP_INPUTS = {"devices": ["cpu"], "probes": {"opsweep": "2" * 64}}


def operator(name: str, samples: list[tuple[str, str | None]], error: float | None = 0.01, **extra: Any) -> dict:
    """An operator sweep's check: ``samples`` are (input digest, output digest) pairs."""
    return {
        "name": name, "samples": [{"input": given, "output": made} for given, made in samples],
        "observed": "-".join(made or "none" for _, made in samples), "error": error, "tolerance": 1.0,
        "expected": "<= 1", "ok": "raised" not in extra and (error is None or error <= 1.0), **extra,
    }  # fmt: skip


def swept(
    torch: str, python: str, checks: list[dict], outcome: Outcome = Outcome.PASS, message: str = "",
    capability: str = "AVX2",
) -> CellResult:  # fmt: skip
    record = Record("opsweep", "cpu", outcome, {"checks": checks} if checks else {}, message, 12.0)
    environment = {"torch": torch, "python": f"{python}.1", "blas": "mkl", "cpu_capability": capability}
    return cell("x86-box", torch, python, (record,), inputs=SWEEP_INPUTS, environment=environment)


def sweep_scenario() -> list[CellResult]:
    """Four releases of the sweep on one machine of its own: every kind of change a check can show between them."""
    add = [("a1", "A1"), ("a2", "A2")]
    return [
        swept("1.9.0", "3.9", [
            operator("add", add),
            operator("mul", [("m1", "M1"), ("m2", "M2")]),
            operator("nn.functional.conv2d", [("c1", "C1")]),
            operator("linalg.eig", [("e1", "E1")], error=3.2e5),
            operator("empty", [("x1", None)], error=None, nondeterministic=True),
        ]),
        swept("1.12.1", "3.10", [
            operator("add", add),
            operator("mul", [("m1", "M1*"), ("m2", "M2")]),  # the same inputs, one output changed
            operator("nn.functional.conv2d", [("c2", "C2")]),  # other inputs: nothing to compare
            # refused: this release raised on an input the one before took
            operator("linalg.eig", [("e1", "raised RuntimeError")], error=None, raised="float32: RuntimeError: x"),
            operator("empty", [("x1", None)], error=None, nondeterministic=True),
        ]),
        swept("2.2.0", "3.12", [
            operator("add", add),
            operator("mul", [("m1", "M1*"), ("m2", "M2")]),
            operator("nn.functional.conv2d", [("c2", "C2*")]),
            operator("linalg.eig", [("e1", "E1")], error=3.2e5),
            operator("empty", [("x1", None)], error=None, nondeterministic=True),
            operator("nn.functional.gelu", [("g1", "G1")]),  # new in this release
        ], capability="AVX512"),  # torch dispatches to other kernels here
        swept("2.13.0", "3.13", [], Outcome.ERROR,
              "RuntimeError: torch's operator database cannot be imported here: ModuleNotFoundError: numpy",
              capability="AVX512"),
    ]  # fmt: skip
