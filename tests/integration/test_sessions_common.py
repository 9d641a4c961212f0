"""What every session shares, with a real worker: a run of pairs ends with done."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchmatrix.cellrun import run_pairs
from torchmatrix.core import Pair, Probe

pytestmark = pytest.mark.integration


def test_a_run_of_pairs_ends_with_done(stub_torch_python: str, tmp_path: Path) -> None:
    probe = tmp_path / "ok.py"
    probe.write_text("def run(device):\n    return {'outcome': 'pass'}\n")
    heard: list[str] = []
    pairs = [Pair(Probe("ok", probe), "cpu")]
    run_pairs(stub_torch_python, pairs, 30.0, 1, lambda event, pair, record: heard.append(event), workdir=tmp_path)
    assert heard == ["start", "record", "done"]
