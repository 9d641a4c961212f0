"""What the sessions share: the matrix narrowed to some releases, a release's cell, this machine's stored results."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from torchmatrix import freshness, identity
from torchmatrix.core import DEVICES, Kind, Outcome, Probe, Record
from torchmatrix.environment import cellenv, disk
from torchmatrix.errors import ConfigError, UsageError
from torchmatrix.matrix import Expectation, Matrix, PinRule, TorchEntry, kinds
from torchmatrix.planner import Cell, plan
from torchmatrix.project import Project, as_listed, environment_asks, load, with_releases

from .test_cellenv import made_with, make_env
from .test_freshness import ELSEWHERE, HERE
from .test_plan import LINUX, LISTING, THIS_MACHINE
from .test_results import result

NUMPY_PIN = PinRule(SpecifierSet("<2.3"), (), constrain=(Requirement("numpy<2"),))


def project(
    tmp_path: Path, *entries: TorchEntry, expect: tuple[Expectation, ...] = (), known: PinRule = NUMPY_PIN
) -> Project:
    """A project planned against the recorded listing and this machine's Pythons, with real probe files, under the
    known pin ``known``."""
    probes = []
    for name in ("autograd_dot", "batched_matmul"):
        (tmp_path / f"{name}.py").write_text(f"# {name}\ndef run(device):\n    return {{'outcome': 'pass'}}\n")
        probes.append(Probe(name, tmp_path / f"{name}.py"))
    matrix = Matrix(
        tmp_path / "matrix.yaml", entries, tuple(probes), DEVICES, 300.0, tmp_path / "reports", None,
        "https://pypi.org/simple", None, (), expect,
    )  # fmt: skip
    cells = plan(matrix, LISTING, THIS_MACHINE, LINUX, [known])
    return Project(matrix, cells, "ci-box", (), LISTING, tuple(THIS_MACHINE), tuple(LINUX), (known,))


def test_with_releases_keeps_the_matrix_and_the_entries_it_has_for_those_releases(tmp_path: Path) -> None:
    pinned = TorchEntry(Version("2.2.0"), ("3.10", "3.12"), (Requirement("numpy==1.26.4"),))
    matrix = project(tmp_path, TorchEntry(Version("1.9.0")), pinned).matrix
    narrowed = with_releases(matrix, [Version("2.2"), Version("1.12.0")])
    assert narrowed.torch == (pinned, TorchEntry(Version("1.12.0")))
    assert narrowed.probes == matrix.probes and narrowed.output == matrix.output


def test_a_release_written_otherwise_is_the_release_the_index_lists(tmp_path: Path) -> None:
    matrix = project(tmp_path, TorchEntry(Version("1.12.1.0"), line=3), TorchEntry(Version("2.2"))).matrix
    spelled = as_listed(matrix, LISTING)
    assert [str(entry.version) for entry in spelled.torch] == ["1.12.1", "2.2.0"]
    assert spelled.torch[0].line == 3


def test_a_release_is_planned_as_its_own_cell_with_the_matrixs_pins(tmp_path: Path) -> None:
    pinned = TorchEntry(Version("2.2.0"), ("3.10", "3.12"), (Requirement("numpy==1.26.4"),))
    here = project(tmp_path, pinned)
    cell = here.plan_release(Version("1.12.1"))
    assert (cell.id, cell.parameter, cell.requirements, cell.constraints) == (
        "torch-1.12.1-py3.10",
        "1.12.1",
        ("torch==1.12.1",),
        ("numpy<2",),
    )
    first = here.plan_release(Version("2.2.0"))  # the matrix pins two Pythons: the first one listed
    assert (first.id, first.parameter, first.requirements) == (
        "torch-2.2.0-py3.10",
        "2.2.0-py3.10",
        ("torch==2.2.0", "numpy==1.26.4"),
    )
    assert here.plan_release(Version("1.99.0")).outcome is Outcome.NO_WHEEL


def test_stored_is_this_machines_newest_result_per_cell(tmp_path: Path) -> None:
    here = project(tmp_path, TorchEntry(Version("1.12.1")))
    old = result("1.12.1", "2026-01-01T00:00:00+00:00", machine="ci-box")
    new = result("1.12.1", "2026-02-01T00:00:00+00:00", machine="ci-box")
    elsewhere = result("1.9.0", machine="laptop")
    assert here.stored([old, new, elsewhere]) == {(Version("1.12.1"), None): new}


def test_each_probe_runs_on_its_own_devices_and_tests_bring_pytest(tmp_path: Path) -> None:
    here = project(tmp_path, TorchEntry(Version("1.12.1")))
    script = Probe("repro", tmp_path / "repro.py", kind=Kind.SCRIPT, devices=("cpu",))
    tests = Probe("tests/", tmp_path / "tests", kind=Kind.PYTEST, root=tmp_path)
    (tmp_path / "repro.py").write_text("print(1)\n")
    (tmp_path / "tests").mkdir()
    matrix = dataclasses.replace(here.matrix, probes=(script, tests))
    both = dataclasses.replace(here, matrix=matrix)
    assert [(pair.probe.name, pair.device) for pair in both.pairs()] == [
        ("repro", "cpu"), ("tests/", "cpu"), ("tests/", "cuda"), ("tests/", "mps"),
    ]  # fmt: skip
    (cell,) = both.cells
    assert both.install_requirements(cell) == ["torch==1.12.1", "pytest"]
    assert both.installed_names(cell) == ["pytest", "numpy"]  # numpy: bounded where a cell has it
    assert both.owner("tests/test_a.py::test_x") == tests and both.owner("repro") == script
    assert both.owner("autograd_dot") is None
    assert "pytest" not in both.install_requirements(
        dataclasses.replace(cell, requirements=(*cell.requirements, "pytest==8.0.0"))
    )


def test_a_file_pytest_is_asked_about_brings_pytest_to_every_cell_and_a_told_script_does_not(tmp_path: Path) -> None:
    here = project(tmp_path, TorchEntry(Version("1.12.1")), TorchEntry(Version("2.2.0")))
    asked = Probe("repro.py", tmp_path / "repro.py", kind=Kind.SCRIPT_OR_TESTS, devices=("cpu",), root=tmp_path)
    told = dataclasses.replace(asked, kind=Kind.SCRIPT, root=None)
    for probe, installed in ((asked, True), (told, False)):
        matrix = dataclasses.replace(here.matrix, probes=(probe,))
        cells = dataclasses.replace(here, matrix=matrix)
        assert {"pytest" in cells.install_requirements(cell) for cell in cells.cells} == {installed}, probe.kind
    owner = dataclasses.replace(here, matrix=dataclasses.replace(here.matrix, probes=(asked,)))
    assert owner.owner("repro.py") == owner.owner("repro.py::test_dot") == asked  # a script's record, or its tests'


def test_every_record_of_a_cell_depends_on_what_every_probe_of_it_asks_installed(tmp_path: Path) -> None:
    """The probes share the cell's environment: one probe's PEP 723 pin changes what the others import."""
    here = project(tmp_path, TorchEntry(Version("1.12.1")))
    cell = here.cells[0]
    before = here.identified(here.inputs(cell), Record("autograd_dot", "cpu", Outcome.PASS, {}, "", 0.1))
    pinned = Probe("batched_matmul", tmp_path / "batched_matmul.py", requires=("scipy==1.11.4",))
    matrix = dataclasses.replace(here.matrix, probes=(here.matrix.probes[0], pinned))
    after = dataclasses.replace(here, matrix=matrix)
    assert "scipy==1.11.4" in after.inputs(cell)["requirements"]
    made = after.identified(after.inputs(cell), Record("autograd_dot", "cpu", Outcome.PASS, {}, "", 0.1))
    assert made.inputs["requirements"] != before.inputs["requirements"]
    assert made.inputs["probe"] == before.inputs["probe"]  # autograd_dot itself did not change


def test_a_stored_record_is_wanted_as_the_cell_that_would_make_it_now(tmp_path: Path) -> None:
    here = project(tmp_path, TorchEntry(Version("1.12.1")))
    record = Record("autograd_dot", "cpu", Outcome.PASS, {}, "", 0.1)
    planned = result("1.12.1", python_request=None)
    assert here.identity_now(planned, record) == here.record_inputs(here.inputs(here.cells[0]), "autograd_dot")
    bisected = result("1.11.0", python_request=None)  # a release the matrix does not list: bisect built it
    assert here.identity_now(bisected, record) == here.record_inputs(
        here.inputs(here.plan_release(Version("1.11.0"))), "autograd_dot"
    )
    # A Python a bisect held, or the matrix pinned once, for a release it lists: that cell as it would run now, not
    # stale for being no cell of the matrix (the report names it apart).
    assert here.identity_now(result("1.12.1", python_request="3.8"), record) == here.record_inputs(
        here.inputs(here.plan_release(Version("1.12.1"), python="3.8")), "autograd_dot"
    )


def test_a_results_cell_is_worked_out_once_for_all_its_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test suite's result holds a record per test: what a run now would make them from is asked once."""
    here = project(tmp_path, TorchEntry(Version("1.12.1")))
    asked: list[Cell] = []
    inputs = Project.inputs
    monkeypatch.setattr(Project, "inputs", lambda self, cell, env=None: asked.append(cell) or inputs(self, cell, env))
    planned = result("1.12.1", python_request=None)
    wanted = [here.identity_now(planned, Record("autograd_dot", "cpu", Outcome.PASS, {}, "", 0.1)) for _ in range(20)]
    assert asked == [here.cells[0]]
    assert wanted == [here.record_inputs(inputs(here, here.cells[0]), "autograd_dot")] * 20


