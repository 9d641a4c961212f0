"""A record's identity, through real nox, uv and torch: whatever a pair depended on, changing it shows.

Each test changes one thing a result depended on without touching the probe:
a file the probe read, the caller's shell, a variable the matrix declares, where
torch comes from. torchmatrix must notice, say so, and re-run; until it does,
every view shows the record as stale.
"""

from __future__ import annotations

import os
import platform
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from torchmatrix import identity, interpreters
from torchmatrix.core import Outcome
from torchmatrix.index.findlinks import pip_find_links
from torchmatrix.results import CellResult
from torchmatrix.worker import repeats

from .. import standin
from ..conftest import CAN_BUILD_LIBRARIES, build_library
from .conftest import Run, Torch, Workspace

pytestmark = pytest.mark.integration

READS = """\
from helper_value import VALUE

with open(__file__.replace("uses_helper.py", "data.txt")) as data:
    print(VALUE, data.read().strip())
"""


def stored(workspace: Workspace) -> CellResult:
    [result] = workspace.scan().results
    return result


def output(workspace: Workspace, torch: Torch) -> list[str]:
    [record] = stored(workspace).records
    assert record.outcome is Outcome.PASS, record.message
    return record.metrics["output"]


def run_probe(workspace: Workspace, torch: Torch, name: str, source: str, prefix: Sequence[str] = ()) -> Run:
    """Write ``source`` as the probe ``name``, make it the matrix's one probe, and run it (under ``prefix``)."""
    (workspace.folder / "probes" / f"{name}.py").write_text(source)
    workspace.matrix([torch], [name])
    ran = workspace.nox("-s", "probe", prefix=prefix)
    assert ran.returncode == 0, ran.output
    return ran


def test_a_file_the_probe_read_is_an_input_and_its_record_is_stale_until_it_runs_again(
    workspace: Workspace, torch_here: Torch, warm: None
) -> None:
    probes = workspace.folder / "probes"
    (probes / "uses_helper.py").write_text(READS)
    (probes / "helper_value.py").write_text("VALUE = 1\n")
    (probes / "data.txt").write_text("a\n")
    workspace.matrix([torch_here], ["uses_helper"])
    first = workspace.nox("-s", "probe")
    assert first.returncode == 0, first.output
    assert output(workspace, torch_here) == ["1 a"]
    again = workspace.nox("-s", "probe")
    assert "up to date" in again.output, again.output

    (probes / "helper_value.py").write_text("VALUE = 2\n")
    report = workspace.nox("-s", "report")
    assert report.returncode == 0, report.output
    table = (workspace.folder / "out" / "COMPATIBILITY.md").read_text()
    assert "| ↻¹ |" in table and "1. stale: was ✓ pass; " in table and "helper\\_value.py changed" in table
    assert "↻" in report.output  # the terminal's table too

    rerun = workspace.nox("-s", "probe")
    assert rerun.returncode == 0, rerun.output
    assert f"{probes / 'helper_value.py'} changed" in rerun.output
    assert output(workspace, torch_here) == ["2 a"]

    (probes / "data.txt").write_text("b\n")
    data_changed = workspace.nox("-s", "probe")
    assert f"{probes / 'data.txt'} changed" in data_changed.output
    assert output(workspace, torch_here) == ["2 b"]


SEES_TM_X = """\
import os


def run(device):
    return {"outcome": "pass", "metrics": {"tm_x": os.environ.get("TM_X", "a")}, "message": ""}
"""


