"""When a stored result stands for a new run: same inputs, same torch build, and a run that got to the probes."""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from torchmatrix import freshness, identity, results
from torchmatrix.core import Kind, Outcome, Pair, Probe, Record
from torchmatrix.identity import TORCH_BUILD
from torchmatrix.matrix import kinds
from torchmatrix.results import CellResult

INPUTS = {
    "requirements": ["torch==1.9.0", "numpy<2"],
    "interpreter": "/usr/bin/python3.9",
    "python_version": "3.9.18",
    identity.INTERPRETER_BUILD: "e" * 64,
    "devices": ["cpu", "cuda"],
    "timeout": 300,
    "probes": {"autograd_dot": "a" * 64, "batched_matmul": "b" * 64},
    "worker": "c" * 64,
    TORCH_BUILD: "1.9.0 sha256:" + "d" * 64,
}
PAIRS = [Pair(Probe(name, Path(f"{name}.py")), device) for name in INPUTS["probes"] for device in INPUTS["devices"]]


def record(probe: str = "autograd_dot", device: str = "cpu", inputs: dict = INPUTS, **fields) -> Record:
    return Record(**{"probe": probe, "device": device, "outcome": Outcome.PASS, "metrics": {}, "message": "",
                     "duration": 0.01, "inputs": identity.record_inputs(inputs, probe), **fields})  # fmt: skip


def stored(*records: Record, outcome: Outcome | None = None) -> CellResult:
    """A stored cell holding ``records``; by default one per pair, made from INPUTS."""
    made = records or tuple(record(pair.probe.name, pair.device) for pair in PAIRS)
    return CellResult(
        machine="box", cell_id="torch-1.9.0-py3.9", torch="1.9.0", python="3.9", python_request=None,
        session="probe(1.9.0)", outcome=outcome, message="", records=() if outcome else made,
        inputs=dict(INPUTS), started_at="2026-01-01T00:00:00+00:00", finished_at="2026-01-01T00:00:05+00:00",
    )  # fmt: skip


HERE = identity.Machine("linux", "x86_64", "AMD EPYC 7B13", "AuthenticAMD", "25", "1", ("x86-64-v2", "x86-64-v3"))
ELSEWHERE = identity.Machine(
    "linux", "x86_64", "Intel(R) Xeon(R) CPU @ 2.20GHz", "GenuineIntel", "6", "85",
    ("x86-64-v2", "x86-64-v3", "x86-64-v4"), ("avx512_vnni",),
)  # fmt: skip


def made_on(result: CellResult, machine: identity.Machine) -> CellResult:
    return dataclasses.replace(result, environment={identity.HARDWARE: machine.to_json()})


# --- which pairs are stale -----------------------------------------------------------


def test_same_inputs_and_build_run_nothing() -> None:
    stale = freshness.stale(stored(), PAIRS, INPUTS)
    assert stale.pairs == ()
    assert stale.reason.startswith("up to date (every record's probe, torch build and interpreter unchanged since 2026")
    assert "add `-- --force` to re-measure" in stale.reason


def test_a_record_measured_in_an_installed_torch_is_re_measured_in_the_cells_environment_and_says_so() -> None:
    installed, kept = PAIRS[0], PAIRS[1]
    records = [record(installed.probe.name, installed.device), record(kept.probe.name, kept.device)]
    records[0] = dataclasses.replace(records[0], inputs=identity.record_inputs({}, installed.probe.name))
    file = dataclasses.replace(stored(*records), session=results.INSTALLED_SESSION)  # its last writer
    stale = freshness.stale(file, [installed, kept], INPUTS)
    assert stale.pairs == (installed,), "a record this matrix made stays, whoever wrote the file last"
    assert (
        stale.reason
        == f"1 of 2 pairs: {installed.probe.name} was measured by probe-installed, in a torch installed already"
    )


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({TORCH_BUILD: "1.9.0 sha256:" + "9" * 64}, "the torch build changed"),
        ({"python_version": "3.9.19"}, "the Python version changed: 3.9.18 → 3.9.19"),
        ({"interpreter": "/opt/python3.9"}, "the interpreter changed: /usr/bin/python3.9 → /opt/python3.9"),
        ({identity.INTERPRETER_BUILD: "f" * 64}, "the interpreter's build changed"),  # patched in place
        ({"requirements": ["torch==1.9.0"]}, "the requirements changed: torch==1.9.0 numpy<2 → torch==1.9.0"),
        ({"worker": "0" * 64}, "torchmatrix's worker script changed"),
    ],
)
def test_a_change_every_record_depends_on_runs_every_pair_and_says_which(change: dict, reason: str) -> None:
    stale = freshness.stale(stored(), PAIRS, {**INPUTS, **change})
    assert (stale.pairs, stale.reason) == (tuple(PAIRS), reason)


