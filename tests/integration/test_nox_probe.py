"""Real nox, real uv, real torch wheels from the index: the main command end to end."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from torchmatrix import identity, results
from torchmatrix.core import Outcome

from . import nox

pytestmark = pytest.mark.integration


@pytest.fixture
def matrix(tmp_path: Path) -> Path:
    path = tmp_path / "matrix.yaml"
    path.write_text(
        textwrap.dedent(
            """
            torch:
              - 1.9.0      # wheels for Python 3.6-3.9 only: the planner must find one
            probes: [autograd_dot, batched_matmul]
            timeout: 120
            output: out
            """
        )
    )
    return path


def test_nox_json_lists_one_probe_session_per_cell(tmp_path: Path, matrix: Path) -> None:
    listed = nox(tmp_path, matrix, "-l", "--json")
    assert listed.returncode == 0, listed.stderr
    sessions = json.loads(listed.stdout)
    assert [session["session"] for session in sessions] == ["probe(1.9.0)"]
    assert [session["call_spec"] for session in sessions] == [{"cell": "1.9.0"}]
    assert sessions[0]["tags"][0] == "torch-1.9"  # nox -t torch-1.9 selects it


def test_probe_runs_real_torch_and_stores_every_outcome(tmp_path: Path, matrix: Path) -> None:
    run = nox(tmp_path, matrix, "-s", "probe")
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    assert "[1/6] autograd_dot on cpu ..." in output

    stored = {result.torch: result for result in results.scan(tmp_path / "out" / "results").results}
    assert stored.keys() == {"1.9.0"}
    old = stored["1.9.0"]
    assert old.machine == "ci-box" and old.python in {"3.6", "3.7", "3.8", "3.9"}
    assert old.environment["torch"].startswith("1.9.0")
    assert {(r.probe, r.device): r.outcome for r in old.records} == {
        ("autograd_dot", "cpu"): Outcome.PASS,
        ("batched_matmul", "cpu"): Outcome.PASS,
        ("autograd_dot", "cuda"): Outcome.UNAVAILABLE,
        ("batched_matmul", "cuda"): Outcome.UNAVAILABLE,
        ("autograd_dot", "mps"): Outcome.UNAVAILABLE,
        ("batched_matmul", "mps"): Outcome.UNAVAILABLE,
    }
    # Named ci-box, the result still says how the machine that made it computes.
    assert old.environment[identity.HARDWARE] == identity.this_machine().to_json()

    summary = [line.split() for line in output.splitlines()]
    assert ["1.9.0", old.python, "autograd_dot", "✓", "–", "–"] in summary

    # The report session that follows every probe run rendered the tables from the real results.
    table = (tmp_path / "out" / "COMPATIBILITY.md").read_text(encoding="utf-8")
    assert f"| 1.9.0 | {old.python} | ✓ |" in table
    assert (tmp_path / "out" / "compatibility-batched_matmul.svg").exists()


def test_a_release_the_index_does_not_list_is_a_matrix_error_not_a_cell(tmp_path: Path) -> None:
    typo = tmp_path / "matrix.yaml"
    typo.write_text("torch:\n  - 1.9.0\n  - 2.0.3\nprobes: [autograd_dot]\noutput: out\n")
    run = nox(tmp_path, typo, "-s", "probe")
    assert run.returncode == 2, run.stdout + run.stderr
    assert (
        f"torchmatrix: error: {typo}:3: torch[1]: the index lists no torch 2.0.3; "
        "the releases around it are 2.0.1 and 2.1.0" in run.stderr
    )
    assert not (tmp_path / "out" / "results").exists()  # nothing ran, nothing is stored


def test_a_bad_matrix_costs_one_message_and_exit_code_2(tmp_path: Path) -> None:
    bad = tmp_path / "matrix.yaml"
    bad.write_text("torch: [1.9.0]\nprobse: [autograd_dot]\n")
    run = nox(tmp_path, bad, "-s", "probe")
    assert run.returncode == 2
    assert f"{bad}:2: probse: unknown key\n  hint: did you mean 'probes'?" in run.stderr
    assert "Traceback" not in run.stderr


def test_a_bad_matrix_stops_only_the_sessions_that_need_it(tmp_path: Path) -> None:
    bad = tmp_path / "matrix.yaml"
    bad.write_text("torch: [1.9.0]\nprobse: [autograd_dot]\n")
    mistake = f"torchmatrix: error: {bad}:2: probse: unknown key\n  hint: did you mean 'probes'?\n"
    listed = nox(tmp_path, bad, "-l")
    assert listed.returncode == 0, listed.stderr
    assert listed.stderr.startswith(mistake), "said at once: no session runs to say it"
    sessions = {line.split()[1] for line in listed.stdout.splitlines() if line[:2] in ("* ", "- ")}
    assert {"tests", "probe", "plan", "report"} <= sessions  # `probe` itself: no cell stands in for the mistake
    for needs_the_matrix in (["-s", "plan"], ["-s", "report"], ["-s", "probe"]):
        run = nox(tmp_path, bad, *needs_the_matrix)
        assert run.returncode == 2 and run.stderr.count(mistake) == 1, (needs_the_matrix, run.stderr)
    named = nox(tmp_path, bad, "-s", "probe(1.9.0)")  # no such session while the matrix is broken: nox says so
    assert named.stderr.startswith(mistake) and "Sessions not found: probe(1.9.0)" in named.stderr


def test_a_sessions_mistake_fails_that_session_alone(tmp_path: Path, matrix: Path) -> None:
    """nox runs the sessions after it, prints its summary, writes its report; the run ends with the mistake's code."""
    report = tmp_path / "nox-report.json"
    run = nox(tmp_path, matrix, "-s", "bisect", "plan", "--report", str(report))  # bisect without --from, --to
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stderr.count("required: --from, --to") == 1 and "Traceback" not in run.stderr
    assert "nox > Session bisect aborted.\n" in run.stderr and "nox > Ran 2 sessions" in run.stderr
    assert "nox > Session plan was successful" in run.stderr, "plan ran after the failed bisect"
    sessions = {session["name"]: session["result"] for session in json.loads(report.read_text())["sessions"]}
    assert sessions == {"bisect": "aborted", "plan": "success"}


def test_the_probe_sessions_help_is_printed_once_and_builds_no_environment(tmp_path: Path) -> None:
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text("torch: [1.9.0, 1.10.0]\nprobes: [autograd_dot]\noutput: out\n")
    run = nox(tmp_path, matrix, "-s", "probe", "--", "--help")
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.count("usage:") == 1 and "nox > Ran 2 sessions:" in run.stderr
    assert not (tmp_path / ".nox").exists() and not (tmp_path / "out").exists()


def test_a_sessions_help_ends_that_session_and_nox_goes_on(tmp_path: Path, matrix: Path) -> None:
    """`-- --help` prints each session's options; every session succeeds, and nox says so in its summary."""
    run = nox(tmp_path, matrix, "-s", "report", "verify", "--", "--help")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "--format FORMAT[,FORMAT...]" in run.stdout and "--machine" in run.stdout
    assert "nox > Ran 2 sessions:" in run.stderr and "Traceback" not in run.stderr
