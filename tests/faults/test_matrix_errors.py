"""Malformed matrix files through the real command line: one message (file:line, key, hint), exit 2, nothing written."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from ..conftest import ROOT

pytestmark = pytest.mark.integration


@dataclass(frozen=True)
class Case:
    id: str
    text: str | bytes
    line: int | None
    key: str
    problem: str
    hint: str


ALIAS_BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{name}: &{name} [{', '.join([f'*{previous}'] * 10)}]\n" for previous, name in zip("abcde", "bcdef", strict=True)
)
NESTED = "torch: " + "[" * 5000 + "]" * 5000 + "\n"
HUGE = "torch: [1.9.0]\n" + "# padding\n" * 110_000

CASES = [
    # YAML syntax and encoding
    Case("unclosed-bracket", "torch: [1.9.0\n", 2, "", "YAML syntax error", "flow sequence that starts on line 1"),
    Case("unclosed-quote", "torch: ['1.9.0]\n", 2, "", "YAML syntax error", "quoted scalar that starts on line 1"),
    Case("tab-indent", "torch:\n\t- 1.9.0\n", 2, "", "found character '\\t'", "indent with spaces"),
    Case("bad-indent", "torch:\n  - 1.9.0\n - 2.0.1\n", 3, "", "YAML syntax error", "block mapping"),
    Case("not-utf8", b"torch: [1.9.0]\nmachine: caf\xe9\n", 2, "", "not UTF-8 text", "save the file as UTF-8"),
    Case("nul-character", "torch: [1.9.0]\nmachine: a\x00b\n", 2, "", "character #x0000", "remove it"),
    # empty, or not a mapping
    Case("empty", "", None, "", "the file is empty", "default matrix.yaml"),
    Case("only-comments", "# torch: [1.9.0]\n", None, "", "the file is empty", "default matrix.yaml"),
    Case("top-level-list", "- 1.9.0\n", 1, "", "expected a mapping, got a list", "e.g. torch: [1.12.1, 2.2.0]"),
    Case("top-level-text", "torch 1.9.0\n", 1, "", "expected a mapping, got a string", "e.g. torch:"),
    # keys
    Case("unknown-key", "torch: [1.9.0]\nprobse: [autograd_dot]\n", 2, "probse", "unknown key", "'probes'"),
    Case(
        "unknown-nested",
        "torch:\n  - version: 1.9.0\n    pyhton: '3.8'\n",
        3,
        "torch[0].pyhton",
        "unknown key",
        "'python'",
    ),
    Case("missing-torch", "probes: [autograd_dot]\n", 1, "", "missing required key 'torch'", "e.g. torch: [1.12.1"),
    Case("duplicate-key", "torch: [1.9.0]\ntorch: [2.0.1]\n", 2, "torch", "duplicate key", "first given on line 1"),
    Case(
        "merge-key", "base: &b {version: 1.9.0}\ntorch:\n  - <<: *b\n", 3, "torch[0]", "keys must be plain", "no `<<`"
    ),
    Case("list-as-key", "torch: [1.9.0]\n? [a]\n: 1\n", 2, "", "keys must be plain names", "name: value"),
    # wrong types
    Case("torch-text", "torch: 1.9.0\n", 1, "torch", "expected a list, got a string", "e.g. torch: [1.12.1"),
    Case("torch-mapping", "torch: {1.9.0: yes}\n", 1, "torch", "expected a list, got a mapping", "e.g. torch:"),
    Case("torch-empty", "torch: []\n", 1, "torch", "lists no torch release", "e.g. torch: [1.12.1"),
    Case("torch-null-entry", "torch: [null]\n", 1, "torch[0]", "expected a single value, got nothing", "e.g. torch:"),
    Case("timeout-text", "torch: [1.9.0]\ntimeout: soon\n", 2, "timeout", "seconds between 0 and", "e.g. timeout: 300"),
    Case("timeout-nan", "torch: [1.9.0]\ntimeout: .nan\n", 2, "timeout", "seconds between 0 and", "e.g. timeout: 300"),
    Case("devices-number", "torch: [1.9.0]\ndevices: 3\n", 2, "devices", "unknown device '3'", "auto"),
    Case("devices-unknown", "torch: [1.9.0]\ndevices: [cpu, gpu]\n", 2, "devices[1]", "unknown device 'gpu'", "'cpu'"),
    Case("python-typo", "torch:\n  - version: 1.9.0\n    python: [3.1O]\n", 3, "torch[0].python[0]", "'3.1O'", "3.10"),
    Case("pins-text", "torch: [1.9.0]\npins: numpy<2\n", 2, "pins", "expected a list, got a string", "e.g. pins:"),
    # versions and values an installer would misread
    Case("duplicate-version", "torch: [1.9.0, 1.9]\n", 1, "torch[1]", "1.9 is listed twice", "first at torch[0]"),
    Case(
        "version-option", "torch: ['--index-url=https://evil.example']\n", 1, "torch[0]", "installer option", "1.12.1"
    ),
    Case("version-editable", "torch: ['-e .']\n", 1, "torch[0]", "installer option", "1.12.1"),
    Case("version-url", "torch: [https://evil.example/torch.whl]\n", 1, "torch[0]", "URL or path", "1.12.1"),
    Case("version-path", "torch: [./torch-1.9.0-cp39-cp39-linux_x86_64.whl]\n", 1, "torch[0]", "URL or path", "1.12.1"),
    Case("version-range", "torch: ['>=1.9']\n", 1, "torch[0]", "not a PEP 440 version", "bisect takes ranges"),
    Case("version-date", "torch: [2024-01-15]\n", 1, "torch[0]", "'2024-01-15' is not a PEP 440", "1.12.1"),
    Case(
        "pin-url",
        "torch:\n  - version: 2.2.0\n    pins: ['numpy @ https://x/n.whl']\n",
        3,
        "torch[0].pins[0]",
        "installs from a URL",
        "version range",
    ),  # fmt: skip
    Case(
        "pin-option",
        "torch: [1.9.0]\npins:\n  - torch: '<2'\n    require: ['-r evil.txt']\n",
        4,
        "pins[0].require[0]",
        "installer option",
        "numpy<2",
    ),  # fmt: skip
    Case(
        "pin-naming-nothing",
        "torch: [1.9.0]\npins:\n  - torch: '<2'\n    reason: old\n",
        3,
        "pins[0]",
        "names no requirement",
        'constrain: ["numpy<2"]',
    ),  # fmt: skip
    Case(
        "index-url-option", "torch: [1.9.0]\nindex_url: --no-index\n", 2, "index_url", "not an http(s) or file", "e.g."
    ),
    Case(
        "index-url-spaces",
        "torch: [1.9.0]\nindex_url: 'https://a.example/simple --extra-index-url https://b'\n",
        2,
        "index_url",
        "not an http(s) or file URL",
        "e.g. https://",
    ),  # fmt: skip
    Case(
        "find-links-option",
        "torch: [1.9.0]\nfind_links: ['--index-url=https://evil.example']\n",
        2,
        "find_links[0]",
        "installer option",
        "folder of wheels",
    ),  # fmt: skip
    # probes
    Case(
        "probe-parent", "torch: [1.9.0]\nprobes: ['../evil.py']\n", 2, "probes[0]", "neither a probe name", "relative"
    ),
    Case("probe-parent-inside", "torch: [1.9.0]\nprobes: [a/../../evil.py]\n", 2, "probes[0]", "neither", "relative"),
    Case(
        "probe-absolute", "torch: [1.9.0]\nprobes: [/etc/evil.py]\n", 2, "probes[0]", "neither a probe name", "relative"
    ),
    Case(
        "probe-backslash", "torch: [1.9.0]\nprobes: ['..\\evil.py']\n", 2, "probes[0]", "neither a probe name", "path"
    ),
    Case("probe-typo", "torch: [1.9.0]\nprobes: [autograd_dott]\n", 2, "probes[0]", "no probe", "'autograd_dot'"),
    Case("probe-missing-file", "torch: [1.9.0]\nprobes: [mine/check.py]\n", 2, "probes[0]", "no file", "relative to"),
    # YAML tags
    Case(
        "python-object",
        "torch: !!python/object/apply:os.system ['touch pwned']\n",
        1,
        "torch",
        "python/object",
        "plain values only",
    ),  # fmt: skip
    Case("python-name", "torch: [!!python/name:os.system '']\n", 1, "torch[0]", "python/name", "plain values only"),
    Case("custom-tag", "torch: [!local 1.9.0]\n", 1, "torch[0]", "YAML tag '!local'", "plain values only"),
    Case("set-tag", "torch: !!set {1.9.0}\n", 1, "torch", "YAML tag 'tag:yaml.org,2002:set'", "plain values only"),
    # size
    Case("huge", HUGE, None, "", "a matrix file may have at most 1,048,576", "is this the right file?"),
    Case("alias-bomb", ALIAS_BOMB, 1, "e[7][8][8][8][9]", "more than 100,000 values", "a few dozen values"),
    Case("nested", NESTED, 1, "", "nested more than 64 deep", "a few levels"),
]


def nox(folder: Path, matrix: Path, *args: str) -> subprocess.CompletedProcess[str]:
    environ = dict(os.environ, TORCHMATRIX_MATRIX=str(matrix), TORCHMATRIX_CACHE_DIR=str(folder / "cache"))
    command = [sys.executable, "-m", "nox", "-f", str(ROOT / "noxfile.py"), "--envdir", str(folder / ".nox"), *args]
    return subprocess.run(command, env=environ, cwd=folder, capture_output=True, text=True, timeout=120)


def check_one_message(run: subprocess.CompletedProcess[str], where: str, problem: str, hint: str) -> None:
    """Exit code 2, and besides nox's own lines stderr is one error: its first line names the place, then a hint."""
    assert run.returncode == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stdout + run.stderr
    lines = [line for line in run.stderr.splitlines() if not line.startswith("nox > ")]
    assert len(lines) == 2, run.stderr
    assert lines[0].startswith(f"torchmatrix: error: {where} "), lines[0]
    assert problem in lines[0]
    assert lines[1].startswith("  hint: ") and hint in lines[1], lines[1]


