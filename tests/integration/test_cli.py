"""`python -m torchmatrix` in a folder holding a bug report's script alone: no noxfile, no matrix.yaml.

The bisection runs over stand-in wheels (tests/standin.py) that install in a
second: 9.0.0 to 9.3.0, in which the report's script fails before 9.2.0. A
second run takes the real torch in pip's find-links (the local CPU wheel,
:func:`tests.faults.conftest.local_torch`), with a matrix.yaml in the folder
that pins its Python, as a user narrows the defaults. The command's sessions are
those its noxfile declares, as a real `nox -l` lists them, and `python -m
torchmatrix` runs its main.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from torchmatrix import cli, interpreters, results, variables
from torchmatrix.core import Kind, Outcome, Record

from .. import standin
from ..conftest import FOREGROUND, ROOT
from ..faults.conftest import local_torch, wait_until_dead
from ..unit.report_data import cell
from .test_tethered import started

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

pytestmark = pytest.mark.integration

RELEASES = ["9.0.0", "9.0.1", "9.1.0", "9.2.0", "9.3.0"]
STANDIN_REPRO = """\
import torch

with open("behaviour.txt") as named:  # beside it, by a relative path, as `python repro.py` run here finds it
    x = torch.behaviour[named.read().strip()]
print("2 * torch.dot(x, x) =", "tensor(28.)" if x == "pass" else "tensor(0.)")
assert x == "pass", "2 * torch.dot(x, x) printed tensor(0.)"
"""
REPRO = """\
import torch

x = torch.arange(4.0)
x.requires_grad_(True)
y = 2 * torch.dot(x, x)
print(y)
assert y.item() == 28.0, "2 * torch.dot(x, x) is %s, not 28" % y.item()
"""


def torchmatrix(folder: Path, *args: str, environ: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = dict(os.environ, TORCHMATRIX_MACHINE="ci-box", **(environ or {}))
    for name in ("TORCHMATRIX_MATRIX", "TORCHMATRIX_OUTPUT", "TORCHMATRIX_PROBES", "TORCHMATRIX_TORCH"):
        environ.pop(name, None)
    command = [sys.executable, "-m", "torchmatrix", *args]
    return subprocess.run(command, cwd=folder, env=environ, capture_output=True, text=True, timeout=1200)


def test_a_bug_reports_script_alone_in_an_empty_folder_is_bisected_by_one_command(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    for version in RELEASES:
        standin.wheel(wheels, version, {"dot": "pass" if version >= "9.2" else "fail"})
    folder = tmp_path / "report"
    folder.mkdir()
    (folder / "repro.py").write_text(STANDIN_REPRO)
    (folder / "behaviour.txt").write_text("dot\n")

    run = torchmatrix(folder, "bisect", "repro.py", "--from", "9.0.0", "--to", "9.3.0", "--find-links", str(wheels))
    text = run.stdout + run.stderr
    assert run.returncode == 0, text
    output = folder / cli.DEFAULT_OUTPUT
    assert f"torchmatrix: matrix {output / 'matrix.yaml'}; results in {output}" in text
    assert "first release with NEW's outcome (pass): torch 9.2.0" in text
    assert "last release with OLD's outcome (fail): torch 9.1.0" in text
    assert sorted(path.name for path in folder.iterdir()) == ["behaviour.txt", "repro.py", cli.DEFAULT_OUTPUT]
    (summary,) = (output / "bisect" / "ci-box").glob("repro.py-cpu-*.json")
    assert json.loads(summary.read_text())["first_new"] == "9.2.0"
    stored = {result.torch: result for result in results.scan(output / "results").results}
    assert {"9.0.0", "9.3.0"} <= set(stored) <= set(RELEASES)
    assert all(result.records[0].device == "cpu" for result in stored.values())

    # The folder's results answer the next commands: the table, without building again.
    table = torchmatrix(folder, "report", "--format", "md")
    assert table.returncode == 0, table.stdout + table.stderr
    assert "repro.py" in (output / "COMPATIBILITY.md").read_text()


def test_a_matrix_yaml_beside_the_script_narrows_the_defaults_with_a_real_torch(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    torch = local_torch(tmp_path_factory.mktemp("cache"))
    if torch.python is None:
        pytest.skip("no torch wheel in pip's find-links fits a Python here")
    (tmp_path / "repro.py").write_text(REPRO)
    (tmp_path / "matrix.yaml").write_text(
        f'torch:\n  - {{version: "{torch.version}", python: ["{torch.python}"]}}\ndevices: [cpu]\noutput: out\n'
    )
    run = torchmatrix(tmp_path, "probe", "repro.py")
    text = run.stdout + run.stderr
    assert run.returncode == 0, text
    assert f"torchmatrix: matrix {tmp_path / 'matrix.yaml'}" in text
    (result,) = results.scan(tmp_path / "out" / "results").results
    (record,) = result.records
    assert (record.probe, record.device, record.outcome.value) == ("repro.py", "cpu", "pass"), record
    assert "tensor(28., grad_fn=<MulBackward0>)" in record.message
    assert (tmp_path / ".nox").is_dir() and not (tmp_path / cli.DEFAULT_OUTPUT).exists()


def test_a_cell_bisect_built_on_the_python_it_held_is_not_stale_after_a_run_of_chosen_releases(
    tmp_path: Path,
) -> None:
    """8.0.0 has wheels up to Python 3.11, 8.1.0 up to 3.12: the bisect holds 3.11, `probe --torch` runs 8.1.0 on
    3.12, and the answer that rests on the held cell is still the answer, not stale."""
    found = {python.minor for python in interpreters.discover(cache=tmp_path / "interpreters.json")}
    if not {"3.11", "3.12"} <= found:
        pytest.skip("needs Python 3.11 and 3.12")
    wheels = tmp_path / "wheels"
    for version, pythons in (("8.0.0", ("3.11",)), ("8.1.0", ("3.11", "3.12"))):
        for python in pythons:
            standin.wheel(wheels, version, {"dot": "pass" if version == "8.1.0" else "fail"}, python)
    folder = tmp_path / "report"
    folder.mkdir()
    (folder / "repro.py").write_text(STANDIN_REPRO)
    (folder / "behaviour.txt").write_text("dot\n")
    asked = ["bisect", "repro.py", "--from", "8.0.0", "--to", "8.1.0", "--find-links", str(wheels)]
    bisected = torchmatrix(folder, *asked)
    assert bisected.returncode == 0 and "on Python 3.11 throughout" in bisected.stderr, bisected.stderr
    environ = {variables.FIND_LINKS.name: str(wheels)}
    ran = torchmatrix(folder, "probe", "repro.py", "--torch", "8.0.0,8.1.0", environ=environ)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert [line.split()[:2] for line in ran.stdout.splitlines() if line.startswith("8.")] == [
        ["8.0.0", "3.11"],
        ["8.1.0", "3.12"],
    ]
    changed = (folder / cli.DEFAULT_OUTPUT / "COMPATIBILITY.md").read_text(encoding="utf-8").split("## Changed in")[1]
    assert "| repro.py | cpu | fail → pass | 8.1.0 | 8.0.0 |" in changed and "stale" not in changed


ISSUE = """\
import torch


