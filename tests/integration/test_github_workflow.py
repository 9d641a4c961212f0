"""The GitHub workflows: they parse, their steps run, and the sessions and folders they name exist.

matrix.yml runs the matrix on GitHub's runners; checks.yml runs torchmatrix's own
checks on every push and pull request. Neither can run here, so the tools that
read workflows as GitHub does check them, and every action is pinned to a commit.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from packaging.version import Version

from torchmatrix.matrix import loader

from ..conftest import ROOT

pytestmark = pytest.mark.integration

WORKFLOWS = ROOT / ".github" / "workflows"
WORKFLOW = WORKFLOWS / "matrix.yml"
CHECKS = WORKFLOWS / "checks.yml"
LIBRARY = ROOT / "examples" / "gausstail" / ".github" / "workflows" / "torch-matrix.yml"
"""The workflow a library copies into its own repository (docs/parallel-and-ci.md shows it)."""
EVERY_WORKFLOW = [*sorted(WORKFLOWS.glob("*.yml")), LIBRARY]
PINNED = re.compile(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}")
"""An action as ``uses:`` names it, pinned to a full commit: a tag can be moved to other code, a commit cannot."""


def load(path: Path) -> dict[str, Any]:
    loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


@pytest.fixture(scope="module")
def workflow() -> dict[str, Any]:
    return load(WORKFLOW)


def run_steps(job: dict[str, Any]) -> list[str]:
    return [step["run"] for step in job["steps"] if "run" in step]


def nox_listing(*args: str) -> list[str]:
    """Session names real `nox -l --json` gives for this repository's noxfile and matrix."""
    listed = subprocess.run(
        [sys.executable, "-m", "nox", "-f", str(ROOT / "noxfile.py"), "-l", "--json", *args],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
        env={key: value for key, value in os.environ.items() if not key.startswith("TORCHMATRIX_")},
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    return [session["session"] for session in json.loads(listed.stdout)]


def test_the_jobs_fan_out_over_three_runners_and_merge_at_the_end(workflow: dict[str, Any]) -> None:
    jobs = workflow["jobs"]
    assert list(jobs) == ["sessions", "probe", "report"]
    probe = jobs["probe"]
    assert probe["strategy"]["matrix"]["os"] == ["ubuntu-latest", "macos-14", "windows-latest"]
    assert probe["strategy"]["matrix"]["session"] == "${{ fromJSON(needs.sessions.outputs.sessions) }}"
    assert jobs["sessions"]["outputs"]["sessions"] == "${{ steps.list.outputs.sessions }}"
    assert "TORCHMATRIX_MACHINE" not in probe["env"]  # the machine's own name, which says how it computes
    assert probe["env"]["TORCHMATRIX_MACHINE_LABEL"] == "${{ matrix.os }}"
    assert jobs["report"]["needs"] == ["sessions", "probe"]
    # `on:` is YAML 1.1's true to a YAML reader, and still the trigger to GitHub.
    assert "workflow_dispatch" in workflow[True]


def test_the_listing_step_yields_the_probe_sessions_nox_lists(workflow: dict[str, Any], tmp_path: Path) -> None:
    """The step's script, run as GitHub runs a bash step, in the repository, with the nox of this Python."""
    [step] = [step for step in workflow["jobs"]["sessions"]["steps"] if step.get("id") == "list"]
    output = tmp_path / "github_output"
    environ = {key: value for key, value in os.environ.items() if not key.startswith("TORCHMATRIX_")}
    environ.update(GITHUB_OUTPUT=str(output), RUNNER_TEMP=str(tmp_path),
                   PATH=f"{Path(sys.executable).parent}{os.pathsep}{environ['PATH']}")  # fmt: skip
    command = ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]]
    ran = subprocess.run(command, cwd=ROOT, env=environ, capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, ran.stderr
    name, _, value = output.read_text().strip().partition("=")
    assert name == "sessions"
    sessions = json.loads(value)
    assert sessions == nox_listing()
    assert sessions and all(session.startswith("probe(") for session in sessions)


def test_every_session_the_workflow_runs_exists(workflow: dict[str, Any]) -> None:
    named = {
        match.strip('"')
        for job in workflow["jobs"].values()
        for command in run_steps(job)
        for match in re.findall(r'nox -s ("[^"]+"|\S+)', command)
    }
    # The probe sessions come from the listing (tested above), through $SESSION; the others are named outright.
    assert named == {"$SESSION", "report", "verify"}
    (probe,) = [step for step in workflow["jobs"]["probe"]["steps"] if "$SESSION" in step.get("run", "")]
    assert probe["env"]["SESSION"] == "${{ matrix.session }}"
    assert nox_listing("-s", "report", "verify") == ["report", "verify"]


def test_the_folders_it_moves_are_where_the_matrix_writes(workflow: dict[str, Any]) -> None:
    matrix = loader.load_matrix(ROOT / "matrix.yaml", probes_dir=ROOT / "probes")
    results = (matrix.output / "results").relative_to(ROOT).as_posix()
    [upload] = [step for step in workflow["jobs"]["probe"]["steps"] if "upload-artifact" in step.get("uses", "")]
    [download] = [step for step in workflow["jobs"]["report"]["steps"] if "download-artifact" in step.get("uses", "")]
    assert upload["with"]["path"].rstrip("/") == results
    assert download["with"]["path"] == results and download["with"]["merge-multiple"] is True
    assert download["with"]["pattern"] == "results-*" and upload["with"]["name"].startswith("results-")
    assert "nox -s report -- --format all" in run_steps(workflow["jobs"]["report"])
    assert run_steps(workflow["jobs"]["report"])[-1] == "nox -s verify"  # the gate, on every runner's results


def test_the_library_s_workflow_gates_on_strict_and_keeps_the_machine_s_name() -> None:
    library = load(LIBRARY)
    (job,) = library["jobs"].values()
    steps = run_steps(job)
    assert "nox -s probe -- --strict" in steps
    assert any(step.startswith("nox -s report -- --format") and "junit" in step for step in steps)
    assert "TORCHMATRIX_MACHINE" not in str(library)
    matrix = loader.load_matrix(LIBRARY.parents[2] / "matrix.yaml", probes_dir=LIBRARY.parents[2] / "probes")
    uploaded = [step for step in job["steps"] if "upload-artifact" in step.get("uses", "")][0]["with"]["path"]
    assert (matrix.output / "junit.xml").relative_to(LIBRARY.parents[2]).as_posix() in uploaded


def test_the_checks_run_the_readme_s_command_on_every_push_and_pull_request() -> None:
    checks = load(CHECKS)
    assert set(checks[True]) == {"push", "pull_request"}  # `on:`, as YAML 1.1 reads it
    (job,) = checks["jobs"].values()
    assert run_steps(job)[-1] == "nox -s lint docs tests"
    assert "nox -s lint docs tests" in (ROOT / "README.md").read_text(encoding="utf-8")
    assert nox_listing("-s", "lint", "docs", "tests") == ["lint", "docs", "tests"]


def test_the_checks_install_the_oldest_cpython_uv_offers(tmp_path: Path) -> None:
    """For the worker's test on the oldest Python found (test_envside.py): the step asks uv, here as on CI."""
    (job,) = load(CHECKS)["jobs"].values()
    (step,) = [step for step in job["steps"] if step.get("id") == "oldest"]
    output = tmp_path / "github_output"
    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", step["run"]],
        env={**os.environ, "GITHUB_OUTPUT": str(output)}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    listed = subprocess.run(
        ["uv", "python", "list", "cpython", "--all-versions", "--only-downloads"],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    offered = [Version(line.split()[0].split("-")[1]) for line in listed.splitlines()]  # cpython-3.8.2-linux-…
    assert output.read_text(encoding="utf-8").splitlines() == [f"python={min(offered)}"]
    (install,) = [step for step in job["steps"] if "uv python install" in step.get("run", "")]
    assert '"$OLDEST"' in install["run"] and install["env"]["OLDEST"] == "${{ steps.oldest.outputs.python }}"


@pytest.mark.parametrize("path", EVERY_WORKFLOW, ids=lambda path: path.name)
def test_every_action_is_pinned_and_no_job_keeps_more_than_it_needs(path: Path) -> None:
    """Pinned to commits, a read-only token at most, and no checkout leaves the token in .git/config."""
    loaded = load(path)
    assert loaded["permissions"] in ({}, {"contents": "read"})
    for job in loaded["jobs"].values():
        assert job.get("permissions", {}) in ({}, {"contents": "read"})
        for step in job["steps"]:
            if "uses" in step:
                assert PINNED.fullmatch(step["uses"]), step["uses"]
            if step.get("uses", "").startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False


@pytest.mark.parametrize("path", EVERY_WORKFLOW, ids=lambda path: path.name)
@pytest.mark.parametrize(
    "checker",
    [
        ["actionlint"],  # types, expressions, shell scripts, deprecated actions
        ["zizmor", "--offline"],  # security: pinned actions, credentials, template injection
    ],
    ids=["actionlint", "zizmor"],
)
def test_the_workflow_passes_its_checkers(checker: list[str], path: Path) -> None:
    """It cannot run here, so the tools that read workflows as GitHub would read it."""
    executable = Path(sys.executable).with_name(checker[0])
    done = subprocess.run([str(executable), *checker[1:], str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
