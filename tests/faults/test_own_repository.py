"""torchmatrix installed in someone else's repository: a noxfile of two lines gives the sessions over its files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import FOREGROUND
from .conftest import PROBES, Torch

pytestmark = pytest.mark.integration

NOXFILE = "import torchmatrix.noxsessions\n\ntorchmatrix.noxsessions.register(__file__)\n"


def repository_environ(cache: Path) -> dict[str, str]:
    """This environment without torchmatrix's variables (the repository's own matrix counts), and a cache."""
    environ = {name: value for name, value in os.environ.items() if not name.startswith("TORCHMATRIX_")}
    return dict(environ, TORCHMATRIX_CACHE_DIR=str(cache))


def test_a_two_line_noxfile_runs_the_repositorys_own_matrix_probes_and_results(
    tmp_path: Path, envdir: Path, suite_cache: Path, torch_here: Torch, warm: None
) -> None:
    repository = tmp_path / "mylib"
    (repository / "probes").mkdir(parents=True)
    (repository / "probes" / "mine.py").write_text((PROBES / "ok.py").read_text())
    (repository / "noxfile.py").write_text(NOXFILE)
    (repository / "matrix.yaml").write_text(f"torch:\n  - {torch_here.entry}\nprobes: [mine]\ndevices: [cpu]\n")
    environ = repository_environ(suite_cache)
    command = [sys.executable, "-m", "nox", "--envdir", str(envdir)]
    run = subprocess.run(command, cwd=repository, env=environ, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    (stored,) = (repository / "reports" / "results").glob("*/torch-*.json")
    assert stored.name == f"torch-{torch_here.version}-py{torch_here.python}.json"
    assert (repository / "reports" / "COMPATIBILITY.md").read_text().count("mine") >= 1
    listed = subprocess.run([*command, "-l"], cwd=repository, env=environ, capture_output=True, text=True)
    assert all(name in listed.stdout for name in ("probe-installed", "report", "plan", "bisect", "verify"))
    assert "tests" not in listed.stdout.split()  # torchmatrix's own sessions stay in torchmatrix's noxfile


LIBRARY = {
    "pyproject.toml": '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n\n'
    '[project]\nname = "mylib"\nversion = "0.1.0"\n\n[tool.setuptools]\npackages = ["mylib"]\n',
    "mylib/__init__.py": "def double(x):\n    return x * 2\n",
    "probes/doubles.py": "import mylib\nimport torch\n\n\ndef run(device):\n"
    "    ok = mylib.double(torch.ones(1, device=device)).item() == 2.0\n"
    "    return {'outcome': 'pass' if ok else 'fail', 'metrics': {}, 'message': ''}\n",
}


def test_the_repositorys_library_is_built_once_installed_in_every_cell_and_its_edits_rerun_the_cells(
    tmp_path: Path, envdir: Path, suite_cache: Path, torch_here: Torch, torch_other: Torch, warm: None
) -> None:
    repository = tmp_path / "mylib"
    for name, text in {**LIBRARY, "noxfile.py": NOXFILE}.items():
        (repository / name).parent.mkdir(parents=True, exist_ok=True)
        (repository / name).write_text(text)
    entries = "".join(f"  - {release.entry}\n" for release in (torch_other, torch_here))
    (repository / "matrix.yaml").write_text(f"torch:\n{entries}probes: [doubles]\ndevices: [cpu]\nproject: .\n")
    environ = repository_environ(tmp_path / "cache")
    command = [sys.executable, "-m", "nox", "--envdir", str(envdir)]

    def nox() -> subprocess.CompletedProcess[str]:
        done = subprocess.run(command, cwd=repository, env=environ, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
        return done

    nox()
    stored = sorted((repository / "reports" / "results").glob("*/torch-*.json"))
    assert len(stored) == 2
    for path in stored:
        result = json.loads(path.read_text())
        assert result["environment"]["packages"]["mylib"] == "0.1.0"  # and numpy, where a pin names it
        assert [record["outcome"] for record in result["records"]] == ["pass"]
    assert len(list((tmp_path / "cache" / "wheels").glob("*/mylib-0.1.0-*.whl"))) == 1  # built once for both cells

    assert nox().stderr.count(") skipped: torch-") == 2  # a run's own results are no sources: nothing rebuilt
    (repository / "mylib" / "__init__.py").write_text("def double(x):\n    return x + x\n")
    edited = nox()
    assert edited.stderr.count("running: the sources of the matrix's project changed") == 2
    assert len(list((tmp_path / "cache" / "wheels").glob("*/mylib-0.1.0-*.whl"))) == 2
    (repository / "README.md").write_text("not part of the package\n")
    assert nox().stderr.count(") skipped: torch-") == 2  # a new wheel that installs the same files re-runs nothing


def test_a_run_interrupted_after_a_sessions_mistake_keeps_the_interrupts_status(
    tmp_path: Path, suite_cache: Path
) -> None:
    """A Ctrl-C in a session torchmatrix does not wrap (the repository's own) ends the run with nox's 130, not the
    earlier mistake's 2: the interrupt is what stopped the run."""
    repository = tmp_path / "mylib"
    (repository / "probes").mkdir(parents=True)
    (repository / "probes" / "mine.py").write_text((PROBES / "ok.py").read_text())
    own = "\n\n@nox.session(python=False)\ndef mine(session):\n    import os, signal\n\n"
    own += "    os.kill(os.getpid(), signal.SIGINT)\n"
    (repository / "noxfile.py").write_text("import nox\n" + NOXFILE + own)
    (repository / "matrix.yaml").write_text("torch: [1.9.0]\nprobes: [mine]\ndevices: [cpu]\n")
    command = [sys.executable, "-m", "nox", "-s", "bisect", "mine"]  # bisect without --from, --to: a mistake
    environ = repository_environ(suite_cache)
    run = subprocess.run(  # with Ctrl-C's own disposition, however the suite was started (`&` ignores SIGINT)
        command, cwd=repository, env=environ, capture_output=True, text=True, timeout=300, preexec_fn=FOREGROUND
    )
    assert "required: --from, --to" in run.stderr and "Session mine interrupted." in run.stderr, run.stderr
    assert run.returncode == 130, run.stderr
