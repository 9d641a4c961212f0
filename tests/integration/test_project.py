"""`project.load` as the sessions call it: matrix.yaml, the environment, and this machine's Pythons asked."""

from __future__ import annotations

import platform
import re
from pathlib import Path

import pytest

from torchmatrix import identity
from torchmatrix.errors import ConfigError, UsageError
from torchmatrix.project import load

from ..conftest import ROOT

pytestmark = pytest.mark.integration


def test_the_output_folder_can_come_from_the_environment(tmp_path: Path, private_cache: Path) -> None:
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text("torch: [1.9.0]\nprobes: [autograd_dot]\nindex_url: file:///nowhere/simple\n")
    environ = {"TORCHMATRIX_MATRIX": str(matrix), "TORCHMATRIX_CACHE_DIR": str(private_cache), "PATH": ""}
    assert load(ROOT, environ).matrix.output == tmp_path / "reports"
    elsewhere = load(ROOT, dict(environ, TORCHMATRIX_OUTPUT=str(tmp_path / "elsewhere")))
    assert elsewhere.matrix.output == tmp_path / "elsewhere"
    assert elsewhere.results_dir == tmp_path / "elsewhere" / "results"


def test_this_machine_is_named_by_how_it_computes_asked_of_it(tmp_path: Path, private_cache: Path) -> None:
    """The real /proc/cpuinfo (sysctl on macOS): the machine's default name is its identity's, which results store."""
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text("torch: [1.9.0]\nprobes: [autograd_dot]\nindex_url: file:///nowhere/simple\n")
    environ = {"TORCHMATRIX_MATRIX": str(matrix), "TORCHMATRIX_CACHE_DIR": str(private_cache), "PATH": ""}
    project = load(ROOT, environ)
    here = project.hardware
    assert here == identity.this_machine() and here.system == platform.system().lower() and here.cpu
    assert project.machine == here.name() and project.machine.endswith("-" + here.digest())
    if here.architecture == "x86_64":
        assert here.levels, "every x86-64 CPU a torch wheel runs on has SSE4.2 and POPCNT (x86-64-v2)"
    named = load(ROOT, dict(environ, TORCHMATRIX_MACHINE="box"))
    assert (named.machine, named.hardware) == ("box", here)
    labelled = load(ROOT, dict(environ, TORCHMATRIX_MACHINE_LABEL="ubuntu-24.04"))  # a CI runner's
    assert labelled.machine == f"{here.name()}+ubuntu-24.04"
    with pytest.raises(UsageError, match=re.escape("TORCHMATRIX_MACHINE_LABEL: 'my runner' cannot name")):
        load(ROOT, dict(environ, TORCHMATRIX_MACHINE_LABEL="my runner"))


def test_the_index_and_find_links_can_come_from_the_environment(tmp_path: Path, private_cache: Path) -> None:
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text("torch: [1.9.0]\nprobes: [autograd_dot]\nindex_url: file:///nowhere/simple\n")
    environ = {"TORCHMATRIX_MATRIX": str(matrix), "TORCHMATRIX_CACHE_DIR": str(private_cache), "PATH": ""}
    nightly = tmp_path / "nightly"
    nightly.mkdir()
    index = "file:///elsewhere/simple"
    other = load(ROOT, dict(environ, TORCHMATRIX_INDEX_URL=f"{index}/", TORCHMATRIX_FIND_LINKS=str(nightly)))
    assert (other.matrix.index_url, other.find_links) == (index, (str(nightly),))
    assert other.installer_options() == ["--find-links", str(nightly), "--index-url", index]
    evil = "--index-url=http://evil"
    for name, value, problem in [
        ("TORCHMATRIX_INDEX_URL", "--no-index", "'--no-index' is not an http(s) or file URL"),
        ("TORCHMATRIX_FIND_LINKS", f"wheels {evil}", f"{evil!r} looks like an installer option"),
        ("TORCHMATRIX_FIND_LINKS", f"{nightly} {tmp_path / 'gone'}", f"{str(tmp_path / 'gone')!r}: the folder"),
    ]:
        with pytest.raises(UsageError, match=re.escape(f"{name}: {problem}")):
            load(ROOT, dict(environ, **{name: value}))


def test_an_unwritable_output_folder_is_refused_by_what_writes_not_by_loading(
    tmp_path: Path, private_cache: Path
) -> None:
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(
        "torch: [1.9.0]\nprobes: [autograd_dot]\nindex_url: file:///nowhere/simple\noutput: matrix.yaml/out\n"
    )
    environ = {"TORCHMATRIX_MATRIX": str(matrix), "TORCHMATRIX_CACHE_DIR": str(private_cache), "PATH": ""}
    loaded = load(ROOT, environ)  # nox -l, plan and verify only read
    with pytest.raises(ConfigError, match=r"matrix.yaml: output: results cannot go under .*: .*matrix.yaml is a file"):
        loaded.require_writable(loaded.machine_dir)
    elsewhere = load(ROOT, dict(environ, TORCHMATRIX_OUTPUT=str(tmp_path / "elsewhere")))
    elsewhere.require_writable(elsewhere.machine_dir)


def test_requirements_can_come_from_the_environment_beside_the_matrixs(tmp_path: Path, private_cache: Path) -> None:
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(
        "torch: [1.9.0]\nprobes: [autograd_dot]\nindex_url: file:///nowhere/simple\nrequires: [pytest>=7]\n"
    )
    environ = {"TORCHMATRIX_MATRIX": str(matrix), "TORCHMATRIX_CACHE_DIR": str(private_cache), "PATH": ""}
    given = load(ROOT, dict(environ, TORCHMATRIX_REQUIRES="numpy==1.26.4\n\nscipy>=1,<2\n"))
    assert [str(requirement) for requirement in given.matrix.requires] == ["pytest>=7", "numpy==1.26.4", "scipy<2,>=1"]
    with pytest.raises(UsageError, match=re.escape("TORCHMATRIX_REQUIRES: 'numpy=>1' is not a requirement")):
        load(ROOT, dict(environ, TORCHMATRIX_REQUIRES="numpy=>1"))
