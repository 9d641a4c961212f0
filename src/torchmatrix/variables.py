"""The environment variables torchmatrix reads, each declared once with what it overrides; and the one it sets.

A nox run of the noxfile reads them when it loads (:func:`torchmatrix.project.load`);
bisect and verify set them for the child nox they start, with :data:`HANDBACK`; the docs list them from here.
The worker sets :data:`DEVICE` for every pair's process, and the sessions that run pairs :data:`INPUTS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Variable:
    name: str
    overrides: str
    """What it replaces, for the docs and for messages."""
    example: str

    def get(self, environ: Mapping[str, str]) -> str:
        """Its value in ``environ``, stripped; '' when unset or blank."""
        return environ.get(self.name, "").strip()


MATRIX = Variable(
    "TORCHMATRIX_MATRIX", "the matrix file, instead of `matrix.yaml` beside the noxfile", "ci/matrix.yaml"
)
MACHINE = Variable(
    "TORCHMATRIX_MACHINE",
    "the name results are filed under, instead of `machine:` or `<os>-<arch>-<cpu>-<widest ISA>[-<gpu>]-<digest>`",
    "H200",
)
MACHINE_LABEL = Variable(
    "TORCHMATRIX_MACHINE_LABEL",
    "nothing: a label added to the machine's name after a `+` (a CI runner's, `…-avx2-1a2b3c+ubuntu-24.04`), "
    "which keeps the name's CPU identity",
    "ubuntu-24.04",
)
TORCH = Variable(
    "TORCHMATRIX_TORCH",
    "the matrix's torch releases (separated by commas); the rest of the matrix stays",
    "1.12.1,2.2.0",
)
PROBES = Variable(
    "TORCHMATRIX_PROBES",
    "the matrix's probes (separated by commas): names in `probes/`, or paths, anywhere; the rest of the matrix stays",
    "repro.py,tests/test_dot.py",
)
PYTHON = Variable(
    "TORCHMATRIX_PYTHON",
    "the Python of every cell (`3.10`), instead of the planner's choice and the matrix's `python:` (bisect sets it "
    "to hold one Python across its range)",
    "3.10",
)
OUTPUT = Variable("TORCHMATRIX_OUTPUT", "the output folder (results and reports), instead of `output:`", "/tmp/try")
CACHE_DIR = Variable(
    "TORCHMATRIX_CACHE_DIR",
    "where index listings and interpreter answers are cached, instead of `$XDG_CACHE_HOME/torchmatrix`",
    "/tmp/tm-cache",
)

INDEX_URL = Variable(
    "TORCHMATRIX_INDEX_URL",
    "the index torch is listed and installed from, instead of `index_url:`",
    "https://download.pytorch.org/whl/nightly/cpu",
)
FIND_LINKS = Variable(
    "TORCHMATRIX_FIND_LINKS",
    "the find-links folders or pages (separated by spaces), instead of `find_links:` and pip's",
    "/srv/wheels/nightly",
)

PROBE_OPTIONS = Variable(
    "TORCHMATRIX_PROBE_OPTIONS",
    "nothing: torchmatrix sets it for every probe, the matrix's `probe_options` as JSON (whatever your shell says)",
    '{"opsweep": {"ops": "add|mul"}}',
)

HANDBACK = Variable(
    "TORCHMATRIX_HANDBACK",
    "nothing: bisect and verify set it for the child nox they start, the folder where each probe session writes "
    "how it ended (its hand-back file), which they read instead of its output",
    "/tmp/torchmatrix-handback-x1y2",
)

REQUIRES = Variable(
    "TORCHMATRIX_REQUIRES",
    "requirements installed in every cell beside the matrix's `requires:` (one a line, as in a requirements file); "
    "the `torchmatrix` command's `--with` sets it",
    "numpy==1.26.4",
)
WORKDIR = Variable(
    "TORCHMATRIX_WORKDIR",
    "the folder every pair runs from (its working directory), instead of the matrix file's folder; the `torchmatrix` "
    "command sets it to the folder it was started in",
    "/home/me/bug-report",
)

STEP_SUMMARY = Variable(
    "GITHUB_STEP_SUMMARY",
    "nothing: GitHub Actions sets it for every step, the file of the job's summary page, to which `nox -s report` "
    "adds the report's Markdown",
    "/home/runner/work/_temp/_runner_file_commands/step_summary_x1y2",
)

ALL = (
    MATRIX, MACHINE, MACHINE_LABEL, TORCH, PYTHON, PROBES, REQUIRES, OUTPUT, CACHE_DIR, INDEX_URL, FIND_LINKS,
    WORKDIR, PROBE_OPTIONS, HANDBACK, STEP_SUMMARY,
)  # fmt: skip


@dataclass(frozen=True)
class Given:
    """A variable every pair's process finds set, for its probe to read."""

    name: str
    means: str


DEVICE = Given(
    "TORCHMATRIX_DEVICE", "the device the pair runs on: `cpu`, `cuda` or `mps` (what scripts and tests read)"
)
INPUTS = Given(
    "TORCHMATRIX_INPUTS",
    "a folder beside this machine's results (`<output>/results/<machine>/inputs`), the same for every cell, where a "
    "probe keeps what it makes once for every release: the operator sweep's captured samples",
)
GIVEN = (DEVICE, INPUTS)
