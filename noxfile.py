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
`nox -s bisect -- PROBE --from OLD --to NEW` finds the first release with NEW's outcome,
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

from torchmatrix.errors import exits_on_error  # noqa: E402
from torchmatrix.project import Loaded  # noqa: E402
from torchmatrix.sessions import probe as probe_session  # noqa: E402 - the others import theirs when they run

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.sessions = ["probe"]

loaded = Loaded.of(ROOT)  # a broken matrix stops only the sessions that need it


@nox.session(reuse_venv=True, download_python="never", allow_parallel=True)
@nox.parametrize(("python", "cell"), loaded.session_parameters(), ids=loaded.session_ids())
@exits_on_error
def probe(session: nox.Session, cell: str) -> None:
    """Install one torch release and run every probe on every device."""
    probe_session.run(loaded.project(), session, cell)


@nox.session(name="probe-installed", python=False)
@exits_on_error
def probe_installed(session: nox.Session) -> None:
    """Run every probe on every device in Pythons whose torch is installed already: -- PYTHON [PYTHON …]."""
    from torchmatrix.sessions import installed as installed_session

    installed_session.run(loaded.project(), session)


@nox.session(python=False)
@exits_on_error
def report(session: nox.Session) -> None:
    """Render every machine's results (COMPATIBILITY.md, compatibility.html, …) and print their tables."""
    from torchmatrix.sessions import report as report_session

    report_session.run(loaded.project(), session)


@nox.session(python=False)
@exits_on_error
def plan(session: nox.Session) -> None:
    """Show each cell's interpreter, requirements and status, and run nothing."""
    print(loaded.project().describe_plan())


@nox.session(python=False)
@exits_on_error
def bisect(session: nox.Session) -> None:
    """Find the first torch release whose outcome is NEW's: -- PROBE --from OLD --to NEW [--device cpu] […]."""
    from torchmatrix.sessions import bisect as bisect_session

    bisect_session.run(loaded.project(), session, NOXFILE)


@nox.session(python=False)
@exits_on_error
def verify(session: nox.Session) -> None:
    """Check stored results against the matrix's expectations: [-- --run] [--machine NAME]."""
    from torchmatrix.sessions import verify as verify_session

    verify_session.run(loaded.project(), session, NOXFILE)


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


@nox.session
def tests(session: nox.Session) -> None:
    """Run torchmatrix's test suite (unit and integration)."""
    session.install("-e", ".[test,docs]")  # docs: tests/unit/test_docs.py builds the site
    session.run("pytest", *session.posargs)
