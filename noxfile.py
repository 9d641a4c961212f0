# /// script
# requires-python = ">=3.10"
# dependencies = [
#     "nox>=2026.10",
#     "uv>=0.9",
#     "virtualenv>=20.26",
#     "pyyaml>=6.0",
#     "tabulate>=0.9",
#     "packaging>=24.0",
#     "tomli>=2.0; python_version < '3.11'",
# ]
# ///
"""torchmatrix's sessions: one `probe(<torch version>)` per cell of the matrix, and the tools around them.

`nox -s probe` runs every cell of matrix.yaml (or of $TORCHMATRIX_MATRIX) whose
stored result is out of date (`-- --force`: every cell), `nox -s "probe(1.12.1)"`
one of them, `nox -j 2 -s probe report` cells in parallel and then the table,
`nox -s plan` shows what would run,
`nox -s probe-installed -- PYTHON` runs the probes in a torch installed already,
`nox -s report` renders the stored results of every machine (`-- --help` for its options),
`nox -s bisect -- PROBE --from OLD --to NEW` finds the first release with NEW's outcome
(`-- --all …`: of every probe and device that changed),
`nox -s verify` checks stored results against the matrix's `expect:` entries,
`nox -s bench` measures what a matrix costs here, `nox -s tests` tests torchmatrix,
`nox -s docs` builds its documentation.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nox

NOXFILE = Path(__file__).resolve()
ROOT = NOXFILE.parent
sys.path.insert(0, str(ROOT / "src"))  # the noxfile runs torchmatrix from this checkout

from torchmatrix import noxsessions  # noqa: E402

noxsessions.register(NOXFILE)  # probe, probe-installed, report, plan, bisect and verify over matrix.yaml


@nox.session(python=False)
def bench(session: nox.Session) -> None:
    """Measure what a matrix costs on this machine against its limits; `-- --help` for the options."""
    session.run(sys.executable, str(ROOT / "benchmarks" / "bench.py"), *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """Check the code: ruff's lints and format, and mypy's types over src/."""
    session.install("-e", ".[lint]")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("mypy")


@nox.session
def docs(session: nox.Session) -> None:
    """Build the documentation site into docs/_build/html; any warning fails the build."""
    session.install("-e", ".[docs]")
    session.run("sphinx-build", "-W", "--keep-going", "-n", "-b", "html", "docs", "docs/_build/html", *session.posargs)


PARALLEL = ("--numprocesses", "auto", "--maxprocesses", "4", "--dist", "loadfile", "--no-loadscope-reorder")
SLOWEST = ("--durations", "25")
"""Each pass ends with its 25 slowest steps (a test's setup, call or teardown): where the suite's time goes."""
"""One pytest worker a CPU, four at most (each builds envs and installs torch); a file's tests share a worker.

Files go out in the order pytest collects them: the slow tiers' (faults, integration) first, the unit tier's
quick ones last, to fill the end. xdist's default order, files of the most tests first, would start
tests/integration/test_bench.py, one test of minutes, last of all.
"""


@nox.session
def tests(session: nox.Session) -> None:
    """Run torchmatrix's test suite: in parallel, then the tests marked `serial` alone; `-- ARGS`: `pytest ARGS`."""
    session.install("-e", ".[test,docs]")  # docs: tests/integration/test_docs.py builds the site
    if session.posargs:
        session.run("pytest", *session.posargs)  # as the user asked, in one process (`-n 2` for workers)
        return
    session.run("pytest", *PARALLEL, *SLOWEST, "-m", "not serial")
    session.run("pytest", *SLOWEST, "-m", "serial")