def test_a_changed_probe_runs_its_pairs_alone() -> None:
    inputs = {**INPUTS, "probes": {**INPUTS["probes"], "autograd_dot": "e" * 64}}
    stale = freshness.stale(stored(), PAIRS, inputs)
    assert [(pair.probe.name, pair.device) for pair in stale.pairs] == [
        ("autograd_dot", "cpu"),
        ("autograd_dot", "cuda"),
    ]
    assert stale.reason == "2 of 4 pairs: probe autograd_dot changed"


def test_a_pair_without_a_record_runs_and_records_of_other_probes_and_devices_do_not_count() -> None:
    """Two matrices sharing an output folder: each has records the other does not ask for."""
    mine = stored(record("autograd_dot", "cpu"), record("other", "mps"))
    stale = freshness.stale(mine, PAIRS, INPUTS)
    assert len(stale.pairs) == 3
    assert stale.reason == "3 of 4 pairs: no record of autograd_dot on cuda; no record of batched_matmul on cpu, cuda"
    assert freshness.stale(mine, PAIRS[:1], INPUTS).pairs == ()


@pytest.mark.parametrize(
    ("outcome", "duration", "made_under", "limit", "stands"),
    [
        (Outcome.PASS, 1.0, 300, 60, True),  # it finished within the new limit: it would again
        (Outcome.PASS, 90.0, 300, 60, False),  # it took longer than the new limit: it could time out now
        (Outcome.PASS, 1.0, 60, 300, True),
        (Outcome.TIMEOUT, 60.0, 60, 30, True),  # it ran past 60 s: it runs past 30 s too
        (Outcome.TIMEOUT, 60.0, 60, 300, False),  # with more time it might finish
    ],
)
def test_the_timeout_counts_only_where_it_could_change_the_outcome(
    outcome: Outcome, duration: float, made_under: float, limit: float, stands: bool
) -> None:
    made = record(outcome=outcome, duration=duration, inputs={**INPUTS, "timeout": made_under})
    assert freshness.answers_for(made, identity.record_inputs({**INPUTS, "timeout": limit}, "autograd_dot")) is stands
    if not stands:
        reason = freshness.stale(stored(made), PAIRS[:1], {**INPUTS, "timeout": limit}).reason
        assert reason == f"the timeout changed: {made_under} → {limit}"


def test_a_lower_timeout_counts_for_a_tests_record_however_short_the_test() -> None:
    """A test is timed from its own start, but its limit holds pytest's collection of its module before it (a module
    that sleeps 8 s as it imports, a test that takes 1 ms): under a limit lower than its own it can time out."""
    made = record(duration=0.001, kind=Kind.PYTEST, inputs={**INPUTS, "timeout": 30})
    assert not freshness.answers_for(made, identity.record_inputs({**INPUTS, "timeout": 5}, "autograd_dot"))
    tests = Pair(Probe("autograd_dot", Path("autograd_dot.py"), kind=Kind.PYTEST), "cpu")
    assert freshness.stale(stored(made), [tests], {**INPUTS, "timeout": 5}).reason == "the timeout changed: 30 → 5"
    assert freshness.answers_for(made, identity.record_inputs({**INPUTS, "timeout": 60}, "autograd_dot"))


def test_a_higher_timeout_counts_for_a_record_of_runs_of_which_one_ran_past_the_limit() -> None:
    """``repeat: 4``, two runs stopped at 4 s and two that passed: ``unstable``. Under 20 s the stopped runs may
    finish, and the record is stale; under 3 s the runs that passed in 2 s would pass again."""
    runs = [{"outcome": outcome, "message": "", "duration": seconds, "metrics": {}}
            for outcome, seconds in (("timeout", 5.2), ("timeout", 5.1), ("pass", 2.0), ("pass", 2.3))]  # fmt: skip
    made = record(outcome=Outcome.UNSTABLE, duration=5.2, metrics={"repeats": runs}, inputs={**INPUTS, "timeout": 4})
    assert not freshness.answers_for(made, identity.record_inputs({**INPUTS, "timeout": 20}, "autograd_dot"))
    assert freshness.answers_for(made, identity.record_inputs({**INPUTS, "timeout": 3}, "autograd_dot"))
    assert not freshness.answers_for(made, identity.record_inputs({**INPUTS, "timeout": 2}, "autograd_dot"))


def test_a_record_from_before_builds_were_recorded_is_stale() -> None:
    older = {key: value for key, value in INPUTS.items() if key != TORCH_BUILD}
    made = stored(*(record(pair.probe.name, pair.device, inputs=older) for pair in PAIRS))
    assert freshness.stale(made, PAIRS, INPUTS).reason == "the torch build was not recorded"


