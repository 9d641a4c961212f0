"""What a pair sees and what it read, on real worker processes with the stand-in torch: the pair's side of identity."""

from __future__ import annotations

import ctypes
import dataclasses
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import zipfile
from pathlib import Path

import pytest

from torchmatrix import freshness, identity
from torchmatrix.core import Kind, Outcome, Pair, Probe, Record
from torchmatrix.envside.torchmatrix_worker import reads
from torchmatrix.matrix import loader
from torchmatrix.worker import runner

from ..conftest import CAN_BUILD_LIBRARIES, DATA, bare_venv, build_library

pytestmark = pytest.mark.integration


def changed_files(read: object) -> list[str]:
    """What of ``read`` is not as it was, as the views say it."""
    return [freshness.words(change) for change in identity.Identity.stored({identity.READ: read}).changed_files()]


def files_in(record: Record, folder: Path) -> dict[str, str | None]:
    """The files under ``folder`` ``record``'s pair read, each with its digest; not the modules it looked for there,
    nor where its script leads."""
    read = record.inputs[identity.READ].items()
    return {path: digest for path, digest in read if path.startswith(str(folder))
            and not path.endswith((identity.MODULE_LOOKED_FOR, identity.LEADS_TO))}  # fmt: skip


def digests_of(record: Record, files: dict[str, str | None]) -> dict[str, str | None]:
    """Of ``files``, those ``record``'s pair read, each with the digest it read."""
    return {path: digest for path, digest in record.inputs[identity.READ].items() if path in files}


def script(folder: Path, name: str, source: str) -> Probe:
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return Probe(name, path, kind=Kind.SCRIPT, devices=("cpu", "cuda"))


def run_alone(python: str, probe: Probe, folder: Path, limit: float = 30.0) -> Record:
    """The record of ``probe`` run alone on the cpu by ``python``'s pair, in ``folder``."""
    [record] = runner.run_cell(python, [Pair(probe, "cpu")], limit, workdir=folder).records
    return record


def each_counts_by_its_content(python: str, folder: Path, names: tuple[str, ...], source: str) -> None:
    """Run ``source`` alone in ``folder``, where each of ``names`` is a file ``name.txt`` holding its name, which
    it prints: each is an input by its content, edited a change."""
    for name in names:
        (folder / f"{name}.txt").write_text(name)
    record = run_alone(python, script(folder, "reads", source), folder)
    assert printed(record) == [" ".join(names)], record.message
    for name in names:
        (folder / f"{name}.txt").write_text("edited")
    assert changed_files(record.inputs[identity.READ]) == [f"{folder / name}.txt changed" for name in sorted(names)]


def printed(record) -> list[str]:
    return record.metrics["output"]


def test_a_pair_runs_the_cells_python_whatever_the_callers_path_and_variables_say(
    stub_torch_python: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `python` a script spawns is the cell's, and an exported variable reaches no pair unless declared."""
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "python").write_text("#!/bin/sh\necho the caller's python\n")
    (shadow / "python").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shadow}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("MY_SHELL_ONLY", "leaked")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    probe = script(
        tmp_path,
        "spawns",
        """\
        import os, subprocess, sys
        spawned = subprocess.run(["python", "-c", "import sys; print(sys.prefix)"], stdout=subprocess.PIPE)
        print(spawned.stdout.decode().strip() == sys.prefix, os.environ.get("VIRTUAL_ENV") == sys.prefix)
        print(os.environ.get("MY_SHELL_ONLY"), os.environ.get("PYTHONPATH"), os.environ.get("MY_DECLARED"))
        """,
    )
    seen = identity.pair_environment(stub_torch_python, {"MY_DECLARED": "declared"}, (), os.environ)
    [record] = runner.run_cell(
        stub_torch_python, [Pair(probe, "cpu")], 30.0, variables_seen=seen, workdir=tmp_path
    ).records
    assert record.outcome is Outcome.PASS, record.message
    assert printed(record) == ["True True", "None None declared"]


def test_on_its_cpu_pair_a_script_that_picks_cuda_itself_finds_none(stub_torch_python: str, tmp_path: Path) -> None:
    probe = script(
        tmp_path,
        "picks",
        """\
        import os, torch
        print("cuda" if torch.cuda.is_available() else "cpu", os.environ["TORCHMATRIX_DEVICE"])
        """,
    )
    seen = identity.pair_environment(stub_torch_python, {"TORCHMATRIX_STUB_CUDA": "1"}, (), os.environ)
    pairs = [Pair(probe, "cpu"), Pair(probe, "cuda")]
    cpu, cuda = runner.run_cell(stub_torch_python, pairs, 30.0, variables_seen=seen, workdir=tmp_path).records
    assert (printed(cpu), printed(cuda)) == (["cpu cpu"], ["cuda cuda"])