def test_dot_grad():
    x = torch.arange(4.0, requires_grad=True)
    (2 * torch.dot(x, x)).backward()
    assert torch.equal(x.grad, 4 * x.detach())


def test_fixed_in_2_1_1():
    # Stands for a bug 2.1.1 fixed: the release itself says which side of the fix it is on.
    assert tuple(int(part) for part in torch.__version__.split("+")[0].split(".")) >= (2, 1, 1)
"""
FIXED = "test_issue_29.py::test_fixed_in_2_1_1"


def test_a_bug_reports_test_file_is_bisected_by_file_and_by_node_id_from_any_folder_with_a_real_torch(
    tmp_path: Path,
) -> None:
    """torch 2.1.0 to 2.1.2 from the index (uv's cache keeps them): the file asks each of its tests; its node id,
    given from another folder, is the record it names; the table after a run of chosen releases is theirs."""
    found = interpreters.discover(cache=tmp_path / "interpreters.json")
    if not any(python.minor == "3.11" for python in found):
        pytest.skip("torch 2.1 has wheels up to Python 3.11, and no Python 3.11 is here")
    report, elsewhere = tmp_path / "report", tmp_path / "elsewhere"
    report.mkdir()
    elsewhere.mkdir()
    (report / "test_issue_29.py").write_text(ISSUE)

    whole = torchmatrix(report, "bisect", "test_issue_29.py", "--from", "2.1.0", "--to", "2.1.2")
    text = whole.stdout + whole.stderr
    assert whole.returncode == 0, text
    assert "bisect each test of test_issue_29.py (test_issue_29.py::test_dot_grad, " in text
    rows = [line.split()[:5] for line in whole.stdout.splitlines() if line.startswith("test_issue_29.py")]
    assert rows == [[FIXED, "cpu", "fail", "→", "pass"]], text
    assert "holds tests" not in text and "nox -s" not in text.replace('nox -s "probe(', "")

    output = report / cli.DEFAULT_OUTPUT
    one = torchmatrix(elsewhere, "--output", str(output), "bisect", f"../report/{FIXED}", "--from", "2.1.0", "--to",
                      "2.1.2")  # fmt: skip
    text = one.stdout + one.stderr
    assert one.returncode == 0, text
    assert "first release with NEW's outcome (pass): torch 2.1.1 (1 run)" in text
    assert "last release with OLD's outcome (fail): torch 2.1.0 (1 run)" in text

    ran = torchmatrix(report, "probe", "test_issue_29.py", "--torch", "2.1.0,2.1.1,2.1.2")
    text = ran.stdout + ran.stderr
    assert ran.returncode == 0, text
    table = [line.split() for line in ran.stdout.splitlines() if line.split()[-1:] in (["✓"], ["✗"])]
    assert [row[0] for row in table if row[0].startswith("2.1.")] == ["2.1.0", "2.1.1", "2.1.2"], text
    assert [row[-2:] for row in table if row[-1] == "✗"] == [[FIXED, "✗"]], text
    assert "no results yet" not in text and "not shown" not in text
    shown = (output / "COMPATIBILITY.md").read_text(encoding="utf-8")
    assert "stale" not in shown and "| 2.1.0 | 3.11 | ✗ 1 of 2 pass; fail: test\\_fixed\\_in\\_2\\_1\\_1 |" in shown


PARAMETERS_BY_RELEASE = """\
import pytest
import torch

CASES = ["float32"] + (["float16"] if torch.__version__ >= "9.1" else [])  # as a dtype a release added


@pytest.mark.parametrize("case", CASES)
def test_case(case):
    pass
"""


def test_a_node_id_a_later_release_holds_is_bisected_to_it_and_one_no_end_holds_says_to_correct_the_name(
    tmp_path: Path,
) -> None:
    """pytest refuses a node id its file does not hold (exit code 4): a case a later release's parameters hold is
    bisected to the release that holds it; a typo, refused at both ends, says what to correct, never to widen."""
    wheels = tmp_path / "wheels"
    for version in ("9.0.0", "9.1.0"):
        standin.wheel(wheels, version, {})
    folder = tmp_path / "report"
    folder.mkdir()
    (folder / "test_cases.py").write_text(PARAMETERS_BY_RELEASE)
    given = ["--from", "9.0.0", "--to", "9.1.0", "--find-links", str(wheels)]
    held = torchmatrix(folder, "bisect", "test_cases.py::test_case[float16]", *given)
    text = held.stdout + held.stderr
    assert held.returncode == 0, text
    assert "first release with NEW's outcome (pass): torch 9.1.0" in text
    typo = torchmatrix(folder, "bisect", "test_cases.py::test_cse[float32]", *given)
    text = typo.stdout + typo.stderr
    assert typo.returncode == 1, text
    assert "torch 9.0.0 and 9.1.0 both refuse it on cpu, as pytest did: error (pytest exited with code 4" in text
    assert "correct the name or the option" in text and "widen" not in text


def test_a_bisects_releases_outside_the_matrix_are_said_by_plan_and_removed_by_clean_named_in_full(
    tmp_path: Path,
) -> None:
    wheels = tmp_path / "wheels"
    for version in ("9.0.0", "9.1.0", "9.2.0"):
        standin.wheel(wheels, version, {"dot": "pass" if version >= "9.2" else "fail"})
    folder = tmp_path / "report"
    folder.mkdir()
    (folder / "repro.py").write_text(STANDIN_REPRO)
    (folder / "behaviour.txt").write_text("dot\n")
    private = {"UV_CACHE_DIR": str(tmp_path / "uv-cache")}  # never the cache of the machine: clean removes from it
    run = torchmatrix(folder, "bisect", "repro.py", "--from", "9.0.0", "--to", "9.2.0", "--find-links", str(wheels),
                      environ=private)  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    envdir = folder / cli.DEFAULT_OUTPUT / ".nox"
    built = {config.parent for config in envdir.rglob("pyvenv.cfg")}  # or in that of a Python the bisect held
    assert len(built) == 3, built

    plan = torchmatrix(folder, "plan", environ=private)
    assert plan.returncode == 0, plan.stdout + plan.stderr
    [also] = [line for line in plan.stdout.splitlines() if line.startswith("also here, of no release of the matrix: ")]
    assert all(f"(torch {version})" in also for version in ("9.0.0", "9.1.0", "9.2.0")), also

    refused = torchmatrix(folder, "clean", "9.0", environ=private)
    assert refused.returncode == 2
    assert "other releases with environments here: 9.0.0, 9.1.0, 9.2.0" in refused.stderr
    assert "hint: did you mean '9.0.0'?" in refused.stderr
    cleaned = torchmatrix(folder, "clean", "9.0.0", environ=private)
    assert cleaned.returncode == 0, cleaned.stdout + cleaned.stderr
    assert "torch 9.0.0: removing 1 environment(s) and their bytecode, " in cleaned.stdout
    assert "torch 9.0.0: removing 1 cached wheel(s) nothing else here keeps, " in cleaned.stdout
    assert re.search(r"kept: \d+ cached wheel\(s\) that \S+ and \S+ also keep", cleaned.stdout)  # pytest, …
    left = {config.parent for config in envdir.rglob("pyvenv.cfg")}
    assert len(left) == 2 and left < built
    unpacked = {info.name for info in (tmp_path / "uv-cache").glob("archive-v*/*/*.dist-info")}
    assert {"torch-9.1.0.dist-info", "torch-9.2.0.dist-info"} <= unpacked and "torch-9.0.0.dist-info" not in unpacked
    assert any(name.startswith("pytest-") for name in unpacked)  # every cell holds it: it stays


def test_the_commands_sessions_are_those_its_noxfile_declares(tmp_path: Path) -> None:
    environ = dict(os.environ, **{variables.MATRIX.name: str(tmp_path / "none.yaml")})
    listing = subprocess.run(
        [sys.executable, "-m", "nox", "-f", str(cli.NOXFILE), "-l"], env=environ, capture_output=True, text=True
    ).stdout
    declared = re.findall(r"^[*-] ([\w-]+)(?:\(.*?\))? -> ", listing, re.MULTILINE)
    assert sorted(set(declared)) == sorted(cli.COMMANDS), listing


def test_the_console_script_and_python_m_run_main() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"torchmatrix": "torchmatrix.cli:main"}
    shown = subprocess.run([sys.executable, "-m", "torchmatrix", "--help"], capture_output=True, text=True, check=True)
    assert shown.stdout.startswith(f"usage: {cli.USAGE}")


def test_the_commands_report_suggests_its_own_words_and_they_show_the_cell_left_out(tmp_path: Path) -> None:
    """A stored cell that is no cell of the matrix now (a release bisect built): `torchmatrix report` names it and
    the command that shows it, in the log and in the report, and that command shows it."""
    (tmp_path / "matrix.yaml").write_text("torch: [1.12.1]\nprobes: [repro.py]\ndevices: [cpu]\noutput: out\n")
    (tmp_path / "repro.py").write_text(REPRO)
    record = Record("repro.py", "cpu", Outcome.PASS, {}, "", 0.1)
    built = cell("ci-box", "1.12.0", "3.10", (record,), session="probe(1.12.0)")
    results.write(tmp_path / "out" / "results", built)

    run = torchmatrix(tmp_path, "report")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "(torch-1.12.0-py3.10): `torchmatrix report --all-cells` shows them" in run.stderr
    written = (tmp_path / "out" / "COMPATIBILITY.md").read_text()
    assert "No results of the matrix's cells yet: run torchmatrix probe." in written
    assert "torchmatrix report --all-cells shows every stored cell." in written
    assert "| 1.12.0 |" not in written

    every = torchmatrix(tmp_path, "report", "--all-cells")
    assert every.returncode == 0, every.stdout + every.stderr
    assert "| 1.12.0 |" in (tmp_path / "out" / "COMPATIBILITY.md").read_text()


def test_a_script_or_probe_path_that_is_not_there_is_said_where_it_was_typed(tmp_path: Path) -> None:
    (tmp_path / "repro.py").write_text(REPRO)
    typed = torchmatrix(tmp_path, "probe", "repr.py")
    assert typed.returncode == 2
    assert typed.stderr.startswith(f"torchmatrix: error: no file 'repr.py' in {tmp_path}\n")
    assert typed.stderr.endswith("  hint: did you mean 'repro.py'?\n")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["repro.py"], "nothing written"
    (tmp_path / "matrix.yaml").write_text("torch: [2.2.0]\nprobes: [repr.py]\n")
    listed = torchmatrix(tmp_path, "plan")
    assert listed.returncode == 2
    assert f"torchmatrix: error: {tmp_path / 'matrix.yaml'}:2: probes[0]: no file {tmp_path / 'repr.py'}\n" in (
        listed.stderr
    )
    assert "  hint: did you mean 'repro.py'?" in listed.stderr


def test_the_users_files_named_like_modules_stay_out_of_torchmatrixs_own_process(tmp_path: Path) -> None:
    """The console script starts nox in the folder it was typed in, where ``python -m`` would import a ``nox.py`` or
    a ``tabulate.py`` of the user's as torchmatrix's own module."""
    (tmp_path / "matrix.yaml").write_text("torch: [2.2.0]\nprobes: [repro.py]\ndevices: [cpu]\n")
    (tmp_path / "repro.py").write_text(REPRO)
    for name in ("nox", "tabulate", "signal"):
        (tmp_path / f"{name}.py").write_text(f"raise SystemExit('the folder\\'s {name}.py ran')\n")
    console_script = Path(sys.executable).with_name("torchmatrix")
    environ = {key: value for key, value in os.environ.items() if not key.startswith("TORCHMATRIX_")}
    run = subprocess.run([console_script, "plan"], cwd=tmp_path, env=environ, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert ".py ran" not in run.stdout + run.stderr
    assert "probe(2.2.0)" in run.stdout


@pytest.mark.parametrize("flag", ["--help", "-h"])
@pytest.mark.parametrize("name", list(cli.COMMANDS))
def test_a_sessions_help_is_printed_once_and_nothing_is_written_nor_run(tmp_path: Path, name: str, flag: str) -> None:
    shown = torchmatrix(tmp_path, name, flag)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert shown.stdout.startswith(f"usage: torchmatrix {name} ")
    assert shown.stdout.count("usage:") == 1 and "nox >" not in shown.stdout + shown.stderr
    assert list(tmp_path.iterdir()) == [], "no matrix written, no environment made"


@contextlib.contextmanager
def a_command_whose_pair_hangs(python: str, folder: Path) -> Iterator[tuple[subprocess.Popen[bytes], int, int]]:
    """``torchmatrix probe-installed`` in ``folder`` with ``python``, whose pair sleeps: the command, the nox it
    runs and the pair's pid, once the pair runs."""
    pid_file = folder / "pair.pid"
    (folder / "hangs.py").write_text(
        f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\ntime.sleep(120)\n"
    )
    (folder / "matrix.yaml").write_text("torch: [2.2.0]\nprobes: [hangs.py]\ndevices: [cpu]\noutput: out\n")
    environ = dict(os.environ, TORCHMATRIX_MACHINE="ci-box")
    command = [sys.executable, "-m", "torchmatrix", "probe-installed", python]
    with subprocess.Popen(  # noqa: PLW1509
        command, cwd=folder, env=environ, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=FOREGROUND
    ) as running:
        pair = started(pid_file)
        (nox,) = (int(pid) for pid in Path(f"/proc/{running.pid}/task/{running.pid}/children").read_text().split())
        yield running, nox, pair


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="process checks read /proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name)
def test_the_command_ended_alone_by_a_signal_leaves_no_nox_running_and_nothing_stored(
    stub_torch_python: str, tmp_path: Path, signum: signal.Signals
) -> None:
    """``kill PID`` (a supervisor, a harness's ``terminate()``) reaches the torchmatrix command, not the nox it runs:
    that nox ends too, its pair with it, and stores nothing, as nox itself so ended would."""
    with a_command_whose_pair_hangs(stub_torch_python, tmp_path) as (running, nox, pair):
        running.send_signal(signum)
        assert running.wait(timeout=60) == -signum
    assert wait_until_dead([nox, pair], seconds=60) == []
    assert not (tmp_path / "out" / "results").exists() or not list((tmp_path / "out" / "results").rglob("*.json"))


def test_two_scripts_of_one_name_in_two_folders_are_two_probes_each_named_from_where_the_command_ran(
    tmp_path: Path,
) -> None:
    """``A/repro.py`` and ``B/repro.py``, the same text beside other helpers: two rows, each its own record."""
    wheels = tmp_path / "wheels"
    standin.wheel(wheels, "9.0.0", {"dot": "pass"})
    for name in ("A", "B"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "repro.py").write_text("import helper\nprint('helper says', helper.VALUE)\n")
        (tmp_path / name / "helper.py").write_text(f"VALUE = {name!r}\n")
    for name in ("A", "B"):
        run = torchmatrix(tmp_path, "probe", f"{name}/repro.py", "--torch", "9.0.0",
                          environ={"TORCHMATRIX_FIND_LINKS": str(wheels)})  # fmt: skip
        assert run.returncode == 0, run.stdout + run.stderr
        assert f"helper says {name}" in run.stdout + run.stderr
    [stored] = (tmp_path / "torchmatrix-results" / "results").glob("*/*.json")
    records = json.loads(stored.read_text())["records"]
    assert sorted((record["probe"], record["message"]) for record in records) == [
        ("A/repro.py", "helper says A"),
        ("B/repro.py", "helper says B"),
    ]


@pytest.mark.parametrize("listed", [True, False], ids=["listed", "given"])
def test_the_report_and_verify_take_no_record_of_another_build_than_the_environment_a_run_would_take(
    tmp_path: Path, listed: bool
) -> None:
    """Another build of 9.0.0 installed since ``a.py``'s record (the cell cleaned, ``b.py`` run): the report marks
    the record stale, whether the matrix lists ``a.py`` or the command was given it beside the matrix's own
    ``b.py``, and verify takes it for no test, as the next run would run it again."""
    wheels = tmp_path / "wheels"
    standin.wheel(wheels, "9.0.0", {"dot": "fail"})
    (tmp_path / "a.py").write_text('import torch\nassert torch.behaviour["dot"] == "fail", "dot is now pass"\n')
    (tmp_path / "b.py").write_text("print('b')\n")
    probes, expect = (
        ("[a.py, b.py]", "expect:\n  - {probe: a.py, device: cpu, outcome: pass}\n") if listed else ("[b.py]", "")
    )
    (tmp_path / "matrix.yaml").write_text(
        f"torch: [9.0.0]\nprobes: {probes}\ndevices: [cpu]\noutput: out\nfind_links: [{wheels}]\n{expect}"
    )
    assert torchmatrix(tmp_path, "probe", *([] if listed else ["a.py"])).returncode == 0
    standin.wheel(wheels, "9.0.0", {"dot": "pass"})
    assert torchmatrix(tmp_path, "clean", "9.0.0").returncode == 0
    assert torchmatrix(tmp_path, "probe", "b.py").returncode == 0
    report = torchmatrix(tmp_path, "report")
    [row] = [line for line in report.stdout.splitlines() if "a.py" in line]
    assert "↻" in row, report.stdout
    if listed:
        verify = torchmatrix(tmp_path, "verify")
        assert verify.returncode != 0, verify.stdout + verify.stderr
        assert "1 stale record skipped" in verify.stdout + verify.stderr, verify.stdout + verify.stderr


def test_a_bisection_whose_records_its_own_runs_made_stale_says_its_answer_is_stale(tmp_path: Path) -> None:
    """A script that prints how many result files there are, which each cell the bisection runs writes: its
    output changes from release to release for no change of torch, and the answer says it no longer stands."""
    wheels = tmp_path / "wheels"
    for version in ("9.0.0", "9.1.0"):
        standin.wheel(wheels, version, {"dot": "pass"})
    (tmp_path / "count.py").write_text(
        'import glob\nimport torch\nprint(len(glob.glob("torchmatrix-results/results/*/*.json")))\n'
    )
    run = torchmatrix(tmp_path, "bisect", "count.py", "--by-output", "--from", "9.0.0", "--to", "9.1.0",
                      environ={"TORCHMATRIX_FIND_LINKS": str(wheels)})  # fmt: skip
    text = run.stdout + run.stderr
    assert "first release with NEW's outcome" in text, text
    assert run.returncode != 0, text
    assert "count.py on cpu: the answer is stale already: the records it rests on no longer hold" in text, text


def test_the_commands_report_asks_a_scripts_record_all_a_run_of_it_now_would_be_made_from(tmp_path: Path) -> None:
    """The ``torchmatrix`` command's matrix lists no probe: a script's record is still asked its whole identity, as
    the next ``torchmatrix probe`` of it would: another build of its torch installed since, or the results copied
    beside another ``repro.py``, and the report marks it stale."""
    wheels = tmp_path / "wheels"
    standin.wheel(wheels, "9.7.3", {"dot": "fail"})
    old, new = tmp_path / "old", tmp_path / "new"
    for folder in (old, new):
        folder.mkdir()
        (folder / "repro.py").write_text('import torch\nassert torch.behaviour["dot"] == "pass", "dot fails"\n')
        (folder / "b.py").write_text("print('b')\n")
    links = {"TORCHMATRIX_FIND_LINKS": str(wheels)}
    assert "repro.py  ✗" in torchmatrix(old, "probe", "repro.py", "--torch", "9.7.3", environ=links).stdout
    shutil.copytree(old / cli.DEFAULT_OUTPUT, new / cli.DEFAULT_OUTPUT, ignore=shutil.ignore_patterns(".nox"))
    copied = torchmatrix(new, "report", "--all-cells", environ=links)
    assert [line for line in copied.stdout.splitlines() if "repro.py" in line and "↻" in line], copied.stdout
    standin.wheel(wheels, "9.7.3", {"dot": "pass"})
    assert torchmatrix(old, "clean", "9.7.3", environ=links).returncode == 0
    assert torchmatrix(old, "probe", "b.py", "--torch", "9.7.3", environ=links).returncode == 0
    rebuilt = torchmatrix(old, "report", "--all-cells", environ=links)
    [row] = [line for line in rebuilt.stdout.splitlines() if "repro.py" in line]
    assert "↻" in row, rebuilt.stdout


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="process checks read /proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_bisection_ended_by_a_signal_as_its_pair_runs_leaves_no_folder_of_its_own_behind(
    tmp_path: Path, signum: signal.Signals
) -> None:
    """``kill PID`` of a ``torchmatrix bisect`` whose child nox runs a pair: the command ends by the signal, and the
    folder its child nox hands its results back in is gone from the temporary folder, as the worker's is."""
    wheels, scratch = tmp_path / "wheels", tmp_path / "tmp"
    for version in ("9.0.0", "9.1.0"):
        standin.wheel(wheels, version, {"dot": "pass"})
    scratch.mkdir()
    pid_file = tmp_path / "pair.pid"
    (tmp_path / "hangs.py").write_text(
        f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\ntime.sleep(120)\n"
    )
    environ = dict(os.environ, TORCHMATRIX_MACHINE="ci-box", TORCHMATRIX_FIND_LINKS=str(wheels), TMPDIR=str(scratch))
    command = [sys.executable, "-m", "torchmatrix", "bisect", "hangs.py", "--from", "9.0.0", "--to", "9.1.0"]
    with subprocess.Popen(  # noqa: PLW1509
        command, cwd=tmp_path, env=environ, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=FOREGROUND
    ) as running:
        pair = started(pid_file, seconds=600)
        running.send_signal(signum)
        assert running.wait(timeout=120) == -signum
    assert wait_until_dead([pair], seconds=60) == []
    assert [path.name for path in scratch.iterdir() if path.name.startswith("torchmatrix-")] == []


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="process checks read /proc")
def test_the_nox_of_the_command_ended_by_a_signal_ends_the_command_with_the_status_a_shell_gives_it(
    stub_torch_python: str, tmp_path: Path
) -> None:
    """SIGTERM to the nox the command runs (a harness that ends each process it finds): the command says so as a
    shell would, 128 and the signal's number, not a status of its own."""
    with a_command_whose_pair_hangs(stub_torch_python, tmp_path) as (running, nox, _):
        os.kill(nox, signal.SIGTERM)
        assert running.wait(timeout=60) == 128 + signal.SIGTERM