def test_a_run_that_ended_before_the_probes_runs_everything() -> None:
    stale = freshness.stale(stored(outcome=Outcome.INSTALL_ERROR), PAIRS, INPUTS)
    assert (stale.pairs, stale.reason) == (tuple(PAIRS), "the last run ended in install-error")


def test_an_env_without_a_built_torch_runs_whatever_was_stored() -> None:
    stale = freshness.stale(stored(), PAIRS, {**INPUTS, TORCH_BUILD: None})
    assert stale.pairs == tuple(PAIRS) and "no torch installed in the environment yet" in stale.reason


def test_without_a_stored_result_everything_runs() -> None:
    assert freshness.stale(None, PAIRS, INPUTS) == freshness.ToRun(tuple(PAIRS), "no stored result")


# --- asking for a re-run -----------------------------------------------------------


def test_a_record_of_one_run_made_before_repeats_stands_for_one_run_only() -> None:
    made = record("autograd_dot")  # its inputs have no repeat: every run was one run then
    assert freshness.answers_for(made, identity.record_inputs(dict(INPUTS, repeat=1), "autograd_dot"))
    assert freshness.record_changes(made, identity.record_inputs(dict(INPUTS, repeat=5), "autograd_dot"), None) == [
        "the runs per pair changed: 1 → 5"
    ]
    five = record("autograd_dot", inputs=dict(INPUTS, repeat=5))
    assert freshness.answers_for(five, identity.record_inputs(dict(INPUTS, repeat=5), "autograd_dot"))
    assert not freshness.answers_for(five, identity.record_inputs(dict(INPUTS, repeat=1), "autograd_dot"))


def test_a_record_stands_while_what_it_depends_on_is_unchanged() -> None:
    made = record("autograd_dot")
    wanted = identity.record_inputs(INPUTS, "autograd_dot")
    assert freshness.answers_for(made, wanted)
    # Another probe changed, or the devices did: this probe's records still stand.
    assert freshness.answers_for(
        made, identity.record_inputs(dict(INPUTS, probes={"autograd_dot": "a" * 64}), "autograd_dot")
    )
    for key, value in [
        ("requirements", ["torch==1.9.0"]),
        ("interpreter", "/usr/bin/python3.10"),
        ("python_version", "3.9.19"),
        ("worker", "changed"),
        ("probes", {"autograd_dot": "changed"}),
        ("index", identity.build_source("https://pypi.org/simple", ["/srv/other-wheels"])),
        ("environment", {"set": {"MY_BACKEND": "torch"}, "passed": {}, "steering": {}}),
        ("seed", 1),
        (identity.PACKAGES, "another package set"),
    ]:
        assert not freshness.answers_for(made, identity.record_inputs(dict(INPUTS, **{key: value}), "autograd_dot")), (
            key
        )


def test_without_an_environment_the_build_is_not_compared() -> None:
    """Bisect and verify ask without installing: inputs without a torch build compare everything else."""
    without_build = {key: value for key, value in INPUTS.items() if key != TORCH_BUILD}
    assert freshness.answers_for(record(), identity.record_inputs(without_build, "autograd_dot"))


def test_a_record_depends_on_its_probes_options_only_where_the_matrix_gives_some() -> None:
    with_options = dict(INPUTS, probe_options={"autograd_dot": {"ops": "add"}})
    made = record("autograd_dot", inputs=with_options)
    assert made.inputs["options"] == {"ops": "add"}
    assert freshness.answers_for(made, identity.record_inputs(with_options, "autograd_dot"))
    other = dict(INPUTS, probe_options={"autograd_dot": {"ops": "mul"}})
    assert freshness.record_changes(made, identity.record_inputs(other, "autograd_dot"), None) == [
        "the options of probe autograd_dot changed"
    ]
    assert not freshness.answers_for(made, identity.record_inputs(INPUTS, "autograd_dot"))  # options removed
    # A probe without options keeps the inputs records had before there were options.
    plain = record("batched_matmul", inputs=with_options)
    assert "options" not in plain.inputs
    assert freshness.answers_for(plain, identity.record_inputs(INPUTS, "batched_matmul"))


