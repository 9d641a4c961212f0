"""Planning against a recorded index listing: which Python each torch release gets, and why not."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from torchmatrix import planner as plan_module
from torchmatrix.core import DEVICES, Outcome
from torchmatrix.index.releases import Listing, _wheels
from torchmatrix.interpreters import Interpreter
from torchmatrix.matrix import Matrix, PinRule, TorchEntry
from torchmatrix.matrix.loader import load_pin_rules
from torchmatrix.planner import KNOWN_PINS_FILE, Held, held_pythons, load_newest_pythons, plan

from ..conftest import DATA

FILES = [entry["filename"] for entry in json.loads((DATA / "pypi-torch-simple.json").read_text())["files"]]
LISTING = Listing(_wheels(FILES, "https://pypi.org/simple"))
LINUX = [f"manylinux_2_{minor}_x86_64" for minor in range(36, 4, -1)] + [
    "manylinux2014_x86_64",
    "manylinux2010_x86_64",
    "manylinux1_x86_64",
    "linux_x86_64",
]  # what packaging.tags.platform_tags() gives on a glibc 2.36 machine
MAC_ARM = [f"macosx_{major}_0_arm64" for major in (14, 13, 12, 11)]
THIS_MACHINE = [  # what ~/.pyenv/versions holds here, newest first
    Interpreter(f"/pyenv/{minor}/bin/python", (3, minor, 0), "m" if minor < 8 else "", "pyenv")
    for minor in (13, 12, 11, 10, 9, 8, 7, 6)
]
NUMPY_PIN = PinRule(SpecifierSet("<2.3"), (), constrain=(Requirement("numpy<2"),))


def matrix(*entries: TorchEntry) -> Matrix:
    return Matrix(Path("/m/matrix.yaml"), entries, (), DEVICES, 60.0, Path("/m/reports"), None, "", (), ())


def one(entry: TorchEntry, pythons=THIS_MACHINE, platforms=LINUX, listing=LISTING):
    (cell,) = plan(matrix(entry), listing, pythons, platforms, [NUMPY_PIN])
    return cell


@pytest.mark.parametrize(
    ("torch", "python"),
    [
        ("1.9.0", "3.9"),
        ("1.11.0", "3.10"),
        ("1.13.1", "3.11"),
        ("2.0.1", "3.10"),
        ("2.2.0", "3.11"),
        ("2.15.0", "3.13"),
    ],
)
def test_the_newest_python_with_a_wheel_and_full_support_is_chosen(torch: str, python: str) -> None:
    """2.0 has wheels for 3.11 and 2.2 for 3.12, where their torch.compile is not supported (newest_python.yaml)."""
    cell = one(TorchEntry(Version(torch)))
    assert cell.outcome is None
    assert cell.interpreter.minor == python
    assert cell.id == f"torch-{torch}-py{python}"
    assert cell.parameter == torch


def test_on_apple_silicon_torch_1_9_takes_3_8_or_3_9_only() -> None:
    assert one(TorchEntry(Version("1.9.0")), platforms=MAC_ARM).interpreter.minor == "3.9"
    cell = one(TorchEntry(Version("1.9.0")), pythons=THIS_MACHINE[:3] + THIS_MACHINE[6:], platforms=MAC_ARM)
    assert cell.outcome is Outcome.NO_INTERPRETER
    assert "3.8–3.9" in cell.hint and "uv python install 3.9" in cell.hint


def test_no_fitting_interpreter_is_the_cells_outcome_with_a_hint() -> None:
    cell = one(TorchEntry(Version("1.9.0")), pythons=THIS_MACHINE[:4])
    assert cell.outcome is Outcome.NO_INTERPRETER
    assert cell.hint.startswith("torch 1.9.0 needs Python 3.6–3.9; found 3.13, 3.12, 3.11, 3.10")
    assert cell.id == "torch-1.9.0"


@pytest.mark.parametrize(
    ("torch", "hint"),
    [
        ("1.99.0", "the index lists no torch 1.99.0; the releases around it are 1.13.1 and 2.0.1"),
        ("1.12.2", "the index lists no torch 1.12.2; the releases around it are 1.12.1 and 1.13.1"),
        ("9.9.9", "the index lists no torch 9.9.9; the newest is 2.15.0"),
        ("0.0.1", "the index lists no torch 0.0.1; the oldest is 1.9.0"),
    ],
)
def test_a_release_the_index_lacks_is_no_wheel_with_the_releases_around_it(torch: str, hint: str) -> None:
    cell = one(TorchEntry(Version(torch)))
    assert cell.outcome is Outcome.NO_WHEEL
    assert cell.hint == hint


def test_a_release_without_a_wheel_for_this_platform_is_no_wheel() -> None:
    cell = one(TorchEntry(Version("1.9.0")), platforms=["musllinux_1_2_riscv64"])
    assert cell.outcome is Outcome.NO_WHEEL
    assert "manylinux1_x86_64" in cell.hint


def test_pinned_pythons_make_one_cell_each_with_suffixed_sessions() -> None:
    cells = plan(matrix(TorchEntry(Version("2.2.0"), ("3.10", "3.12"))), LISTING, THIS_MACHINE, LINUX)
    assert [(cell.parameter, cell.id) for cell in cells] == [
        ("2.2.0-py3.10", "torch-2.2.0-py3.10"),
        ("2.2.0-py3.12", "torch-2.2.0-py3.12"),
    ]


def test_a_pinned_python_that_is_missing_or_has_no_wheel() -> None:
    missing = one(TorchEntry(Version("2.2.0"), ("3.14",)))
    assert missing.outcome is Outcome.NO_INTERPRETER and "3.14 is pinned but not found" in missing.hint
    no_wheel = one(TorchEntry(Version("1.9.0"), ("3.12",)))
    assert no_wheel.outcome is Outcome.NO_WHEEL and "no wheel for Python 3.12" in no_wheel.hint


def test_known_pins_constrain_by_torch_version_and_entry_pins_replace_them() -> None:
    old = one(TorchEntry(Version("1.12.1")))
    assert (old.requirements, old.constraints) == (("torch==1.12.1",), ("numpy<2",))
    new = one(TorchEntry(Version("2.13.0")))
    assert (new.requirements, new.constraints) == (("torch==2.13.0",), ())
    entry = TorchEntry(Version("2.2.0"), pins=(Requirement("numpy==1.26.4"), Requirement("scipy")))
    pinned = one(entry)
    assert (pinned.requirements, pinned.constraints) == (("torch==2.2.0", "numpy==1.26.4", "scipy"), ())


def test_a_known_pin_adds_no_package_even_where_its_rule_says_require() -> None:
    rule = PinRule(SpecifierSet("<2.3"), (Requirement("numpy<2"),))
    for version in ("2.2.0", "2.3.0"):  # numpy in neither cell: a range holds the same packages
        (cell,) = plan(matrix(TorchEntry(Version(version))), LISTING, THIS_MACHINE, LINUX, [rule])
        assert cell.requirements == (f"torch=={version}",)
    assert cell.constraints == () and one(TorchEntry(Version("2.2.0"))).constraints == ("numpy<2",)


def test_the_matrixs_pins_require_or_constrain_and_replace_the_known_pins_of_their_packages() -> None:
    own = (
        PinRule(SpecifierSet("==2.2.*"), (Requirement("torchvision==0.17.*"),)),
        PinRule(SpecifierSet("<2.3"), (), constrain=(Requirement("numpy<1.26"), Requirement("sympy<1.13"))),
    )
    every = (Requirement("numpy"),)
    here = dataclasses.replace(matrix(TorchEntry(Version("2.2.0")), TorchEntry(Version("2.3.0"))), pins=own)
    old, new = plan(dataclasses.replace(here, requires=every), LISTING, THIS_MACHINE, LINUX, [NUMPY_PIN])
    assert (old.requirements, old.constraints) == (
        ("torch==2.2.0", "numpy", "torchvision==0.17.*"),
        ("numpy<1.26", "sympy<1.13"),
    )
    assert (new.requirements, new.constraints) == (("torch==2.3.0", "numpy"), ())


def test_a_cell_is_seeded_as_its_interpreter_says() -> None:
    seeded = [dataclasses.replace(python, seed=("pip==23.2.1", "setuptools==65.5.0")) for python in THIS_MACHINE]
    assert one(TorchEntry(Version("2.2.0")), pythons=seeded).seed == ("pip==23.2.1", "setuptools==65.5.0")
    assert one(TorchEntry(Version("2.2.0"), ("3.14",))).seed == ()  # no interpreter, nothing to seed


def test_a_local_build_counts_for_its_release() -> None:
    local = _wheels(["torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"], "/opt/wheels")
    listing = Listing(local)
    assert one(TorchEntry(Version("2.13.0")), listing=listing).interpreter.minor == "3.11"


def test_without_any_listing_the_python_is_not_guessed_but_a_pinned_one_is_used() -> None:
    listing = Listing((), known=False, offline=True, notes=("cannot read the index; no cached listing either",))
    cell = one(TorchEntry(Version("1.9.0")), listing=listing)
    assert (cell.outcome, cell.interpreter) == (None, None)
    assert cell.hint == (
        "cannot choose a Python for torch 1.9.0: cannot read the index; no cached listing either; "
        'run once with a network, or pin one in the matrix: `- {version: 1.9.0, python: ["3.X"]}`'
    )
    pinned = one(TorchEntry(Version("1.9.0"), ("3.9",)), listing=listing)
    assert (pinned.outcome, pinned.interpreter.minor) == (None, "3.9")


def with_project(entry: TorchEntry, requires_python: str, pythons=THIS_MACHINE):
    project = dataclasses.replace(matrix(entry), project=Path("/m/mylib"))
    (cell,) = plan(project, LISTING, pythons, LINUX, [NUMPY_PIN], SpecifierSet(requires_python))
    return cell


def test_a_python_the_projects_requires_python_excludes_is_never_chosen() -> None:
    cell = with_project(TorchEntry(Version("2.2.0")), "<3.12")
    assert cell.outcome is None and cell.interpreter.minor == "3.11"


def test_a_cell_left_with_no_python_the_project_admits_cannot_install_before_anything_is_built() -> None:
    pinned = with_project(TorchEntry(Version("2.2.0"), pythons=("3.8",)), ">=3.9")
    assert pinned.outcome is Outcome.INSTALL_ERROR
    assert pinned.hint == "cannot install: mylib needs Python >=3.9 (its requires-python), not 3.8"
    chosen = with_project(TorchEntry(Version("1.9.0")), ">=3.10")  # its wheels are for 3.6–3.9
    assert chosen.outcome is Outcome.INSTALL_ERROR
    assert (
        chosen.hint
        == "cannot install: mylib needs Python >=3.10 (its requires-python), not 3.6–3.9, those torch 1.9.0 has"
    )
    nothing_here = with_project(TorchEntry(Version("2.2.0")), ">=3.14")
    assert nothing_here.outcome is Outcome.INSTALL_ERROR and nothing_here.hint.startswith(
        "cannot install: mylib needs Python >=3.14 (its requires-python), not 3.13, 3.12"
    )


def test_a_python_it_admits_but_not_here_is_still_a_missing_interpreter() -> None:
    cell = with_project(TorchEntry(Version("1.9.0")), ">=3.8", pythons=THIS_MACHINE[:4])
    assert cell.outcome is Outcome.NO_INTERPRETER


def test_the_newest_fully_supported_python_is_a_preference_not_a_limit() -> None:
    (cell,) = plan(matrix(TorchEntry(Version("2.2.0"))), LISTING, THIS_MACHINE[:2], LINUX, [NUMPY_PIN])
    assert cell.interpreter.minor == "3.12"  # no 3.11 here: the newest with a wheel, as before
    pinned = one(TorchEntry(Version("2.2.0"), pythons=("3.12",)))
    assert pinned.interpreter.minor == "3.12" and pinned.outcome is None
    (free,) = plan(matrix(TorchEntry(Version("2.2.0"))), LISTING, THIS_MACHINE, LINUX, [NUMPY_PIN], None, ())
    assert free.interpreter.minor == "3.12"


def test_the_newest_python_table_names_a_source_for_each_range_and_no_range_twice() -> None:
    table = load_newest_pythons()
    assert table and all(entry.source.strip() for entry in table)
    for version in ("2.0.1", "2.1.2", "2.2.0", "2.3.1", "2.4.1", "2.5.1", "2.6.0", "2.9.1", "2.10.0", "2.13.0"):
        assert sum(entry.caps(Version(version)) for entry in table) == 1, version
    assert [entry.python for entry in table if entry.caps(Version("2.3.1"))] == ["3.11"]
    # Oldest first and without a gap: a release between two rows would be taken for one newer than the table.
    assert all(before.until == after.since for before, after in zip(table, table[1:], strict=False))


NEWER = [  # the wheels of releases the recorded listing lacks, as the index names them
    f"torch-{version}-cp3{minor}-cp3{minor}-manylinux_2_28_x86_64.whl"
    for version, newest in (("2.5.1", 13), ("2.6.0", 13), ("2.9.1", 14), ("2.10.0", 14))
    for minor in range(10, newest + 1)
]
UP_TO_3_15 = [Interpreter(f"/uv/3.{minor}/bin/python", (3, minor, 0), "", "uv") for minor in (15, 14, 13, 12)]


@pytest.mark.parametrize(
    ("torch", "python"),
    [
        ("2.5.1", "3.12"),  # its 3.13 wheel's torch.compile raises "Dynamo is not supported on Python 3.13+"
        ("2.6.0", "3.13"),
        ("2.9.1", "3.13"),  # its 3.14 wheel's raises "torch.compile is not supported on Python 3.14+"
        ("2.10.0", "3.14"),
        ("2.13.0", "3.14"),
        ("2.15.0", "3.14"),  # newer than the table: as the newest release it knows, not on 3.15 for its wheel
    ],
)
def test_releases_since_2_5_get_the_newest_python_their_torch_compile_accepts(torch: str, python: str) -> None:
    listing = Listing((*LISTING.wheels, *_wheels(NEWER, "https://pypi.org/simple")))
    assert one(TorchEntry(Version(torch)), pythons=UP_TO_3_15, listing=listing).interpreter.minor == python


def test_what_is_assumed_of_a_release_newer_than_the_table_is_said() -> None:
    assert plan_module.assumed_support(Version("2.13.0")) == ""
    assert plan_module.assumed_support(Version("1.9.0")) == ""
    assert plan_module.assumed_support(Version("2.15.0")) == (
        "torch 2.15.0 is newer than newest_python.yaml, the table of the newest Python each release is fully "
        "supported on (it ends before 2.14): assumed, as of the releases from 2.10, to be fully supported up to "
        "Python 3.14; pin a Python in the matrix to choose another"
    )


def test_releases_whose_inductor_imports_pkg_resources_bound_setuptools_and_add_it_to_none() -> None:
    rules = load_pin_rules(KNOWN_PINS_FILE)
    for version, wanted in (("2.0.1", True), ("2.2.2", True), ("2.3.0", False), ("1.13.1", False)):
        (cell,) = plan(matrix(TorchEntry(Version(version))), LISTING, THIS_MACHINE, LINUX, rules)
        assert ("setuptools<70" in cell.constraints) is wanted, (version, cell.constraints)
        assert cell.requirements == (f"torch=={version}",)


def held(*versions: str, pythons=THIS_MACHINE) -> list[tuple[str, list[str]]]:
    found = held_pythons([Version(v) for v in versions], LISTING, pythons, LINUX)
    return [(span.python, [str(v) for v in span.versions]) for span in found]


def test_a_bisect_holds_the_newest_python_that_installs_every_release_not_each_ones_own() -> None:
    # Alone, 1.9.0 gets 3.9, 1.11.0 and 1.12.1 3.10, 1.13.1 3.11: bisected together, all take 3.9.
    assert held("1.9.0", "1.11.0", "1.12.1", "1.13.1", "2.0.1", "2.2.0") == [
        ("3.9", ["1.9.0", "1.11.0", "1.12.1", "1.13.1", "2.0.1", "2.2.0"])
    ]
    # 3.8–3.11 install all three; 2.0's torch.compile stops at 3.10 (newest_python.yaml): 3.10, under every cap.
    assert held("1.13.1", "2.0.1", "2.2.0") == [("3.10", ["1.13.1", "2.0.1", "2.2.0"])]


def test_where_no_python_installs_every_release_the_fewest_changes_each_at_its_boundary() -> None:
    assert held("1.9.0", "1.11.0", "2.2.0", "2.13.0", "2.15.0") == [
        ("3.9", ["1.9.0", "1.11.0", "2.2.0"]),
        ("3.13", ["2.13.0", "2.15.0"]),
    ]
    assert Held("3.9", (Version("1.9.0"), Version("2.2.0"))).describe() == "3.9 for 1.9.0–2.2.0"
    # Without 3.8 and 3.9 here, 1.9.0 (cp36–cp39) and 2.0.1 (cp38–cp311) share none: one change, at 2.0.1.
    no_38_39 = [python for python in THIS_MACHINE if python.minor not in ("3.8", "3.9")]
    assert held("1.9.0", "1.11.0", "2.0.1", "2.1.0", pythons=no_38_39) == [
        ("3.7", ["1.9.0", "1.11.0"]),
        ("3.10", ["2.0.1", "2.1.0"]),  # under 2.0's cap
    ]


def test_a_release_no_python_here_installs_is_left_to_its_cell_and_breaks_no_span() -> None:
    only_310 = [python for python in THIS_MACHINE if python.minor == "3.10"]
    assert held("1.9.0", "1.11.0", "1.12.1", pythons=only_310) == [("3.10", ["1.11.0", "1.12.1"])]


def test_a_release_the_matrix_pins_pythons_for_runs_on_one_of_them_alone_in_a_bisect() -> None:
    versions = [Version(v) for v in ("1.12.1", "1.13.1", "2.0.1")]
    assert held("1.12.1", "1.13.1", "2.0.1") == [("3.10", ["1.12.1", "1.13.1", "2.0.1"])]
    pinned = {Version("1.13.1"): ("3.9",)}
    found = held_pythons(versions, LISTING, THIS_MACHINE, LINUX, pinned=pinned)
    assert [(span.python, [str(v) for v in span.versions]) for span in found] == [
        ("3.9", ["1.12.1", "1.13.1", "2.0.1"])
    ]
    nowhere = held_pythons(versions, LISTING, THIS_MACHINE, LINUX, pinned={Version("1.12.1"): ("3.5",)})
    assert [[str(v) for v in span.versions] for span in nowhere] == [["1.13.1", "2.0.1"]]  # 1.12.1: its own cell