def test_verify_without_expectations_says_how_the_command_starts_it(tmp_path: Path) -> None:
    (tmp_path / "repro.py").write_text("print('hi')\n")
    (tmp_path / "matrix.yaml").write_text("torch: [2.2.0]\nprobes: [repro.py]\ndevices: [cpu]\noutput: out\n")
    verify = torchmatrix(tmp_path, "verify")
    text = verify.stdout + verify.stderr
    assert verify.returncode != 0, text
    assert "has no expect: entries" in text and "usage: torchmatrix verify " in text, text
    assert "nox -s verify" not in text, text


NEWER_SYNTAX = {  # Python 3.12's, which a host of 3.11 cannot parse
    "repro.py": 'import sys\nprint(f"{"nested quotes"}", sys.version_info[:2])\n',
    "test_new.py": "type Alias = int\n\n\ndef test_a():\n    assert True\n",
    "module.py": "type Alias = int\n\n\ndef run(device):\n    return {'outcome': 'pass', 'message': 'on ' + device}\n",
}


def test_a_file_of_a_newer_python_than_the_hosts_is_asked_of_the_cell(tmp_path: Path) -> None:
    """A script, a test file and a run(device) module of Python 3.12's syntax run in a cell of Python 3.12 or later
    as a script, as tests and as a module, whatever the host's Python can parse: the cell's Python says it is a
    module, as the host's would."""
    if max(python.version for python in interpreters.discover(cache=tmp_path / "interpreters.json")) < (3, 12):
        pytest.skip("needs Python 3.12 or later for the cell")
    wheels = tmp_path / "wheels"
    standin.wheel(wheels, "9.0.0", {"dot": "pass"})
    folder = tmp_path / "report"
    folder.mkdir()
    for name, text in NEWER_SYNTAX.items():
        (folder / name).write_text(text)
    links = {"TORCHMATRIX_FIND_LINKS": str(wheels)}
    run = torchmatrix(folder, "probe", *NEWER_SYNTAX, "--torch", "9.0.0", environ=links)
    assert run.returncode == 0, run.stdout + run.stderr
    (result,) = results.scan(folder / cli.DEFAULT_OUTPUT / "results").results
    (module,) = [record for record in result.records if record.probe == "module.py"]
    assert (module.outcome, module.message) == (Outcome.PASS, "on cpu"), module
    assert sorted((record.probe, record.outcome, record.kind, record.kind_reason) for record in result.records) == [
        (
            "module.py",
            Outcome.PASS,
            Kind.MODULE,
            "it defines run(device), as the cell's Python parses it (the host's Python cannot)",
        ),
        ("repro.py", Outcome.PASS, Kind.SCRIPT, "pytest collected no test from it"),
        ("test_new.py::test_a", Outcome.PASS, Kind.PYTEST, "pytest collected 1 test from it"),
    ], result.records