def test_tests_run_again_as_one_pair_when_any_of_their_records_does_not_stand() -> None:
    tests = Probe("tests/test_a.py", Path("tests/test_a.py"), kind=Kind.PYTEST)
    inputs = {**INPUTS, "probes": {**INPUTS["probes"], tests.name: "e" * 64}}

    def test(name: str, made_from: dict = inputs) -> Record:
        made = identity.record_inputs(made_from, f"tests/test_a.py::{name}", tests.name)
        return Record(f"tests/test_a.py::{name}", "cpu", Outcome.PASS, {}, "", 0.01, made)

    pairs = [Pair(tests, "cpu"), Pair(tests, "cuda")]
    fresh = stored(test("test_x"), test("test_y"))
    assert freshness.stale(fresh, pairs, inputs) == freshness.ToRun(
        (pairs[1],), "1 of 2 pairs: no record of tests/test_a.py on cuda"
    )
    edited = {**inputs, "probes": {**inputs["probes"], tests.name: "f" * 64}}
    changed = freshness.stale(stored(test("test_x"), test("test_y", edited)), pairs[:1], inputs)
    assert changed == freshness.ToRun((pairs[0],), "probe tests/test_a.py changed")


def test_tests_run_again_where_another_probe_made_the_record_of_one_of_them() -> None:
    """A bisect of the node id ``tests/test_a.py::test_y`` (from another folder) replaced that test's record; the file's
    own pair did not make it, the views show it stale for the file, and a run of the file makes it its own."""
    tests = Probe("tests/test_a.py", Path("tests/test_a.py"), kind=Kind.PYTEST)
    node = "tests/test_a.py::test_y"
    inputs = {**INPUTS, "probes": {**INPUTS["probes"], tests.name: "e" * 64, node: "e" * 64}}

    def test(name: str, maker: str) -> Record:
        made = identity.record_inputs(inputs, f"tests/test_a.py::{name}", maker)
        return Record(f"tests/test_a.py::{name}", "cpu", Outcome.PASS, {}, "", 0.01, made)

    pair = Pair(tests, "cpu")
    bisected = stored(test("test_x", tests.name), test("test_y", node))
    assert freshness.stale(bisected, [pair], inputs) == freshness.ToRun(
        (pair,), "tests/test_a.py::test_y was made by another probe than tests/test_a.py"
    )
    both = [pair, Pair(Probe(node, Path("tests/test_a.py"), kind=Kind.PYTEST, select="::test_y"), "cpu")]
    assert freshness.stale(bisected, both, inputs).pairs == ()  # a probe of this run made it: the run is theirs


def folder_probe(root: Path | None) -> tuple[Probe, dict, Callable[[str, str], Record]]:
    """The probe of the folder ``tests/`` of the matrix in ``root``, what a run of it is made from, and a maker of the
    record of a test ``name`` that the probe ``maker`` made from that."""
    folder = Probe("tests/", (root or Path()) / "tests", kind=Kind.PYTEST, root=root)
    inputs = {**INPUTS, "probes": {**INPUTS["probes"], folder.name: "e" * 64}}

    def made(name: str, maker: str) -> Record:
        return Record(name, "cpu", Outcome.PASS, {}, "", 0.01, identity.record_inputs(inputs, name, maker))

    return folder, inputs, made


def test_a_folder_answers_only_for_the_files_its_run_collects() -> None:
    """``torchmatrix probe tests/repro.py`` (a script beside the tests) and ``tests/check_b.py`` (tests pytest
    collects only where it is named) stored records under the folder ``tests/`` that the matrix runs: by hand,
    ``pytest tests/`` runs neither, so the folder is up to date and its run keeps them; a test of a file it does
    collect that another probe made (a bisect of a test since gone) is the folder's to say."""
    folder, inputs, made = folder_probe(None)
    pair = Pair(folder, "cpu")
    own = made("tests/test_a.py::test_x", folder.name)
    script, named = made("tests/repro.py", "tests/repro.py"), made("tests/check_b.py::test_c", "tests/check_b.py")
    gone = made("tests/test_a.py::test_gone", "tests/test_a.py::test_gone")
    assert [freshness.pair_answers_for(pair, other, [own]) for other in (script, named, gone)] == [False, False, True]
    assert freshness.stale(stored(own, script, named), [pair], inputs).pairs == ()
    assert freshness.stale(stored(own, script, gone), [pair], inputs).reason == (
        "tests/test_a.py::test_gone was made by another probe than tests/"
    )


