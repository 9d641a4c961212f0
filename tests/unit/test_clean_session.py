"""`nox -s clean`: which releases it removes, what it refuses, and what it says it removes."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.version import Version

from torchmatrix.environment import cellenv, disk
from torchmatrix.errors import UsageError
from torchmatrix.matrix import TorchEntry
from torchmatrix.sessions import clean

from .test_cellenv import ASKED, SOURCE, make_env
from .test_disk import survey, two_releases
from .test_project import project

__all__ = ["two_releases"]  # a fixture


def test_clean_takes_releases_and_a_dry_run() -> None:
    assert clean.parse(["2.1.0", "2.1.1", "--dry-run"]) == clean.CleanRequest(("2.1.0", "2.1.1"), True)
    with pytest.raises(UsageError) as error:
        clean.parse([])
    assert "usage: nox -s clean -- RELEASE [RELEASE …] [--dry-run]" in str(error.value)
    with pytest.raises(UsageError) as error:
        clean.parse(["--all"], "torchmatrix")
    assert "usage: torchmatrix clean RELEASE [RELEASE …] [--dry-run]" in str(error.value)


def test_a_release_of_the_matrix_is_chosen_however_it_is_spelled(two_releases: tuple[Path, Path]) -> None:
    envdir, cache = two_releases
    here = project(envdir.parent, TorchEntry(Version("2.1.0")), TorchEntry(Version("2.2.0")))
    found = survey(envdir, cache, "2.1.0", "2.2.0")
    assert clean.chosen_release(found, here, "2.1.0") == "2.1.0"
    assert clean.chosen_release(found, here, "2.1") == "2.1.0"
    assert clean.chosen_release(found, here, "2.2.0") == "2.2.0"  # nothing built: nothing to remove, no mistake


def test_a_release_outside_the_matrix_is_chosen_only_in_full_and_with_environments_here(
    two_releases: tuple[Path, Path],
) -> None:
    envdir, cache = two_releases
    here = project(envdir.parent, TorchEntry(Version("2.1.0")))
    assert clean.chosen_release(survey(envdir, cache, "2.1.0", "2.1.1"), here, "2.1.1") == "2.1.1"
    found = survey(envdir, cache, "2.1.0", "2.1.2")  # 2.1.2 named in full, with no environment here
    in_full = "a release outside the matrix is named in full, as `nox -s plan` lists it"
    for word, hint in [("2.1.2", "did you mean '2.1."), ("2.1.1.0", "did you mean '2.1.1'?"), ("two", in_full)]:
        with pytest.raises(UsageError) as error:
            clean.chosen_release(found, here, word)
        said = str(error.value)
        assert f"{word} is no torch release of {here.matrix.file} (its releases: 2.1.0; " in said
        assert "other releases with environments here: 2.1.1), nor one whose environments are here" in said
        assert f"\n  hint: {hint}" in said


def test_what_clean_says_it_removes_frees_and_keeps(two_releases: tuple[Path, Path]) -> None:
    envdir, cache = two_releases
    found = survey(envdir, cache, "2.1.0", "2.1.1")
    removal = found.removal(["2.1.0"])
    usage = disk.Usage()
    lines = clean.said(found, removal, ["2.1.0"], usage, dry_run=True)
    size = disk.human(usage.size(removal.environments))  # no bytecode: their Pythons never ran
    assert lines[0] == f"torch 2.1.0: would remove 2 environment(s) and their bytecode, {size}:"
    assert lines[1:3] == [f"  {env}" for env in removal.environments]
    assert lines[3].startswith("torch 2.1.0: would remove 2 cached wheel(s) nothing else here keeps, ")
    assert lines[3].endswith(f", from {cache}: torch 2.1.0")
    assert lines[4] == "kept: 2 cached wheel(s) that 2.1.1 and tests also keep"
    frees = disk.human(usage.frees(removal.paths))
    assert lines[5] == f"would free {frees} (a file also linked from elsewhere stays); stored results stay"
    assert clean.said(found, removal, ["2.1.0"], usage, dry_run=False)[0].startswith("torch 2.1.0: removing 2 ")
    nothing = found.removal(["2.2.0"])
    assert clean.said(found, nothing, ["2.2.0"], usage, dry_run=False) == [
        "torch 2.2.0: nothing kept here (no environment, no cached wheel of its own)"
    ]


def test_an_environment_whose_removal_stops_halfway_no_longer_counts_as_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = make_env(tmp_path / "probe-1-9-0")
    cellenv.mark_built(env, SOURCE, ASKED)

    def stopped(path: Path) -> None:
        raise KeyboardInterrupt  # Ctrl-C while the removal is under way: what it has not reached stays

    monkeypatch.setattr(clean.shutil, "rmtree", stopped)
    with pytest.raises(KeyboardInterrupt):
        clean.remove_environment(env)
    assert cellenv.half_built(env) and cellenv.built_torch(env) is None
