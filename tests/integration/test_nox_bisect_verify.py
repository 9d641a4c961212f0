"""Real nox, real uv, real torch wheels: bisect three releases for a change known in advance, then verify.

The probe passes when torch has an MPS backend module. `torch.backends.mps`
first shipped in torch 1.12.0 (the worker's own device check relies on it), so
among 1.11.0, 1.12.0 and 1.12.1 the first release with NEW's outcome is
1.12.0, and the last with OLD's is 1.11.0. 1.11.0 and 1.12.1 are releases the
default matrix installs too, so a warm uv cache only downloads 1.12.0.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from torchmatrix import results
from torchmatrix.core import Outcome

from .test_nox_probe import nox

pytestmark = pytest.mark.integration

PROBE = '''\
"""Whether this torch has an MPS backend module (torch.backends.mps, new in 1.12.0)."""
import torch


def run(device):
    has = hasattr(torch.backends, "mps")
    return {"outcome": "pass" if has else "fail", "metrics": {"mps_backend": 1.0 if has else 0.0}, "message": ""}
'''

MATRIX = """
torch: [1.11.0, 1.12.1]
probes: [has_mps_backend.py]
devices: [cpu]
timeout: 120
output: out
expect:
  - probe: has_mps_backend.py
    device: cpu
    torch: "<1.12"
    outcome: fail
    reason: "torch.backends.mps is new in 1.12.0"
  - probe: has_mps_backend.py
    device: cpu
    torch: ">=1.12"
    outcome: pass
"""

WRONG = """
torch: [1.11.0, 1.12.1]
probes: [has_mps_backend.py]
devices: [cpu]
output: out
expect:
  - probe: has_mps_backend.py
    device: cpu
    torch: "<1.12.1"
    outcome: fail
    reason: "wrong on purpose: 1.12.0 has it"
  - probe: has_mps_backend.py
    device: cpu
    torch: ">=2.13"
    outcome: pass
"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bisect")
    (path / "has_mps_backend.py").write_text(PROBE)
    (path / "matrix.yaml").write_text(textwrap.dedent(MATRIX))
    (path / "wrong.yaml").write_text(textwrap.dedent(WRONG))
    return path


@pytest.fixture(scope="module")
def bisected(folder: Path):
    """The first bisection: nothing stored yet, so every cell it looks at is built."""
    return nox(
        folder, folder / "matrix.yaml", "-s", "bisect", "--", "has_mps_backend.py", "--from", "1.11.0", "--to", "1.12.1"
    )


def lines(run) -> list[str]:
    return (run.stdout + run.stderr).splitlines()


def test_bisect_finds_the_first_release_with_news_outcome(folder: Path, bisected) -> None:
    output = "\n".join(lines(bisected))
    assert bisected.returncode == 0, output
    assert "3 releases from 1.11.0 to 1.12.1 (1.11.0, 1.12.0, 1.12.1); 0 known already, at most 3 cells" in output
    assert "first release with NEW's outcome (pass): torch 1.12.0 (1 run)" in output
    assert "last release with OLD's outcome (fail): torch 1.11.0 (1 run)" in output
    steps = [line for line in lines(bisected) if "] torch 1.1" in line and "(built)" in line]
    assert [line.split("] torch ")[1].split()[0] for line in steps] == ["1.11.0", "1.12.1", "1.12.0"]

    (path,) = (folder / "out" / "bisect" / "ci-box").glob("has_mps_backend.py-cpu-1.11.0-1.12.1-*.json")
    summary = json.loads(path.read_text())
    assert (summary["status"], summary["first_new"], summary["last_old"]) == ("found", "1.12.0", "1.11.0")
    assert (summary["built"], summary["budget"]) == (3, 3)
    assert [step["observations"][0]["category"] for step in summary["steps"]] == ["fail", "pass", "pass"]

    # Each step is a cell like any other: its environment, its result file, and the report names it.
    stored = {r.torch: r for r in results.scan(folder / "out" / "results").results}
    old, new = (stored[version].environment["git_version"] for version in ("1.11.0", "1.12.0"))
    assert len(old) == len(new) == 40 and old != new
    assert f"commits from torch 1.11.0 ({old}) to 1.12.0 ({new}): " in output
    assert f"https://github.com/pytorch/pytorch/compare/{old}...{new}" in output
    assert summary["changes"][0]["commits"] == {
        "old": old,
        "new": new,
        "url": f"https://github.com/pytorch/pytorch/compare/{old}...{new}",
    }
    assert stored.keys() == {"1.11.0", "1.12.0", "1.12.1"}
    assert stored["1.12.0"].machine == "ci-box" and stored["1.12.0"].environment["torch"].startswith("1.12.0")
    assert stored["1.12.0"].session == "probe(1.12.0)"
    assert (folder / ".nox" / "probe-1-12-0").is_dir()
    report = nox(folder, folder / "matrix.yaml", "-s", "report")  # a release the matrix lacks: named, not shown
    assert any("not shown, as no cell of the matrix now (torch-1.12.0-" in line for line in lines(report))
    report = nox(folder, folder / "matrix.yaml", "-s", "report", "--", "--all-cells")
    assert ["1.12.0", stored["1.12.0"].python, "has_mps_backend.py", "✓"] in [line.split() for line in lines(report)]