def test_a_folder_answers_for_a_record_of_a_file_under_it_that_is_gone(tmp_path: Path) -> None:
    """``torchmatrix probe tests/test_a.py`` stored its test's record, then the file was removed: no run of any probe
    can make that record again, and ``pytest tests/`` holds no such test, so the folder's run replaces it (once)
    rather than keep it, stale, under the folder that no run of the matrix re-runs; a file still there that its run
    does not collect (a script beside the tests) stays another probe's."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_b.py").write_text("def test_y():\n    pass\n")
    (tmp_path / "tests" / "repro.py").write_text("print(1)\n")
    folder, inputs, made = folder_probe(tmp_path)
    pair = Pair(folder, "cpu")
    own = made("tests/test_b.py::test_y", folder.name)
    gone, script = made("tests/test_a.py::test_x", "tests/test_a.py"), made("tests/repro.py", "tests/repro.py")
    assert [freshness.pair_answers_for(pair, other, [own]) for other in (gone, script)] == [True, False]
    assert freshness.stale(stored(own, gone), [pair], inputs).reason == (
        "tests/test_a.py::test_x was made by another probe than tests/"
    )


def test_a_folder_never_answers_for_another_matrix_s_record_of_a_file_of_its_own_folder(tmp_path: Path) -> None:
    """Two matrices share one output: ``a/matrix.yaml`` runs ``tests/check_dot.py``, ``b/matrix.yaml`` runs
    ``tests/``, where no ``check_dot.py`` is. The record of ``a``'s file read ``a/tests/check_dot.py``, which is
    there: ``b``'s folder run says nothing of it, and it stays; one that read ``b/tests/check_dot.py``, gone, is the
    folder's to replace."""
    (tmp_path / "a" / "tests").mkdir(parents=True)
    (tmp_path / "a" / "tests" / "check_dot.py").write_text("def test_x():\n    pass\n")
    (tmp_path / "b" / "tests").mkdir(parents=True)
    folder, _, made = folder_probe(tmp_path / "b")

    def made_in(where: str) -> Record:
        record = made("tests/check_dot.py::test_x", "tests/check_dot.py")
        return dataclasses.replace(record, inputs={**record.inputs, "read": {str(tmp_path / where): "f" * 64}})

    own = made("tests/test_b.py::test_y", folder.name)
    answered = [
        freshness.pair_answers_for(Pair(folder, "cpu"), made_in(where), [own])
        for where in ("a/tests/check_dot.py", "b/tests/check_dot.py")
    ]
    assert answered == [False, True]


# --- what every view shows of a stored record ---------------------------------------------------


@dataclasses.dataclass
class RunNow:
    """A run now (what :class:`freshness.RunNow` asks): its machine, its probes, what it makes records from."""

    machine: str = "box"
    inputs: dict | None = dataclasses.field(default_factory=lambda: dict(INPUTS))
    hardware: identity.Machine = HERE

    def owner(self, record_name: str) -> str | None:
        return record_name if record_name in INPUTS["probes"] else None

    def identity_now(self, result: CellResult, made: Record) -> dict | None:
        return None if self.inputs is None else identity.record_inputs(self.inputs, made.probe)


def shown(result: CellResult, current: RunNow) -> list[tuple[str, Outcome, str]]:
    [marked] = freshness.marked_stale([result], current)
    return [(made.probe, made.outcome, made.message) for made in marked.records if made.device == "cpu"]


def test_a_record_made_from_what_a_run_now_would_use_is_shown_as_it_is() -> None:
    assert shown(stored(), RunNow()) == [("autograd_dot", Outcome.PASS, ""), ("batched_matmul", Outcome.PASS, "")]


def test_a_record_whose_probe_or_torchmatrix_changed_is_stale_saying_what_it_was_and_what_changed() -> None:
    edited = dict(INPUTS, probes={**INPUTS["probes"], "autograd_dot": "e" * 64})
    [dot, matmul] = shown(stored(), RunNow(inputs=edited))
    assert dot == ("autograd_dot", Outcome.STALE, "was ✓ pass; probe autograd_dot changed")
    assert matmul[1] is Outcome.PASS
    assert {made[1] for made in shown(stored(), RunNow(inputs=dict(INPUTS, worker="f" * 64)))} == {Outcome.STALE}


def test_a_record_whose_read_file_changed_is_stale_here(tmp_path: Path) -> None:
    helper = tmp_path / "helper.py"
    helper.write_text("VALUE = 1\n")
    read = {identity.READ: identity.files_read([str(helper)])}
    made = record(inputs=INPUTS)
    result = stored(dataclasses.replace(made, inputs={**made.inputs, **read}))
    assert shown(result, RunNow())[0][1] is Outcome.PASS
    helper.write_text("VALUE = 2\n")
    assert shown(result, RunNow()) == [("autograd_dot", Outcome.STALE, f"was ✓ pass; {helper} changed")]