def test_a_pth_file_added_to_the_environment_is_a_change(tmp_path: Path, suite_cache: Path) -> None:
    """site runs every ``.pth`` file of the environment's site-packages as the interpreter starts, before the worker
    hears anything: one added by hand (an ``import`` line setting a variable) changes what the pair sees."""
    workspace = Workspace(tmp_path, tmp_path / ".nox", suite_cache)
    standin.wheel(tmp_path / "wheels", "9.0.0", {})
    (workspace.folder / "probes" / "sees_tm_x.py").write_text(SEES_TM_X)
    python = interpreters.discover(cache=suite_cache / "interpreters.json")[0].minor
    with standin.index(tmp_path / "wheels") as url:
        workspace.matrix([Torch("9.0.0", python)], ["sees_tm_x"])
        with workspace.matrix_file.open("a") as matrix:
            matrix.write(f"index_url: {url}\n")
        environ = workspace.environ(UV_CACHE_DIR=str(tmp_path / "uv-cache"))
        first = workspace.nox("-s", "probe", env=environ)
        assert first.returncode == 0, first.output
        [record] = stored(workspace).records
        assert record.metrics["tm_x"] == "a", record.message
        assert "up to date" in workspace.nox("-s", "probe", env=environ).output

        [site_packages] = workspace.env("9.0.0").glob("lib/python*/site-packages")
        (site_packages / "zz_evil.pth").write_text("import os; os.environ['TM_X'] = 'b'\n")
        rerun = workspace.nox("-s", "probe", env=environ)
        assert rerun.returncode == 0, rerun.output
        assert "up to date" not in rerun.output, rerun.output
        assert f"{site_packages / '*.pth'} appeared" in rerun.output, rerun.output  # it held none
        [record] = stored(workspace).records
        assert record.metrics["tm_x"] == "b", record.message
        assert "up to date" in workspace.nox("-s", "probe", env=environ).output


SHADOWED = """\
import colorsys
import json

print(colorsys.rgb_to_hsv(0.2, 0.4, 0.4)[0], json.dumps(1))
"""


def test_a_module_put_where_an_import_looked_first_is_a_change(
    workspace: Workspace, torch_here: Torch, warm: None
) -> None:
    """The import system finds ``colorsys`` in the standard library after looking beside the script, through a
    listing it caches, with no ``open``: a ``colorsys.py`` put there (or a package) is found instead."""
    probes = workspace.folder / "probes"
    (probes / "shadowed.py").write_text(SHADOWED)
    workspace.matrix([torch_here], ["shadowed"])
    first = workspace.nox("-s", "probe")
    assert first.returncode == 0, first.output
    assert output(workspace, torch_here) == ["0.5 1"]
    assert "up to date" in workspace.nox("-s", "probe").output

    (probes / "colorsys").mkdir()
    (probes / "colorsys" / "__init__.py").write_text("def rgb_to_hsv(*a):\n    return ('shadowed',)\n")
    rerun = workspace.nox("-s", "probe")
    assert rerun.returncode == 0, rerun.output
    assert f"{probes / 'colorsys.*'} appeared" in rerun.output, rerun.output
    assert output(workspace, torch_here) == ["shadowed 1"]
    assert "up to date" in workspace.nox("-s", "probe").output, "the module found is a file read: no change now"


THREADS = """\
import torch

print(torch.get_num_threads())
"""


@pytest.mark.skipif(sorted(os.sched_getaffinity(0))[:2] != [0, 1], reason="needs CPUs 0 and 1 to run on")
def test_the_cpus_a_pair_may_use_are_an_input(workspace: Workspace, torch_here: Torch, warm: None) -> None:
    """torch's default number of threads follows the CPUs a process may run on, and a float sum's last bits
    follow it: a run under ``taskset -c 0`` is another run than one on every CPU, and than one on CPU 1 (on a
    machine of unlike cores, another speed)."""
    run_probe(workspace, torch_here, "threads", THREADS, prefix=["taskset", "-c", "0"])
    assert output(workspace, torch_here) == ["1"]
    second = workspace.nox("-s", "probe", prefix=["taskset", "-c", "1"])
    assert "the CPUs the pairs may use changed: 0 → 1" in second.output, second.output
    every = workspace.nox("-s", "probe")
    assert every.returncode == 0, every.output
    cpus = identity.usable_cpus()
    assert f"the CPUs the pairs may use changed: 1 → {cpus}" in every.output, every.output
    assert output(workspace, torch_here) == [str(len(os.sched_getaffinity(0)))]


LOADED_BY_ITS_OWN_IMPORT = """\
import os
import sys

print("torch" in sys.modules)
os.environ["MKL_NUM_THREADS"] = "1"  # read as torch loads
import torch

print(torch.get_num_threads())
"""


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to run on")
def test_a_script_s_own_import_loads_torch_after_what_it_set_before_as_by_hand(
    workspace: Workspace, torch_here: Torch, warm: None
) -> None:
    """A script's process is a new Python: torch is not there before its ``import torch``, which reads the
    variables the script set before it, as by hand; the worker's own torch was loaded before them."""
    run_probe(workspace, torch_here, "loads_torch", LOADED_BY_ITS_OWN_IMPORT)
    assert output(workspace, torch_here) == ["False", "1"]


