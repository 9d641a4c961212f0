"""Real nox and uv over stand-in wheels: `--strict` (and `strict: true`) gates a build on the outcomes it allows.

Probe ``alpha`` fails under the stand-in of 8.1.0 and passes under 8.0.0; ``beta`` passes under both.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from .. import standin
from . import nox

pytestmark = pytest.mark.integration

MATRIX = """
torch: [8.0.0, 8.1.0]
probes: [alpha.py, beta.py]
devices: [cpu]
timeout: 60
output: out
find_links: [wheels]
"""
ALLOWED = """
expect:
  - probe: alpha.py
    device: cpu
    torch: ">=8.1"
    outcome: fail
    reason: "a known bug of 8.1"
"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("strict")
    standin.wheel(path / "wheels", "8.0.0", {"alpha": "pass", "beta": "pass"})
    standin.wheel(path / "wheels", "8.1.0", {"alpha": "fail", "beta": "pass"})
    standin.probe(path, "alpha")
    standin.probe(path, "beta")
    (path / "matrix.yaml").write_text(textwrap.dedent(MATRIX))
    (path / "allowed.yaml").write_text(textwrap.dedent(MATRIX) + textwrap.dedent(ALLOWED))
    (path / "strict.yaml").write_text(textwrap.dedent(MATRIX) + "strict: true\n")
    (path / "beta.yaml").write_text(textwrap.dedent(MATRIX).replace("[alpha.py, beta.py]", "[beta.py]"))
    return path


def test_a_failing_probe_passes_the_build_unless_strict(folder: Path) -> None:
    plain = nox(folder, folder / "matrix.yaml", "-s", "probe")
    assert plain.returncode == 0, plain.stdout + plain.stderr

    strict = nox(folder, folder / "matrix.yaml", "-s", "probe", "--", "--strict")  # up to date: stored ones gated
    text = strict.stdout + strict.stderr
    assert strict.returncode == 1, text
    assert "torch-8.1.0-py" in text and "strict: 1 outcome(s) not allowed" in text
    assert "✗ alpha.py on cpu: fail" in text
    assert "* probe(8.0.0): skipped" in text and "* report: success" in text  # the others still ran


def test_strict_in_the_matrix_gates_as_the_option_does(folder: Path) -> None:
    run = nox(folder, folder / "strict.yaml", "-s", "probe(8.1.0)")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "✗ alpha.py on cpu: fail" in run.stdout + run.stderr


def test_an_outcome_an_expectation_allows_passes_a_strict_build(folder: Path) -> None:
    run = nox(folder, folder / "allowed.yaml", "-s", "probe", "--", "--strict", "--force")
    assert run.returncode == 0, run.stdout + run.stderr


def test_a_strict_build_gates_the_matrix_s_probes_not_what_else_its_cells_keep(folder: Path) -> None:
    kept = nox(folder, folder / "matrix.yaml", "-s", "probe(8.1.0)")  # alpha's fail is kept in the cell's file
    assert kept.returncode == 0, kept.stdout + kept.stderr
    run = nox(folder, folder / "beta.yaml", "-s", "probe", "--", "--strict")
    text = run.stdout + run.stderr
    assert run.returncode == 0, text
    assert "not allowed" not in text