def written(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*"))


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_each_mistake_costs_one_message_exit_code_2_and_writes_nothing(tmp_path: Path, case: Case) -> None:
    matrix = tmp_path / "matrix.yaml"
    matrix.write_bytes(case.text if isinstance(case.text, bytes) else case.text.encode())
    run = nox(tmp_path, matrix, "-s", "plan")
    where = f"{matrix}:{case.line}:" if case.line else f"{matrix}:"
    check_one_message(run, f"{where} {case.key}:" if case.key else where, case.problem, case.hint)
    assert run.stdout == ""
    assert written(tmp_path) == ["matrix.yaml"]


ON_PROBE = [case for case in CASES if case.id in {"unknown-key", "python-object", "nested"}]


@pytest.mark.parametrize("case", ON_PROBE, ids=[case.id for case in ON_PROBE])
def test_running_the_probes_with_a_mistake_creates_no_env_and_no_result(tmp_path: Path, case: Case) -> None:
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(str(case.text))
    run = nox(tmp_path, matrix, "-s", "probe")
    assert run.returncode == 2 and case.problem in run.stderr
    assert written(tmp_path) == ["matrix.yaml"]


def test_an_output_that_cannot_be_written_refuses_the_probes_before_any_env_but_not_the_listing(
    tmp_path: Path,
) -> None:
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text("torch: [1.9.0]\noutput: matrix.yaml\n")
    assert nox(tmp_path, matrix, "-l").returncode == 0
    run = nox(tmp_path, matrix, "-s", "probe")
    assert run.returncode == 2 and "Traceback" not in run.stderr
    lines = run.stderr.splitlines()  # nox's summary follows: the session failed, nox went on
    at = next(number for number, line in enumerate(lines) if line.startswith("torchmatrix: error: "))
    error, hint = lines[at : at + 2]
    assert error.startswith(f"torchmatrix: error: {matrix}: output: results cannot go under {matrix}/results/")
    assert error.endswith(f": {matrix} is a file") and hint.startswith("  hint: name a folder you can write in")
    assert [name for name in written(tmp_path) if not name.startswith("cache")] == ["matrix.yaml"]  # no .nox


def test_control_characters_in_a_key_are_escaped(tmp_path: Path) -> None:
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text('torch: [1.9.0]\n"\\e[2J\\e]0;title\\a": 1\n')
    run = nox(tmp_path, matrix, "-s", "plan")
    check_one_message(run, f"{matrix}:2: \\x1b[2J\\x1b]0;title\\x07:", "unknown key", "known keys")


def test_a_missing_matrix_file_is_named_with_the_variable_that_named_it(tmp_path: Path) -> None:
    run = nox(tmp_path, tmp_path / "nowhere.yaml", "-s", "plan")
    check_one_message(run, f"{tmp_path / 'nowhere.yaml'}:", "no such matrix file", "TORCHMATRIX_MATRIX names it")
    assert written(tmp_path) == []