THREADS_SET_IN_CONFTEST = """\
import os

os.environ["OMP_NUM_THREADS"] = "1"  # before the tests import torch, which loads OpenMP, by hand
"""

THREADS_TESTED = """\
import torch


def test_one_thread():
    assert torch.get_num_threads() == 1
"""


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to run on")
def test_a_thread_count_a_conftest_sets_before_the_tests_import_torch_counts_as_by_hand(
    workspace: Workspace, torch_here: Torch, warm: None
) -> None:
    """The tests' process finds torch imported by the worker: OpenMP read its threads then, by hand as torch
    loads, after the ``conftest.py``."""
    (workspace.folder / "probes" / "conftest.py").write_text(THREADS_SET_IN_CONFTEST)
    run_probe(workspace, torch_here, "test_threads", THREADS_TESTED)
    [record] = stored(workspace).records
    assert (record.probe, record.outcome) == ("probes/test_threads.py::test_one_thread", Outcome.PASS), record.message


STACK = """\
import resource

print(resource.getrlimit(resource.RLIMIT_STACK)[0])
"""


@pytest.mark.skipif(sys.platform == "win32", reason="needs ulimit")
def test_the_resource_limits_a_pair_runs_under_are_an_input(
    workspace: Workspace, torch_here: Torch, warm: None
) -> None:
    """A stack's size decides where a deep recursion crashes: a run under ``ulimit -s`` is another run."""
    run_probe(workspace, torch_here, "stack", STACK, prefix=["sh", "-c", 'ulimit -S -s 4096 && exec "$@"', "sh"])
    assert output(workspace, torch_here) == [str(4096 * 1024)]
    usual = workspace.nox("-s", "probe")
    assert usual.returncode == 0, usual.output
    assert "the resource limits the pairs run under changed: stack 4194304 " in usual.output, usual.output
    assert output(workspace, torch_here) != [str(4096 * 1024)]


UMASK = """\
import os, tempfile

with tempfile.TemporaryDirectory() as folder:
    made = os.path.join(folder, "made")
    open(made, "w").close()
    print(oct(os.stat(made).st_mode & 0o777))
"""


@pytest.mark.skipif(sys.platform == "win32", reason="needs umask")
def test_the_umask_a_pair_runs_under_is_an_input(workspace: Workspace, torch_here: Torch, warm: None) -> None:
    """The permissions of every file a pair makes follow its umask: a run under ``umask 077`` is another run."""
    run_probe(workspace, torch_here, "umask", UMASK, prefix=["sh", "-c", 'umask 077 && exec "$@"', "sh"])
    assert output(workspace, torch_here) == ["0o600"]
    usual = workspace.nox("-s", "probe", prefix=["sh", "-c", 'umask 022 && exec "$@"', "sh"])
    assert usual.returncode == 0, usual.output
    assert "the user, groups, capabilities and umask the pairs run as changed" in usual.output, usual.output
    assert output(workspace, torch_here) == ["0o644"]


PROCESS = """\
import os

print(os.getgroups(), os.access("nobodys.txt", os.R_OK), os.getpriority(os.PRIO_PROCESS, 0), os.sched_getscheduler(0))
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
told = [open("/proc/self/" + name).read().strip() for name in ("personality", "oom_score_adj")]
print(status["NoNewPrivs"].strip(), *told)
"""

RESTRICTED = ["setpriv", "--groups", "10", "--bounding-set", "-dac_override,-dac_read_search", "--no-new-privs",
              "--", "nice", "-n", "5", "chrt", "--batch", "0", "setarch", platform.machine(), "--addr-no-randomize",
              "choom", "-n", "500", "--"]  # fmt: skip
"""util-linux's programs, each giving the process it starts (and so nox, and the pairs) another state than a shell's:
another group, root without the capability to read any file, no new privileges, less priority, the batch
scheduler, no address randomisation, a readier OOM killer."""