def test_a_record_says_the_accelerators_variables_the_matrix_sets_as_its_pair_saw_them(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """``env: {CUDA_VISIBLE_DEVICES: "0"}`` reaches the cuda pair; the cpu pair sees no accelerator, and its record
    says it saw the variable empty."""
    probe = script(
        tmp_path,
        "sees",
        """\
        import os
        print(repr(os.environ["CUDA_VISIBLE_DEVICES"]))
        """,
    )
    declared = {"CUDA_VISIBLE_DEVICES": "0", "TORCHMATRIX_STUB_CUDA": "1"}
    seen = identity.pair_environment(stub_torch_python, declared, (), os.environ)
    pairs = [Pair(probe, "cpu"), Pair(probe, "cuda")]
    records = runner.run_cell(stub_torch_python, pairs, 30.0, variables_seen=seen, workdir=tmp_path).records
    run = {identity.ENVIRONMENT: identity.environment_identity(declared, (), os.environ)}
    for record, saw in zip(records, ("''", "'0'"), strict=True):
        assert printed(record) == [saw], record.device
        stored = identity.record_inputs(run, record.probe, device=record.device)[identity.ENVIRONMENT]
        assert repr(stored["set"]["CUDA_VISIBLE_DEVICES"]) == saw, record.device


def test_a_record_holds_every_file_its_pair_read_by_content_and_none_it_wrote(
    stub_torch_python: str, tmp_path: Path
) -> None:
    (tmp_path / "helper.py").write_text("VALUE = 3\n")
    (tmp_path / "data.csv").write_text("1,2\n")
    made = tmp_path / "made.txt"
    probe = script(
        tmp_path,
        "reads",
        f"""\
        import json, os
        from helper import VALUE
        with open({str(tmp_path / "data.csv")!r}) as data:
            print(VALUE, data.read().strip())
        with open("scratch.txt", "w") as mine:
            mine.write("its own folder")
        with open({str(made)!r}, "w") as written:
            written.write("x")
        with open({str(made)!r}) as again:
            again.read()
        json.dumps([])  # the standard library is the environment's
        """,
    )
    record = run_alone(stub_torch_python, probe, tmp_path)
    assert printed(record) == ["3 1,2"]
    read = files_in(record, tmp_path)
    assert sorted(read) == sorted(str(tmp_path / name) for name in ("reads.py", "helper.py", "data.csv"))
    assert read[str(tmp_path / "helper.py")] == identity.file_digest(tmp_path / "helper.py")


def stub_torch_venv(folder: Path, base: str = sys.executable) -> tuple[str, Path]:
    """A venv of ``base`` whose ``import torch`` finds the stub: its python and its site-packages."""
    python, site_packages = bare_venv(folder, base)
    (site_packages / "torch.pth").write_text(str(DATA / "stub_torch") + "\n")
    return python, site_packages


def pytest_python(folder: Path) -> str:
    python, site_packages = stub_torch_venv(folder)
    (site_packages / "pytest.pth").write_text(str(Path(pytest.__file__).parent.parent) + "\n")
    return python


PYTEST_DISTRIBUTIONS = ("_pytest", "pytest", "pluggy", "iniconfig", "packaging", "pygments", "py.py")


def installed_pytest_python(folder: Path) -> str:
    """A venv of the stand-in torch with pytest installed in it (linked), as in a cell: pytest's code is the
    environment's."""
    python, site_packages = stub_torch_venv(folder)
    for found in Path(pytest.__file__).parent.parent.iterdir():
        if found.name.split("-")[0] in PYTEST_DISTRIBUTIONS:
            (site_packages / found.name).symlink_to(found)
    return python


def ran_again(records: list[Record]) -> list[str]:
    """What of each of ``records`` is not as it was, as the views say it."""
    return [change for record in records for change in changed_files(record.inputs[identity.READ])]


def test_the_kind_pytest_said_on_one_device_depends_on_what_it_was_decided_by_on_every_device(
    tmp_path: Path,
) -> None:
    """A file pytest collected no test from runs as a script on each device: on the second too, the record depends
    on what pytest looked for as it answered (a ``pytest.ini`` that would make it tests)."""
    python = installed_pytest_python(tmp_path / "venv")
    project = tmp_path / "project"
    project.mkdir()
    (project / "check.py").write_text(
        "import os\n\ndef check_one():\n    print('as a test')\n\n"
        "if __name__ == '__main__':\n    print('as a script on', os.environ['TORCHMATRIX_DEVICE'])\n"
    )
    probe = loader.probe_at(project / "check.py", project)
    seen = identity.pair_environment(python, {"TORCHMATRIX_STUB_CUDA": "1"}, (), os.environ)
    pairs = [Pair(probe, "cpu"), Pair(probe, "cuda")]
    records = runner.run_cell(python, pairs, 30.0, variables_seen=seen, workdir=project).records
    assert [(record.device, record.kind, printed(record)) for record in records] == [
        ("cpu", Kind.SCRIPT, ["as a script on cpu"]),
        ("cuda", Kind.SCRIPT, ["as a script on cuda"]),
    ]
    (project / "pytest.ini").write_text("[pytest]\npython_functions = check_*\n")
    assert ran_again(records) == [f"{project / 'pytest.ini'} appeared"] * 2


@pytest.mark.parametrize("added", ["a doctest file", "tests in a linked folder"])
def test_what_pytest_collects_from_a_folder_of_tests_counts_by_what_is_in_each_folder_it_listed(
    tmp_path: Path, added: str
) -> None:
    """pytest, the environment's code, collects a folder of tests by listing it and each folder in it (a linked one
    too): a file it would collect now (``test_*.txt``, a doctest; a module in a linked folder), which may change
    how the others run, is a change."""
    python = installed_pytest_python(tmp_path / "venv")
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    (project / "shared").mkdir()
    (project / "tests" / "linked").symlink_to(project / "shared", target_is_directory=True)
    (project / "tests" / "test_b.py").write_text(
        "import builtins\n\ndef test_state():\n    assert getattr(builtins, 'flag', None) is None\n"
    )
    probe = loader.probe_at(project / "tests", project)
    records = runner.run_cell(python, [Pair(probe, "cpu")], 30.0, workdir=project).records
    assert [(record.probe, record.outcome) for record in records] == [("tests/test_b.py::test_state", Outcome.PASS)]
    if added == "a doctest file":
        listed = project / "tests"
        (listed / "test_a.txt").write_text(">>> import builtins\n>>> builtins.flag = 1\n")
    else:
        listed = project / "tests" / "linked"
        (project / "shared" / "test_a.py").write_text("import builtins\nbuiltins.flag = 1\n\ndef test_a():\n    pass\n")
    again = runner.run_cell(python, [Pair(probe, "cpu")], 30.0, workdir=project).records
    assert ("tests/test_b.py::test_state", Outcome.FAIL) in [(record.probe, record.outcome) for record in again]
    assert ran_again(records) == [f"{listed}{identity.FOLDER_LISTED} changed"]


def test_a_script_s_link_pointed_at_the_same_script_beside_other_modules_is_a_change(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """Python puts the folder of the file a script's path leads to first on ``sys.path``: the same script in
    another folder imports another ``helper``."""
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "helper.py").write_text(f"WHO = {name!r}\n")
        script(tmp_path / name, "real", "import helper\nprint(helper.WHO)\n")
    (tmp_path / "linked.py").symlink_to(tmp_path / "a" / "real.py")
    probe = Probe("linked", tmp_path / "linked.py", kind=Kind.SCRIPT, devices=("cpu",))
    record = run_alone(stub_torch_python, probe, tmp_path)
    assert printed(record) == ["a"], record.message
    assert changed_files(record.inputs[identity.READ]) == []
    (tmp_path / "linked.py").unlink()
    (tmp_path / "linked.py").symlink_to(tmp_path / "b" / "real.py")
    assert printed(run_alone(stub_torch_python, probe, tmp_path)) == ["b"]
    assert changed_files(record.inputs[identity.READ]) == [f"{tmp_path / 'linked.py'}{identity.LEADS_TO} changed"]


PLUGIN_DISTRIBUTIONS = {
    "a *.dist-info": ("src", "mylib-1.0.dist-info", "METADATA"),
    "an .egg folder's EGG-INFO": ("src/mylib-1.0.egg", "EGG-INFO", "PKG-INFO"),
    "a *.dist-info in a folder of a .pth file, where torch looked for its backends before the pair": (
        "src",
        "mylib-1.0.dist-info",
        "METADATA",
    ),
}


@pytest.mark.parametrize("case", sorted(PLUGIN_DISTRIBUTIONS))
def test_a_pytest_plugin_whose_distribution_appears_on_pytest_s_pythonpath_is_a_change(
    tmp_path: Path, case: str
) -> None:
    """pytest finds its plugins by their distributions' entry points, which ``importlib.metadata`` finds by listing
    each folder of ``sys.path`` (``pythonpath = src``): a distribution's metadata put there (``pip install -e .``)
    loads a plugin that changes how a test runs, whatever ``importlib.metadata`` listed before the pair began."""
    python = installed_pytest_python(tmp_path / "venv")
    folder, info, metadata = PLUGIN_DISTRIBUTIONS[case]
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    (project / folder).mkdir(parents=True)
    if "torch looked" in case:  # as torch >= 2.5 does as it is imported, in the worker
        stub = tmp_path / "stub"
        shutil.copytree(DATA / "stub_torch", stub, ignore=shutil.ignore_patterns("__pycache__"))
        with open(stub / "torch" / "__init__.py", "a") as init:
            init.write("\nimport importlib.metadata\nimportlib.metadata.entry_points(group='torch.backends')\n")
        [site_packages] = (tmp_path / "venv").glob("lib/python*/site-packages")
        (site_packages / "torch.pth").write_text(f"{stub}\n")
        (site_packages / "easy-install.pth").write_text(f"{project / folder}\n")  # pip install -e, of old
        (project / "pytest.ini").write_text("[pytest]\n")
    else:
        (project / "pytest.ini").write_text(f"[pytest]\npythonpath = {folder}\n")
    (project / folder / "mylib_plugin.py").write_text("import builtins\nbuiltins.flag = 1\n")
    (project / "tests" / "test_b.py").write_text(
        "import builtins\n\ndef test_state():\n    assert getattr(builtins, 'flag', None) is None\n"
    )
    probe = loader.probe_at(project / "tests" / "test_b.py", project)
    records = runner.run_cell(python, [Pair(probe, "cpu")], 30.0, workdir=project).records
    assert [(record.probe, record.outcome) for record in records] == [("tests/test_b.py::test_state", Outcome.PASS)]
    (project / folder / info).mkdir()
    (project / folder / info / metadata).write_text("Metadata-Version: 2.1\nName: mylib\nVersion: 1.0\n")
    (project / folder / info / "entry_points.txt").write_text("[pytest11]\nmylib = mylib_plugin\n")
    again = runner.run_cell(python, [Pair(probe, "cpu")], 30.0, workdir=project).records
    assert [(record.probe, record.outcome) for record in again] == [("tests/test_b.py::test_state", Outcome.FAIL)]
    assert ran_again(records) == [f"{project / folder}{identity.DISTRIBUTIONS_IN} changed"]


@pytest.mark.parametrize("where", ["probes/ beside a matrix in ci/", "probes_root: ../tests", "pytest -c config/"])
def test_each_test_keeps_a_record_of_its_own_whatever_root_its_node_id_is_from(tmp_path: Path, where: str) -> None:
    """A file of tests named by its stem (in ``probes/``) from a matrix elsewhere, or run under another pytest root
    (``-c config/pytest.ini`` in ``PYTEST_ADDOPTS``): each test is a record of its own, never two under one name."""
    python = installed_pytest_python(tmp_path / "venv")
    project = tmp_path / "project"
    for folder in ("probes", "ci", "tests", "config"):
        (project / folder).mkdir(parents=True)
    tests = "def test_grad():\n    assert False, 'grad is wrong'\n\ndef test_shape():\n    pass\n"
    (project / "probes" / "grads.py").write_text(tests)
    (project / "tests" / "test_grads.py").write_text(tests)
    (project / "config" / "pytest.ini").write_text("[pytest]\n")
    matrix = project / "ci" / "matrix.yaml"
    matrix.write_text("torch: [2.2.0]\n" + ("probes_root: ../tests\n" if "probes_root" in where else ""))
    seen = identity.pair_environment(python, {}, (), os.environ)
    if where == "pytest -c config/":
        probe = loader.probe_at(project / "tests" / "test_grads.py", project)
        seen = identity.pair_environment(python, {"PYTEST_ADDOPTS": "-c config/pytest.ini"}, (), os.environ)
        named, workdir = "tests/test_grads.py", project
    else:
        [probe] = loader.load_matrix(matrix, project / "probes").probes
        named, workdir = "../probes/grads.py", loader.load_matrix(matrix, project / "probes").run_from
    records = runner.run_cell(python, [Pair(probe, "cpu")], 30.0, variables_seen=seen, workdir=workdir).records
    assert [(record.probe, record.outcome) for record in records] == [
        (f"{named}::test_grad", Outcome.FAIL),
        (f"{named}::test_shape", Outcome.PASS),
    ]


def test_tests_depend_on_their_configuration_and_a_forked_child_of_a_test_writes_no_record(tmp_path: Path) -> None:
    python = pytest_python(tmp_path / "venv")
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    (project / "pytest.ini").write_text("[pytest]\nfilterwarnings = error\n")
    (project / "tests" / "conftest.py").write_text("")
    (project / "tests" / "test_forks.py").write_text(
        textwrap.dedent(
            """\
            import os

            def test_forks():
                pid = os.fork()
                if pid == 0:
                    assert False, "the child's outcome is none of the test's"
                os.waitpid(pid, 0)

            def test_after():
                pass
            """
        )
    )
    probe = loader.probe_at(project / "tests" / "test_forks.py", project)
    records = runner.run_cell(python, [Pair(probe, "cpu")], 30.0, workdir=tmp_path).records
    assert [(record.probe, record.outcome) for record in records] == [
        ("tests/test_forks.py::test_forks", Outcome.PASS),
        ("tests/test_forks.py::test_after", Outcome.PASS),
    ]
    # pytest's own files, outside the pair's environment here, are linked from uv's cache: a venv another test
    # builds meanwhile links them anew, which changes their inode's time, and says nothing of the project.
    read = {path: digest for path, digest in records[0].inputs[identity.READ].items() if path.startswith(f"{project}/")}
    assert {str(project / "pytest.ini"), str(project / "tests" / "conftest.py")} <= read.keys()
    assert changed_files(read) == []
    # pytest only asks whether each is there; pytest 9 asks for pytest.toml; an __init__.py changes the module's name.
    # pytest, outside the pair's environment here, is code of the pair's own: the folder it listed changed too.
    listed = f"{project / 'tests'}{identity.FOLDER_LISTED} changed"
    for name in ("tox.ini", "pytest.toml", "__init__.py"):
        (project / "tests" / name).write_text(
            "" if name.endswith(".py") else "[pytest]\npython_functions = nothing_*\n"
        )
        assert changed_files(read) == [listed, f"{project / 'tests' / name} appeared"]
        (project / "tests" / name).unlink()


PYTHON_37 = sorted(Path.home().glob(".pyenv/versions/3.7*/bin/python3.7"))


@pytest.mark.skipif(not PYTHON_37 or sys.platform == "win32", reason="needs pyenv's Python 3.7: no audit hooks")
def test_on_a_python_without_audit_hooks_every_file_of_the_probes_folder_counts_as_read(tmp_path: Path) -> None:
    python, site_packages = stub_torch_venv(tmp_path / "venv", str(PYTHON_37[0]))
    folder = tmp_path / "probes"
    folder.mkdir()
    (folder / "notes.txt").write_text("never opened\n")
    probe = script(folder, "plain", "print('hello')\n")
    record = run_alone(python, probe, tmp_path)
    assert record.outcome is Outcome.PASS, record.message
    assert sorted(record.inputs[identity.READ]) == [str(folder / "notes.txt"), str(folder / "plain.py")]


def test_a_link_a_file_not_there_and_a_file_opened_to_update_are_inputs_and_a_file_made_is_not(
    stub_torch_python: str, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    for name, text in {"a.txt": "good", "b.txt": "bad", "rw.txt": "0", "log.txt": ""}.items():
        (data / name).write_text(text)
    (data / "link.txt").symlink_to("a.txt")
    probe = script(
        tmp_path,
        "hostile",
        f"""\
        import os
        data = {str(data)!r}
        print(open(os.path.join(data, "link.txt")).read())
        try:
            open(os.path.join(data, "override.txt"))
        except FileNotFoundError:
            pass
        with open(os.path.join(data, "rw.txt"), "r+") as counter:
            counter.read()
        with open(os.path.join(data, "log.txt"), "a") as log:
            log.write("ran\\n")
        with open(os.path.join(data, "new.txt"), "w") as made:
            made.write("mine")
        open(os.path.join(data, "new.txt")).read()
        """,
    )
    record = run_alone(stub_torch_python, probe, tmp_path)
    read = record.inputs[identity.READ]
    assert {str(data / name) for name in ("link.txt", "override.txt", "rw.txt")} <= read.keys()
    assert not {str(data / name) for name in ("log.txt", "new.txt", "a.txt")} & read.keys()
    assert read[str(data / "override.txt")] is None
    (data / "link.txt").unlink()
    (data / "link.txt").symlink_to("b.txt")
    (data / "override.txt").write_text("bad")
    assert changed_files(read) == [f"{data / 'link.txt'} changed", f"{data / 'override.txt'} appeared"]


def test_a_module_imported_before_the_pair_began_counts_too(stub_torch_python: str, tmp_path: Path) -> None:
    """A sitecustomize on a PYTHONPATH the matrix sets is imported as the worker starts: it is read all the same."""
    injected = tmp_path / "inject"
    injected.mkdir()
    (injected / "sitecustomize.py").write_text("import os\nos.environ['INJECTED'] = 'yes'\n")
    probe = script(tmp_path, "sees", "import os\nprint(os.environ.get('INJECTED'))\n")
    seen = identity.pair_environment(stub_torch_python, {"PYTHONPATH": str(injected)}, (), os.environ)
    [record] = runner.run_cell(
        stub_torch_python, [Pair(probe, "cpu")], 30.0, variables_seen=seen, workdir=tmp_path
    ).records
    assert printed(record) == ["yes"]
    assert str(injected / "sitecustomize.py") in record.inputs[identity.READ]


MODULE_OF = 'def run(device):\n    return {{"outcome": "{}", "metrics": {{}}, "message": ""}}\n'
"""A ``run(device)`` probe's source, whose outcome is the one given."""


@pytest.mark.parametrize("replaced", ["an imported module", "the probe"])
def test_a_file_replaced_by_one_of_the_same_size_and_time_runs_as_its_new_self(
    stub_torch_python: str, tmp_path: Path, replaced: str
) -> None:
    """Python checks cached bytecode by the source's size and modification time (``cp -p``, a symlink switched): the
    pair ignores it, as its record names the new file."""
    if replaced == "the probe":
        path, probe = tmp_path / "plink.py", Probe("plink", tmp_path / "plink.py", kind=Kind.MODULE, devices=("cpu",))
    else:
        path, probe = tmp_path / "helper.py", script(tmp_path, "uses", "from helper import run\nprint(run('cpu'))\n")
    for outcome in ("pass", "fail"):
        path.write_text(MODULE_OF.format(outcome))
        os.utime(path, (1577836800, 1577836800))  # 2020-01-01, both times
        [record] = runner.run_cell(
            stub_torch_python, [Pair(probe, "cpu")], 30.0, pycache_prefix=tmp_path / "pycache", workdir=tmp_path
        ).records
    told = record.outcome.value if replaced == "the probe" else printed(record)[0]
    assert "fail" in told


@pytest.mark.parametrize("ending, limit", [("os.abort()", 60.0), ("time.sleep(60)", 3.0)], ids=["crash", "timeout"])
def test_a_pair_that_dies_or_is_stopped_read_what_it_read_until_then(
    stub_torch_python: str, tmp_path: Path, ending: str, limit: float
) -> None:
    """What decides a crash or a hang is often a file beside no probe: its record keeps it, so a change to it is;
    and what a forked child (a DataLoader's worker) asked about a file or a folder before the end counts too."""
    data = tmp_path / "elsewhere" / "data.txt"
    data.parent.mkdir()
    data.write_text("1\n")
    folder = tmp_path / "probes"
    folder.mkdir()
    source = f"""\
        import os, time
        if os.fork() == 0:
            os.path.getsize({str(data)!r}), os.listdir({str(data.parent)!r})
            os._exit(0)
        os.wait()
        if open({str(data)!r}).read().strip() == '1':
            {ending}
        """
    probe = script(folder, "hang", source)
    record = run_alone(stub_torch_python, probe, folder, limit=limit)
    assert record.outcome is (Outcome.CRASH if "abort" in ending else Outcome.TIMEOUT)
    read = record.inputs[identity.READ]
    assert read[str(data)] == identity.file_digest(data)
    assert str(probe.path) in read
    assert {f"{data}{identity.FILE_STATED}", f"{data.parent}{identity.FOLDER_LISTED}"} <= set(read)
    (data.parent / "new.txt").write_text("")
    assert changed_files(read) == [f"{data.parent}{identity.FOLDER_LISTED} changed"]


def test_a_file_a_pair_read_and_that_was_edited_before_it_crashed_is_said_changed(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """The journal keeps how each file was when it was read: one edited before the crash no longer holds that."""
    data, marker = tmp_path / "data.txt", tmp_path / "has-read"
    data.write_text("1\n")
    source = f"""\
        import os, time
        open({str(data)!r}).read()
        open({str(marker)!r}, "w").close()
        while open({str(data)!r}).read() == "1\\n":  # until the test has edited it
            time.sleep(0.05)
        os.abort()
        """
    (tmp_path / "probes").mkdir()
    probe = script(tmp_path / "probes", "crashes", source)
    editor = threading.Thread(target=lambda: (wait_for(marker), data.write_text("2\n")))
    editor.start()
    record = run_alone(stub_torch_python, probe, tmp_path, limit=120.0)
    editor.join()
    assert record.outcome is Outcome.CRASH
    assert changed_files(record.inputs[identity.READ]) == [f"{data} changed"]


def test_a_module_a_pth_file_imported_as_python_started_is_read_by_a_pair_that_crashed(tmp_path: Path) -> None:
    python, site_packages = stub_torch_venv(tmp_path / "venv")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "extmod.py").write_text("VALUE = 1\n")
    (site_packages / "zz_ext.pth").write_text(f"{outside}\nimport extmod\n")
    folder = tmp_path / "probes"
    folder.mkdir()
    probe = script(folder, "crashes", "import os, extmod\nif extmod.VALUE == 1:\n    os.abort()\n")
    record = run_alone(python, probe, folder)
    assert record.outcome is Outcome.CRASH
    assert str(outside / "extmod.py") in record.inputs[identity.READ]


def wait_for(path: Path, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)


def test_a_pair_looks_each_module_up_once(stub_torch_python: str, tmp_path: Path) -> None:
    """Compiling from sources stands in PathFinder's place, after the built-in and frozen finders, not beside it."""
    (tmp_path / "beside.py").write_text("VALUE = 1\n")
    probe = script(
        tmp_path,
        "imports",
        """\
        import importlib.machinery, sys
        finders = [getattr(finder, "__name__", type(finder).__name__) for finder in sys.meta_path]
        looked_up = []
        real = importlib.machinery.PathFinder.find_spec.__func__

        def counted(cls, name, path=None, target=None):
            looked_up.append(name)
            return real(cls, name, path, target)

        importlib.machinery.PathFinder.find_spec = classmethod(counted)
        import beside, colorsys  # one from beside the script, one from the standard library
        print(looked_up)
        print(finders.index("FromSources") + 1 == finders.index("PathFinder"))
        """,
    )
    record = run_alone(stub_torch_python, probe, tmp_path)
    assert printed(record) == ["['beside', 'colorsys']", "True"], record.message


def test_what_a_forked_child_of_the_pair_reads_counts_too(stub_torch_python: str, tmp_path: Path) -> None:
    """A DataLoader's workers are forked from the pair's process: the files they open are the pair's inputs."""
    (tmp_path / "shard.txt").write_text("data\n")
    probe = script(
        tmp_path,
        "forks",
        f"""\
        import os
        pid = os.fork()
        if pid == 0:
            open({str(tmp_path / "shard.txt")!r}).read()
            os._exit(0)
        os.waitpid(pid, 0)
        print("done")
        """,
    )
    record = run_alone(stub_torch_python, probe, tmp_path)
    assert printed(record) == ["done"]
    assert str(tmp_path / "shard.txt") in record.inputs[identity.READ]


EXTENSION = """#include <Python.h>
static PyObject *value(PyObject *self, PyObject *args) { return PyLong_FromLong(VALUE); }
static PyMethodDef methods[] = {{"value", value, METH_NOARGS, ""}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "ext", NULL, -1, methods};
PyMODINIT_FUNC PyInit_ext(void) { return PyModule_Create(&module); }
"""


@pytest.mark.skipif(not CAN_BUILD_LIBRARIES, reason="needs a C compiler making shared libraries (cc)")
def test_an_extension_module_the_pair_imported_and_a_program_it_ran_rebuilt_is_an_input_as_it_was_imported(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """``ext.so`` imported, then rebuilt by a program the pair runs (as a build step of a test may): what the pair
    ran was the file as it was imported, and the record is not current."""
    for value in (1, 2):
        (tmp_path / f"ext{value}.c").write_text(EXTENSION.replace("VALUE", str(value)))
    include = subprocess.run([stub_torch_python, "-c", "import sysconfig; print(sysconfig.get_paths()['include'])"],
                             capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    build = ["cc", "-shared", "-fPIC", "-I", include, "-o", "ext.so"]
    subprocess.run([*build, "ext1.c"], cwd=tmp_path, check=True)
    rebuild = [*build, "ext2.c"]
    source = f"import subprocess\nimport ext\nvalue = ext.value()\nsubprocess.run({rebuild!r})\nprint(value)\n"
    record = run_alone(stub_torch_python, script(tmp_path, "uses_ext", source), tmp_path)
    assert printed(record) == ["1"], record.message
    assert changed_files(record.inputs[identity.READ]) == [f"{tmp_path / 'ext.so'} changed"]


@pytest.mark.skipif(not CAN_BUILD_LIBRARIES, reason="needs a C compiler making shared libraries (cc)")
def test_a_shared_library_loaded_by_its_path_is_an_input_and_rebuilt_makes_the_record_stale(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """`torch.ops.load_library` loads a custom operator's library with ctypes, which opens it without `open`."""
    built = tmp_path / "build"
    built.mkdir()
    library = build_library(built, 1)
    probe = script(
        tmp_path,
        "loads",
        f"""\
        import ctypes, ctypes.util
        print(ctypes.CDLL({str(library)!r}).value())
        try:
            ctypes.CDLL({str(built / "libgone.so")!r})
        except OSError:
            pass
        ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")  # by name: the system's, looked up by the linker
        """,
    )
    record = run_alone(stub_torch_python, probe, tmp_path)
    assert printed(record) == ["1"], record.message
    read = files_in(record, tmp_path)
    assert read == {
        str(tmp_path / "loads.py"): identity.file_digest(tmp_path / "loads.py"),
        str(library): identity.file_digest(library),
        str(built / "libgone.so"): None,
    }
    assert not [path for path in record.inputs[identity.READ] if "libm" in os.path.basename(path)]
    build_library(built, 2)
    assert changed_files(read) == [f"{library} changed"]


def test_a_module_loaded_by_its_path_from_cached_bytecode_is_read_and_so_is_a_module_of_bytecode_alone(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """A loader that runs a module from cached bytecode never opens its source, and one loaded by path is in no
    ``sys.modules``: the code it runs names its file, which is read all the same."""
    loaded, alone = tmp_path / "loaded.py", tmp_path / "alone_src.py"
    loaded.write_text("VALUE = 'loaded'\n")
    alone.write_text("VALUE = 'alone'\n")
    compiled = [
        f"py_compile.compile({str(path)!r}, cfile={target!r})"
        for path, target in ((loaded, None), (alone, str(tmp_path / "alone.pyc")))
    ]
    build = runner.run_cell(
        stub_torch_python,
        [Pair(script(tmp_path, "compiles", f"import py_compile\n{chr(10).join(compiled)}\n"), "cpu")],
        30.0,
        workdir=tmp_path,
    ).records
    assert build[0].outcome is Outcome.PASS, build[0].message
    alone.unlink()  # alone.pyc is a module of its own now
    probe = script(
        tmp_path,
        "by_path",
        """\
        import importlib.util
        spec = importlib.util.spec_from_file_location("loaded", "loaded.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        import alone
        print(module.VALUE, alone.VALUE)
        """,
    )
    record = run_alone(stub_torch_python, probe, tmp_path)
    assert printed(record) == ["loaded alone"], record.message
    assert str(loaded) in record.inputs[identity.READ] and str(tmp_path / "alone.pyc") in record.inputs[identity.READ]


def test_a_file_in_the_virtual_environments_folder_but_outside_its_site_folders_is_read(tmp_path: Path) -> None:
    """A project may live in its environment's folder (`python -m venv .` in its root, probe-installed of it): its
    files count; the packages in the site folders are the environment's identity."""
    python, site_packages = bare_venv(tmp_path / "project")
    (site_packages / "torch.pth").write_text(str(DATA / "stub_torch") + "\n")
    (tmp_path / "project" / "data.txt").write_text("kept")
    probe = script(tmp_path / "project", "reads_data", "print(open('data.txt').read())\n")
    record = run_alone(python, probe, tmp_path / "project")
    assert printed(record) == ["kept"], record.message
    (tmp_path / "project" / "data.txt").write_text("edited")
    assert changed_files(record.inputs[identity.READ]) == [f"{tmp_path / 'project' / 'data.txt'} changed"]


def test_a_file_beside_the_interpreters_standard_library_but_outside_it_is_read(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """Only the standard library is the interpreter's own: the rest of its prefix (``/usr/local``) is anyone's."""
    probe = script(
        tmp_path,
        "excluded",
        """\
        import json, sys, sysconfig
        sys.path.insert(0, sys.argv[0].rpartition("/")[0])
        from torchmatrix_worker.reads import excluded_folders
        print(json.dumps([sys.base_prefix, sysconfig.get_path("stdlib"), excluded_folders("/nowhere")]))
        """,
    )
    shutil.copytree(Path(runner.WORKER).with_name("torchmatrix_worker"), tmp_path / "torchmatrix_worker")
    record = run_alone(stub_torch_python, probe, tmp_path)
    import json

    base, stdlib, excluded = json.loads(printed(record)[0])
    assert stdlib in excluded and base not in excluded


@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="needs /dev/shm (Linux's shared memory folder)")
def test_a_file_of_content_counts_wherever_it_is_a_link_by_its_own_path_and_what_the_kernel_makes_does_not(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """A data set in /dev/shm is a file like any; /dev/null, /dev/urandom and /proc's entries are the kernel's."""
    shared = Path(tempfile.mkdtemp(dir="/dev/shm"))
    try:
        (shared / "x.txt").write_text("a")
        (tmp_path / "cfg-link.txt").symlink_to(shared / "x.txt")
        probe = script(
            tmp_path,
            "kernels",
            f"""\
            for path in ({str(shared / "x.txt")!r}, "cfg-link.txt", "/proc/self/status", "/dev/null"):
                open(path).read()
            open("/dev/urandom", "rb").read(4)
            """,
        )
        record = run_alone(stub_torch_python, probe, tmp_path)
        read = record.inputs[identity.READ]
        assert {str(shared / "x.txt"), str(tmp_path / "cfg-link.txt")} <= read.keys(), record.message
        assert not [path for path in read if path.startswith(("/proc/", "/sys/", "/dev/null", "/dev/urandom"))]
        (shared / "x.txt").write_text("b")
        assert changed_files(read) == [f"{shared / 'x.txt'} changed", f"{tmp_path / 'cfg-link.txt'} changed"]
    finally:
        shutil.rmtree(shared)


def test_a_file_the_pair_updates_counts_as_it_found_it_and_its_record_is_never_current(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """What a file held before the pair added to it decided what it printed; a file it only wrote is its own."""
    for name in ("state.txt", "state2.txt", "log.txt"):
        (tmp_path / name).write_text(f"{name} 1\n")
    before = {name: identity.file_digest(tmp_path / name) for name in ("state.txt", "state2.txt")}
    probe = script(
        tmp_path,
        "updates",
        """\
        with open("state2.txt", "r+") as state:
            print(state.readline().strip())
            state.write("2\\n")
        with open("state.txt", "a") as state:
            state.write("state.txt 2\\n")
        print(open("state.txt").read().split())
        with open("log.txt", "a") as log:
            log.write("ran\\n")
        with open("new.txt", "a+") as made:
            made.write("mine")
        """,
    )
    record = run_alone(stub_torch_python, probe, tmp_path)
    assert printed(record) == ["state2.txt 1", "['state.txt', '1', 'state.txt', '2']"], record.message
    read = {Path(path).name: digest for path, digest in record.inputs[identity.READ].items()}
    assert {name: read.get(name) for name in before} == before
    assert not {"log.txt", "new.txt"} & read.keys()
    assert changed_files(record.inputs[identity.READ]) == [
        f"{tmp_path / 'state.txt'} changed", f"{tmp_path / 'state2.txt'} changed"
    ]  # fmt: skip


def test_a_file_dated_ahead_but_there_before_the_pair_is_read_and_one_a_helper_makes_is_not(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """The time a file was given says nothing of who wrote it: the kernel's time of its last change does."""
    ahead = tmp_path / "ahead.txt"
    ahead.write_text("given a time to come")
    soon = time.time() + 2
    os.utime(ahead, (soon, soon))  # touch -d: within the pair's run, yet written before it
    probe = script(
        tmp_path,
        "waits",
        """\
        import os, subprocess, sys, time
        while time.time() <= os.stat("ahead.txt").st_mtime:
            time.sleep(0.05)
        print(open("ahead.txt").read())
        subprocess.run([sys.executable, "-c", "open('made.txt', 'w').write('by a helper')"], check=True)
        print(open("made.txt").read())
        """,
    )
    record = run_alone(stub_torch_python, probe, tmp_path)
    assert printed(record) == ["given a time to come", "by a helper"], record.message
    read = record.inputs[identity.READ]
    assert read.get(str(ahead)) == identity.file_digest(ahead)
    assert str(tmp_path / "made.txt") not in read


def test_a_file_changed_by_another_program_after_the_pair_read_it_makes_its_record_stale(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """What the pair read is no longer there to hash: the record says so, rather than what the file holds now."""
    (tmp_path / "data.txt").write_text("read")
    probe = script(
        tmp_path,
        "rewritten",
        """\
        import subprocess, sys
        print(open("data.txt").read())
        subprocess.run([sys.executable, "-c", "open('data.txt', 'w').write('rewritten')"], check=True)
        """,
    )
    record = run_alone(stub_torch_python, probe, tmp_path)
    assert printed(record) == ["read"], record.message
    assert changed_files(record.inputs[identity.READ]) == [f"{tmp_path / 'data.txt'} changed"]


def test_a_module_object_whose_file_is_no_absolute_path_was_loaded_from_no_file(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """torch's ``torch.ops`` and ``torch.classes`` say ``_ops.py`` and ``_classes.py``: no file of the workdir."""
    (tmp_path / "_ops.py").write_text("# anyone's\n")
    probe = script(
        tmp_path,
        "namespaces",
        """\
        import sys, types

        class Ops(types.ModuleType):
            __file__ = "_ops.py"

        sys.modules["fake.ops"] = Ops("fake.ops")
        print("made")
        """,
    )
    record = run_alone(stub_torch_python, probe, tmp_path)
    assert printed(record) == ["made"], record.message
    assert str(tmp_path / "_ops.py") not in record.inputs[identity.READ]


def test_a_journal_line_is_json_whatever_the_pair_made_of_json_dumps(tmp_path: Path) -> None:
    """A test that mocks ``json.dumps`` while a child it forked reads a file: the journal names the file; a line that
    holds no entry (a journal the pair wrote in) is a reply of what was read that is not all told."""
    data = tmp_path / "data.txt"
    data.write_text("1\n")
    watcher = textwrap.dedent(
        f"""\
        import json, os, sys
        sys.path.insert(0, {str(runner.WORKER.parent)!r})
        from torchmatrix_worker.reads import FilesRead
        reads = FilesRead({str(tmp_path / "scratch")!r}, {str(tmp_path / "journal")!r})
        json.dumps = lambda *given, **options: '"mocked"'
        if os.fork() == 0:
            open({str(data)!r}).read()
            os._exit(0)
        os.wait()
        """
    )
    subprocess.run([sys.executable, "-c", watcher], check=True)
    lines = (tmp_path / "journal").read_bytes().splitlines()
    assert str(data) in [path for _, path, _ in reads.entries_in(lines)]
    with pytest.raises(ValueError):
        reads.entries_in([*lines, b'"mocked"'])


def test_a_journal_that_cannot_be_written_loses_no_read_of_a_pair_that_ends_by_itself(tmp_path: Path) -> None:
    """A full disk or a closed folder: the journal is for a crash, and the pair's own list is whole."""
    data = tmp_path / "data.txt"
    data.write_text("1\n")
    watcher = textwrap.dedent(
        f"""\
        import sys
        sys.path.insert(0, {str(runner.WORKER.parent)!r})
        from torchmatrix_worker.reads import FilesRead
        reads = FilesRead({str(tmp_path / "scratch")!r}, {str(tmp_path / "no-folder" / "journal")!r})
        open({str(data)!r}).read()
        print({str(data)!r} in [path for _, path, _ in reads.entries()])
        """
    )
    completed = subprocess.run([sys.executable, "-c", watcher], capture_output=True, text=True, check=True)
    assert completed.stdout.split() == ["True"]


UNWRITTEN = {
    "by a forked child": (
        "reading, writing = os.pipe()\nif os.fork() == 0:\n    limit()\n"
        "    os.write(writing, open('data.txt', 'rb').read())\n    os._exit(0)\n"
        "os.wait()\nassert os.read(reading, 100) == b'data'\n",
        Outcome.PASS,
    ),
    "by the pair's process, which then died": (
        "limit()\nassert open('data.txt').read() == 'data'\nos.kill(os.getpid(), signal.SIGKILL)\n",
        Outcome.CRASH,
    ),
    "by the pair's process, which then changed it unheard and ended by itself": (
        "soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)\nlimit()\ntext = open('data.txt').read()\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))\nos.symlink('data.txt', 'alias')\n"
        "open('alias', 'w').write('new')\nos.remove('alias')\nos.utime('data.txt')\nassert text == 'data'\n",
        Outcome.PASS,
    ),
    "by a forked child whose descriptors it closed, under an audit hook that refuses writes": (
        "import sys\ndef refuse(event, arguments):\n    if event == 'open' and arguments[2] and arguments[2] & 3:\n"
        "        raise RuntimeError('no writes')\nsys.addaudithook(refuse)\nreading, writing = os.pipe()\n"
        "if os.fork() == 0:\n    os.closerange(3, reading)\n    os.closerange(writing + 1, 1024)\n"
        "    os.write(writing, open('data.txt', 'rb').read())\n    os._exit(0)\n"
        "os.wait()\nassert os.read(reading, 100) == b'data'\n",
        Outcome.PASS,
    ),
    "by a forked child whose journal's line its file size limit cut short": (
        "reading, writing = os.pipe()\nif os.fork() == 0:\n"
        "    journal = [int(fd) for fd in os.listdir('/proc/self/fd')\n"
        "               if 'read-' in os.path.basename(os.path.realpath('/proc/self/fd/' + fd))][0]\n"
        "    size = os.fstat(journal).st_size\n"
        "    resource.setrlimit(resource.RLIMIT_FSIZE, (size + 20, resource.RLIM_INFINITY))\n"
        "    os.write(writing, open('data.txt', 'rb').read())\n    os._exit(0)\n"
        "os.wait()\nassert os.read(reading, 100) == b'data'\n",
        Outcome.PASS,
    ),
    "by the pair's process at the edge of its recursion limit": (
        "import sys\ndef deep(n):\n    if n == 0:\n        return None\n    try:\n        found = deep(n - 1)\n"
        "    except RecursionError:\n        found = None\n    if found is None:\n        try:\n"
        "            with open('data.txt') as f:\n                return f.read()\n"
        "        except RecursionError:\n            return None\n    return found\n"
        "assert deep(sys.getrecursionlimit() + 10) == 'data'\n",
        Outcome.PASS,
    ),
}


@pytest.mark.parametrize("case", sorted(UNWRITTEN))
def test_a_record_whose_pair_could_not_write_down_what_it_read_is_never_current(
    stub_torch_python: str, tmp_path: Path, case: str
) -> None:
    """A process of the pair that could not write a file it read down (a file size limit, as a full disk; an audit
    hook of its own that refuses the journal's open; a line cut short) or whose read this hook could not hear (at
    the edge of its recursion limit): the record says it does not know what its pair read."""
    (tmp_path / "data.txt").write_text("data")
    source, outcome = UNWRITTEN[case]
    limits = "import os, resource, signal\ndef limit():\n    resource.setrlimit(resource.RLIMIT_FSIZE, (0, -1))\n"
    record = run_alone(stub_torch_python, script(tmp_path, "unwritten", limits + source), tmp_path)
    assert record.outcome is outcome, record.message
    assert record.inputs[identity.READ] is None
    of_a_run = identity.Identity.stored({**record.inputs, "environment": {}})
    assert [freshness.words(change) for change in of_a_run.changed_files()] == [
        "the record does not say what its pair read"
    ]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_folder_too_large_to_list_that_a_forked_child_moved_leaves_what_the_pair_read_untold(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """A forked child moves a folder of more files than are listed (a DataLoader's worker claiming a data set) into
    the temporary folder, its parent reads one there and moves the folder back: the record does not say what its
    pair read, rather than hold the child up."""
    (tmp_path / "many").mkdir()
    for number in range(reads.MAX_FILES_MOVED + 1):
        (tmp_path / "many" / str(number)).write_text(str(number))
    source = (
        "import os, tempfile\nwork = os.path.join(tempfile.mkdtemp(), 'many')\npid = os.fork()\nif pid == 0:\n"
        "    os.rename('many', work)\n    os._exit(0)\nos.waitpid(pid, 0)\n"
        "print(open(os.path.join(work, '7')).read())\nos.rename(work, 'many')\n"
    )
    record = run_alone(stub_torch_python, script(tmp_path, "claims", source), tmp_path)
    assert printed(record) == ["7"], record.message
    assert record.inputs[identity.READ] is None


def test_a_shared_input_a_pair_wrote_then_crashed_is_an_input_as_it_left_it(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """A sweep's store is written by one release and read by the others: a pair that dies still names what it left
    there, so that a later change to the store makes the record stale."""
    shared = tmp_path / "inputs"
    shared.mkdir()
    stored = shared / "samples.json"
    (tmp_path / "probes").mkdir()
    probe = script(tmp_path / "probes", "crashes", f"import os\nopen({str(stored)!r}, 'w').write('[1]')\nos.abort()\n")
    seen = {**identity.pair_environment(stub_torch_python, {}, (), os.environ), "TORCHMATRIX_INPUTS": str(shared)}
    [record] = runner.run_cell(
        stub_torch_python, [Pair(probe, "cpu")], 30.0, variables_seen=seen, workdir=tmp_path
    ).records
    assert record.outcome is Outcome.CRASH
    assert record.inputs[identity.READ][str(stored)] == identity.file_digest(stored)


def test_what_a_pair_reads_by_ways_that_once_hid_it_is_an_input(stub_torch_python: str, tmp_path: Path) -> None:
    """A file an exclusive open found there and then read, a path through a link and `..`, a shared input looked for
    and not there: each is what the pair read, so each change makes the record stale."""
    shared = tmp_path / "inputs"
    shared.mkdir()
    (tmp_path / "other" / "sub").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "other" / "sub")
    for path, text in (("cache.txt", "1.0"), ("data.txt", "here"), ("other/data.txt", "beside the target")):
        (tmp_path / path).write_text(text)
    probe = script(
        tmp_path,
        "hides",
        f"""\
        import os
        try:
            open("cache.txt", "x").write("1.0")
        except FileExistsError:
            pass
        print(open("cache.txt").read(), open("link/../data.txt").read(), os.path.exists({str(shared / "o.txt")!r}))
        print(os.environ["TORCHMATRIX_PROBE_OPTIONS"])
        """,
    )
    probe = dataclasses.replace(probe, options={"scale": 2})
    other = dataclasses.replace(script(tmp_path, "other", "print(1)\n"), options={"tol": 0.5})
    seen = {**identity.pair_environment(stub_torch_python, {}, (), os.environ), "TORCHMATRIX_INPUTS": str(shared)}
    record, _ = runner.run_cell(
        stub_torch_python, [Pair(probe, "cpu"), Pair(other, "cpu")], 30.0, variables_seen=seen, workdir=tmp_path
    ).records
    assert printed(record) == ["1.0 beside the target False", '{"hides": {"scale": 2}}'], record.message
    read = record.inputs[identity.READ]
    assert changed_files(read) == []
    (tmp_path / "cache.txt").write_text("5.0")
    (tmp_path / "other" / "data.txt").write_text("changed")
    (shared / "o.txt").write_text("3.0")
    assert changed_files(read) == [
        f"{tmp_path / 'cache.txt'} changed",
        f"{tmp_path / 'cache.txt'} (what os.stat says of it) changed",  # the exclusive open failed for it
        f"{shared / 'o.txt'} appeared",
        f"{tmp_path / 'link' / '..' / 'data.txt'} changed",
    ]


def run_mytool(python: str, tmp_path: Path, not_runnable_first: bool = False) -> tuple[Path, Path, object]:
    """A script that runs ``mytool`` along a PATH of ``first/`` then ``second/``, whose runnable ``mytool`` says 1.0
    (``first/`` holding one that may not be run, where ``not_runnable_first``): the two folders and what it read."""
    first, second = tmp_path / "first", tmp_path / "second"
    for folder in (first, second):
        folder.mkdir()
    if not_runnable_first:
        (first / "mytool").write_text("#!/bin/sh\necho 3.0\n")
    (second / "mytool").write_text("#!/bin/sh\necho 1.0\n")
    (second / "mytool").chmod(0o755)
    probe = script(
        tmp_path,
        "starts",
        f"""\
        import subprocess
        print(subprocess.run(["mytool"], env={{"PATH": {f"{first}:{second}"!r}}}, stdout=subprocess.PIPE).stdout)
        """,
    )
    record = run_alone(python, probe, tmp_path)
    assert printed(record) == ["b'1.0\\n'"], record.message
    read = record.inputs[identity.READ]
    assert changed_files(read) == []
    return first, second, read


def test_a_program_a_pair_starts_is_an_input_by_where_its_name_was_looked_for(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """A tool found along PATH decides what the pair saw: edited, or another put where it was looked for first."""
    first, second, read = run_mytool(stub_torch_python, tmp_path)
    (second / "mytool").write_text("#!/bin/sh\necho 5.0\n")
    (first / "mytool").write_text("#!/bin/sh\necho 3.0\n")
    assert changed_files(read) == [f"{first / 'mytool'} appeared", f"{second / 'mytool'} changed"]


def test_a_program_made_runnable_or_not_is_a_change(stub_torch_python: str, tmp_path: Path) -> None:
    """Whether a file may be run decides what runs: a tool first on PATH that was not runnable and is made so runs
    instead of the one the pair ran, and the one it ran, made not runnable, runs no more; neither changes a byte."""
    first, second, read = run_mytool(stub_torch_python, tmp_path, not_runnable_first=True)
    (first / "mytool").chmod(0o755)
    assert changed_files(read) == [f"{first / 'mytool'} was made runnable"]
    (first / "mytool").chmod(0o644)
    (second / "mytool").chmod(0o644)
    assert changed_files(read) == [f"{second / 'mytool'} was made not runnable"]


def test_the_watch_changes_nothing_a_pair_does_and_misses_no_thread_of_it(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """os.stat watched still pickles and binds as the built-in does; a thread's lookups never hide the main thread's
    reads; a program posix_spawn runs by a bare name is the one in the folder the pair runs from."""
    tool = tmp_path / "mytool"
    tool.write_text("#!/bin/sh\nexit 3\n")
    tool.chmod(0o755)
    (tmp_path / "data.txt").write_text("v1")
    probe = script(
        tmp_path,
        "watched",
        """\
        import os, pickle, threading

        class Holder:
            look = os.stat

        assert pickle.loads(pickle.dumps(os.stat)) is os.stat and Holder().look(".").st_mode
        stop = []
        def looks():
            while not stop:
                os.path.exists("/no-such-file-here")
        thread = threading.Thread(target=looks)
        thread.start()
        seen = [open("data.txt").read() for _ in range(50)] + [os.path.exists("th_%d.txt" % i) for i in range(300)]
        stop.append(True)
        thread.join()
        pid = os.posix_spawn("mytool", ["mytool"], {})
        print(seen[0], os.waitpid(pid, 0)[1] >> 8)
        """,
    )
    record = run_alone(stub_torch_python, probe, tmp_path, limit=60.0)
    assert printed(record) == ["v1 3"], record.message
    read = record.inputs[identity.READ]
    assert {str(tmp_path / "data.txt"), str(tool)} <= read.keys()
    assert {str(tmp_path / f"th_{i}.txt") for i in range(300)} <= read.keys()


PYTHON_310 = sorted(Path.home().glob(".pyenv/versions/3.10*/bin/python3.10"))


@pytest.mark.skipif(not PYTHON_310, reason="needs pyenv's Python 3.10: pathlib's own accessor")
def test_on_python_3_10_a_file_pathlib_looks_for_is_heard(tmp_path: Path) -> None:
    """pathlib before 3.11 calls the os.stat it held when it was imported: it is watched there too."""
    python, site_packages = stub_torch_venv(tmp_path / "venv", str(PYTHON_310[0]))
    probe = script(tmp_path, "flag", "from pathlib import Path\nprint(Path('flag.txt').is_file())\n")
    record = run_alone(python, probe, tmp_path)
    assert printed(record) == ["False"], record.message
    read = record.inputs[identity.READ]
    (tmp_path / "flag.txt").write_text("")
    assert changed_files(read) == [f"{tmp_path / 'flag.txt'} appeared"]


def test_a_file_a_pair_asked_about_counts_there_or_not(stub_torch_python: str, tmp_path: Path) -> None:
    """`os.path.exists`, `Path.is_file` and `os.access` decide what a script does: a file they found going, or one
    they did not find appearing, is a change."""
    (tmp_path / "flag.txt").write_text("")
    probe = script(
        tmp_path,
        "asks",
        """\
        import inspect, os, posix
        from pathlib import Path
        print(os.path.exists("flag.txt"), Path("weights.pt").is_file(), os.access("fx.txt", os.F_OK))
        print(inspect.signature(os.stat) == inspect.signature(posix.stat))
        """,
    )
    record = run_alone(stub_torch_python, probe, tmp_path)
    assert printed(record) == ["True False False", "True"], record.message
    read = record.inputs[identity.READ]
    assert changed_files(read) == []
    (tmp_path / "flag.txt").unlink()
    (tmp_path / "fx.txt").write_text("")
    assert changed_files(read) == [
        f"{tmp_path / 'flag.txt'}{identity.FILE_STATED} is gone",
        f"{tmp_path / 'fx.txt'} appeared",
    ]


def test_a_bare_folder_where_a_module_was_looked_for_is_a_change(stub_torch_python: str, tmp_path: Path) -> None:
    """An import that finds nothing takes a folder of the name for a namespace package: its appearing is a change."""
    probe = script(tmp_path, "optional", "try:\n    import apex_x\nexcept ImportError:\n    print('none')\n")
    record = run_alone(stub_torch_python, probe, tmp_path)
    assert printed(record) == ["none"], record.message
    read = record.inputs[identity.READ]
    (tmp_path / "apex_x").mkdir()
    assert changed_files(read) == [f"{tmp_path / 'apex_x'}{identity.MODULE_LOOKED_FOR} appeared"]


def test_what_the_pairs_code_asks_of_a_file_counts_by_all_os_stat_says_and_a_folder_it_lists_by_its_names(
    tmp_path: Path,
) -> None:
    """A script decides by a file's size, its time, a link's target or the files of a folder (a test parametrized
    by them): each changed is a change. A package of the environment asking counts by whether the file is there."""
    python, site_packages = stub_torch_venv(tmp_path / "venv")
    (site_packages / "installed.py").write_text("import os\n\ndef size(path):\n    return os.path.getsize(path)\n")
    (tmp_path / "sz.txt").write_text("aaaa")
    (tmp_path / "installed.txt").write_text("aaaa")
    (tmp_path / "mt.txt").write_text("m")
    os.utime(tmp_path / "mt.txt", (631152000, 631152000))  # 1990
    (tmp_path / "lnk").symlink_to("target_a")
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "helper.py").write_text("")
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "a.json").write_text("{}")
    (tmp_path / "walked").mkdir()
    (tmp_path / "fs.txt").write_text("f")
    (tmp_path / "b.txt").hardlink_to(tmp_path / "fs.txt")
    probe = script(
        tmp_path,
        "stats",
        """\
        import glob, os, sys
        sys.path.insert(0, os.path.abspath("lib"))
        import installed, helper
        print(os.path.getsize("sz.txt"), os.path.getmtime("mt.txt") < 1e9, os.readlink("lnk"), glob.glob("cases/*"))
        print(installed.size("installed.txt"))
        with open("fs.txt") as opened:
            print(os.fstat(opened.fileno()).st_size, os.path.samefile("fs.txt", "b.txt"), list(os.fwalk("walked")))
        """,
    )
    record = run_alone(python, probe, tmp_path)
    assert printed(record)[:2] == ["4 True target_a ['cases/a.json']", "4"], record.message
    assert printed(record)[2].startswith("1 True [('walked', [], [], "), record.message
    read = record.inputs[identity.READ]
    assert changed_files(read) == []
    (tmp_path / "sz.txt").write_text("aaaaaaaa")
    (tmp_path / "installed.txt").write_text("aaaaaaaa")
    os.utime(tmp_path / "mt.txt")
    (tmp_path / "lnk").unlink()
    (tmp_path / "lnk").symlink_to("target_b")
    (tmp_path / "cases" / "b.json").write_text("{}")
    (tmp_path / "walked" / "new.txt").write_text("")
    (tmp_path / "b.txt").unlink()
    shutil.copy2(tmp_path / "fs.txt", tmp_path / "b.txt")  # the same bytes and times, no longer the same file
    assert changed_files(read) == [
        f"{tmp_path / 'b.txt'}{identity.FILE_STATED} changed",
        f"{tmp_path / 'cases'}{identity.FOLDER_LISTED} changed",
        f"{tmp_path / 'fs.txt'}{identity.FILE_STATED} changed",
        f"{tmp_path / 'lnk'}{identity.FILE_STATED} changed",
        f"{tmp_path / 'mt.txt'}{identity.FILE_STATED} changed",
        f"{tmp_path / 'sz.txt'}{identity.FILE_STATED} changed",
        f"{tmp_path / 'walked'}{identity.FOLDER_LISTED} changed",
    ]
    assert f"{tmp_path / 'installed.txt'}{identity.FILE_THERE}" in read
    (tmp_path / "lib" / "other.py").write_text("")
    listed = {f"{tmp_path / name}{identity.FOLDER_LISTED}" for name in ("cases", "walked")}
    assert not [path for path in read if path.endswith(identity.FOLDER_LISTED) and path not in listed], (
        "the import system's listings count by module"
    )


def test_a_sitecustomize_put_in_the_environment_after_the_run_is_a_change(tmp_path: Path) -> None:
    """``site`` imports a ``sitecustomize`` as the interpreter starts, as it runs the ``.pth`` files: one put in the
    environment's site folder changes what every pair sees, though no wheel installed it."""
    python, site_packages = stub_torch_venv(tmp_path / "venv")
    probe = script(tmp_path, "plain", "import sys\nprint('sitecustomize' in sys.modules)\n")
    record = run_alone(python, probe, tmp_path)
    assert printed(record) == ["False"], record.message
    read = record.inputs[identity.READ]
    (site_packages / "sitecustomize.py").write_text("")
    assert changed_files(read) == [f"{site_packages / 'sitecustomize'}{identity.MODULE_LOOKED_FOR} appeared"]


def test_a_sitecustomize_of_the_environment_edited_after_the_run_is_a_change(tmp_path: Path) -> None:
    """The ``sitecustomize`` of the environment's site folder, which ``site`` ran as the pair's interpreter started,
    counts by its content, though no wheel installed it: one edited changes what every pair sees."""
    python, site_packages = stub_torch_venv(tmp_path / "venv")
    (site_packages / "sitecustomize.py").write_text("import os\nos.environ['MARK'] = '1'\n")
    (tmp_path / "project").mkdir()
    probe = script(tmp_path / "project", "marked", "import os\nprint(os.environ.get('MARK'))\n")
    record = run_alone(python, probe, tmp_path / "project")
    assert printed(record) == ["1"], record.message
    assert is_current(record), record.inputs[identity.READ]
    (site_packages / "sitecustomize.py").write_text("import os\nos.environ['MARK'] = 'edited'\n")
    assert changed_files(record.inputs[identity.READ]) == [f"{site_packages / 'sitecustomize.py'} changed"]


def test_a_file_the_pair_asked_about_then_changed_itself_counts_as_it_found_it(stub_torch_python: str, tmp_path: Path):
    """A cache check: the script decides by a file's time, then touches it. What it decided by is the old time: its
    record is never current, as one that updates a file it read is not."""
    (tmp_path / "stamp.txt").write_text("")
    os.utime(tmp_path / "stamp.txt", (1546300800, 1546300800))  # 2019
    source = "import os\nold = os.path.getmtime('stamp.txt') < 1577836800\nos.utime('stamp.txt')\nprint(old)\n"
    probe = script(tmp_path, "touches", source)
    record = run_alone(stub_torch_python, probe, tmp_path)
    assert printed(record) == ["True"], record.message
    assert changed_files(record.inputs[identity.READ]) == [f"{tmp_path / 'stamp.txt'}{identity.FILE_STATED} changed"]


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="needs POSIX signals")
def test_a_pair_and_what_it_starts_have_the_signals_of_a_python_started_by_hand(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """``nohup`` ignores SIGHUP, ``&`` in a script SIGINT and SIGQUIT, a program may block a signal; a program keeps
    both across ``exec``. None of that reaches a pair, nor the programs it starts: a test of what a signal does
    finds what it finds by hand."""
    source = """\
        import signal as s, subprocess, sys
        print([s.getsignal(getattr(s, name)) is s.SIG_IGN for name in ("SIGHUP", "SIGINT", "SIGQUIT")])
        print(s.getsignal(s.SIGINT) is s.default_int_handler, s.pthread_sigmask(s.SIG_BLOCK, []))
        started = "import signal as s; print(s.getsignal(s.SIGHUP) is s.SIG_IGN, s.pthread_sigmask(s.SIG_BLOCK, []))"
        subprocess.run([sys.executable, "-c", started], check=True)
        """
    ignored = {number: signal.signal(number, signal.SIG_IGN) for number in (signal.SIGHUP, signal.SIGQUIT)}
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
    try:
        record = run_alone(stub_torch_python, script(tmp_path, "signals", source), tmp_path)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        for number, handler in ignored.items():
            signal.signal(number, handler)
    assert printed(record) == ["[False, False, False]", "True set()", "False set()"], record.message


def test_a_file_whose_times_mode_or_links_changed_before_the_pair_read_it_counts_by_its_content(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """Touched, made runnable or linked again (by the script or a program it ran), a file still holds what it held
    before the pair began: what the pair read there is an input, as by hand a test reading it reads what it holds."""
    names = ("touched", "chmodded", "linked", "helped")
    source = f"""\
        import os, subprocess
        os.utime("touched.txt")
        os.chmod("chmodded.txt", 0o644)
        os.link("linked.txt", "linked-again.txt")
        subprocess.run(["chmod", "644", "helped.txt"], check=True)
        print(*(open(name + ".txt").read() for name in {names!r}))
        """
    each_counts_by_its_content(stub_torch_python, tmp_path, names, source)


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs Linux's /proc/self")
def test_a_file_changed_in_place_or_linked_by_the_pair_under_another_path_counts_by_its_content(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """Touched by another path (``tests/../data.txt``, a path relative to a ``dir_fd``), truncated to its own
    length, or linked into the pair's temporary folder and read there: what the pair read is what the file held."""
    names = ("dotted", "at", "truncated", "hardlinked")
    (tmp_path / "tests").mkdir()
    source = f"""\
        import os, tempfile
        os.utime("tests/../dotted.txt")
        os.utime("at.txt", dir_fd=os.open(".", os.O_RDONLY))
        os.truncate("truncated.txt", len("truncated"))
        linked = os.path.join(tempfile.mkdtemp(), "linked")
        os.link("hardlinked.txt", linked)
        print(*(open(linked if name == "hardlinked" else name + ".txt").read() for name in {names!r}))
        """
    each_counts_by_its_content(stub_torch_python, tmp_path, names, source)


def test_a_file_changed_through_a_path_of_the_pair_s_own_or_read_by_another_counts_as_the_pair_found_it(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """Touched or appended to through a path the pair had made its own, then linked to the file (hard or symbolic,
    the path used so again and again), or appended to by its own path and read by another (a link, ``sub/..``):
    what the pair read is what the file held."""
    (tmp_path / "sub").mkdir()
    for name in ("hard", "soft", "appended", "linked", "dotted"):
        (tmp_path / f"{name}.txt").write_text(name)
    (tmp_path / "link.txt").symlink_to("linked.txt")
    read_by = ("hard.txt", "soft.txt", "appended.txt", "link.txt", "sub/../dotted.txt")
    before = {str(tmp_path / path): identity.file_digest(tmp_path / path) for path in read_by}
    source = f"""\
        import os
        def through_its_own(link, target, change):
            open("alias.txt", "w").close()
            os.remove("alias.txt")
            link(target, "alias.txt")
            change("alias.txt")
            os.remove("alias.txt")
        through_its_own(os.link, "hard.txt", os.utime)
        through_its_own(os.symlink, "soft.txt", os.utime)
        through_its_own(os.symlink, "appended.txt", lambda path: open(path, "a").write("+"))
        for name in ("linked.txt", "dotted.txt"):
            open(name, "a").write("+")
        print(*(open(path).read() for path in {read_by!r}))
        """
    record = run_alone(stub_torch_python, script(tmp_path, "aliases", source), tmp_path)
    assert printed(record) == ["hard soft appended+ linked+ dotted+"], record.message
    assert digests_of(record, before) == before


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_file_a_forked_child_changed_before_its_parent_read_it_counts_as_the_child_found_it(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """A child the pair forks (a ``multiprocessing`` pool's worker) appends to a file or touches it, by its path or
    another; then the pair reads it: what it read is what the file held."""
    for name in ("log", "touched", "linked"):
        (tmp_path / f"{name}.txt").write_text(name)
    (tmp_path / "link.txt").symlink_to("linked.txt")
    read_by = ("log.txt", "touched.txt", "link.txt")
    before = {str(tmp_path / path): identity.file_digest(tmp_path / path) for path in read_by}
    source = f"""\
        import os
        pid = os.fork()
        if pid == 0:
            open("log.txt", "a").write("+")
            os.utime("touched.txt")
            open("linked.txt", "a").write("+")
            os._exit(0)
        os.waitpid(pid, 0)
        print(*(open(path).read() for path in {read_by!r}))
        """
    record = run_alone(stub_torch_python, script(tmp_path, "forks", source), tmp_path)
    assert printed(record) == ["log+ touched linked+"], record.message
    assert digests_of(record, before) == before


def test_an_input_moved_into_the_pair_s_temporary_folder_counts_by_its_own_path(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """Moved into the pair's temporary folder and read there, or changed there and moved back, then read: the file
    counts by its path, as it was."""
    for name in ("claimed", "changed"):
        (tmp_path / f"{name}.txt").write_text(name)
    before = {
        str(tmp_path / f"{name}.txt"): identity.file_digest(tmp_path / f"{name}.txt") for name in ("claimed", "changed")
    }
    source = """\
        import os, tempfile
        work = os.path.join(tempfile.gettempdir(), "work.txt")
        os.replace("claimed.txt", work)
        claimed = open(work).read()
        os.replace(work, "claimed.txt")
        os.replace("changed.txt", work)
        open(work, "a").write("+")
        os.replace(work, "changed.txt")
        print(claimed, open("changed.txt").read())
        """
    record = run_alone(stub_torch_python, script(tmp_path, "moves", source), tmp_path)
    assert printed(record) == ["claimed changed+"], record.message
    assert digests_of(record, before) == before


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_what_a_forked_child_read_or_found_before_its_parent_changed_the_file_is_what_counts(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """A child reads a file its parent then replaces and reads; a child updates a file its parent then touches: what
    the pair read first is what counts, and the parent changed it, so the record is never current."""
    (tmp_path / "data.txt").write_text("old")
    (tmp_path / "count.txt").write_text("3")
    source = """\
        import os
        pid = os.fork()
        if pid == 0:
            print("child", open("data.txt").read(), flush=True)
            with open("count.txt", "r+") as count:
                number = int(count.read())
                count.seek(0)
                count.write(str(number + 1))
            print("count was", number, flush=True)
            os._exit(0)
        os.waitpid(pid, 0)
        open("data.txt.new", "w").write("new")
        os.replace("data.txt.new", "data.txt")
        print("parent", open("data.txt").read())
        os.utime("count.txt")
        """
    record = run_alone(stub_torch_python, script(tmp_path, "forks_then_changes", source), tmp_path)
    assert printed(record) == ["child old", "count was 3", "parent new"], record.message
    assert changed_files(record.inputs[identity.READ]) == [
        f"{tmp_path / 'count.txt'} changed", f"{tmp_path / 'data.txt'} changed"
    ]  # fmt: skip


def test_an_input_the_pair_moved_counts_by_the_path_it_took_it_from(stub_torch_python: str, tmp_path: Path) -> None:
    """``os.rename("data.txt", "done.txt")``, then ``done.txt`` read: the pair read ``data.txt``, gone after it; put
    back edited, it is a change."""
    (tmp_path / "data.txt").write_text("old")
    source = 'import os\nos.rename("data.txt", "done.txt")\nprint(open("done.txt").read())\n'
    record = run_alone(stub_torch_python, script(tmp_path, "moves", source), tmp_path)
    assert printed(record) == ["old"], record.message
    assert changed_files(record.inputs[identity.READ]) == [f"{tmp_path / 'data.txt'} is gone"]
    (tmp_path / "data.txt").write_text("edited")
    assert changed_files(record.inputs[identity.READ]) == [f"{tmp_path / 'data.txt'} changed"]


TOUCHED_THEN = {
    "a write that fails": (
        "try:\n    open('first.txt/', 'w')\nexcept OSError:\n    pass\nprint(open('first.txt').read())\n"
    ),
    "a write its opener makes elsewhere": (
        "with open('first.txt', 'w', opener=lambda name, flags: os.open('elsewhere.txt', flags)) as out:\n"
        "    out.write('x')\nprint(open('first.txt').read())\nos.remove('elsewhere.txt')\n"
    ),
    "its size asked": "print(os.path.getsize('first.txt'))\n",
}


@pytest.mark.parametrize("case", sorted(TOUCHED_THEN))
def test_a_file_the_pair_touched_counts_as_it_found_it_whatever_it_then_did(
    stub_torch_python: str, tmp_path: Path, case: str
) -> None:
    """``os.utime`` (a cache check), then a write that never happened, or its size asked: the file's times are new,
    its content the one the pair found, and it counts so."""
    record = run_in_a_folder_of_files(stub_torch_python, tmp_path, "os.utime('first.txt')\n" + TOUCHED_THEN[case])
    assert printed(record) in (["first"], ["5"]), record.message
    assert changed_files(record.inputs[identity.READ]) == []
    (tmp_path / "first.txt").write_text("edited")
    assert [change.split(" ")[0] for change in changed_files(record.inputs[identity.READ])] == [
        str(tmp_path / "first.txt")
    ]  # fmt: skip


FAILED_OPENS = {
    "made only where it is not there, and there": (
        "try:\n    open('first.txt', 'x')\nexcept FileExistsError:\n    print('there')\n",
        lambda folder: (folder / "first.txt").unlink(),
    ),
    "opened to update through a link to nothing": (
        "try:\n    open('dangling', 'r+')\nexcept FileNotFoundError:\n    print('none')\n",
        lambda folder: (folder / "nothing.txt").write_text("now"),
    ),
}


@pytest.mark.parametrize("case", sorted(FAILED_OPENS))
def test_what_decided_that_an_open_to_write_failed_counts(stub_torch_python: str, tmp_path: Path, case: str) -> None:
    """A lock file made with ``x`` that is there already, a file opened ``r+`` through a link to nothing: the open
    raised, for what was there, and that counts: a change of it is a change."""
    source, change = FAILED_OPENS[case]
    (tmp_path / "dangling").symlink_to("nothing.txt")
    read = run_in_a_folder_of_files(stub_torch_python, tmp_path, source).inputs[identity.READ]
    assert changed_files(read) == []
    change(tmp_path)
    assert changed_files(read) != []


WRITES_THEN_READS = {
    "lists a folder it wrote a file in": (
        "open('cfg/.done', 'w').close()\nprint(sorted(os.listdir('cfg')))\n",
        lambda folder: (folder / "cfg" / "y.txt").write_text("y"),
    ),
    "logs beside what it lists": (
        "import glob, logging\nlogging.basicConfig(filename='run.log')\nlogging.warning('start')\n"
        "print(sorted(glob.glob('*.txt')))\n",
        lambda folder: (folder / "third.txt").write_text("third"),
    ),
    "imports, in a child it forked, a module looked for beside it": (
        "import sys\nsys.path.append(os.path.abspath('lib'))\npid = os.fork()\nif pid == 0:\n    import helper\n"
        "    print(helper.VALUE, flush=True)\n    os._exit(0)\nos.waitpid(pid, 0)\n",
        lambda folder: (folder / "helper.py").write_text("VALUE = 'shadow'\n"),
    ),
}


@pytest.mark.parametrize("case", sorted(WRITES_THEN_READS))
def test_what_a_pair_decided_by_counts_whatever_it_wrote_or_wherever_it_read_it(
    stub_torch_python: str, tmp_path: Path, case: str
) -> None:
    """A folder it listed after it wrote in it (a log, a marker), a module a forked child looked for: a change of
    what decided its output (a file put there, a module put where it is looked for first) is a change."""
    source, change = WRITES_THEN_READS[case]
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "helper.py").write_text("VALUE = 'lib'\n")
    read = run_in_a_folder_of_files(stub_torch_python, tmp_path, source).inputs[identity.READ]
    assert changed_files(read) == []
    change(tmp_path)
    assert changed_files(read) != []


TAKEN_BY_A_CHILD = {
    "moved into the temporary folder": "os.rename('first.txt', work)\n",
    "linked into the temporary folder": "os.link('first.txt', work)\n",
}


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
@pytest.mark.parametrize("case", sorted(TAKEN_BY_A_CHILD))
def test_a_file_a_forked_child_took_counts_by_the_path_it_took_it_from(
    stub_torch_python: str, tmp_path: Path, case: str
) -> None:
    """A child moves or links a file into the pair's temporary folder (a worker claiming a job), its parent reads it
    there, or through ``..`` there, and puts it back: the file read is the one the child took."""
    source = (
        "import tempfile\nwork = os.path.join(tempfile.mkdtemp(), 'claimed')\nos.mkdir(work + '.d')\n"
        "pid = os.fork()\nif pid == 0:\n    " + TAKEN_BY_A_CHILD[case] + "    os._exit(0)\nos.waitpid(pid, 0)\n"
        "print(open(os.path.join(work + '.d', '..', 'claimed')).read())\nos.replace(work, 'first.txt')\n"
    )
    read = run_in_a_folder_of_files(stub_torch_python, tmp_path, source).inputs[identity.READ]
    assert changed_files(read) == []
    (tmp_path / "first.txt").write_text("edited")
    assert changed_files(read) == [f"{tmp_path / 'first.txt'} changed"]


READ_AGAIN = {
    "a link pointed elsewhere, and back": (
        "os.symlink('first.txt', 'link.txt')\nfirst = open('link.txt').read()\nos.remove('link.txt')\n"
        "os.symlink('second.txt', 'link.txt')\nprint(first, open('link.txt').read())\nos.remove('link.txt')\n"
        "os.symlink('first.txt', 'link.txt')\n",
        "link.txt",
    ),
    "a link made where nothing was, then removed": (
        "made = not os.path.exists('local.txt')\nos.symlink('first.txt', 'local.txt')\n"
        "print(made, open('local.txt').read())\nos.remove('local.txt')\n",
        "local.txt",
    ),
}
TAKEN = {
    "a file moved into a folder of the pair's temporary folder, the folder renamed, read there, moved back": (
        "import tempfile\nstage, ready = (os.path.join(tempfile.gettempdir(), name) for name in ('stage', 'ready'))\n"
        "os.mkdir(stage)\nos.rename('first.txt', os.path.join(stage, 'x'))\nos.rename(stage, ready)\n"
        "print(open(os.path.join(ready, 'x')).read())\nos.rename(os.path.join(ready, 'x'), 'first.txt')\n",
        "first.txt",
    ),
    "a file read through the environment's folder, going up out of it": (
        "import sys\nup = os.path.relpath(os.path.abspath('first.txt'), sys.prefix)\n"
        "print(open(os.path.join(sys.prefix, up)).read())\n",
        "first.txt",
    ),
    "a file moved aside, one of the pair's own written in its place, the first touched, read and put back": (
        "os.rename('first.txt', 'saved')\nopen('first.txt', 'w').write('mine')\nos.utime('saved')\n"
        "print(open('saved').read())\nos.replace('saved', 'first.txt')\n",
        "first.txt",
    ),
    "a file moved aside, one of the pair's own written in its place, the first read and put back": (
        "os.rename('first.txt', 'saved')\nopen('first.txt', 'w').write('mine')\nprint(open('saved').read())\n"
        "os.replace('saved', 'first.txt')\n",
        "first.txt",
    ),
    "a hard link made where a read found nothing, then removed": (
        "try:\n    open('local.txt')\nexcept FileNotFoundError:\n    os.link('first.txt', 'local.txt')\n"
        "print(open('local.txt').read())\nos.remove('local.txt')\n",
        "first.txt",
    ),
    "folders swapped by their names, and back": (
        "first = open('cfg/x.txt').read()\nos.rename('cfg', 'saved')\nos.rename('alt', 'cfg')\n"
        "print(first, open('cfg/x.txt').read())\nos.rename('cfg', 'alt')\nos.rename('saved', 'cfg')\n",
        "alt/x.txt",
    ),
    "files swapped by hard links, and back": (
        "first = open('first.txt').read()\nos.link('first.txt', 'save')\nos.link('second.txt', 'swap')\n"
        "os.replace('swap', 'first.txt')\nprint(first, open('first.txt').read())\nos.replace('save', 'first.txt')\n",
        "second.txt",
    ),
}


def run_in_a_folder_of_files(python: str, folder: Path, source: str) -> Record:
    """Run ``source`` in ``folder``, beside ``first.txt``, ``second.txt``, ``cfg/x.txt`` and ``alt/x.txt``."""
    for name in ("cfg", "alt"):
        (folder / name).mkdir()
        (folder / name / "x.txt").write_text(name)
    for name in ("first", "second"):
        (folder / f"{name}.txt").write_text(name)
    record = run_alone(python, script(folder, "again", "import os\n" + source), folder)
    assert record.outcome is Outcome.PASS, record.message
    return record


SWAPPED = {
    "by the pair's own file, the first appended to where it was moved, read, put back": (
        "os.rename('first.txt', 'saved')\nopen('first.txt', 'w').write('mine')\nopen('saved', 'a').write('+')\n"
        "print(open('saved').read())\nos.replace('saved', 'first.txt')\n"
    ),
    "by a forked child, read by its parent, put back": (
        "pid = os.fork()\nif pid == 0:\n    os.rename('first.txt', 'saved')\n    os.rename('second.txt', 'first.txt')\n"
        "    os._exit(0)\nos.waitpid(pid, 0)\nprint(open('first.txt').read())\nos.rename('first.txt', 'second.txt')\n"
        "os.rename('saved', 'first.txt')\n"
    ),
    "by a link where the file was, put back": (
        "os.rename('first.txt', 'saved')\nos.symlink('second.txt', 'first.txt')\nprint(open('first.txt').read())\n"
        "os.remove('first.txt')\nos.rename('saved', 'first.txt')\n"
    ),
}


@pytest.mark.parametrize("case", sorted(SWAPPED))
def test_a_file_read_where_another_was_swapped_in_and_put_back_is_never_current(
    stub_torch_python: str, tmp_path: Path, case: str
) -> None:
    """What the pair read at ``first.txt`` was ``second.txt``'s, which it put back where it was, or ``first.txt``'s
    as it changed it: the file there by the pair's end is not what it read, and the record says so."""
    record = run_in_a_folder_of_files(stub_torch_python, tmp_path, SWAPPED[case])
    assert printed(record) in (["second"], ["first+"]), record.message
    assert changed_files(record.inputs[identity.READ]) != []


@pytest.mark.parametrize("case", sorted(READ_AGAIN))
def test_a_path_that_led_to_another_file_as_it_was_read_again_is_never_current(
    stub_torch_python: str, tmp_path: Path, case: str
) -> None:
    """A path read (or looked for, and not there) that leads to another file as it is read again, whatever it leads
    to by the pair's end: what was read there is more than one file, so the record says it is not as it was."""
    source, path = READ_AGAIN[case]
    read = run_in_a_folder_of_files(stub_torch_python, tmp_path, source).inputs[identity.READ]
    assert read[str(tmp_path / path)] == "led to another file as the pair read it again"
    assert [change.split(" ")[0] for change in changed_files(read)] == [str(tmp_path / path)]


@pytest.mark.parametrize("case", sorted(TAKEN))
def test_a_file_or_folder_the_pair_linked_or_moved_counts_by_the_path_it_took_it_from(
    stub_torch_python: str, tmp_path: Path, case: str
) -> None:
    """Read where the pair linked or moved it (folders swapped by their names, files by hard links; a link made
    where nothing was), a file counts by its own path: as it was, and a change once edited."""
    source, path = TAKEN[case]
    read = run_in_a_folder_of_files(stub_torch_python, tmp_path, source).inputs[identity.READ]
    assert changed_files(read) == []
    (tmp_path / path).write_text("edited")
    assert [os.path.realpath(change.removesuffix(" changed")) for change in changed_files(read)] == [
        str(tmp_path / path)
    ]  # fmt: skip


def test_a_folder_moved_into_the_pair_s_temporary_folder_counts_each_file_by_its_own_path(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """A folder of inputs moved into the pair's temporary folder (``shutil.move``), its files read or updated there,
    and moved back: each file counts by its path, as it was."""
    (tmp_path / "data").mkdir()
    for name in ("read", "updated"):
        (tmp_path / "data" / f"{name}.txt").write_text(name)
    before = {
        str(tmp_path / "data" / name): identity.file_digest(tmp_path / "data" / name)
        for name in ("read.txt", "updated.txt")
    }
    (tmp_path / "outside.txt").write_text("outside")
    before[str(tmp_path / "outside.txt")] = identity.file_digest(tmp_path / "outside.txt")
    source = """\
        import os, shutil, tempfile
        work = os.path.join(tempfile.gettempdir(), "moved")
        shutil.move("data", work)
        read = open(os.path.join(work, "read.txt")).read()
        with open(os.path.join(work, "updated.txt"), "r+") as updated:
            read += " " + updated.read()
            updated.write("+")
        read += " " + open(os.path.join(work, os.path.relpath(os.path.abspath("outside.txt"), work))).read()
        shutil.move(work, "data")
        print(read)
        """
    record = run_alone(stub_torch_python, script(tmp_path, "moves_a_folder", source), tmp_path)
    assert printed(record) == ["read updated outside"], record.message
    assert digests_of(record, before) == before


def test_a_file_dated_a_moment_ahead_made_runnable_by_the_pair_once_that_moment_passed_counts_by_its_content(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """Its content's time lies between the pair's start and its ``chmod``: the pair's own ``chmod`` is heard, and the
    file is hashed as it was. A pair that starts once the moment has passed proves nothing: the moment is put further
    ahead until one starts before it."""
    data = tmp_path / "data.txt"
    data.write_text("data")
    for lead in (2, 10, 60):  # a loaded machine may start the pair late
        ahead = time.time() + lead
        os.utime(data, (ahead, ahead))
        source = f"""\
            import os, time
            print("before" if time.time() < {ahead} else "after")
            while time.time() <= {ahead}:
                time.sleep(0.05)
            os.chmod("data.txt", 0o644)
            print(open("data.txt").read())
            """
        record = run_alone(stub_torch_python, script(tmp_path, "waits_then_chmods", source), tmp_path, limit=lead + 30)
        if printed(record)[0] == "before":
            break
    assert printed(record) == ["before", "data"], record.message
    data.write_text("edited")
    assert changed_files(record.inputs[identity.READ]) == [f"{data} changed"]


def test_a_file_dated_ahead_then_made_runnable_or_linked_by_the_pair_counts_by_its_content(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """A file given a time to come (unpacked from a machine whose clock is ahead) and then changed but in content
    (``chmod``, ``os.link``) while the pair ran holds what it held: its content's time, ahead of the kernel's time
    of its last change, was given, not written."""
    names = ("chmodded", "linked")
    for name in names:
        (tmp_path / f"{name}.txt").write_text(name)
        ahead = time.time() + 3600
        os.utime(tmp_path / f"{name}.txt", (ahead, ahead))
    source = f"""\
        import os
        os.chmod("chmodded.txt", 0o644)
        os.link("linked.txt", "linked-again.txt")
        os.remove("linked-again.txt")
        print(*(open(name + ".txt").read() for name in {names!r}))
        """
    record = run_alone(stub_torch_python, script(tmp_path, "ahead", source), tmp_path)
    assert printed(record) == [" ".join(names)], record.message
    for name in names:
        (tmp_path / f"{name}.txt").write_text("edited")
    assert changed_files(record.inputs[identity.READ]) == [f"{tmp_path / name}.txt changed" for name in names]


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs Linux's /proc/self")
def test_a_file_opened_or_asked_about_relative_to_a_dir_fd_counts_by_its_own_path(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """``os.open(name, dir_fd=folder)`` and ``os.stat(name, dir_fd=folder)`` name a file of that folder: one the pair
    rewrote so, then read by its path, held what it read; one it asked the size of so counts by it."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "rewritten.txt").write_text("hello")
    (tmp_path / "data" / "sized.txt").write_text("12345")
    source = """\
        import os
        folder = os.open("data", os.O_RDONLY)
        fd = os.open("rewritten.txt", os.O_RDWR, dir_fd=folder)
        os.pwrite(fd, os.pread(fd, 1, 0), 0)
        os.close(fd)
        print(open("data/rewritten.txt").read(), os.stat("sized.txt", dir_fd=folder).st_size)
        """
    record = run_alone(stub_torch_python, script(tmp_path, "at", source), tmp_path)
    assert printed(record) == ["hello 5"], record.message
    (tmp_path / "data" / "rewritten.txt").write_text("bye")
    (tmp_path / "data" / "sized.txt").write_text("1")
    assert changed_files(record.inputs[identity.READ]) == [
        f"{tmp_path / 'data' / 'rewritten.txt'} changed",
        f"{tmp_path / 'data' / 'sized.txt'}{identity.FILE_STATED} changed",
    ]


def test_bytecode_python_runs_unchecked_runs_in_a_pair_as_by_hand_and_is_an_input(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """A module's unchecked hash-based ``.pyc`` (``compileall --invalidation-mode unchecked-hash``) runs whatever
    its source says, by hand: so in a pair, and a new one is a change."""

    def compile_helper(value: int) -> None:
        (tmp_path / "elsewhere").mkdir(exist_ok=True)
        (tmp_path / "elsewhere" / "helper.py").write_text(f"VALUE = {value}\n")
        cached = "importlib.util.cache_from_source('helper.py')"
        unchecked = "py_compile.PycInvalidationMode.UNCHECKED_HASH"
        compiling = f"py_compile.compile('elsewhere/helper.py', {cached}, invalidation_mode={unchecked})"
        compiling = f"import importlib.util, py_compile; {compiling}"
        subprocess.run([stub_torch_python, "-c", compiling], cwd=tmp_path, check=True)

    (tmp_path / "helper.py").write_text("VALUE = 1\n")
    compile_helper(2)
    probe = script(tmp_path, "imports", "import helper\nprint(helper.VALUE)\n")
    by_hand = subprocess.run([stub_torch_python, probe.path], cwd=tmp_path, capture_output=True, text=True, check=True)
    record = run_alone(stub_torch_python, probe, tmp_path)
    assert printed(record) == [by_hand.stdout.strip()] == ["2"], record.message
    compile_helper(3)
    [changed] = changed_files(record.inputs[identity.READ])
    assert changed.startswith(f"{tmp_path / '__pycache__' / 'helper.'}") and changed.endswith(".pyc changed"), changed


def test_what_code_compiled_from_text_asks_is_the_pairs_whoever_runs_it(tmp_path: Path) -> None:
    """pytest evaluates a ``skipif`` condition written in a test file, and runs a module's doctests, from text: what
    that code asks of a file or a folder is the test's to decide by, though the environment's code runs it."""
    python, site_packages = stub_torch_venv(tmp_path / "venv")
    (site_packages / "evaluates.py").write_text(
        "import os\n\ndef condition(text):\n    return eval(text, {'os': os})\n"
    )
    (tmp_path / "data.txt").write_text("abc")
    (tmp_path / "cases").mkdir()
    condition = "os.path.getsize('data.txt') > 5 or len(os.listdir('cases'))"
    probe = script(tmp_path, "conditions", f"import evaluates\nprint(evaluates.condition({condition!r}))\n")
    record = run_alone(python, probe, tmp_path)
    assert printed(record) == ["0"], record.message
    (tmp_path / "data.txt").write_text("abcdefghij")
    (tmp_path / "cases" / "a.txt").write_text("")
    assert changed_files(record.inputs[identity.READ]) == [
        f"{tmp_path / 'cases'}{identity.FOLDER_LISTED} changed",
        f"{tmp_path / 'data.txt'}{identity.FILE_STATED} changed",
    ]


ENDINGS = {
    "exit_handler": "import atexit\natexit.register(print, 'at exit')\n",
    "thread": "import threading, time\nthreading.Thread(target=lambda: (time.sleep(0.2), print('thread'))).start()\n",
    "finaliser": "class Check:\n    def __del__(self):\n        print('finaliser')\ncheck = Check()\n",
    "excepthook": "import sys\nsys.excepthook = lambda kind, error, trace: print('hook', kind)\nraise ValueError\n",
}


AS_MAIN = {
    "main_at_exit": "import atexit\nX = 42\natexit.register(lambda: print(__import__('__main__').X))\n",
    "held_module": "import sys\nclass D:\n    def __del__(self):\n        print('del')\n"
    "d = D()\nsys.held = sys.modules['__main__']\n",
    "globals": "print(type(__builtins__).__name__, type(__loader__).__name__, __spec__, __package__)\n"
    "print(sorted(globals()), __annotations__)\n",
    "huge_exit": "import sys\nprint('leaving')\nsys.exit(2 ** 64)\n",
    "flush_fails": "import sys\nclass Out:\n    def write(self, text):\n        return len(text)\n"
    "    def flush(self):\n        raise OSError('no flush')\nsys.stdout = Out()\n",
}


@pytest.mark.parametrize("case", sorted(AS_MAIN))
def test_a_script_runs_as_main_as_python_runs_it(stub_torch_python: str, tmp_path: Path, case: str) -> None:
    """The script is the module ``__main__`` (an exit handler finds its globals there; letting go of it runs the
    finalisers of what it holds, and clears its globals where something still holds it), with the globals python
    gives it; an exit
    status too large for a C long is python's 255, and an output that cannot be flushed as it exits is its 120."""
    probe = script(tmp_path, case, AS_MAIN[case])
    by_hand = subprocess.run([stub_torch_python, probe.path], cwd=tmp_path, capture_output=True, text=True)
    record = run_alone(stub_torch_python, probe, tmp_path)
    assert (printed(record), record.metrics["exit_code"]) == (by_hand.stdout.splitlines(), by_hand.returncode)


def test_a_script_reached_through_a_link_imports_from_its_own_folder(stub_torch_python: str, tmp_path: Path) -> None:
    """python puts the folder of a script's target first on ``sys.path``, not the link's: its neighbour there is the
    one it imports, and an input."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "helper.py").write_text("WHO = 'beside the script'\n")
    (tmp_path / "helper.py").write_text("WHO = 'beside the link'\n")
    script(tmp_path / "sub", "real", "import helper\nprint(helper.WHO)\n")
    (tmp_path / "linked.py").symlink_to(tmp_path / "sub" / "real.py")
    probe = Probe("linked", tmp_path / "linked.py", kind=Kind.SCRIPT, devices=("cpu",))
    by_hand = subprocess.run([stub_torch_python, "linked.py"], cwd=tmp_path, capture_output=True, text=True)
    record = run_alone(stub_torch_python, probe, tmp_path)
    assert printed(record) == by_hand.stdout.splitlines() == ["beside the script"], record.message
    (tmp_path / "sub" / "helper.py").write_text("WHO = 'edited'\n")
    assert f"{tmp_path / 'sub' / 'helper.py'} changed" in changed_files(record.inputs[identity.READ])


@pytest.mark.parametrize("ending", sorted(ENDINGS))
def test_a_script_ends_as_python_ends_it(stub_torch_python: str, tmp_path: Path, ending: str) -> None:
    """``python script.py`` waits for the threads it started, runs the exit handlers, lets go of the script's objects
    (their ``__del__`` runs) and hands an uncaught exception to ``sys.excepthook``: what each prints is the script's
    output, as by hand, and one that ends the process with a status (``os._exit(3)``) ends the script so."""
    probe = script(tmp_path, ending, ENDINGS[ending])
    by_hand = subprocess.run([stub_torch_python, probe.path], cwd=tmp_path, capture_output=True, text=True)
    record = run_alone(stub_torch_python, probe, tmp_path)
    assert printed(record) == by_hand.stdout.splitlines() != [], record.message
    leaves = "import os\n\ndef leave(*said):\n    os._exit(3)\n" + ENDINGS[ending].replace("print", "leave")
    probe = script(tmp_path, ending, leaves)
    record = run_alone(stub_torch_python, probe, tmp_path)
    assert (record.outcome, record.metrics["exit_code"]) == (Outcome.FAIL, 3), record.message


@pytest.mark.skipif(not hasattr(os, "setxattr"), reason="needs extended attributes")
def test_the_extended_attributes_the_pairs_code_read_are_inputs(stub_torch_python: str, tmp_path: Path) -> None:
    """A test that decides by a file's extended attribute (``os.getxattr``) depends on it."""
    flagged = tmp_path / "flagged.txt"
    flagged.write_text("")
    try:
        os.setxattr(flagged, "user.flag", b"1")
    except OSError:
        pytest.skip("this file system keeps no user attributes")
    probe = script(tmp_path, "flag", "import os\nprint(os.getxattr('flagged.txt', 'user.flag'))\n")
    record = run_alone(stub_torch_python, probe, tmp_path)
    assert printed(record) == ["b'1'"], record.message
    os.setxattr(flagged, "user.flag", b"2")
    assert changed_files(record.inputs[identity.READ]) == [f"{flagged}{identity.FILE_STATED} changed"]


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs Linux's /proc/self")
def test_a_file_read_through_a_link_of_the_pairs_own_or_the_kernels_counts_by_its_own_path(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """A link made in the pair's temporary folder (``tmp_path``), ``/proc/self/cwd`` and ``/proc/self/fd/N`` mean
    something in the pair's process alone: the file they lead to is what it read."""
    for name in ("linked", "cwd", "fd"):
        (tmp_path / f"{name}.txt").write_text(name)
    source = """\
        import os, tempfile
        link = os.path.join(tempfile.mkdtemp(), "data")
        os.symlink(os.path.abspath("linked.txt"), link)
        here = os.open(".", os.O_RDONLY)
        print(open(link).read(), open("/proc/self/cwd/cwd.txt").read(), open("/proc/self/fd/%d/fd.txt" % here).read())
        """
    record = run_alone(stub_torch_python, script(tmp_path, "leads", source), tmp_path)
    assert printed(record) == ["linked cwd fd"], record.message
    read = record.inputs[identity.READ]
    assert not [path for path in read if path.startswith("/proc/")]
    for name in ("linked", "cwd", "fd"):
        (tmp_path / f"{name}.txt").write_text("edited")
    assert changed_files(read) == [f"{tmp_path / name}.txt changed" for name in ("cwd", "fd", "linked")]


def test_a_thread_pools_look_a_folder_not_there_yet_and_a_link_into_the_standard_library_are_inputs(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """What a ThreadPoolExecutor asks for the script is the script's; a module looked for in a folder on sys.path
    that is not there yet counts by its absence; a link of the script's own counts by its own path, wherever it
    points."""
    (tmp_path / "data.txt").write_text("12345")
    (tmp_path / "cases").mkdir()
    (tmp_path / "link.txt").symlink_to(Path(textwrap.__file__))
    (tmp_path / "other.txt").write_text("other content")
    source = """\
        import os, sys
        from concurrent.futures import ThreadPoolExecutor
        sys.path.insert(0, os.path.abspath("vendor"))
        import colorsys
        with ThreadPoolExecutor(2) as pool:
            print(list(pool.map(os.path.getsize, ["data.txt"])), pool.submit(os.listdir, "cases").result())
        print(len(open("link.txt").read()) > 0)
        """
    probe = script(tmp_path, "pooled", source)
    record = run_alone(stub_torch_python, probe, tmp_path)
    assert printed(record) == ["[5] []", "True"], record.message
    read = record.inputs[identity.READ]
    (tmp_path / "data.txt").write_text("123456")
    (tmp_path / "cases" / "c.txt").write_text("")
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "colorsys.py").write_text("HACKED = 1\n")
    (tmp_path / "link.txt").unlink()
    (tmp_path / "link.txt").symlink_to("other.txt")
    assert changed_files(read) == [
        f"{tmp_path / 'cases'}{identity.FOLDER_LISTED} changed",
        f"{tmp_path / 'data.txt'}{identity.FILE_STATED} changed",
        f"{tmp_path / 'link.txt'} changed",
        f"{tmp_path / 'vendor' / 'colorsys'}{identity.MODULE_LOOKED_FOR} appeared",
    ]


SPEND_THE_BUDGET = "os.utime('big.bin')\n"
"""Touching a file larger than the hashing budget (``MAX_HASHED``) spends it: what the pair changes next is unhashed."""

CHANGED_UNHEARD = {
    "rewritten through a link of the pair's own, then touched": (
        "print(open('data.txt').read())\nos.symlink('data.txt', 'alias')\nopen('alias', 'w').write('new')\n"
        "os.remove('alias')\nos.utime('data.txt')\n",
        "data.txt",
    ),
    "rewritten by a program the pair ran, then touched": (
        "import subprocess\nprint(open('data.txt').read())\n"
        "subprocess.run(['sh', '-c', 'printf new > data.txt'], check=True)\nos.utime('data.txt')\n",
        "data.txt",
    ),
    "past the budget: read, made runnable, rewritten by a program the pair ran": (
        SPEND_THE_BUDGET + "import subprocess\nprint(open('data.txt').read())\nos.chmod('data.txt', 0o644)\n"
        "subprocess.run(['sh', '-c', 'printf new > data.txt'], check=True)\n",
        "data.txt",
    ),
    "past the budget: read by a forked child, touched, then rewritten": (
        SPEND_THE_BUDGET + "pid = os.fork()\nif pid == 0:\n    print(open('data.txt').read(), flush=True)\n"
        "    os._exit(0)\nos.waitpid(pid, 0)\nos.utime('data.txt')\nopen('data.txt', 'w').write('new')\n",
        "data.txt",
    ),
    "past the budget: made runnable, read, then copied over with its times by cp -p": (
        SPEND_THE_BUDGET + "import subprocess\nopen('new.txt', 'w').write('new')\n"
        "subprocess.run(['touch', '-r', 'data.txt', 'new.txt'], check=True)\nos.chmod('data.txt', 0o755)\n"
        "print(open('data.txt').read())\nsubprocess.run(['cp', '-p', 'new.txt', 'data.txt'], check=True)\n",
        "data.txt",
    ),
    "past the budget: read, touched, rewritten through a link of the pair's own": (
        SPEND_THE_BUDGET + "print(open('data.txt').read())\nos.utime('data.txt')\nos.symlink('data.txt', 'alias')\n"
        "open('alias', 'w').write('new')\nos.remove('alias')\n",
        "data.txt",
    ),
    "moved by a forked child, read by its parent where it was moved": (
        "pid = os.fork()\nif pid == 0:\n    os.rename('data.txt', 'done.txt')\n    os._exit(0)\n"
        "os.waitpid(pid, 0)\nprint(open('done.txt').read())\n",
        "data.txt",
    ),
    "a folder a forked child moved into the temporary folder, read there, moved back": (
        "import tempfile\nwork = os.path.join(tempfile.mkdtemp(), 'd')\npid = os.fork()\nif pid == 0:\n"
        "    os.rename('cfg', work)\n    os._exit(0)\nos.waitpid(pid, 0)\n"
        "print(open(os.path.join(work, 'x.txt')).read())\nos.rename(work, 'cfg')\n",
        "cfg/x.txt",
    ),
    "moved, read through /proc/self/cwd": (
        "os.rename('data.txt', 'done.txt')\nprint(open('/proc/self/cwd/done.txt').read())\n",
        "data.txt",
    ),
    "moved through a linked folder, read by its own path": (
        "os.symlink('.', 'here')\nos.rename('data.txt', 'here/done.txt')\nos.remove('here')\n"
        "print(open('done.txt').read())\n",
        "data.txt",
    ),
    "moved into the temporary folder named through a link, read, moved back": (
        "import tempfile\ntmp = tempfile.mkdtemp()\nos.symlink(tmp, 'T')\nos.rename('data.txt', 'T/x')\n"
        "print(open(os.path.join(tmp, 'x')).read())\nos.rename(os.path.join(tmp, 'x'), 'data.txt')\nos.remove('T')\n",
        "data.txt",
    ),
    "hard-linked into the temporary folder named through a link, read": (
        "import tempfile\ntmp = tempfile.mkdtemp()\nos.symlink(tmp, 'T')\nos.link('data.txt', 'T/x')\n"
        "os.remove('T')\nprint(open(os.path.join(tmp, 'x')).read())\n",
        "data.txt",
    ),
}


@pytest.mark.parametrize("case", sorted(CHANGED_UNHEARD))
def test_an_input_changed_or_taken_where_the_pair_does_not_hear_it_is_never_taken_as_current(
    stub_torch_python: str, tmp_path: Path, case: str
) -> None:
    """What the pair read holding ``old`` and a user then edits to ``new`` (which a run by hand would print): the
    record is not current, however the pair changed or took the file between (through a link of its own, by a
    program it ran, in a forked child, past the hashing budget, through ``/proc/self/cwd`` or a linked folder)."""
    source, data = CHANGED_UNHEARD[case]
    (tmp_path / data).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / data).write_text("old")
    with open(tmp_path / "big.bin", "wb") as big:
        big.truncate(reads.MAX_HASHED)  # sparse: hashed at once, as no disk is read
    record = run_alone(stub_torch_python, script(tmp_path, "unheard", "import os\n" + source), tmp_path)
    assert printed(record) == ["old"], record.message
    (tmp_path / data).write_text("new")
    assert changed_files(record.inputs[identity.READ]) != []


def build_linked_library(folder: Path, value: int) -> Path:
    """``libop.so`` in ``folder``, whose ``value()`` returns what ``libdep.so`` beside it (built to return ``value``)
    does: the dynamic linker loads ``libdep.so`` for it, found through the ``$ORIGIN`` it was linked with."""
    (folder / "dep.c").write_text(f"int dep(void) {{ return {value}; }}\n")
    (folder / "op.c").write_text("int dep(void);\nint value(void) { return dep(); }\n")
    build = ["cc", "-shared", "-fPIC", "-o"]
    subprocess.run([*build, str(folder / "libdep.so"), str(folder / "dep.c")], check=True)
    linked = [str(folder / "op.c"), f"-L{folder}", "-ldep", "-Wl,-rpath,$ORIGIN"]
    subprocess.run([*build, str(folder / "libop.so"), *linked], check=True)
    return folder / "libop.so"


def is_current(record: Record) -> bool:
    """Whether ``record``'s pair read what it read still, as the views say it."""
    return record.inputs[identity.READ] is not None and changed_files(record.inputs[identity.READ]) == []


HEARD_ONLY_AS_IT_ENDS = {
    "a module looked for, by a script that leaves by os._exit": (
        "import colorsys\nprint(colorsys.rgb_to_hsv(1, 0, 0)[0])\nos._exit(0)\n",
        lambda folder: (folder / "colorsys.py").write_text("def rgb_to_hsv(*colour):\n    return 'shadowed'\n"),
    ),
    "a module looked for, by a script that leaves by posix._exit": (
        "import colorsys, posix\nprint(colorsys.rgb_to_hsv(1, 0, 0)[0])\nposix._exit(0)\n",
        lambda folder: (folder / "colorsys.py").write_text("def rgb_to_hsv(*colour):\n    return 'shadowed'\n"),
    ),
    "a module looked for, by a script that then becomes another program": (
        "import colorsys\nprint(colorsys.rgb_to_hsv(1, 0, 0)[0])\nos.execv('/bin/true', ['true'])\n",
        lambda folder: (folder / "colorsys.py").write_text("def rgb_to_hsv(*colour):\n    return 'shadowed'\n"),
    ),
    "a module looked for, by a script that replaced os.getpid": (
        "import colorsys\nprint(colorsys.rgb_to_hsv(1, 0, 0)[0])\nos.getpid = lambda: 1\n",
        lambda folder: (folder / "colorsys.py").write_text("def rgb_to_hsv(*colour):\n    return 'shadowed'\n"),
    ),
    "a library the dynamic linker loaded for one ctypes loaded, both unloaded before the end": (
        "import ctypes, _ctypes\nlibrary = ctypes.CDLL(os.path.abspath('built/libop.so'))\nprint(library.value())\n"
        "_ctypes.dlclose(library._handle)\n",
        lambda folder: build_linked_library(folder / "built", 2),
    ),
    "a library the dynamic linker loaded for one ctypes loaded, which a program the pair ran then rewrote": (
        "import ctypes, subprocess\nprint(ctypes.CDLL(os.path.abspath('built/libop.so')).value())\n"
        "subprocess.run(['cp', 'alt/libdep.so', 'built/libdep.so'], check=True)\n",
        lambda folder: None,
    ),
    "a library the dynamic linker loaded for one a pool's forked worker loaded, ended by the pool": (
        "import ctypes, multiprocessing\ndef value(path):\n    return ctypes.CDLL(path).value()\n"
        "if __name__ == '__main__':\n    with multiprocessing.get_context('fork').Pool(1) as pool:\n"
        "        print(pool.apply(value, (os.path.abspath('built/libop.so'),)))\n",
        lambda folder: build_linked_library(folder / "built", 2),
    ),
    "a library the dynamic linker loaded for one _ctypes.dlopen loaded, both unloaded before the end": (
        "import ctypes, _ctypes\nhandle = _ctypes.dlopen(os.path.abspath('built/libop.so'), ctypes.RTLD_LOCAL)\n"
        "value = ctypes.CFUNCTYPE(ctypes.c_int)(_ctypes.dlsym(handle, 'value'))\nprint(value())\n"
        "_ctypes.dlclose(handle)\n",
        lambda folder: build_linked_library(folder / "built", 2),
    ),
    "a library the dynamic linker loaded for one ctypes loaded by its path": (
        "import ctypes\nprint(ctypes.CDLL(os.path.abspath('built/libop.so')).value())\n",
        lambda folder: build_linked_library(folder / "built", 2),
    ),
    "a library the dynamic linker loaded for one a forked child loaded, which left by os._exit": (
        "import ctypes\nreading, writing = os.pipe()\nif os.fork() == 0:\n"
        "    os.write(writing, b'%d' % ctypes.CDLL(os.path.abspath('built/libop.so')).value())\n    os._exit(0)\n"
        "os.wait()\nprint(os.read(reading, 10).decode())\n",
        lambda folder: build_linked_library(folder / "built", 2),
    ),
    "a file read by a signal handler run in the middle of the hook's work": (
        "import signal\nseen = []\nsignal.signal(signal.SIGALRM, lambda *_: seen.append(open('data.txt').read()))\n"
        "signal.setitimer(signal.ITIMER_REAL, 0.05)\nwhile not seen:\n    os.path.exists('other.txt')\n"
        "print(seen[0])\n",
        lambda folder: (folder / "data.txt").write_text("2"),
    ),
    "a file read by a finalizer run in the middle of the hook's work": (
        "seen = []\nclass Holder:\n    def __init__(self):\n        self.me = self\n"
        "    def __del__(self):\n        seen.append(open('data.txt').read())\n"
        "while not seen:\n    Holder()\n    os.path.exists('other.txt')\nprint(seen[0])\n",
        lambda folder: (folder / "data.txt").write_text("2"),
    ),
    "a file read while the pair's own os.stat says every file is new": (
        "import time\nreal = os.stat\ndef fresh(*given, **options):\n    found = real(*given, **options)\n"
        "    now = int(time.time() * 1e9)\n"
        "    return os.stat_result(tuple(found)[:7] + (now // 10**9,) * 3 + (now, now, now))\n"
        "os.stat = fresh\nprint(open('data.txt').read())\nos.stat = real\n",
        lambda folder: (folder / "data.txt").write_text("2"),
    ),
}


@pytest.mark.parametrize("case", sorted(HEARD_ONLY_AS_IT_ENDS))
def test_what_the_pair_read_where_the_hook_hears_it_otherwise_than_as_it_reads_is_never_taken_as_current(
    stub_torch_python: str, tmp_path: Path, case: str
) -> None:
    """What decided a pair's output, heard at its end, at a child's ``os._exit``, by what the kernel mapped, or in
    the middle of the hook's own work (a signal handler, a finalizer), or through functions the pair replaced: once
    changed, the record is not current (it names the change, or says it does not know what its pair read)."""
    source, change = HEARD_ONLY_AS_IT_ENDS[case]
    if "library" in case and not CAN_BUILD_LIBRARIES:
        pytest.skip("needs a C compiler")
    for built, value in (("built", 1), ("alt", 2)):
        (tmp_path / built).mkdir()
        if "library" in case:
            build_linked_library(tmp_path / built, value)
    (tmp_path / "data.txt").write_text("1")
    record = run_alone(stub_torch_python, script(tmp_path, "heard", "import os\n" + source), tmp_path)
    assert record.outcome is Outcome.PASS, record.message
    assert printed(record) in (["1"], ["0.0"]), record.message
    change(tmp_path)
    assert not is_current(record), record.inputs[identity.READ]


def test_a_sitecustomize_put_in_a_folder_a_pth_file_adds_is_a_change(tmp_path: Path) -> None:
    """``site`` imports ``sitecustomize`` from any folder of ``sys.path`` as the interpreter starts, one a ``.pth``
    file of the environment adds too (an editable install): one put there is a change."""
    python, site_packages = stub_torch_venv(tmp_path / "venv")
    (tmp_path / "extra").mkdir()
    (site_packages / "extra.pth").write_text(str(tmp_path / "extra") + "\n")
    (tmp_path / "project").mkdir()
    probe = script(tmp_path / "project", "marked", "import os\nprint(os.environ.get('MARK'))\n")
    record = run_alone(python, probe, tmp_path / "project")
    assert printed(record) == ["None"], record.message
    (tmp_path / "extra" / "sitecustomize.py").write_text("import os\nos.environ['MARK'] = 'customized'\n")
    assert changed_files(record.inputs[identity.READ]) != []


def test_a_library_in_a_folder_inside_the_systems_is_no_library_of_the_systems() -> None:
    """The dynamic linker finds a library named without a folder in ``/usr/lib`` and the like by itself, not in a
    folder inside one, which a library's ``RPATH`` names (a project's own build installed there)."""
    assert reads.is_the_systems("/usr/lib/libm.so.6")
    assert not reads.is_the_systems("/usr/lib/myproject/libdep.so")
    assert not reads.is_the_systems("/usr/local/lib/libdep.so")


FOUND_OTHERWISE = {
    "a module that puts another in its place in sys.modules": (
        {"a/realshim.py": "WHO = '1'\n", "b/shim.py": "import sys, realshim\nsys.modules['shim'] = realshim\n"},
        "import os, sys\nsys.path[0:0] = [os.path.abspath(folder) for folder in ('a', 'm', 'b')]\n"
        "import shim\nprint(shim.WHO)\n",
        "m/shim.py",
    ),
    "a fallback loaded by its path under the name a lookup found nowhere": (
        {"fastlib_fallback.py": "WHO = '1'\n", "vendor/keep.txt": ""},
        "import importlib.util, os, sys\nsys.path.append(os.path.abspath('vendor'))\ntry:\n    import fastlib\n"
        "except ImportError:\n    spec = importlib.util.spec_from_file_location('fastlib', 'fastlib_fallback.py')\n"
        "    fastlib = importlib.util.module_from_spec(spec)\n    sys.modules['fastlib'] = fastlib\n"
        "    spec.loader.exec_module(fastlib)\nprint(fastlib.WHO)\n",
        "vendor/fastlib.py",
    ),
    "a module a finder of the pair's, put first, found through Python's path-based finder": (
        {"b/helper.py": "WHO = '1'\n", "a/keep.txt": ""},
        "import importlib.machinery, os, sys\nclass Hook:\n    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'helper':\n"
        "            return importlib.machinery.PathFinder.find_spec(name, path, target)\n"
        "        return None\nsys.meta_path.insert(0, Hook())\n"
        "sys.path[0:0] = [os.path.abspath(folder) for folder in ('a', 'b')]\nimport helper\nprint(helper.WHO)\n",
        "a/helper.py",
    ),
    "a module a finder of the pair's, put first, found with Python's file finder along sys.path itself": (
        {"b/helper.py": "WHO = '1'\n", "a/keep.txt": ""},
        "import importlib.machinery as m, os, sys\nclass Walk:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name != 'helper':\n            return None\n"
        "        for folder in sys.path:\n"
        "            spec = m.FileFinder(folder or '.', (m.SourceFileLoader, ['.py'])).find_spec(name)\n"
        "            if spec is not None:\n                return spec\nsys.meta_path.insert(0, Walk())\n"
        "sys.path[0:0] = [os.path.abspath(folder) for folder in ('a', 'b')]\nimport helper\nprint(helper.WHO)\n",
        "a/helper.py",
    ),
    "a file of another form, found by its path, put in the place of the module a lookup found later": (
        {
            "a/shim.txt": "WHO = '1'\n",
            "b/shim.py": "import importlib.machinery, os, sys\n"
            "module = importlib.machinery.SourceFileLoader('shim', os.path.abspath('a/shim.txt')).load_module()\n"
            "sys.modules['shim'] = module\n",
        },
        "import os, sys\nsys.path[0:0] = [os.path.abspath(folder) for folder in ('a', 'm', 'b')]\n"
        "import shim\nprint(shim.WHO)\n",
        "m/shim.py",
    ),
    "a module imported after an exec that failed, by a script that leaves by os._exit": (
        {"b/late.py": "WHO = '1'\n", "a/keep.txt": ""},
        "import os, sys\nsys.path[0:0] = [os.path.abspath(folder) for folder in ('a', 'b')]\ntry:\n"
        "    os.execv('/nonexistent/tool', ['tool'])\nexcept OSError:\n    pass\n"
        "import late\nprint(late.WHO, flush=True)\nos._exit(0)\n",
        "a/late.py",
    ),
}


@pytest.mark.parametrize("case", sorted(FOUND_OTHERWISE))
def test_a_module_put_where_a_lookup_searched_before_what_holds_its_name_is_a_change(
    stub_torch_python: str, tmp_path: Path, case: str
) -> None:
    """What ``sys.modules`` holds under a name at the end is not always where a lookup of it stopped (a shim put in
    its place, a fallback loaded by path; a process that goes on after an ``exec`` failed): a module put in a folder
    the lookup searched is a change."""
    files, source, added = FOUND_OTHERWISE[case]
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "m").mkdir(exist_ok=True)
    record = run_alone(stub_torch_python, script(tmp_path, "finds", source), tmp_path)
    assert printed(record) == ["1"], record.message
    (tmp_path / added).write_text("WHO = '2'\n")
    assert not is_current(record), record.inputs[identity.READ]


HELPERS_FOUND = {
    "imported": ("", ""),
    "registered for assert rewriting": ("import pytest\npytest.register_assert_rewrite('helpers')\n", ""),
    "loaded as a plugin by -p in addopts": ("", "[pytest]\naddopts = -p helpers\n"),
}


@pytest.mark.parametrize("found", sorted(HELPERS_FOUND))
def test_a_helper_of_the_tests_shadowed_where_it_was_looked_for_first_is_a_change(tmp_path: Path, found: str) -> None:
    """``tests/unit/test_a.py`` imports ``helpers`` from ``tests/``: a ``helpers.py`` put in ``tests/unit``, looked in
    first, is a change, whether pytest's assertion rewriting finds the helper (``register_assert_rewrite``, a plugin
    loaded early by ``-p``) or not."""
    python = installed_pytest_python(tmp_path / "venv")
    project = tmp_path / "project"
    (project / "tests" / "unit").mkdir(parents=True)
    conftest, ini = HELPERS_FOUND[found]
    (project / "tests" / "conftest.py").write_text(conftest)
    if ini:  # a plugin -p loads is imported before the tests' folders are on sys.path: an editable install's are
        (project / "pytest.ini").write_text(ini)
        site_packages = next(Path(python).parent.parent.glob("lib/python*/site-packages"))
        for name, folder in (("aa_unit.pth", "tests/unit"), ("zz_tests.pth", "tests")):
            (site_packages / name).write_text(f"{project / folder}\n")
    (project / "tests" / "helpers.py").write_text("VALUE = 1\n")
    (project / "tests" / "unit" / "test_a.py").write_text(
        "from helpers import VALUE\n\n\ndef test_a():\n    assert VALUE == 1\n"
    )
    probe = loader.probe_at(project / "tests" / "unit" / "test_a.py", project)
    records = runner.run_cell(python, [Pair(probe, "cpu")], 60.0, workdir=project).records
    assert [record.outcome for record in records] == [Outcome.PASS], records
    (project / "tests" / "unit" / "helpers.py").write_text("VALUE = 2\n")
    assert ran_again(records) != []


def test_a_module_put_in_a_zip_file_on_sys_path_that_was_not_there_is_a_change(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """A zip file on ``sys.path`` is looked in as a folder is: one not there as the pair ran, made since with a
    module the lookup would find there first, is a change."""
    (tmp_path / "helper.py").write_text("WHO = '1'\n")
    source = "import os, sys\nsys.path.insert(0, os.path.abspath('plug.zip'))\nimport helper\nprint(helper.WHO)\n"
    record = run_alone(stub_torch_python, script(tmp_path, "zipped", source), tmp_path)
    assert printed(record) == ["1"], record.message
    with zipfile.ZipFile(tmp_path / "plug.zip", "w") as made:
        made.writestr("helper.py", "WHO = '2'\n")
    assert changed_files(record.inputs[identity.READ]) == [f"{tmp_path / 'plug.zip' / 'helper'}.* appeared"]


def test_a_folder_a_pth_file_names_that_was_not_there_is_a_change(tmp_path: Path) -> None:
    """``site`` adds to ``sys.path`` the folders a ``.pth`` file names that are there as Python starts: one made
    since (with a module an import then finds) is a change."""
    python, site_packages = stub_torch_venv(tmp_path / "venv")
    (site_packages / "extra.pth").write_text(str(tmp_path / "extra") + "\n")
    (tmp_path / "project").mkdir()
    source = "try:\n    import extra_mod\n    print(extra_mod.WHO)\nexcept ImportError:\n    print('none')\n"
    record = run_alone(python, script(tmp_path / "project", "optional", source), tmp_path / "project")
    assert printed(record) == ["none"], record.message
    (tmp_path / "extra").mkdir()
    (tmp_path / "extra" / "extra_mod.py").write_text("WHO = '1'\n")
    assert changed_files(record.inputs[identity.READ]) != []


def at_platform() -> str:
    """What the kernel told the dynamic linker the platform is (``AT_PLATFORM``), which ``$PLATFORM`` names."""
    getauxval = ctypes.CDLL(None).getauxval
    getauxval.restype, getauxval.argtypes = ctypes.c_char_p, [ctypes.c_ulong]
    return os.fsdecode(getauxval(15))


LINKER_LOOKS_FIRST = {
    "a folder it names": ("{first}", "", ""),
    "a folder it names that was not there": ("{first}", None, ""),
    "a folder of glibc-hwcaps in a folder it names": ("{first}", "glibc-hwcaps/x86-64-v2", "glibc-hwcaps/x86-64-v2"),
    "a folder of the legacy hwcaps in a folder it names": ("{first}", "x86_64", "x86_64"),
    "the folder its $PLATFORM names, not there": ("{first}/$PLATFORM", None, "{platform}"),
}


@pytest.mark.skipif(not CAN_BUILD_LIBRARIES, reason="needs a C compiler")
@pytest.mark.parametrize("case", sorted(LINKER_LOOKS_FIRST))
def test_a_library_put_where_the_linker_looks_along_ld_library_path_before_the_one_loaded_is_a_change(
    stub_torch_python: str, tmp_path: Path, case: str
) -> None:
    """``LD_LIBRARY_PATH`` (the matrix's ``env:``) names two folders, and ``ctypes`` loads a library by its name from
    the second: a library it links to put in the first is the one the dynamic linker loads by hand then, and so is
    one put in a folder it looks in before the first (``glibc-hwcaps/x86-64-v2``, ``x86_64``), in the first made
    since, or in the folder its ``$PLATFORM`` names."""
    named, made, put = LINKER_LOOKS_FIRST[case]
    first, second, other = tmp_path / "first", tmp_path / "second", tmp_path / "other"
    for folder, value in ((second, 2), (other, 9)):
        folder.mkdir()
        build_linked_library(folder, value)
    if made is not None:
        (first / made).mkdir(parents=True)
    probe = script(tmp_path, "by_name", "import ctypes\nprint(ctypes.CDLL('libop.so').value())\n")
    searched = f"{named.format(first=first)}:{second}"
    seen = identity.pair_environment(stub_torch_python, {"LD_LIBRARY_PATH": searched}, (), os.environ)
    [record] = runner.run_cell(
        stub_torch_python, [Pair(probe, "cpu")], 30.0, variables_seen=seen, workdir=tmp_path
    ).records
    assert printed(record) == ["2"], record.message
    assert is_current(record), record.inputs[identity.READ]
    target = first / put.format(platform=at_platform())
    target.mkdir(parents=True, exist_ok=True)
    (other / "libdep.so").rename(target / "libdep.so")  # what libop.so links to: found there before its RUNPATH
    [again] = runner.run_cell(
        stub_torch_python, [Pair(probe, "cpu")], 30.0, variables_seen=seen, workdir=tmp_path
    ).records  # by hand: whether the linker loads it from there is the linker's to say (glibc 2.37: no legacy hwcaps)
    assert is_current(record) == (printed(again) == ["2"]), (printed(again), record.inputs[identity.READ])
    assert printed(again) == ["9"] or (case.startswith("a folder of the legacy") and not reads.has_legacy_hwcaps())


@pytest.mark.skipif(not CAN_BUILD_LIBRARIES, reason="needs a C compiler")
def test_ld_library_path_counts_as_the_linker_read_it_as_the_process_started(tmp_path: Path) -> None:
    """The dynamic linker reads ``LD_LIBRARY_PATH`` once, as the process starts: a ``.pth`` file that takes it out
    of ``os.environ`` changes nothing it loads, and a library put in a folder it names is still a change."""
    python, site_packages = stub_torch_venv(tmp_path / "venv")
    (site_packages / "forget.pth").write_text("import os; os.environ.pop('LD_LIBRARY_PATH', None)\n")
    first, second, other = tmp_path / "first", tmp_path / "second", tmp_path / "other"
    first.mkdir()
    for folder, value in ((second, 2), (other, 9)):
        folder.mkdir()
        build_linked_library(folder, value)
    probe = script(tmp_path, "by_name", "import ctypes\nprint(ctypes.CDLL('libop.so').value())\n")
    seen = identity.pair_environment(python, {"LD_LIBRARY_PATH": f"{first}:{second}"}, (), os.environ)
    [record] = runner.run_cell(python, [Pair(probe, "cpu")], 30.0, variables_seen=seen, workdir=tmp_path).records
    assert printed(record) == ["2"], record.message
    assert is_current(record), record.inputs[identity.READ]
    (other / "libdep.so").rename(first / "libdep.so")
    assert not is_current(record), record.inputs[identity.READ]


def test_a_script_starts_with_the_variables_the_pair_was_given_not_those_the_worker_s_site_left(tmp_path: Path) -> None:
    """A ``.pth`` file's line runs in every Python of the environment, the worker's too: what it appends to a
    variable, the script's process sees appended as by hand (in a venv whose ``lib64`` leads to ``lib``, Python
    3.11's ``site`` runs it twice), not again on top of what the worker's own ``site`` appended."""
    python, site_packages = stub_torch_venv(tmp_path / "venv")
    (site_packages / "mark.pth").write_text(
        "import os; os.environ['TM_MARKS'] = os.environ.get('TM_MARKS', '') + '+'\n"
    )
    by_hand = subprocess.run([python, "-c", "import os; print(os.environ['TM_MARKS'])"], capture_output=True, text=True)
    record = run_alone(python, script(tmp_path, "marks", "import os\nprint(os.environ['TM_MARKS'])\n"), tmp_path)
    assert printed(record) == by_hand.stdout.split(), record.message


@pytest.mark.parametrize(
    "version, legacy",
    [("glibc 2.36", True), ("glibc 2.37", False), ("glibc 2.40", False), ("glibc 3.0", False), ("musl", True),
     ("glibc x", True)],
)  # fmt: skip
def test_the_legacy_hwcaps_folders_are_counted_where_glibc_still_looks_in_them(version: str, legacy: bool) -> None:
    """glibc 2.37 stopped looking libraries up in the legacy ``hwcaps`` folders; what cannot be asked counts them."""
    assert reads.has_legacy_hwcaps(version) is legacy


def test_origin_and_the_linker_s_variables_are_asked_of_the_kernel() -> None:
    """``$ORIGIN`` is the folder of the program the kernel runs, and a variable's value is the one the process
    started with."""
    code = (
        "import os\nfrom torchmatrix.envside.torchmatrix_worker import reads\nos.environ.pop('SEEN')\n"
        "os.environ['LATER'] = '1'\nstarted = reads.environment_at_start()\n"
        "print(started['SEEN'], started.get('LATER', '-'))\n"
        "print(reads.running_program())\n"
    )
    told = subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, "SEEN": "a=b:c"}, capture_output=True, text=True
    )
    assert told.stdout.splitlines() == ["a=b:c -", os.path.realpath(sys.executable)], told.stderr


@pytest.mark.skipif(not CAN_BUILD_LIBRARIES, reason="needs a C compiler")
def test_a_library_put_in_a_relative_folder_of_ld_library_path_from_where_the_pair_went_is_a_change(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """The dynamic linker looks in a folder ``LD_LIBRARY_PATH`` names by a relative path from the working folder of
    the moment it loads a library: from the folder a pair changed to (``os.chdir``) too."""
    second, other = tmp_path / "second", tmp_path / "other"
    for folder, value in ((second, 2), (other, 9)):
        folder.mkdir()
        build_linked_library(folder, value)
    (tmp_path / "sub").mkdir()
    source = "import ctypes, os\nos.chdir('sub')\nprint(ctypes.CDLL('libop.so').value())\n"
    seen = identity.pair_environment(stub_torch_python, {"LD_LIBRARY_PATH": f"rel:{second}"}, (), os.environ)
    [record] = runner.run_cell(
        stub_torch_python, [Pair(script(tmp_path, "went", source), "cpu")], 30.0, variables_seen=seen,
        workdir=tmp_path,
    ).records  # fmt: skip
    assert printed(record) == ["2"], record.message
    assert is_current(record), record.inputs[identity.READ]
    (tmp_path / "sub" / "rel").mkdir()
    (other / "libdep.so").rename(tmp_path / "sub" / "rel" / "libdep.so")
    assert not is_current(record), record.inputs[identity.READ]


@pytest.mark.skipif(not CAN_BUILD_LIBRARIES, reason="needs a C compiler")
def test_a_link_to_a_library_the_environment_s_code_resolved_pointed_at_another_is_a_change(tmp_path: Path) -> None:
    """``torch.ops.load_library`` loads a library by where its path leads (``os.path.realpath``): a link to it
    (``libop.so`` to ``libop.so.1``, as a build links a library's versions) pointed at another build is a change,
    though the file it pointed to is as it was."""
    python, site_packages = stub_torch_venv(tmp_path / "venv")
    (site_packages / "oplibs.py").write_text(
        "import ctypes, os\n\n\ndef load_library(path):\n    return ctypes.CDLL(os.path.realpath(path))\n"
    )
    for folder, value in ((tmp_path / "one", 2), (tmp_path / "two", 9)):
        folder.mkdir()
        build_linked_library(folder, value)
    (tmp_path / "libop_link.so").symlink_to(tmp_path / "one" / "libop.so")
    probe = script(tmp_path, "linked", "import oplibs\nprint(oplibs.load_library('libop_link.so').value())\n")
    record = run_alone(python, probe, tmp_path)
    assert printed(record) == ["2"], record.message
    assert is_current(record), record.inputs[identity.READ]
    (tmp_path / "libop_link.so").unlink()
    (tmp_path / "libop_link.so").symlink_to(tmp_path / "two" / "libop.so")
    assert printed(run_alone(python, probe, tmp_path)) == ["9"]
    assert not is_current(record), record.inputs[identity.READ]


@pytest.mark.skipif(not CAN_BUILD_LIBRARIES, reason="needs a C compiler")
def test_a_library_put_in_a_folder_a_loaded_library_s_runpath_names_before_the_one_used_is_a_change(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """``libop.so``, loaded by its path, links ``libdep.so`` through its ``RUNPATH``, ``$ORIGIN/first:$ORIGIN/second``,
    and the dynamic linker finds it in ``second``: one put in ``first`` is the one it loads by hand then."""
    top = tmp_path / "top"
    for name in ("first", "second", "other"):
        (top / name).mkdir(parents=True)
    for name, value in (("second", 2), ("other", 9)):
        (top / name / "dep.c").write_text(f"int dep(void) {{ return {value}; }}\n")
        subprocess.run(["cc", "-shared", "-fPIC", "-o", str(top / name / "libdep.so"), str(top / name / "dep.c")],
                       check=True)  # fmt: skip
    (top / "op.c").write_text("int dep(void);\nint value(void) { return dep(); }\n")
    linked = [f"-L{top / 'second'}", "-ldep", "-Wl,-rpath,$ORIGIN/first:$ORIGIN/second"]
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(top / "libop.so"), str(top / "op.c"), *linked], check=True)
    probe = script(tmp_path, "runpath", "import ctypes\nprint(ctypes.CDLL('top/libop.so').value())\n")
    record = run_alone(stub_torch_python, probe, tmp_path)
    assert printed(record) == ["2"], record.message
    assert is_current(record), record.inputs[identity.READ]
    (top / "other" / "libdep.so").rename(top / "first" / "libdep.so")
    assert printed(run_alone(stub_torch_python, probe, tmp_path)) == ["9"]
    assert not is_current(record), record.inputs[identity.READ]


ZIP_ON_PYTHONPATH = {
    "a module put in it where the pair looked for one found later": (
        {"other.py": "X = 1\n"},
        "import colorsys\nprint(colorsys.rgb_to_hsv(1, 0, 0)[0])\n",
        "0.0",
        {"other.py": "X = 1\n", "colorsys.py": "def rgb_to_hsv(*colour):\n    return ['shadowed']\n"},
    ),
    "its sitecustomize changed": (
        {"sitecustomize.py": "import os\nos.environ['MARK'] = '1'\n"},
        "import os\nprint(os.environ.get('MARK'))\n",
        "1",
        {"sitecustomize.py": "import os\nos.environ['MARK'] = '2'\n"},
    ),
}


def write_zip(path: Path, files: dict[str, str]) -> None:
    with zipfile.ZipFile(path, "w") as made:
        for name, text in files.items():
            made.writestr(name, text)


@pytest.mark.parametrize("case", sorted(ZIP_ON_PYTHONPATH))
def test_a_zip_file_on_pythonpath_that_python_opened_as_it_started_counts_by_what_the_pair_looked_for_in_it(
    stub_torch_python: str, tmp_path: Path, case: str
) -> None:
    """A zip file ``PYTHONPATH`` names (``env:``) is opened as Python starts (``site`` looks for ``sitecustomize``
    there), before the pair hears anything, and ``zipimport`` keeps what is in it: a module put in it where the pair
    looked for one, or the ``sitecustomize`` Python imported from it changed, is a change."""
    before, source, printed_before, after = ZIP_ON_PYTHONPATH[case]
    write_zip(tmp_path / "lib.zip", before)
    seen = identity.pair_environment(stub_torch_python, {"PYTHONPATH": str(tmp_path / "lib.zip")}, (), os.environ)
    [record] = runner.run_cell(
        stub_torch_python, [Pair(script(tmp_path, "zipped", source), "cpu")], 30.0, variables_seen=seen,
        workdir=tmp_path,
    ).records  # fmt: skip
    assert printed(record) == [printed_before], record.message
    assert is_current(record), record.inputs[identity.READ]
    write_zip(tmp_path / "lib.zip", after)
    assert not is_current(record), record.inputs[identity.READ]


def test_a_module_of_an_ending_the_pair_added_to_python_s_put_where_it_was_looked_for_first_is_a_change(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """A pair that adds an ending to ``importlib.machinery.SOURCE_SUFFIXES`` (as Hy adds ``.hy``) imports
    ``helper.hy`` from ``b``: one put in ``a``, looked in first, is a change, as a ``helper.py`` would be."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "helper.hy").write_text("WHO = '1'\n")
    source = (
        "import importlib.machinery, os, sys\nimportlib.machinery.SOURCE_SUFFIXES.insert(0, '.hy')\n"
        "sys.path_importer_cache.clear()\nsys.path[0:0] = [os.path.abspath(folder) for folder in ('a', 'b')]\n"
        "import helper\nprint(helper.WHO)\n"
    )
    record = run_alone(stub_torch_python, script(tmp_path, "hy", source), tmp_path)
    assert printed(record) == ["1"], record.message
    assert is_current(record), record.inputs[identity.READ]
    (tmp_path / "a" / "helper.hy").write_text("WHO = '2'\n")
    assert changed_files(record.inputs[identity.READ]) == [f"{tmp_path / 'a' / 'helper.hy'} appeared"]


@pytest.mark.parametrize("there", [True, False])
def test_a_pth_file_put_in_a_site_folder_a_pth_file_adds_is_a_change(tmp_path: Path, there: bool) -> None:
    """A ``.pth`` file of the environment that adds a site folder (``site.addsitedir``, which adds one not there
    yet too) has ``site`` run that folder's ``.pth`` files too, as Python starts: one put there that adds a folder
    with a module the pair looked for is a change."""
    python, site_packages = stub_torch_venv(tmp_path / "venv")
    if there:
        (tmp_path / "extra").mkdir()
    (site_packages / "extra.pth").write_text(f"import site; site.addsitedir({str(tmp_path / 'extra')!r})\n")
    (tmp_path / "found").mkdir()
    (tmp_path / "found" / "extra_mod.py").write_text("WHO = '1'\n")
    (tmp_path / "project").mkdir()
    source = "try:\n    import extra_mod\n    print(extra_mod.WHO)\nexcept ImportError:\n    print('none')\n"
    probe = script(tmp_path / "project", "optional", source)
    record = run_alone(python, probe, tmp_path / "project")
    assert printed(record) == ["none"], record.message
    assert is_current(record), record.inputs[identity.READ]
    (tmp_path / "extra").mkdir(exist_ok=True)
    (tmp_path / "extra" / "more.pth").write_text(str(tmp_path / "found") + "\n")
    assert printed(run_alone(python, probe, tmp_path / "project")) == ["1"]
    assert not is_current(record), record.inputs[identity.READ]


@pytest.mark.skipif(not CAN_BUILD_LIBRARIES, reason="needs a C compiler")
def test_a_library_put_in_a_folder_an_environments_library_has_the_linker_look_in_first_is_a_change(
    tmp_path: Path,
) -> None:
    """A library of the environment (a package's, built from source) whose ``RUNPATH`` names a folder outside it
    before its own (``/usr/local/cuda/lib64``, then ``$ORIGIN``): a library it links put there is the one the
    dynamic linker loads by hand then."""
    python, site_packages = stub_torch_venv(tmp_path / "venv")
    first, other = tmp_path / "first", tmp_path / "other"
    for folder in (first, other):
        folder.mkdir()
    for folder, value in ((site_packages, 1), (other, 2)):
        (folder / "dep.c").write_text(f"int dep(void) {{ return {value}; }}\n")
        subprocess.run(["cc", "-shared", "-fPIC", "-o", str(folder / "libdep.so"), str(folder / "dep.c")], check=True)
    (site_packages / "op.c").write_text("int dep(void);\nint value(void) { return dep(); }\n")
    runpath = f"-Wl,--enable-new-dtags,-rpath,{first}:$ORIGIN"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(site_packages / "libop.so"), str(site_packages / "op.c"),
                    f"-L{site_packages}", "-ldep", runpath], check=True)  # fmt: skip
    (tmp_path / "project").mkdir()
    source = f"import ctypes\nprint(ctypes.CDLL({str(site_packages / 'libop.so')!r}).value())\n"
    record = run_alone(python, script(tmp_path / "project", "runpath", source), tmp_path / "project")
    assert printed(record) == ["1"], record.message
    assert is_current(record), record.inputs[identity.READ]
    (other / "libdep.so").rename(first / "libdep.so")
    assert not is_current(record), record.inputs[identity.READ]


def test_a_library_ld_preload_names_that_was_not_there_is_a_change_and_a_system_folder_is_the_systems(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """``LD_PRELOAD`` (the matrix's ``env:``) names a library that is not there, which the dynamic linker skips: put
    there, it is loaded into every process by hand. A system folder ``LD_LIBRARY_PATH`` names holds the system's
    libraries, which count as the system's do: not by what is in it."""
    preloaded = tmp_path / "pre" / "libpre.so"
    system = sorted(reads.SYSTEM_LIBRARIES)[0]
    declared = {"LD_PRELOAD": str(preloaded), "LD_LIBRARY_PATH": system}
    probe = script(tmp_path, "plain", "print('ran')\n")
    seen = identity.pair_environment(stub_torch_python, declared, (), os.environ)
    [record] = runner.run_cell(
        stub_torch_python, [Pair(probe, "cpu")], 30.0, variables_seen=seen, workdir=tmp_path
    ).records
    assert printed(record) == ["ran"], record.message
    assert not [path for path in record.inputs[identity.READ] if path.startswith(system + " ")]
    assert is_current(record), record.inputs[identity.READ]
    preloaded.parent.mkdir()
    preloaded.write_bytes(b"a library")
    assert not is_current(record), record.inputs[identity.READ]
