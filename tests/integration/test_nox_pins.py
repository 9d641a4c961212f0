"""Real nox and uv over stand-in wheels: a release installed under a pin says why in the words its result recorded.

The rule put in other words makes no cell stale and leaves the words of the run; the rule gone makes the cell it
gave a constraint stale, and its note still says why that cell had it.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from torchmatrix import results
from torchmatrix.core import Constraint, Outcome, PinSource

from .. import standin
from . import nox
from .test_one_cell import MATRIX  # two stand-in releases from wheels beside it

pytestmark = pytest.mark.integration

PIN = """
pins:
  - torch: "<8.1"
    constrain: ["numpy<2"]
    reason: {reason}
"""
SAID = (
    "note: torch 8.0.0 was installed under the constraint numpy<2, unlike 8.1.0: the matrix's pin for torch <8.1, "
    "because the words of its day"
)


def test_a_release_s_note_says_why_in_the_words_its_run_recorded_whatever_the_matrix_says_now(tmp_path: Path) -> None:
    for version in ("8.0.0", "8.1.0"):
        standin.wheel(tmp_path / "wheels", version, {"alpha": "pass"})
    standin.probe(tmp_path, "alpha")
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(textwrap.dedent(MATRIX) + PIN.format(reason="the words of its day"))
    first = nox(tmp_path, matrix, "-s", "probe")
    assert first.returncode == 0, first.stdout + first.stderr
    stored = {result.torch: result for result in results.scan(tmp_path / "out" / "results").results}
    given = Constraint("numpy<2", PinSource.MATRIX, "<8.1", "the words of its day")
    assert (stored["8.0.0"].constrained_by, stored["8.1.0"].constrained_by) == ((given,), ())

    matrix.write_text(textwrap.dedent(MATRIX) + PIN.format(reason="better words"))
    reworded = nox(tmp_path, matrix, "-s", "probe")
    said = reworded.stdout + reworded.stderr
    assert reworded.returncode == 0, said
    skipped = [line for line in said.splitlines() if line.startswith("nox > Session probe(") and "up to date" in line]
    assert len(skipped) == 2, said  # the words of a rule are no input of a record
    assert SAID in reworded.stdout, reworded.stdout

    matrix.write_text(textwrap.dedent(MATRIX))
    gone = nox(tmp_path, matrix, "-s", "report")
    assert gone.returncode == 0, gone.stdout + gone.stderr
    rows = {line.split()[0]: line.split()[-1] for line in gone.stdout.splitlines() if line.startswith("8.")}
    assert rows == {"8.0.0": Outcome.STALE.symbol, "8.1.0": Outcome.PASS.symbol}, gone.stdout  # its constraint went
    assert SAID in gone.stdout, gone.stdout