@pytest.mark.skipif(
    not all(shutil.which(program) for program in ("setpriv", "chrt", "setarch", "choom"))
    or not hasattr(os, "getuid")
    or os.getuid() != 0,
    reason="needs util-linux's setpriv, chrt, setarch and choom, as root",
)
def test_the_groups_capabilities_and_state_a_pair_inherits_are_inputs(
    workspace: Workspace, torch_here: Torch, warm: None
) -> None:
    """Another group, root without ``CAP_DAC_OVERRIDE`` (which may then read no file it does not own), a lower
    priority, another scheduler or personality: each is another run, as each changes what a test of it finds. What
    the kernel says of the process is asked, each field it has: a state no list named is one too."""
    nobodys = workspace.folder / "nobodys.txt"  # beside matrix.yaml: the folder the pairs run from
    nobodys.write_text("")
    os.chown(nobodys, 65534, 65534)
    nobodys.chmod(0o600)
    run_probe(workspace, torch_here, "process", PROCESS)
    before = output(workspace, torch_here)
    other = workspace.nox("-s", "probe", prefix=RESTRICTED)
    assert other.returncode == 0, other.output
    assert "the user, groups, capabilities and umask the pairs run as changed: " in other.output, other.output
    [changed] = [line for line in other.output.splitlines() if "the process state the pairs inherit changed: " in line]
    for told in ("niceness 0 → 5", "scheduler 0 0 → 3 0", "NoNewPrivs 0 → 1", "oom_score_adj 0 → 500"):
        assert told in changed, changed
    assert output(workspace, torch_here) == ["[10] False 5 3", "1 00040000 500"] != before
    assert "up to date" in workspace.nox("-s", "probe", prefix=RESTRICTED).output


LOADS = """\
import ctypes, os
import torch
library = os.environ["TORCHMATRIX_FAULTS_LIBRARY"]
torch.ops.load_library(library)  # as a custom operator's library is loaded: with ctypes
print(ctypes.CDLL(library).value())
"""


@pytest.mark.skipif(not CAN_BUILD_LIBRARIES, reason="needs a C compiler making shared libraries (cc)")
def test_a_shared_library_torch_loads_is_an_input_and_rebuilt_its_record_runs_again(
    workspace: Workspace, torch_here: Torch, warm: None, tmp_path: Path
) -> None:
    built = tmp_path / "build"
    built.mkdir()
    library = build_library(built, 1)
    (workspace.folder / "probes" / "loads.py").write_text(LOADS)
    workspace.matrix([torch_here], ["loads"])
    caller = workspace.environ(TORCHMATRIX_FAULTS_LIBRARY=str(library))
    assert workspace.nox("-s", "probe", env=caller).returncode == 0
    assert output(workspace, torch_here) == ["1"]
    assert "up to date" in workspace.nox("-s", "probe", env=caller).output

    build_library(built, 2)
    rerun = workspace.nox("-s", "probe", env=caller)
    assert f"{library} changed" in rerun.output, rerun.output
    assert output(workspace, torch_here) == ["2"]


SEES = """\
import os, subprocess, sys
import torch
spawned = subprocess.run(["python", "-c", "import torch; print(torch.__version__)"], stdout=subprocess.PIPE)
print(spawned.stdout.decode().strip() == torch.__version__, os.environ.get("MY_BACKEND"))
"""


def test_the_callers_shell_reaches_a_pair_only_as_declared_and_what_it_declares_is_recorded(
    workspace: Workspace, torch_here: Torch, warm: None, tmp_path: Path
) -> None:
    """A `python` the probe spawns is the cell's, not the caller's; a variable counts only where declared."""
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "python").write_text("#!/bin/sh\necho 0.0.0\n")
    (shadow / "python").chmod(0o755)
    (workspace.folder / "probes" / "sees.py").write_text(SEES)
    workspace.matrix([torch_here], ["sees"])
    caller = workspace.environ(PATH=f"{shadow}{os.pathsep}{os.environ['PATH']}", MY_BACKEND="from the shell")
    assert workspace.nox("-s", "probe", env=caller).returncode == 0
    assert output(workspace, torch_here) == ["True None"]

    with workspace.matrix_file.open("a") as matrix:
        matrix.write("env: {MY_BACKEND: declared}\n")
    declared = workspace.nox("-s", "probe", env=caller)
    assert "the variables the pairs see changed" in declared.output, declared.output
    assert output(workspace, torch_here) == ["True declared"]

    steered = workspace.nox("-s", "probe", env=dict(caller, OMP_NUM_THREADS="1"))
    assert "the variables the pairs see changed" in steered.output, steered.output
    again = workspace.nox("-s", "probe", env=dict(caller, OMP_NUM_THREADS="1", UNRELATED="x"))
    assert "up to date" in again.output, again.output


