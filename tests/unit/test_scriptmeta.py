"""A probe's own requirements from its PEP 723 block; a block an installer could not use is one clear error."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchmatrix.errors import ConfigError
from torchmatrix.matrix import pep723

HEAD = "import torch\n\n"


def probe(tmp_path: Path, block: str) -> Path:
    path = tmp_path / "probe.py"
    path.write_text(HEAD + block + "\ndef run(device):\n    return {'outcome': 'pass'}\n")
    return path


def test_the_dependencies_of_the_script_block_are_read(tmp_path: Path) -> None:
    block = '# /// script\n# dependencies = [\n#   "scipy>=1.10",\n#   "expecttest",\n# ]\n# ///\n'
    assert pep723.dependencies(probe(tmp_path, block)) == ("scipy>=1.10", "expecttest")


def test_a_probe_without_a_block_or_with_another_kind_of_block_needs_nothing(tmp_path: Path) -> None:
    assert pep723.dependencies(probe(tmp_path, "# just a comment\n")) == ()
    assert pep723.dependencies(probe(tmp_path, "# /// pyproject\n# x = 1\n# ///\n")) == ()


@pytest.mark.parametrize(
    ("block", "problem"),
    [
        ("# /// script\n# dependencies = [\n# ///\n", "the script block is not TOML"),
        ('# /// script\n# dependences = ["scipy"]\n# ///\n', "unknown key 'dependences'"),
        ("# /// script\n# dependencies = 'scipy'\n# ///\n", "dependencies is not a list of strings"),
        ('# /// script\n# dependencies = ["scipy>>1"]\n# ///\n', "'scipy>>1' is not a requirement"),
        ("# /// script\n# dependencies = []\n# ///\n\n# /// script\n# dependencies = []\n# ///\n", "a second"),
    ],
)
def test_a_block_an_installer_could_not_use_names_the_file_and_line(tmp_path: Path, block: str, problem: str) -> None:
    path = probe(tmp_path, block)
    with pytest.raises(ConfigError) as raised:
        pep723.dependencies(path)
    assert raised.value.file == str(path) and raised.value.line in (3, 7) and problem in raised.value.problem


def test_a_probe_is_opt_in_when_its_block_says_so(tmp_path: Path) -> None:
    block = '# /// script\n# dependencies = ["expecttest"]\n#\n# [tool.torchmatrix]\n# opt-in = true\n# ///\n'
    assert pep723.read(probe(tmp_path, block)) == pep723.ScriptMetadata(("expecttest",), opt_in=True)
    other_tools = "# /// script\n# [tool.other]\n# anything = 1\n# ///\n"
    assert pep723.read(probe(tmp_path, other_tools)) == pep723.ScriptMetadata((), opt_in=False)


def test_a_script_names_its_devices_under_tool_torchmatrix(tmp_path: Path) -> None:
    block = '# /// script\n# dependencies = ["scipy"]\n#\n# [tool.torchmatrix]\n# devices = ["cuda", "cpu"]\n# ///\n'
    assert pep723.read(probe(tmp_path, block)) == pep723.ScriptMetadata(("scipy",), devices=("cuda", "cpu"))
    other_tool = "# /// script\n# [tool.ruff]\n# line-length = 80\n# ///\n"
    assert pep723.read(probe(tmp_path, other_tool)).devices is None  # another tool's table is its own


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ("# [tool.torchmatrix]\n# opt_in = true\n", "unknown key 'opt_in' in [tool.torchmatrix]"),
        ('# [tool.torchmatrix]\n# opt-in = "yes"\n', "opt-in is neither true nor false"),
        ("# [tool]\n# torchmatrix = 1\n", "tool.torchmatrix is not a table"),
    ],
)
def test_a_torchmatrix_table_it_could_not_read_is_an_error(tmp_path: Path, table: str, problem: str) -> None:
    with pytest.raises(ConfigError) as raised:
        pep723.read(probe(tmp_path, "# /// script\n" + table + "# ///\n"))
    assert problem in raised.value.problem


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ('# devices = ["gpu"]', "devices must be a list of devices"),
        ("# devices = []", "devices must be a list of devices"),
        ('# devics = ["cpu"]', "unknown key 'devics' in [tool.torchmatrix]"),
    ],
)
def test_a_devices_entry_it_cannot_use_is_one_clear_error(tmp_path: Path, table: str, problem: str) -> None:
    path = probe(tmp_path, f"# /// script\n# [tool.torchmatrix]\n{table}\n# ///\n")
    with pytest.raises(ConfigError) as raised:
        pep723.read(path)
    assert raised.value.line == 3 and problem in raised.value.problem