NOISY = """\
import torch

if __name__ == "__main__":  # as a script alone: pytest, asked first what the file is, imports it too
    with open({counter!r}, "a") as runs:  # appended to, never read: none of the pair's inputs
        runs.write("x")
        number = runs.tell()  # this run's own, of every release's: one more than the last run's
    print(" ".join(["tmpfile"] * (1 + number % 2)), "result", torch.behaviour["dot"])
"""


def test_a_line_whose_runs_print_unlike_numbers_of_words_still_tells_releases_apart_by_the_rest(
    tmp_path: Path,
) -> None:
    """``--by-output --repeat 4``: each run of a release prints one or two words of noise before the result, in turn,
    and the result, which every run of a release prints, is what tells 9.0.0 from 9.1.0."""
    wheels = tmp_path / "wheels"
    for version in ("9.0.0", "9.1.0", "9.2.0"):
        standin.wheel(wheels, version, {"dot": "fail" if version == "9.0.0" else "pass"})
    folder = tmp_path / "report"
    folder.mkdir()
    (folder / "repro.py").write_text(NOISY.format(counter=str(tmp_path / "runs")))
    run = torchmatrix(folder, "bisect", "repro.py", "--by-output", "--repeat", "4", "--from", "9.0.0", "--to", "9.2.0",
                      environ={"TORCHMATRIX_FIND_LINKS": str(wheels)})  # fmt: skip
    text = run.stdout + run.stderr
    assert run.returncode == 0, text
    assert "first release with NEW's outcome (pass, prints '<differs between runs>tmpfile result pass'" in text, text
    assert "last release with OLD's outcome (pass, prints '<differs between runs>tmpfile result fail'" in text, text
    assert "): torch 9.1.0 (4 runs)" in text and "): torch 9.0.0 (4 runs)" in text, text