SEES_SHELL = """\
import os
import torch
print(os.environ.get("ATEN_CPU_CAPABILITY"), os.environ.get("USER"), os.environ.get("TERM"))
"""


def test_every_variable_of_the_shell_a_pair_sees_is_recorded_and_the_plan_names_those_it_does_not(
    workspace: Workspace, torch_here: Torch, warm: None, tmp_path: Path
) -> None:
    """Passes ⇒ recorded: what steers torch (ATEN_CPU_CAPABILITY) reaches the pair, and a changed user or
    temporary folder re-runs it; TERM reaches none, so changing it changes nothing, and the plan says it stays out."""
    (workspace.folder / "probes" / "sees_shell.py").write_text(SEES_SHELL)
    workspace.matrix([torch_here], ["sees_shell"])
    for folder in ("tmp-a", "tmp-b"):
        (tmp_path / folder).mkdir()
    caller = workspace.environ(USER="me", TERM="xterm", TMPDIR=str(tmp_path / "tmp-a"))
    caller.pop("ATEN_CPU_CAPABILITY", None)
    assert workspace.nox("-s", "probe", env=caller).returncode == 0
    assert output(workspace, torch_here) == ["None me None"]

    for changed in ({"ATEN_CPU_CAPABILITY": "default"}, {"USER": "someone else"}, {"TMPDIR": str(tmp_path / "tmp-b")}):
        caller.update(changed)
        rerun = workspace.nox("-s", "probe", env=caller)
        assert "the variables the pairs see changed" in rerun.output, (changed, rerun.output)
    assert output(workspace, torch_here) == ["default someone else None"]
    [record] = stored(workspace).records
    assert record.inputs["environment"]["steering"]["ATEN_CPU_CAPABILITY"] == "default"
    assert stored(workspace).environment["cpu_capability"] == "DEFAULT"  # torch obeyed it

    terminal = workspace.nox("-s", "probe", env=dict(caller, TERM="dumb"))
    assert "up to date" in terminal.output, terminal.output
    plan = workspace.nox("-s", "plan", env=caller)
    [unseen] = [line for line in plan.output.splitlines() if line.startswith("not passed to the pairs")]
    assert "TERM" in unseen.removeprefix("not passed to the pairs: ").split(" (")[0].split(", ")


SEEDED = """\
import random
import torch
print(random.random(), torch.rand(3).tolist())
print(hash("torchmatrix"))
"""


def test_every_repeat_starts_from_one_seed(workspace: Workspace, torch_here: Torch, warm: None) -> None:
    """Python's and torch's generators start from one seed in every run; the hash seed is each run's own, as each
    process's by hand is."""
    (workspace.folder / "probes" / "seeded.py").write_text(SEEDED)
    workspace.matrix([torch_here], ["seeded"])
    run = workspace.nox("-s", "probe", "--", "--repeat", "3")
    assert run.returncode == 0, run.output
    [record] = stored(workspace).records
    printed = [each["metrics"]["output"] for each in repeats.runs_of(record)]
    assert len(printed) == 3 and len({numbers for numbers, _ in printed}) == 1, printed
    assert len({hashed for _, hashed in printed}) == 3, printed
    assert record.inputs["seed"] == 0


def test_torch_from_another_index_or_find_links_is_installed_again(
    tmp_path: Path, suite_cache: Path, torch_here: Torch, warm: None
) -> None:
    """An installer keeps a `torch==X` it has: an environment built from elsewhere is rebuilt, its records re-run."""
    workspace = Workspace(tmp_path, tmp_path / ".nox", suite_cache)  # its own environments: it rebuilds them
    workspace.matrix([torch_here], ["ok"])
    assert workspace.nox("-s", "probe").returncode == 0
    (tmp_path / "more-wheels").mkdir()
    links = " ".join(pip_find_links())
    moved = workspace.nox(
        "-s", "probe", env=workspace.environ(TORCHMATRIX_FIND_LINKS=f"{links} {tmp_path / 'more-wheels'}")
    )
    assert moved.returncode == 0, moved.output
    assert "its torch was installed from elsewhere" in moved.output
    [record] = stored(workspace).records
    assert record.inputs["index"]["find_links"][-1] == str(tmp_path / "more-wheels")