def test_a_file_of_a_cells_environment_that_nox_s_clean_removed_is_no_change_but_one_beside_it_is(
    tmp_path: Path,
) -> None:
    """`nox -s clean -- 1.9.0` removes the environment, and with it every file the pairs read there (its `.pth`
    files, its folders): nothing of it can be asked now, as neither can its build or packages, so a record stays what
    it was; a file beside the environment still counts, and so does one of an environment that is there."""
    env, data = tmp_path / ".nox" / "probe-1-9-0", tmp_path / "data.txt"
    site = env / "lib" / "python3.9" / "site-packages"
    site.mkdir(parents=True)
    (site / "extra.pth").write_text("import os\n")
    data.write_text("kept")
    pth, there = str(site / identity.SITE_PTH_FILES), str(env) + identity.FILE_THERE
    read = {identity.READ: identity.files_read([pth, there, str(data)])}
    made = record(inputs=INPUTS)
    result = dataclasses.replace(
        stored(dataclasses.replace(made, inputs={**made.inputs, **read})),
        environment={"python_executable": str(env / "bin" / "python")},
    )
    (site / "extra.pth").unlink()
    assert shown(result, RunNow()) == [("autograd_dot", Outcome.STALE, f"was ✓ pass; {pth} is gone")]
    shutil.rmtree(env)
    assert shown(result, RunNow()) == [("autograd_dot", Outcome.PASS, "")]
    data.write_text("edited")
    assert shown(result, RunNow()) == [("autograd_dot", Outcome.STALE, f"was ✓ pass; {data} changed")]


RECORDING_READS = dict(INPUTS, environment={"set": {}, "passed": {}, "steering": {}, "needed": {}}, seed=0,
                       workdir="/src")  # fmt: skip
"""What a run that records what its pairs read makes a record from."""


def test_a_record_whose_run_recorded_what_it_read_and_that_no_longer_says_it_is_never_current() -> None:
    """Its ``read`` removed by hand: nothing can tell whether what it read changed, so no view takes it as current."""
    made = record(inputs=RECORDING_READS)
    lost = stored(made, record("batched_matmul", inputs=RECORDING_READS))
    assert made.inputs.get(identity.READ) is None
    said = "was ✓ pass; the record does not say what its pair read"
    assert shown(lost, RunNow(inputs=RECORDING_READS)) == [
        ("autograd_dot", Outcome.STALE, said),
        ("batched_matmul", Outcome.STALE, said),
    ]
    assert freshness.stale(lost, PAIRS[:1], RECORDING_READS) == freshness.ToRun(
        tuple(PAIRS[:1]), "the record does not say what its pair read"
    )
    assert not freshness.answers_for(made, identity.record_inputs(RECORDING_READS, "autograd_dot"))
    [(_, outcome, message)] = shown(stored(record("opsweep", inputs=RECORDING_READS)), RunNow(inputs=None))
    assert (outcome, message) == (Outcome.STALE, said), "another matrix's record is asked what it read alike"
    with_read = dataclasses.replace(made, inputs={**made.inputs, identity.READ: {}})
    assert freshness.answers_for(with_read, identity.record_inputs(RECORDING_READS, "autograd_dot"))


def test_a_record_made_before_reads_were_recorded_stands_on_the_rest_of_its_identity() -> None:
    made = record(inputs=INPUTS)
    assert not any(part in made.inputs for part in identity.RECORDED_WITH_READ)
    assert freshness.answers_for(made, identity.record_inputs(INPUTS, "autograd_dot"))


def test_a_variable_the_cpu_pair_does_not_see_changes_only_the_records_of_the_pairs_that_see_it() -> None:
    def seeing(visible: str) -> dict:
        return dict(INPUTS, environment=identity.environment_identity({"CUDA_VISIBLE_DEVICES": visible}, (), {}))

    def made_on(device: str) -> Record:
        inputs = identity.record_inputs(seeing("0"), "autograd_dot", device=device)
        return dataclasses.replace(record(device=device), inputs={**inputs, identity.READ: {}})

    made = [made_on(pair.device) for pair in PAIRS[:2]]
    stale = freshness.stale(stored(*made), PAIRS[:2], seeing("1"))
    assert stale == freshness.ToRun(
        (PAIRS[1],), "1 of 2 pairs: the variables the pairs see changed: CUDA_VISIBLE_DEVICES"
    ), "the cpu pair saw it empty both times"


def test_a_file_many_records_read_is_hashed_once_per_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every record of a test suite's pair lists the files the suite read: a pass hashes each once, not per record."""
    files = [tmp_path / f"module_{number}.py" for number in range(3)]
    for file in files:
        file.write_text("VALUE = 1\n")
    read = {identity.READ: identity.files_read(map(str, files))}
    tests = [f"test_suite.py::test_{n}" for n in range(50)]
    made = [dataclasses.replace(record(test), inputs={**identity.record_inputs(INPUTS, test, "autograd_dot"), **read})
            for test in tests]  # fmt: skip
    hashed: list[Path] = []
    real = identity.file_digest
    monkeypatch.setattr(identity, "file_digest", lambda path: hashed.append(path) or real(path))

    class Suite(RunNow):
        def owner(self, record_name: str) -> str:
            return "autograd_dot"

        def identity_now(self, result: CellResult, made: Record) -> dict:
            return identity.record_inputs(INPUTS, made.probe, "autograd_dot")

    [marked] = freshness.marked_stale([stored(*made)], Suite())
    assert {test.outcome for test in marked.records} == {Outcome.PASS}
    assert sorted(hashed) == files
    hashed.clear()
    suite = Pair(Probe("autograd_dot", Path("autograd_dot.py"), kind=Kind.PYTEST), "cpu")
    assert freshness.stale(stored(*made), [suite], INPUTS).pairs == ()
    assert sorted(hashed) == files