def test_a_second_bisect_by_metric_reuses_every_stored_result(folder: Path, bisected) -> None:
    run = nox(
        folder, folder / "matrix.yaml", "-s", "bisect", "--",
        "has_mps_backend.py", "--from", "1.11.0", "--to", "1.12.1", "--metric", "mps_backend", "--above", "0.5",
    )  # fmt: skip
    output = "\n".join(lines(run))
    assert run.returncode == 0, output
    assert "3 known already" in output and "built 0 of at most 3 cells" in output
    assert "first release with NEW's outcome (mps_backend above 0.5): torch 1.12.0" in output
    assert "mps_backend = 0 (not above 0.5)" in output


def test_same_outcome_at_both_ends_is_said_with_a_non_zero_exit(folder: Path, bisected) -> None:
    run = nox(
        folder, folder / "matrix.yaml", "-s", "bisect", "--", "has_mps_backend.py", "--from", "1.12.0", "--to", "1.12.1"
    )
    assert run.returncode == 1
    assert "torch 1.12.0 and 1.12.1 both show pass on cpu: nothing to bisect" in run.stdout + run.stderr


def test_verify_passes_when_every_expectation_holds(folder: Path, bisected) -> None:
    run = nox(folder, folder / "matrix.yaml", "-s", "verify")
    output = "\n".join(lines(run))
    assert run.returncode == 0, output
    assert "✓ has_mps_backend.py on cpu, torch <1.12: fail: holds for torch-1.11.0" in output
    assert "2 of 2 expectations hold; 0 violated, 0 not tested by any result" in output


def test_verify_fails_with_one_line_per_violation_and_reports_the_untested(folder: Path, bisected) -> None:
    run = nox(folder, folder / "wrong.yaml", "-s", "verify")
    output = lines(run)
    assert run.returncode == 1
    python = results.read(next((folder / "out" / "results" / "ci-box").glob("torch-1.12.0-*.json"))).python
    violations = [line for line in output if line.startswith("✗")]
    assert violations == [
        f"✗ has_mps_backend.py torch-1.12.0-py{python} cpu: expected fail, got pass [ci-box] "
        "(wrong.yaml:7 expect[0]: wrong on purpose: 1.12.0 has it)"
    ]
    untested = "? has_mps_backend.py on cpu, torch >=2.13: pass: no stored result tested it (wrong.yaml:12 expect[1])"
    assert untested in output


def test_verify_run_builds_the_covered_cells_it_lacks_first(folder: Path, bisected) -> None:
    matrix = folder / "with-1.9.yaml"
    matrix.write_text(textwrap.dedent(MATRIX).replace("torch: [1.11.0, 1.12.1]", "torch: [1.9.0, 1.11.0, 1.12.1]"))
    checked = nox(folder, matrix, "-s", "verify")
    assert checked.returncode == 0  # 1.11.0 tests "<1.12" already; 1.9.0 is only named as missing
    assert "no up-to-date result on ci-box for probe(1.9.0); `nox -s verify -- --run` runs them first" in checked.stderr

    run = nox(folder, matrix, "-s", "verify", "--", "--run")
    output = "\n".join(lines(run))
    assert run.returncode == 0, output
    assert "running 1 cells without an up-to-date result here: probe(1.9.0)" in output
    assert "holds for torch-1.9.0-py" in output
    stored = {r.torch: r for r in results.scan(folder / "out" / "results").results}
    assert {(r.probe, r.outcome) for r in stored["1.9.0"].records} == {("has_mps_backend.py", Outcome.FAIL)}


def test_a_bad_expectation_costs_one_message_and_exit_code_2(folder: Path) -> None:
    bad = folder / "bad.yaml"
    expectation = "{probe: has_mps_backend.py, device: cpu, outcome: passes}"
    bad.write_text(f"torch: [1.9.0]\nprobes: [has_mps_backend.py]\nexpect:\n  - {expectation}\n")
    run = nox(folder, bad, "-s", "verify")
    assert run.returncode == 2
    assert f"{bad}:4: expect[0].outcome: unknown outcome 'passes'\n  hint: did you mean 'pass'?" in run.stderr
    assert "Traceback" not in run.stderr


def test_torchmatrix_torch_replaces_the_releases_of_the_matrix(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCHMATRIX_TORCH", "1.10.0, 1.12.1")
    listed = nox(folder, folder / "matrix.yaml", "-l", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [session["session"] for session in json.loads(listed.stdout)] == ["probe(1.10.0)", "probe(1.12.1)"]
    monkeypatch.setenv("TORCHMATRIX_TORCH", "latest")
    refused = nox(folder, folder / "matrix.yaml", "-s", "plan")
    assert refused.returncode == 2
    assert "torchmatrix: error: TORCHMATRIX_TORCH: 'latest' is not a torch release (e.g. 1.12.1)" in refused.stderr


def test_a_bad_bisect_argument_costs_one_message_and_exit_code_2(folder: Path) -> None:
    run = nox(
        folder, folder / "matrix.yaml", "-s", "bisect", "--", "has_mps_backend.py", "--from", "1.12.1", "--to", "1.11"
    )
    assert run.returncode == 2
    assert (
        "torchmatrix: error: --from 1.12.1 must be older than --to 1.11\n  usage: nox -s bisect -- (PROBE | --all)"
        in run.stderr
    )
    assert "Traceback" not in run.stderr