PRINTS = "import torch\n\n\ndef test_f():\n    print('dot is', torch.behaviour['dot'])\n"

WRITES = (
    "import os\nimport torch\n\n\ndef test_f():\n    os.write(1, ('dot is %s\\n' % torch.behaviour['dot']).encode())\n"
)

STOPS = "def pytest_configure(config):\n    config.pluginmanager.getplugin('capturemanager').stop_global_capturing()\n"


@pytest.mark.parametrize(
    ("addopts", "test", "conftest", "unseen"),
    [
        ("-s", PRINTS, "", "pytest's capture is off (-s or --capture=no in addopts of pytest.ini)"),
        ("-p no:capture", PRINTS, "", "pytest's capture is off (-p no:capture in addopts of pytest.ini)"),
        (
            "--capture=sys",
            WRITES,
            "",
            "pytest captures sys.stdout alone, not the file descriptors (--capture=sys in addopts of pytest.ini)",
        ),
        ("", PRINTS, STOPS, "pytest's capture was stopped before the test was called (by a conftest.py or a plugin)"),
    ],
    ids=["-s", "no-capture-plugin", "capture-sys", "stopped-in-conftest"],
)
def test_a_test_whose_output_pytest_does_not_capture_is_refused_by_output_never_said_to_print_nothing(
    tmp_path: Path, addopts: str, test: str, conftest: str, unseen: str
) -> None:
    """pytest's capture off in the project's pytest.ini, its plugin not loaded, its capture of sys.stdout alone past
    which the test writes to file descriptor 1, or stopped by a conftest.py: what the test printed went by
    uncaptured, as pytest's capture manager says, and its record says so; comparing its output would compare
    nothing with nothing."""
    wheels = tmp_path / "wheels"
    for version in ("9.0.0", "9.1.0"):
        standin.wheel(wheels, version, {"dot": "pass" if version == "9.1.0" else "fail"})
    (tmp_path / "pytest.ini").write_text(f"[pytest]\naddopts = {addopts}\n")
    (tmp_path / "test_issue.py").write_text(test)
    if conftest:
        (tmp_path / "conftest.py").write_text(conftest)
    run = torchmatrix(tmp_path, "bisect", "test_issue.py::test_f", "--by-output", "--from", "9.0.0", "--to", "9.1.0",
                      environ={"TORCHMATRIX_FIND_LINKS": str(wheels)})  # fmt: skip
    text = run.stdout + run.stderr
    assert run.returncode == 1, text
    # pytest 9 fails a test whose capture was stopped (its AssertionError): an error, and what it printed unseen
    outcome = "error" if conftest else "pass"
    assert (
        f"torch 9.0.0 (--from) could not be tested: {outcome}, no output recorded: {unseen}: the test's output is not "
        "seen; remove it to compare by output"
    ) in text, text
    stored = [record for result in results.scan(tmp_path / cli.DEFAULT_OUTPUT / "results").results
              for record in result.records]  # fmt: skip
    assert stored and all("output" not in record.metrics for record in stored), stored
    assert {record.metrics["output_unseen"] for record in stored} == {unseen}


