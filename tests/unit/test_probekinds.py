"""A probe's kind as the host tells it (or leaves to pytest in the cell), its devices and digest."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from torchmatrix.core import Kind
from torchmatrix.matrix import kinds
from torchmatrix.matrix.loader import probe_at

RUN = "def run(device):\n    return {'outcome': 'pass'}\n"


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


ASKED = Kind.SCRIPT_OR_TESTS


@pytest.mark.parametrize(
    ("name", "text", "kind"),
    [
        ("probe.py", RUN, Kind.MODULE),
        ("probe.py", "import torch\nprint(torch.arange(4.0))\n", ASKED),
        ("repro.py", "def run():\n    print('hi')\n\nrun()\n", ASKED),  # a script's own run(), called
        ("repro.py", "def run(\n", ASKED),  # the cell's Python may parse it, or its records hold the SyntaxError
        ("test_dot.py", "def test_dot():\n    pass\n", ASKED),  # what pytest collects, pytest says
        ("test_dot.py", "from shared_checks import *\n", ASKED),
        ("check.py", "import unittest\n\nclass DotCase(unittest.TestCase):\n    pass\n", ASKED),
        ("test_dot.py", RUN, Kind.MODULE),  # run(device) is torchmatrix's own protocol: the text says
        ("repro.py", "def run(x):\n    return x * 2\n\nprint(run(3))\n", ASKED),  # a helper run(x)
        ("repro.py", "from subprocess import run\n\nrun(['true'])\n", ASKED),
        ("repro.py", "def run(device, repeat):\n    pass\n", ASKED),  # run(device) alone cannot call it
        ("probe.py", "def run(device, repeat=3):\n    pass\n", Kind.MODULE),
        ("probe.py", "async def run(device):\n    pass\n", ASKED),
    ],
)
def test_a_file_is_a_module_if_it_defines_run_device_else_pytest_is_asked_in_the_cell(
    tmp_path: Path, name: str, text: str, kind: Kind
) -> None:
    assert kinds.kind_of_file(write(tmp_path, name, text))[0] is kind


def test_a_node_id_or_a_folder_is_tests_and_the_matrix_may_say_a_file_s_kind(tmp_path: Path) -> None:
    both = write(tmp_path, "tests/test_both.py", RUN + "\ndef test_a():\n    pass\n")
    probes = [probe_at(tmp_path / "tests", tmp_path), probe_at(both, tmp_path, "test_a"), probe_at(both, tmp_path),
              probe_at(both, tmp_path, kind=Kind.PYTEST), probe_at(both, tmp_path, kind=Kind.SCRIPT)]  # fmt: skip
    assert [(probe.kind, probe.kind_reason) for probe in probes] == [
        (Kind.PYTEST, "a folder holds tests"),
        (Kind.PYTEST, "a node id names a test"),
        (Kind.MODULE, "it defines run(device)"),
        (Kind.PYTEST, "the matrix says kind: tests"),
        (Kind.SCRIPT, "the matrix says kind: script"),
    ]
    asked = probe_at(write(tmp_path, "repro.py", "print(1)\n"), tmp_path)
    assert (asked.kind, asked.kind_reason, asked.root) == (ASKED, kinds.ASKED, tmp_path)


def test_a_file_the_hosts_python_cannot_parse_is_asked_of_the_cell_and_says_why(tmp_path: Path) -> None:
    """The cell's Python, which runs it, may be newer than the host's: it says whether the file defines
    run(device), then pytest whether it holds tests."""
    unparsed = probe_at(write(tmp_path, "repro.py", "def run(device):\n    return {\n"), tmp_path)
    assert (unparsed.kind, unparsed.kind_reason, unparsed.root) == (
        ASKED,
        "a .py file the host's Python cannot parse: the cell's Python says whether it defines run(device), else"
        " pytest whether it holds tests",
        tmp_path,
    )


def test_a_file_the_hosts_python_cannot_parse_runs_on_every_device_as_a_module_would(tmp_path: Path) -> None:
    """Its text never names the device: a script or tests that did not would run on cpu alone, but the cell may
    find it a module, which is handed its device."""
    unparsed = probe_at(write(tmp_path, "probe.py", "type Alias = int\n\n\n" + RUN), tmp_path)
    script = probe_at(write(tmp_path, "repro.py", "print(1)\n"), tmp_path)
    assert (unparsed.kind, unparsed.devices, script.devices) == (ASKED, None, ("cpu",))


def test_a_file_pytest_is_asked_about_covers_its_own_record_and_its_tests(tmp_path: Path) -> None:
    probes = tmp_path / "probes"
    asked = probe_at(write(tmp_path, "sub/check.py", "print(1)\n"), tmp_path)
    named = probe_at(write(probes, "bug.py", "print(1)\n"), tmp_path, probes_dir=probes)
    assert asked.covers("sub/check.py") and asked.covers("sub/check.py::test_a") and asked.covers("sub/check.py::T::t")
    assert not asked.covers("sub/check.py_x") and not asked.covers("sub/check")
    assert named.name == "bug" and named.covers("bug") and named.covers("probes/bug.py::test_a")  # tests: node ids
    assert not probe_at(write(tmp_path, "mod.py", RUN), tmp_path).covers("mod.py::test_a")


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
    asked = probe_at(tmp_path / "tests" / "test_a.py", tmp_path)
    probe = probe_at(tmp_path / "tests" / "test_a.py", tmp_path, kind=Kind.PYTEST)
    before = kinds.digest(probe)
    write(tmp_path, "conftest.py", "")
    with_conftest = kinds.digest(probe)
    write(tmp_path, "tests/other_module.py", "X = 1\n")
    assert before != with_conftest == kinds.digest(probe)  # a file the test file does not name: no change
    # Asked about, its digest is its file's, as a script's; what pytest read (conftest.py) is among what it read.
    assert kinds.digest(asked) == hashlib.sha256((tmp_path / "tests" / "test_a.py").read_bytes()).hexdigest()
    script = probe_at(tmp_path / "tests" / "test_a.py", tmp_path, kind=Kind.SCRIPT)
    assert kinds.digest(script) not in (kinds.digest(asked), kinds.digest(probe))  # kind: script runs it otherwise
    assert [path.name for path in kinds.source_files(asked)] == ["conftest.py", "test_a.py"]
    assert [path.name for path in kinds.source_files(probe)] == ["conftest.py", "test_a.py"]
    folder = probe_at(tmp_path / "tests", tmp_path)
    assert [path.name for path in kinds.source_files(folder)] == ["conftest.py", "other_module.py", "test_a.py"]