def test_a_release_on_the_python_a_bisect_held_is_wanted_as_that_cell(tmp_path: Path) -> None:
    here = project(tmp_path, TorchEntry(Version("1.12.1")))
    record = Record("autograd_dot", "cpu", Outcome.PASS, {}, "", 0.1)
    held = here.plan_release(Version("1.11.0"), python="3.8")
    assert (held.python, held.python_request, held.parameter) == ("3.8", "3.8", "1.11.0")
    assert here.identity_now(result("1.11.0", python_request="3.8"), record) == here.record_inputs(
        here.inputs(held), "autograd_dot"
    )


def test_a_record_measured_in_a_torch_installed_already_is_current_while_its_probe_is(tmp_path: Path) -> None:
    here = project(tmp_path, TorchEntry(Version("1.12.1")))
    gone = str(tmp_path / "gone" / "python")  # another machine's, or removed: nothing of its environment is asked
    made = here.identified(here.installed_inputs(gone), Record("autograd_dot", "cpu", Outcome.PASS, {}, "", 0.1))
    installed = result("2.11.0", session="probe-installed", records=(made,), inputs={"installed_python": gone})
    assert made.inputs["probe"] and here.identity_now(installed, made) == {
        key: value for key, value in made.inputs.items() if key != "read"
    }