def test_the_report_a_probe_with_repeat_runs_judges_its_fresh_records_by_that_repeat(tmp_path: Path) -> None:
    """``probe --repeat 2``: the table it prints shows what it just ran, not stale; a plain report, by the matrix's
    one run per pair, says what changed."""
    wheels = tmp_path / "wheels"
    standin.wheel(wheels, "9.0.0", {"dot": "pass"})
    folder = tmp_path / "report"
    folder.mkdir()
    (folder / "repro.py").write_text("print('hi')\n")
    links = {"TORCHMATRIX_FIND_LINKS": str(wheels)}
    run = torchmatrix(folder, "probe", "repro.py", "--torch", "9.0.0", "--repeat", "2", environ=links)
    assert run.returncode == 0, run.stdout + run.stderr
    [row] = [line for line in run.stdout.splitlines() if line.startswith("9.0.0")]
    assert row.split()[-1] == "✓", run.stdout
    shown = folder / cli.DEFAULT_OUTPUT / "COMPATIBILITY.md"
    assert "stale" not in shown.read_text(encoding="utf-8")
    later = torchmatrix(folder, "report", "--all-cells", environ=links)
    assert later.returncode == 0, later.stdout + later.stderr
    assert "stale: was ✓ pass; the runs per pair changed: 2 → 1" in shown.read_text(encoding="utf-8")


