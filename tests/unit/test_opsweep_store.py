"""The operator sweep's choice of store: the one named by hand, else the one beside the results, captured again
only where another capture made it; read without torch (a module stands in for it: nothing here calls it)."""

from __future__ import annotations

import importlib.util
import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from ..conftest import ROOT

OPTIONS = {"ops": None, "samples": 3, "seed": 0, "store": None}


@pytest.fixture
def sweep(monkeypatch: pytest.MonkeyPatch) -> Any:
    """probes/opsweep.py as a module, its ``import torch`` answered by an empty module."""
    monkeypatch.setitem(sys.modules, "torch", types.ModuleType("torch"))
    spec = importlib.util.spec_from_file_location("opsweep_under_test", ROOT / "probes" / "opsweep.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_manifest(folder: Path, manifest: dict[str, Any]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "samples.json").write_text(json.dumps({**manifest, "ops": {}, "arrays": "arrays-x.npz"}))


def test_without_a_store_named_or_a_folder_given_each_release_runs_its_own_samples(sweep: Any) -> None:
    assert sweep.open_store(OPTIONS, None) is None
    assert sweep.open_store(OPTIONS, "") is None


def test_a_folder_without_a_capture_is_captured_and_one_made_as_asked_is_replayed(sweep: Any, tmp_path: Path) -> None:
    assert sweep.recapture_reason(str(tmp_path), {}) == "no samples were captured there yet"
    wanted = sweep.capture_identity(None, 3, 0)
    assert wanted["probe"] == sweep.probe_digest() and len(wanted["probe"]) == 64
    write_manifest(tmp_path, wanted)
    assert sweep.recapture_reason(str(tmp_path), wanted) == ""


def test_a_capture_made_otherwise_is_captured_again_saying_what_differs(sweep: Any, tmp_path: Path) -> None:
    made = sweep.capture_identity("add|mul", 3, 0)
    write_manifest(tmp_path, made)
    asked = sweep.capture_identity(None, 5, 0)
    assert sweep.recapture_reason(str(tmp_path), asked) == (
        'the samples there were captured with other options (ops_asked "add|mul" -> null, samples 3 -> 5)'
    )
    write_manifest(tmp_path, dict(made, probe="0" * 64))
    assert sweep.recapture_reason(str(tmp_path), made) == (
        "the samples there were captured by another version of this probe"
    )
    write_manifest(tmp_path, dict(made, format=0))
    assert "other options (format 0 -> 1)" in sweep.recapture_reason(str(tmp_path), made)
    (tmp_path / "samples.json").write_text("{")
    assert sweep.recapture_reason(str(tmp_path), made).startswith("the store there cannot be read (")


def test_a_store_captured_by_hand_with_other_samples_than_asked_is_refused(sweep: Any, tmp_path: Path) -> None:
    class Captured:
        path = str(tmp_path / "samples.json")
        manifest = {"samples": 3, "seed": 0}

    sweep.refuse_other_capture(Captured(), OPTIONS)
    with pytest.raises(ValueError) as raised:
        sweep.refuse_other_capture(Captured(), dict(OPTIONS, samples=5, seed=1))
    assert str(raised.value) == (
        f"the store {tmp_path} was captured with samples 3, seed 0, but the options ask samples 5, seed 1: capture "
        "it again with those, or ask for what it holds"
    )


def test_a_store_names_the_releases_that_captured_it_by_their_numbers(sweep: Any, tmp_path: Path) -> None:
    store = object.__new__(sweep.Store)
    store.manifest = {"ops": {"a": {"torch": "2.13.0"}, "b": {"torch": "2.2.0"}, "c": {"torch": "2.13.0"}}}
    assert store.captured_by() == ["2.2.0", "2.13.0"]
