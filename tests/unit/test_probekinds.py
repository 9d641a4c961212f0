"""A probe's kind, devices and digest, told from its files alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchmatrix import probekinds
from torchmatrix.core import Kind
from torchmatrix.matrix.loader import probe_at

RUN = "def run(device):\n    return {'outcome': 'pass'}\n"


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("name", "text", "kind"),
    [
        ("probe.py", RUN, Kind.MODULE),
        ("probe.py", "import torch\nprint(torch.arange(4.0))\n", Kind.SCRIPT),
        ("repro.py", "def run():\n    print('hi')\n\nrun()\n", Kind.SCRIPT),  # a script's own run(), called
        ("repro.py", "def run(\n", Kind.MODULE),  # loading it records the SyntaxError
        ("test_dot.py", "def test_dot():\n    pass\n", Kind.PYTEST),
        ("dot_test.py", "class TestDot:\n    pass\n", Kind.PYTEST),
        ("speed_test.py", "print('fast')\n", Kind.SCRIPT),  # named like tests, holding none
        ("test_dot.py", RUN, Kind.MODULE),
        ("test_dot.py", "import unittest\n\nclass DotCase(unittest.TestCase):\n    pass\n", Kind.PYTEST),
        ("test_dot.py", "from unittest import TestCase as T\n\nclass A(T):\n    pass\n", Kind.PYTEST),
        ("test_dot.py", "from helpers import make_test\n\ntest_a = make_test()\n", Kind.PYTEST),
        ("test_dot.py", "from helpers import test_shared\n", Kind.PYTEST),
        ("test_dot.py", "import sys\n\nif sys.platform:\n    def test_dot():\n        pass\n", Kind.PYTEST),
        ("test_dot.py", "test_cases = [1, 2]\nTEST = 'x'\n", Kind.SCRIPT),  # data, not callables
        ("test_dot.py", "from unittest import TestCase\nprint(1)\n", Kind.SCRIPT),  # the base class holds no tests
        ("test_dot.py", "if __name__ == '__main__':\n    def test_dot():\n        pass\n", Kind.SCRIPT),
        ("repro.py", "def run(x):\n    return x * 2\n\nprint(run(3))\n", Kind.SCRIPT),  # a helper run(x)
        ("repro.py", "from subprocess import run\n\nrun(['true'])\n", Kind.SCRIPT),
        ("repro.py", "def run(device, repeat):\n    pass\n", Kind.SCRIPT),  # run(device) alone cannot call it
        ("probe.py", "def run(device, repeat=3):\n    pass\n", Kind.MODULE),
        ("probe.py", "async def run(device):\n    pass\n", Kind.SCRIPT),
    ],
)
def test_the_kind_is_what_pytest_would_collect_else_run_device_else_a_script(
    tmp_path: Path, name: str, text: str, kind: Kind
) -> None:
    assert probekinds.kind_of_file(write(tmp_path, name, text)) is kind


TESTS = "def check_dot():\n    pass\n\nclass DescribeDot:\n    def test_grad(self):\n        pass\n"


@pytest.mark.parametrize(
    ("file", "text"),
    [
        ("pytest.ini", "[pytest]\npython_files = check_*.py\npython_functions = check\n"),
        (".pytest.ini", "[pytest]\npython_files =\n    check_*.py\n    other_*.py\npython_functions = check_*\n"),
        ("pytest.toml", '[pytest]\npython_files = ["check_*.py"]\npython_classes = ["Describe"]\n'),
        ("pyproject.toml", '[tool.pytest.ini_options]\npython_files = "check_*.py"\npython_functions = ["check"]\n'),
        ("pyproject.toml", '[tool.pytest]\npython_files = ["check_*.py"]\npython_classes = ["Describe*"]\n'),
        ("tox.ini", "[tox]\nenvlist = py\n\n[pytest]\npython_files = check_*.py\npython_functions = check\n"),
        ("setup.cfg", "[metadata]\nname = x\n\n[tool:pytest]\npython_files = check_*.py\npython_classes = Describe\n"),
    ],
)
def test_test_files_are_named_by_the_pytest_configuration_found_above_them(
    tmp_path: Path, file: str, text: str
) -> None:
    write(tmp_path, file, text)
    assert probekinds.kind_of_file(write(tmp_path, "tests/check_dot.py", TESTS)) is Kind.PYTEST
    assert probekinds.kind_of_file(write(tmp_path, "tests/test_dot.py", TESTS)) is Kind.SCRIPT  # not its name now
    assert probe_at(tmp_path / "tests" / "check_dot.py", tmp_path).kind is Kind.PYTEST


def test_the_nearest_pytest_configuration_wins_as_pytest_finds_it(tmp_path: Path) -> None:
    write(tmp_path, "pytest.ini", "[pytest]\npython_files = check_*.py\n")
    write(tmp_path, "tests/pyproject.toml", "[project]\nname = 'x'\n")  # no pytest table: pytest looks further up
    write(tmp_path, "tests/setup.cfg", "[metadata]\nname = x\n")
    assert probekinds.kind_of_file(write(tmp_path, "tests/check_dot.py", "def test_dot():\n    pass\n")) is Kind.PYTEST
    write(tmp_path, "tests/tox.ini", "[pytest]\nmarkers = slow\n")  # pytest's config file now: default names
    assert probekinds.kind_of_file(tmp_path / "tests" / "check_dot.py") is Kind.SCRIPT
    write(tmp_path, "tests/pytest.ini", "")  # pytest.ini is pytest's even when empty
    write(tmp_path, "tests/tox.ini", "[pytest]\npython_files = check_*.py\n")
    assert probekinds.kind_of_file(tmp_path / "tests" / "check_dot.py") is Kind.SCRIPT


def test_a_configuration_pytest_could_not_read_leaves_its_default_names(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", "[tool.pytest.ini_options\n")
    assert probekinds.kind_of_file(write(tmp_path, "test_dot.py", "def test_dot():\n    pass\n")) is Kind.PYTEST


def test_a_script_that_never_reads_the_device_runs_on_cpu_alone(tmp_path: Path) -> None:
    quiet = write(tmp_path, "quiet.py", "import torch\nprint(torch.ones(2))\n")
    reads = write(tmp_path, "reads.py", "import os\ndevice = os.environ['TORCHMATRIX_DEVICE']\n")
    named = write(tmp_path, "named.py", '# /// script\n# [tool.torchmatrix]\n# devices = ["cuda"]\n# ///\nprint(1)\n')
    assert probe_at(quiet, tmp_path).devices == ("cpu",)
    assert probe_at(reads, tmp_path).devices is None
    assert probe_at(named, tmp_path).devices == ("cuda",)
    assert probe_at(write(tmp_path, "module.py", RUN), tmp_path).devices is None  # run() is handed its device


def test_tests_run_on_every_device_when_they_or_a_conftest_use_the_fixture(tmp_path: Path) -> None:
    plain = probe_at(write(tmp_path, "tests/test_a.py", "def test_a():\n    pass\n"), tmp_path)
    assert plain.devices == ("cpu",)
    write(tmp_path, "tests/conftest.py", "import pytest\n\n@pytest.fixture\ndef device(torchmatrix_device):\n")
    assert probe_at(tmp_path / "tests" / "test_a.py", tmp_path).devices is None
    assert probe_at(tmp_path / "tests", tmp_path).devices is None


def test_tests_are_named_from_the_matrix_s_folder_and_cover_their_test_ids(tmp_path: Path) -> None:
    write(tmp_path, "tests/test_a.py", "def test_a():\n    pass\n")
    folder, file, test = (
        probe_at(tmp_path / "tests", tmp_path),
        probe_at(tmp_path / "tests" / "test_a.py", tmp_path),
        probe_at(tmp_path / "tests" / "test_a.py", tmp_path, "test_a"),
    )
    assert [folder.name, file.name, test.name] == ["tests/", "tests/test_a.py", "tests/test_a.py::test_a"]
    assert test.select == "::test_a" and test.root == tmp_path
    assert folder.covers("tests/test_a.py::test_a") and folder.covers("tests/sub/test_b.py::test_b")
    assert file.covers("tests/test_a.py::test_a") and file.covers("tests/test_a.py::TestA::test_b")
    assert not file.covers("tests/test_ab.py::test_x")
    assert test.covers("tests/test_a.py::test_a") and test.covers("tests/test_a.py::test_a[1]")
    assert not test.covers("tests/test_a.py::test_ab")


def test_the_digest_of_tests_covers_their_files_and_the_conftests_above(tmp_path: Path) -> None:
    write(tmp_path, "tests/test_a.py", "def test_a():\n    pass\n")
    probe = probe_at(tmp_path / "tests" / "test_a.py", tmp_path)
    before = probekinds.digest(probe)
    write(tmp_path, "conftest.py", "")
    with_conftest = probekinds.digest(probe)
    write(tmp_path, "tests/other_module.py", "X = 1\n")
    assert before != with_conftest == probekinds.digest(probe)  # a file the test file does not name: no change
    assert [path.name for path in probekinds.source_files(probe)] == ["conftest.py", "test_a.py"]
    folder = probe_at(tmp_path / "tests", tmp_path)
    assert [path.name for path in probekinds.source_files(folder)] == ["conftest.py", "other_module.py", "test_a.py"]


def test_a_relative_path_finds_the_configuration_above_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, "pytest.ini", "[pytest]\npython_files = check_*.py\n")
    write(tmp_path, "tests/check_dot.py", "def test_dot():\n    pass\n")
    monkeypatch.chdir(tmp_path / "tests")
    assert probekinds.kind_of_file(Path("check_dot.py")) is Kind.PYTEST