def a_matrix_of_b_alone(folder: Path) -> str:
    """A ``matrix.yaml`` in ``folder`` whose one probe is its ``b.py``, on the stand-in torch 9.0.0: its text."""
    wheels = folder / "wheels"
    standin.wheel(wheels, "9.0.0", {"dot": "pass"})
    (folder / "b.py").write_text("print('b')\n")
    matrix = f"torch: [9.0.0]\nprobes: [b.py]\ndevices: [cpu]\noutput: out\nfind_links: [{wheels}]\n"
    (folder / "matrix.yaml").write_text(matrix)
    return matrix


def test_a_test_the_command_was_given_by_its_node_id_is_current_once_it_ran(tmp_path: Path) -> None:
    """``torchmatrix probe test_f.py::test_one`` beside a matrix that lists ``b.py``: its record is made by the test
    alone, and the report takes it so, not as a record of the whole file."""
    a_matrix_of_b_alone(tmp_path)
    (tmp_path / "test_f.py").write_text("def test_one():\n    pass\n\n\ndef test_two():\n    pass\n")
    assert torchmatrix(tmp_path, "probe").returncode == 0
    assert torchmatrix(tmp_path, "probe", "test_f.py::test_one").returncode == 0
    report = torchmatrix(tmp_path, "report")
    [row] = [line for line in report.stdout.splitlines() if "test_one" in line]
    assert "✓" in row and "↻" not in row, report.stdout


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="process checks read /proc")
def test_a_cell_of_a_bisection_an_interrupt_stopped_alone_stops_the_bisection(tmp_path: Path) -> None:
    """SIGTERM to the nox that runs one release of a bisection (a job's cancel that reaches it first): that release
    is no outcome, and the bisection stops as at Ctrl-C, with no answer."""
    wheels = tmp_path / "wheels"
    for version in ("9.0.0", "9.1.0", "9.2.0"):
        standin.wheel(wheels, version, {"dot": "pass" if version >= "9.2" else "fail"})
    pid_file = tmp_path / "pair.pid"
    (tmp_path / "hangs.py").write_text(
        "import os, time, torch\nif torch.__version__ == '9.1.0':\n"
        f"    open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n    time.sleep(120)\n"
        "assert torch.behaviour['dot'] == 'pass'\n"
    )
    environ = dict(os.environ, TORCHMATRIX_MACHINE="ci-box", TORCHMATRIX_FIND_LINKS=str(wheels))
    command = [sys.executable, "-m", "torchmatrix", "bisect", "hangs.py", "--from", "9.0.0", "--to", "9.2.0"]
    with subprocess.Popen(  # noqa: PLW1509
        command, cwd=tmp_path, env=environ, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        preexec_fn=FOREGROUND,
    ) as running:  # fmt: skip
        started(pid_file, seconds=600)
        pair = int(pid_file.read_text())
        cell_nox = next(pid for pid in ancestors(pair) if "probe(9.1.0)" in command_line(pid))
        os.kill(cell_nox, signal.SIGTERM)
        text, _ = running.communicate(timeout=300)
    assert running.returncode == 130, text
    assert "first release with NEW's outcome" not in text, text


def ancestors(pid: int) -> list[int]:
    """``pid``'s parent, its parent's, and so on."""
    found = []
    while pid > 1:
        pid = int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])
        found.append(pid)
    return found


