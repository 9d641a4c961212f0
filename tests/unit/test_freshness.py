"""When a stored result stands for a new run: same inputs, same torch build, and a run that got to the probes."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchmatrix import freshness, results
from torchmatrix.core import Outcome, Record
from torchmatrix.errors import UsageError
from torchmatrix.freshness import TORCH_BUILD
from torchmatrix.results import CellResult

TORCH_RECORD = """\
torch/__init__.py,sha256=AAAA,100
torch/_C.so,sha256=BBBB,2000
"torch/odd,name.py",sha256=CCCC,10
torch/__pycache__/__init__.cpython-39.pyc,,
../../../bin/torchrun,sha256=DDDD,300
torch-1.9.0.dist-info/METADATA,sha256=EEEE,50
torch-1.9.0.dist-info/INSTALLER,sha256=FFFF,2
torch-1.9.0.dist-info/RECORD,,
"""


def make_env(folder: Path, record: str | None = TORCH_RECORD, version: str = "1.9.0", windows: bool = False) -> Path:
    """An environment holding a torch dist-info (no torch itself: nothing here imports it)."""
    site = folder / ("Lib/site-packages" if windows else "lib/python3.9/site-packages")
    info = site / f"torch-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n")
    if record is not None:
        (info / "RECORD").write_text(record)
    return folder


INPUTS = {
    "requirements": ["torch==1.9.0", "numpy<2"],
    "interpreter": "/usr/bin/python3.9",
    "python_version": "3.9.18",
    "devices": ["cpu", "cuda", "mps"],
    "timeout": 300,
    "probes": {"autograd_dot": "a" * 64, "batched_matmul": "b" * 64},
    "worker": "c" * 64,
    TORCH_BUILD: "1.9.0 sha256:" + "d" * 64,
}


def store(folder: Path, inputs: dict = INPUTS, outcome: Outcome | None = None) -> Path:
    result = CellResult(
        machine="box", cell_id="torch-1.9.0-py3.9", torch="1.9.0", python="3.9", python_request=None,
        session="probe(1.9.0)", outcome=outcome, message="",
        records=() if outcome else (Record("autograd_dot", "cpu", Outcome.PASS, {}, "", 0.01),),
        inputs=dict(inputs), started_at="2026-01-01T00:00:00+00:00", finished_at="2026-01-01T00:00:05+00:00",
    )  # fmt: skip
    return results.write(folder, result)


# --- the torch build --------------------------------------------------------------


def test_the_build_is_read_from_the_record_without_torch(tmp_path: Path) -> None:
    build = freshness.torch_build(make_env(tmp_path / "env"))
    assert build is not None and build.startswith("1.9.0 sha256:")


def test_installer_details_do_not_change_the_build(tmp_path: Path) -> None:
    """Scripts (their first line names the env), bytecode and installer files differ between equal installs."""
    other = TORCH_RECORD.replace("DDDD", "XXXX").replace("FFFF", "YYYY")
    other += "torch/__pycache__/functional.cpython-39.pyc,sha256=ZZZZ,5\ntorch-1.9.0.dist-info/direct_url.json,,\n"
    build = freshness.torch_build(make_env(tmp_path / "a"))
    assert build is not None and build == freshness.torch_build(make_env(tmp_path / "b", other))


def test_a_different_file_is_a_different_build(tmp_path: Path) -> None:
    rebuilt = TORCH_RECORD.replace("BBBB", "B2B2")
    assert freshness.torch_build(make_env(tmp_path / "a")) != freshness.torch_build(make_env(tmp_path / "b", rebuilt))


def test_windows_layout_is_read_too(tmp_path: Path) -> None:
    posix = freshness.torch_build(make_env(tmp_path / "a"))
    assert posix is not None and freshness.torch_build(make_env(tmp_path / "b", windows=True)) == posix


def test_no_build_without_torch_or_without_its_record(tmp_path: Path) -> None:
    empty = tmp_path / "empty" / "lib" / "python3.9" / "site-packages"
    empty.mkdir(parents=True)
    assert freshness.torch_build(tmp_path / "empty") is None
    assert freshness.torch_build(tmp_path / "missing") is None
    assert freshness.torch_build(make_env(tmp_path / "unrecorded", record=None)) is None


# --- the verdict -------------------------------------------------------------------


def test_same_inputs_and_build_are_up_to_date(tmp_path: Path) -> None:
    verdict = freshness.verdict(store(tmp_path), INPUTS)
    assert verdict.up_to_date
    assert verdict.reason.startswith("up to date (probes, torch build and interpreter unchanged since 2026-01-01")
    assert "add `-- --force` to re-measure" in verdict.reason


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"probes": {"autograd_dot": "e" * 64, "batched_matmul": "b" * 64}}, "probe autograd_dot changed"),
        ({"probes": {"autograd_dot": "a" * 64}}, "probe batched_matmul removed"),
        ({"probes": {**INPUTS["probes"], "mine": "f" * 64}}, "probe mine added"),
        ({TORCH_BUILD: "1.9.0 sha256:" + "9" * 64}, "the torch build changed"),
        ({"python_version": "3.9.19"}, "the Python version changed: 3.9.18 → 3.9.19"),
        ({"interpreter": "/opt/python3.9"}, "the interpreter changed: /usr/bin/python3.9 → /opt/python3.9"),
        ({"requirements": ["torch==1.9.0"]}, "the requirements changed: torch==1.9.0 numpy<2 → torch==1.9.0"),
        ({"devices": ["cpu"]}, "the devices changed: cpu cuda mps → cpu"),
        ({"timeout": 60}, "the timeout changed: 300 → 60"),
        ({"worker": "0" * 64}, "torchmatrix's worker script changed"),
    ],
)
def test_any_change_of_input_makes_it_stale_and_says_which(tmp_path: Path, change: dict, reason: str) -> None:
    verdict = freshness.verdict(store(tmp_path), {**INPUTS, **change})
    assert not verdict.up_to_date
    assert verdict.reason == reason


def test_a_result_from_before_builds_were_recorded_is_stale(tmp_path: Path) -> None:
    older = {key: value for key, value in INPUTS.items() if key != TORCH_BUILD}
    assert freshness.verdict(store(tmp_path, older), INPUTS).reason == "the torch build was not recorded"


def test_a_run_that_ended_before_the_probes_is_never_up_to_date(tmp_path: Path) -> None:
    verdict = freshness.verdict(store(tmp_path, outcome=Outcome.INSTALL_ERROR), INPUTS)
    assert not verdict.up_to_date and verdict.reason == "the last run ended in install-error"


def test_an_env_without_torch_runs_whatever_was_stored(tmp_path: Path) -> None:
    verdict = freshness.verdict(store(tmp_path), {**INPUTS, TORCH_BUILD: None})
    assert not verdict.up_to_date and "no torch installed in the environment yet" in verdict.reason


def test_missing_or_unreadable_results_run(tmp_path: Path) -> None:
    assert freshness.verdict(tmp_path / "none.json", INPUTS).reason == "no stored result"
    broken = store(tmp_path)
    broken.write_text(broken.read_text()[:50])
    verdict = freshness.verdict(broken, INPUTS)
    assert not verdict.up_to_date and verdict.reason.startswith("the stored result cannot be read (not valid JSON")


# --- asking for a re-run -----------------------------------------------------------


def test_force_comes_from_the_session_arguments() -> None:
    assert freshness.wants_force(["--force"])
    assert not freshness.wants_force([])


def test_an_unknown_argument_is_refused_rather_than_ignored() -> None:
    with pytest.raises(UsageError, match="unknown argument '--froce' for probe sessions; the one they take is --force"):
        freshness.wants_force(["--froce"])


def test_a_probes_records_stand_while_what_they_depend_on_is_unchanged(tmp_path: Path) -> None:
    stored = results.read(store(tmp_path, INPUTS))
    assert freshness.stands_for(stored, INPUTS, "autograd_dot")
    # Another probe changed, or the devices did: this probe's records still stand.
    assert freshness.stands_for(
        stored, dict(INPUTS, probes={"autograd_dot": "a" * 64, "batched_matmul": "new"}), "autograd_dot"
    )
    assert freshness.stands_for(stored, dict(INPUTS, devices=["cpu"]), "autograd_dot")
    for key, value in [
        ("requirements", ["torch==1.9.0"]),
        ("interpreter", "/usr/bin/python3.10"),
        ("python_version", "3.9.19"),
        ("timeout", 60.0),
        ("worker", "changed"),
        ("probes", {"autograd_dot": "changed"}),
    ]:
        assert not freshness.stands_for(stored, dict(INPUTS, **{key: value}), "autograd_dot"), key
    assert not freshness.stands_for(stored, INPUTS, "not_stored")


def test_records_of_a_cell_that_did_not_run_never_stand(tmp_path: Path) -> None:
    for outcome in (Outcome.NO_INTERPRETER, Outcome.NO_WHEEL, Outcome.INSTALL_ERROR):
        assert not freshness.stands_for(results.read(store(tmp_path, INPUTS, outcome=outcome)), INPUTS, "autograd_dot")