def test_a_cell_no_run_of_the_matrix_would_make_is_stale() -> None:
    [(_, outcome, message), _] = shown(stored(), RunNow(inputs=None))
    assert outcome is Outcome.STALE and "no cell of the matrix would make it" in message


def test_another_machines_record_is_compared_by_what_means_the_same_everywhere() -> None:
    elsewhere = dict(INPUTS, interpreter="/opt/python3.9", python_version="3.9.7", **{TORCH_BUILD: "other"})
    here = RunNow(machine="laptop", inputs=elsewhere)
    assert {made[1] for made in shown(stored(), here)} == {Outcome.PASS}
    edited = dict(elsewhere, probes={**INPUTS["probes"], "batched_matmul": "e" * 64})
    assert [made[1] for made in shown(stored(), RunNow(machine="laptop", inputs=edited))] == [
        Outcome.PASS,
        Outcome.STALE,
    ]


def test_of_a_record_of_a_probe_the_matrix_does_not_run_only_what_it_read_is_asked(tmp_path: Path) -> None:
    other = record("opsweep", inputs=dict(INPUTS, probes={"opsweep": "0" * 64}))
    assert shown(stored(other), RunNow(inputs=None)) == [("opsweep", Outcome.PASS, "")]
    (tmp_path / "opsweep.py").write_text("# the probe")
    read = {identity.READ: identity.files_read([str(tmp_path / "opsweep.py")])}
    edited = dataclasses.replace(other, inputs={**other.inputs, **read})
    (tmp_path / "opsweep.py").write_text("# the probe, edited")
    [(_, outcome, message)] = shown(stored(edited), RunNow(inputs=None))
    assert (outcome, message) == (Outcome.STALE, f"was ✓ pass; {tmp_path / 'opsweep.py'} changed")


# --- the identity's parts and their changes -----------------------------------------


def test_a_change_is_typed_by_its_part_and_worded_apart() -> None:
    made = record()
    wanted = identity.record_inputs(dict(INPUTS, python_version="3.9.19"), "autograd_dot")
    changes = freshness.changes(made, wanted, None)
    assert changes == [identity.Change(identity.PART["python_version"], "3.9.18", "3.9.19", "autograd_dot")]
    assert [freshness.words(change) for change in changes] == ["the Python version changed: 3.9.18 → 3.9.19"]


def test_a_change_of_the_variables_a_pair_sees_names_the_variables() -> None:
    seen = {"set": {}, "passed": {"TOKEN": "1" * 64}, "steering": {"OMP_NUM_THREADS": "4"}, "needed": {"TERM": "xterm"}}
    made = record(inputs=dict(INPUTS, environment=seen))
    now = {"set": {}, "passed": {"TOKEN": "2" * 64}, "steering": {"OMP_NUM_THREADS": "4"}, "needed": {"LANG": "C"}}
    said = freshness.record_changes(made, identity.record_inputs(dict(INPUTS, environment=now), "autograd_dot"), None)
    assert said == ["the variables the pairs see changed: LANG, TERM, TOKEN"]


def test_a_record_made_before_a_part_existed_was_made_from_its_implied_value() -> None:
    made = identity.Identity.stored({"requirements": ["torch==1.9.0"]})
    assert made.parts["repeat"] == 1 and made.parts[identity.CONSTRAINTS] == [] and made.parts["interpreter"] is None
    assert made.changes({"repeat": 1, identity.CONSTRAINTS: []}, "autograd_dot") == []


def test_what_another_machine_compares_is_the_parts_that_mean_the_same_everywhere() -> None:
    inputs = identity.record_inputs(INPUTS, "autograd_dot")
    kept = identity.portable(inputs)
    assert set(kept) == {key for key in inputs if identity.PART[key].portable}
    assert "interpreter" not in kept and TORCH_BUILD not in kept and kept["probe"] == "a" * 64
    assert identity.of_run({**INPUTS, "probe": "x"}).keys() == {key for key in INPUTS if key in identity.PART}


