"""The folders whose files a pair reads without their counting (`torchmatrix_worker.reads.excluded_folders`)."""

from __future__ import annotations

import os
import sys

import pytest

from torchmatrix.envside.torchmatrix_worker import reads


@pytest.mark.parametrize("base_prefix", ["/no/such/prefix", "/the/base"], ids=["no-venv", "venv"])
def test_a_python_leaves_out_its_site_folders_not_its_whole_prefix(
    monkeypatch: pytest.MonkeyPatch, base_prefix: str
) -> None:
    """`probe-installed -- /usr/bin/python3` (or a conda prefix): its prefix, `/usr`, holds anyone's files (a data file
    in `/usr/share`, a library in `/usr/local/cuda`), which no part of the record's identity covers; what does is its
    site folders (the packages) and its standard library (its build). A virtual environment's folder likewise: a
    project may live in it (`python -m venv .` in the project's root)."""
    prefix = "/no/such/prefix"
    site_folder = os.path.join(prefix, "lib", "python3", "site-packages")
    monkeypatch.setattr(sys, "prefix", prefix)
    monkeypatch.setattr(sys, "exec_prefix", prefix)
    monkeypatch.setattr(sys, "base_prefix", base_prefix)
    monkeypatch.delattr(sys, "real_prefix", raising=False)
    monkeypatch.setattr(reads.site, "getsitepackages", lambda: [site_folder])
    excluded = reads.excluded_prefixes("/scratch")
    assert not os.path.join(prefix, "share", "ref.txt").startswith(excluded)
    assert os.path.join(site_folder, "numpy", "__init__.py").startswith(excluded)
    assert not os.path.join(prefix, "data.txt").startswith(excluded)