def test_a_stored_record_of_torch_from_another_source_is_not_up_to_date(tmp_path: Path) -> None:
    """Bisect's --find-links and --index-url: a record installed from elsewhere is no look at this source."""
    here = project(tmp_path, TorchEntry(Version("1.12.1")))
    cell = here.cells[0]
    read = {identity.READ: {}}  # as the runner says of every record it makes
    made = here.identified(here.inputs(cell), Record("autograd_dot", "cpu", Outcome.PASS, {}, "", 0.1, read))
    stored = {(cell.torch, cell.python_request): result("1.12.1", python_request=None, records=(made,))}
    assert here.up_to_date(cell, stored, [("autograd_dot", "cpu")]) is not None
    elsewhere = here.with_sources("https://pypi.org/simple", [str(tmp_path / "other-wheels")])
    assert elsewhere.up_to_date(elsewhere.cells[0], stored, [("autograd_dot", "cpu")]) is None


def test_a_stored_record_made_on_another_machine_identity_under_this_ones_name_is_not_up_to_date(
    tmp_path: Path,
) -> None:
    """``machine:`` named by hand on two machines: bisect and ``verify --run`` take none of the other's records for
    a run here, as the report marks them stale, but run the cell again."""
    here = dataclasses.replace(project(tmp_path, TorchEntry(Version("1.12.1"))), hardware=HERE)
    cell = here.cells[0]
    read = {identity.READ: {}}  # as the runner says of every record it makes
    made = here.identified(here.inputs(cell), Record("autograd_dot", "cpu", Outcome.PASS, {}, "", 0.1, read))
    for machine, stands in ((HERE, True), (ELSEWHERE, False)):
        environment = {identity.HARDWARE: machine.to_json()}
        stored = {(cell.torch, None): result("1.12.1", records=(made,), environment=environment)}
        assert (here.up_to_date(cell, stored, [("autograd_dot", "cpu")]) is not None) is stands


def test_each_probe_session_is_tagged_with_its_torch_minor_and_its_python(tmp_path: Path) -> None:
    here = project(tmp_path, TorchEntry(Version("1.12.1")), TorchEntry(Version("2.2.0"), ("3.10", "3.12")))
    assert dict(zip(here.session_ids(), here.session_tags(), strict=True)) == {
        "1.12.1": ["torch-1.12", "py3.10"],
        "2.2.0-py3.10": ["torch-2.2", "py3.10"],
        "2.2.0-py3.12": ["torch-2.2", "py3.12"],
    }


def test_a_record_is_made_from_the_folder_its_pairs_ran_from(tmp_path: Path) -> None:
    here = project(tmp_path, TorchEntry(Version("1.12.1")))
    assert here.matrix.run_from == tmp_path  # the matrix's folder, where its paths are typed from by hand
    (cell,) = here.cells
    made = here.identified(here.inputs(cell), Record("autograd_dot", "cpu", Outcome.PASS, {}, "", 0.1))
    assert made.inputs["workdir"] == str(tmp_path)
    elsewhere = dataclasses.replace(here, matrix=dataclasses.replace(here.matrix, workdir=tmp_path / "bug"))
    wanted = elsewhere.record_inputs(elsewhere.inputs(cell), "autograd_dot")
    assert freshness.record_changes(made, wanted, None) == [
        f"the folder the pairs run from changed: {tmp_path} → {tmp_path / 'bug'}"
    ]