def command_line(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ")


SHIFTED = """\
import os

import torch

if __name__ == "__main__":  # as a script alone: pytest, asked first what the file is, imports it too
    with open({counter!r}, "a") as runs:  # appended to, never read: none of the pair's inputs
        runs.write("x")
        number = runs.tell()  # this run's own, of every release's: one more than the last run's
    noise = [os.urandom(4).hex() for _ in range(3)]
    before = 1 + number % 2
    print(" ".join([*noise[:before], "dot=" + torch.behaviour["dot"], *noise[before:]]))
"""


def test_a_word_every_run_prints_tells_releases_apart_wherever_the_noise_puts_it(tmp_path: Path) -> None:
    """``--by-output --repeat 2``: each run prints four words, ``dot=…`` second or third among noise, in turn: no
    place holds the same word in both runs, and still every run of 9.0.0 printed dot=fail, every run of 9.0.1
    dot=pass."""
    wheels = tmp_path / "wheels"
    for version in ("9.0.0", "9.0.1"):
        standin.wheel(wheels, version, {"dot": "fail" if version == "9.0.0" else "pass"})
    folder = tmp_path / "report"
    folder.mkdir()
    (folder / "repro.py").write_text(SHIFTED.format(counter=str(tmp_path / "runs")))
    run = torchmatrix(folder, "bisect", "repro.py", "--by-output", "--repeat", "2", "--from", "9.0.0", "--to", "9.0.1",
                      environ={"TORCHMATRIX_FIND_LINKS": str(wheels)})  # fmt: skip
    text = run.stdout + run.stderr
    assert run.returncode == 0, text
    assert "): torch 9.0.1 (2 runs)" in text and "): torch 9.0.0 (2 runs)" in text, text
    assert "the words every run prints, from OLD to NEW: 'dot=fail' → 'dot=pass'" in text, text


UNEVEN = """\
import os

if __name__ == "__main__":  # as a script alone: pytest, asked first what the file is, imports it too
    with open({counter!r}, "a") as runs:  # appended to, never read: none of the pair's inputs
        runs.write("x")
        number = runs.tell()  # this run's own, of every release's: one more than the last run's
    print("values:", *(os.urandom(4).hex() for _ in range(1 if number == 1 else 2)), "result pass")
"""


def test_noise_whose_number_of_words_varies_blames_no_release(tmp_path: Path) -> None:
    """``--by-output --repeat 2``: the first run of all prints one word of noise, every other two; the releases
    print alike, and the one whose runs printed unlike numbers of words is no change."""
    wheels = tmp_path / "wheels"
    for version in ("9.0.0", "9.0.1"):
        standin.wheel(wheels, version, {"dot": "pass"})
    folder = tmp_path / "report"
    folder.mkdir()
    (folder / "repro.py").write_text(UNEVEN.format(counter=str(tmp_path / "runs")))
    run = torchmatrix(folder, "bisect", "repro.py", "--by-output", "--repeat", "2", "--from", "9.0.0", "--to", "9.0.1",
                      environ={"TORCHMATRIX_FIND_LINKS": str(wheels)})  # fmt: skip
    text = run.stdout + run.stderr
    assert run.returncode == 1, text
    assert "nothing to bisect" in text and "first release with NEW's outcome" not in text, text
    assert (tmp_path / "runs").read_text() == "xxxx", text


@pytest.mark.parametrize("given", ["tdir", "envy"], ids=["a folder of tests", "a probe's name"])
def test_a_probe_the_command_was_given_by_folder_or_name_is_stale_once_the_matrix_changes_what_its_pair_sees(
    tmp_path: Path, given: str
) -> None:
    """``torchmatrix probe tdir`` (a folder of tests) or ``torchmatrix probe envy`` (``probes/envy.py``) beside a
    matrix that lists ``b.py``; the matrix then sets a variable the pair reads: its record is stale, as a run of it
    now would fail."""
    matrix = a_matrix_of_b_alone(tmp_path)
    for folder in ("tdir", "probes"):
        (tmp_path / folder).mkdir()
    (tmp_path / "tdir" / "test_f.py").write_text("import os\n\n\ndef test_one():\n    assert os.getenv('FOO') != '1'\n")
    (tmp_path / "probes" / "envy.py").write_text("import os\nassert os.environ.get('FOO') != '1'\n")
    assert torchmatrix(tmp_path, "probe").returncode == 0
    assert torchmatrix(tmp_path, "probe", given).returncode == 0
    (tmp_path / "matrix.yaml").write_text(matrix + "env: {FOO: '1'}\n")
    report = torchmatrix(tmp_path, "report", "--all-cells")
    [row] = [line for line in report.stdout.splitlines() if ("test_one" if given == "tdir" else "envy") in line]
    assert "↻" in row, report.stdout


def test_a_script_given_once_and_broken_since_leaves_the_report_of_the_rest(tmp_path: Path) -> None:
    """``check.py`` given to the command, then its ``# /// script`` block broken: the report still shows the matrix's
    own ``b.py``, and ``check.py``'s record stale, rather than refuse."""
    a_matrix_of_b_alone(tmp_path)
    (tmp_path / "check.py").write_text("print('check')\n")
    assert torchmatrix(tmp_path, "probe").returncode == 0
    assert torchmatrix(tmp_path, "probe", "check.py").returncode == 0
    (tmp_path / "check.py").write_text("# /// script\n# dependencies = [\n# ///\nprint('check')\n")
    report = torchmatrix(tmp_path, "report", "--all-cells")
    assert report.returncode == 0, report.stdout + report.stderr
    [row] = [line for line in report.stdout.splitlines() if "check.py" in line]
    assert "↻" in row, report.stdout


def test_the_report_of_a_repeat_run_judges_a_probe_it_was_not_given_by_the_matrix(tmp_path: Path) -> None:
    """``probe b.py --repeat 2``, then ``probe r.py --repeat 2``: the second's table shows b.py, which it did not run,
    as the matrix judges it, stale by its one run per pair, as the report between them said."""
    a_matrix_of_b_alone(tmp_path)
    (tmp_path / "r.py").write_text("print('r')\n")
    assert torchmatrix(tmp_path, "probe", "b.py", "--repeat", "2").returncode == 0
    run = torchmatrix(tmp_path, "probe", "r.py", "--repeat", "2")
    assert run.returncode == 0, run.stdout + run.stderr
    shown = [line.split() for line in run.stdout.splitlines() if line.rstrip().endswith(("✓", "↻"))]
    rows = {words[-2]: words[-1] for words in shown}
    assert rows == {"b.py": "↻", "r.py": "✓"}, run.stdout


HASHED = """\
import torch

tags = {{"torch-" + torch.__version__}} | {{"tag%d" % number for number in range(11)}}
print("tags:", ", ".join(tags))
"""


def test_an_order_that_follows_strings_hashes_blames_no_release(tmp_path: Path) -> None:
    """``--by-output --repeat 2``: a script prints a set of strings, one of which names the release; by hand its order
    differs from one process to the next (each has a hash seed of its own), and so it does between a release's runs:
    the two releases print alike."""
    wheels = tmp_path / "wheels"
    for version in ("9.0.0", "9.0.1"):
        standin.wheel(wheels, version, {"dot": "pass"})
    folder = tmp_path / "report"
    folder.mkdir()
    (folder / "repro.py").write_text(HASHED.format())
    run = torchmatrix(folder, "bisect", "repro.py", "--by-output", "--repeat", "2", "--from", "9.0.0", "--to", "9.0.1",
                      environ={"TORCHMATRIX_FIND_LINKS": str(wheels)})  # fmt: skip
    text = run.stdout + run.stderr
    assert run.returncode == 1, text
    assert "nothing to bisect" in text and "first release with NEW's outcome" not in text, text


def test_a_first_run_makes_its_output_folder_before_any_pair_so_a_folder_a_script_listed_stays_as_it_was(
    tmp_path: Path,
) -> None:
    """The results go under the folder the script runs from and lists (torch's own import lists it too, looking for
    its backends' distributions): made after the pair, the output folder was a change, and the report the run
    queued showed what it had just measured stale, and the next run ran it again."""
    wheels = tmp_path / "wheels"
    standin.wheel(wheels, "9.0.0", {"dot": "pass"})
    folder = tmp_path / "report"
    folder.mkdir()
    (folder / "ls.py").write_text('import os\nimport torch\nprint(sorted(os.listdir(".")))\n')
    (folder / "matrix.yaml").write_text(
        f"torch: [9.0.0]\nprobes: [ls.py]\ndevices: [cpu]\noutput: out/here\nfind_links: [{wheels}]\n"
    )
    first = torchmatrix(folder, "probe")
    assert first.returncode == 0, first.stdout + first.stderr
    [row] = [line for line in first.stdout.splitlines() if line.startswith("9.0.0")]
    assert "✓" in row, first.stdout + first.stderr
    again = torchmatrix(folder, "probe")
    assert "up to date" in again.stdout + again.stderr, again.stdout + again.stderr