def test_a_rebuilt_environment_says_what_else_changed() -> None:
    """An environment made anew for other constraints holds no torch yet: the reason names the constraints too."""
    rebuilt = {key: value for key, value in INPUTS.items() if key != TORCH_BUILD}
    now = dict(rebuilt, **{TORCH_BUILD: None, identity.CONSTRAINTS: ["numpy<2"]})
    assert freshness.stale(stored(), PAIRS, now).reason == (
        "no torch installed in the environment yet (new or rebuilt); the constraints changed: none → numpy<2"
    )
    assert freshness.stale(stored(), PAIRS, dict(rebuilt, **{TORCH_BUILD: None})).reason == (
        "no torch installed in the environment yet (new or rebuilt)"
    )


class OwnedBy(RunNow):
    """A run now whose one probe is ``probe``: the owner of its own record alone."""

    def __init__(self, probe: Probe) -> None:
        super().__init__()
        self.probe = probe

    def owner(self, record_name: str) -> Probe | None:
        return self.probe if record_name == self.probe.name else None


def test_a_record_that_ran_as_another_kind_than_a_run_now_would_make_it_is_stale() -> None:
    """A file a host's Python could not parse ran as a script there; a host that parses it finds run(device): its
    records are not what a run now would make, whatever else is unchanged. A file asked of pytest may be a script or
    tests; one the cell decides wholly, any."""
    module = Probe("autograd_dot", Path("autograd_dot.py"))
    as_script = record(kind=Kind.SCRIPT, kind_reason="pytest collected no test from it")
    as_module = record(kind=Kind.MODULE, kind_reason=kinds.DEFINES_RUN)
    ran = freshness.stale(stored(as_script), [Pair(module, "cpu")], INPUTS)
    assert ran == freshness.ToRun((Pair(module, "cpu"),), "the probe's kind changed: script → module")
    asked = dataclasses.replace(module, kind=Kind.SCRIPT_OR_TESTS, kind_reason=kinds.ASKED)
    unparsed = dataclasses.replace(asked, kind_reason=kinds.UNPARSED)
    assert freshness.stale(stored(as_script), [Pair(asked, "cpu")], INPUTS).pairs == ()
    assert freshness.stale(stored(as_module), [Pair(asked, "cpu")], INPUTS).pairs == (Pair(asked, "cpu"),)
    assert freshness.stale(stored(as_module), [Pair(unparsed, "cpu")], INPUTS).pairs == ()

    [marked] = freshness.marked_stale([stored(as_script)], OwnedBy(module))
    assert (marked.records[0].outcome, marked.records[0].message) == (
        Outcome.STALE,
        "was ✓ pass; the probe's kind changed: script → module",
    )


def test_a_test_of_a_file_the_matrix_now_runs_as_a_module_is_stale_never_another_matrixs_record() -> None:
    """``{probe: both.py, kind: tests}`` made ``both.py::test_bad``; with ``kind:`` removed the matrix runs both.py
    as its run(device): no probe makes that test's record now, yet it is the file's, and what it read is unchanged.
    Every view shows it stale, as the probe session says, never as a current outcome."""
    module = Probe("both.py", Path("both.py"), kind=Kind.MODULE)
    test = record(probe="both.py::test_bad", kind=Kind.PYTEST, outcome=Outcome.FAIL)

    [marked] = freshness.marked_stale([stored(test)], OwnedBy(module))
    assert (marked.records[0].outcome, marked.records[0].message) == (
        Outcome.STALE,
        "was ✗ fail; the probe's kind changed: pytest → module",
    )


def test_a_result_filed_under_this_machines_name_but_made_on_another_stands_for_no_run_here() -> None:
    """``machine: box`` on two machines that compute differently: what one stored says nothing of the other's
    arithmetic. A run here runs every pair (so the file it writes holds this machine's records alone, under its
    identity), and until then every view shows them stale, saying where they were made."""
    there = made_on(stored(), ELSEWHERE)
    assert freshness.stale(made_on(stored(), HERE), PAIRS, INPUTS, HERE).pairs == ()
    stale = freshness.stale(there, PAIRS, INPUTS, HERE)
    assert stale.pairs == tuple(PAIRS)
    assert stale.reason == (
        "it was made on another machine, Intel(R) Xeon(R) CPU @ 2.20GHz (GenuineIntel 6/85, x86-64-v4, "
        f"{ELSEWHERE.digest()}); this one is AMD EPYC 7B13 (AuthenticAMD 25/1, x86-64-v3, {HERE.digest()})"
    )
    assert freshness.stale(stored(), PAIRS, INPUTS, HERE).pairs == (), "a result that does not say stands"
    marked = shown(there, RunNow())
    assert [outcome for _, outcome, _ in marked] == [Outcome.STALE, Outcome.STALE]
    assert all(message.startswith("was ✓ pass; it was made on another machine, Intel") for _, _, message in marked)
    assert shown(there, RunNow(machine="other")) == shown(stored(), RunNow(machine="other")), "another's folder"