def test_a_workdir_that_is_no_folder_is_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "matrix.yaml").write_text("torch: [2.2.0]\nprobes: [repro.py]\n")
    (tmp_path / "repro.py").write_text("print('hello')\n")
    with pytest.raises(UsageError, match="TORCHMATRIX_WORKDIR: 'nowhere' is not a folder"):
        load(tmp_path, {"TORCHMATRIX_WORKDIR": "nowhere"})


def test_every_pair_is_given_the_folder_of_inputs_beside_its_machines_results(tmp_path: Path) -> None:
    """One folder for every cell of this machine (the sweep's store is captured once there), and another machine's
    pairs get their own: a store is made from this machine's arithmetic and replayed by its records alone."""
    here = project(tmp_path, TorchEntry(Version("1.12.1")))
    seen = here.pair_environment(str(tmp_path / "bin" / "python"))
    assert seen["TORCHMATRIX_INPUTS"] == str(here.matrix.output / "results" / here.machine / "inputs")
    other = dataclasses.replace(here, machine="other/box")
    assert other.pair_environment("python")["TORCHMATRIX_INPUTS"] == str(
        here.matrix.output / "results" / "other_box" / "inputs"
    )


def test_a_probe_named_from_probes_root_depends_on_where_it_is_and_not_its_name_alone(tmp_path: Path) -> None:
    """``probes_root: ../v1`` then ``../v2``: ``repro.py`` is another file of the same bytes, beside another helper
    module; its records depend on which."""
    for version in ("v1", "v2"):
        (tmp_path / version).mkdir()
        (tmp_path / version / "repro.py").write_text("import helper\nprint(helper.WHO)\n")
    here = project(tmp_path, TorchEntry(Version("1.12.1")))

    def wanted(root: str) -> object:
        probe = Probe("repro.py", tmp_path / root / "repro.py", kind=Kind.SCRIPT)
        matrix = dataclasses.replace(here.matrix, probes=(probe,), probes_root=tmp_path / root)
        return dataclasses.replace(here, matrix=matrix).inputs(here.cells[0])["probes"]

    assert wanted("v1") != wanted("v2")
    assert here.inputs(here.cells[0])["probes"] == {  # a matrix without probes_root: the probe's file alone
        probe.name: kinds.digest(probe) for probe in here.matrix.probes
    }


def test_the_environment_a_run_now_would_take_is_the_one_built_for_its_cell_and_none_where_two_differ(
    tmp_path: Path,
) -> None:
    """The cell's environment in nox's folder, or in the folder of the Python a bisect holds: a view compares a
    record's torch build and packages with it; where both are there and hold other packages, which one a run takes
    is the run's to say, and none is compared."""
    here = dataclasses.replace(project(tmp_path, TorchEntry(Version("1.12.1"))), envdir=tmp_path / ".nox")
    cell = dataclasses.replace(here.cells[0], python_request=here.cells[0].python)
    inputs = here.inputs(cell)

    def built(folder: Path) -> Path:
        version = ".".join(map(str, cell.interpreter.version)) if cell.interpreter else ""
        env = made_with(make_env(disk.environment_of(folder, cell.parameter)), version)
        cellenv.mark_built(env, inputs["index"], environment_asks(inputs))
        return env

    assert here.environment_now(cell) is None  # none built: a run would build one
    held = built(disk.envdir_for(tmp_path / ".nox", cell.python_request))
    assert here.environment_now(cell) == held
    plain = built(tmp_path / ".nox")
    assert here.environment_now(cell) == plain  # both alike: either
    extra = next(plain.glob("lib/python*/site-packages")) / "helper-1.0.dist-info"
    extra.mkdir()
    (extra / "METADATA").write_text("Metadata-Version: 2.1\nName: helper\nVersion: 1.0\n")
    assert here.environment_now(cell) is None


@pytest.mark.parametrize(("command", "typed"), [(None, "nox -s plan"), ("torchmatrix", "torchmatrix plan")])
def test_a_release_the_index_does_not_list_is_refused_with_the_command_that_lists_the_cells(
    tmp_path: Path, command: str | None, typed: str
) -> None:
    here = project(tmp_path, TorchEntry(Version("1.99.0"), line=1))
    with pytest.raises(ConfigError) as refused:
        here.refuse_unlisted(command)
    assert "the index lists no torch 1.99.0" in str(refused.value), refused.value
    assert f"`{typed}` lists the cells" in str(refused.value), refused.value
