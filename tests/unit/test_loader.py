"""matrix.yaml validation: what is accepted, and the message for each mistake."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest
from packaging.version import Version

from torchmatrix.core import DEVICES, Kind, Outcome
from torchmatrix.errors import ConfigError, UsageError
from torchmatrix.matrix.loader import load_matrix, load_pin_rules

from ..conftest import ROOT


@pytest.fixture
def probes_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "probes"
    folder.mkdir()
    for name in ("autograd_dot", "batched_matmul"):
        (folder / f"{name}.py").write_text("def run(device):\n    return {'outcome': 'pass'}\n")
    return folder


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "matrix.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def error_for(tmp_path: Path, probes_dir: Path, text: str) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        load_matrix(write(tmp_path, text), probes_dir)
    return caught.value


def test_the_default_matrix_is_valid() -> None:
    matrix = load_matrix(ROOT / "matrix.yaml", ROOT / "probes")
    assert Version("1.9.0") in [entry.version for entry in matrix.torch]
    assert [probe.name for probe in matrix.probes] == ["autograd_dot", "batched_matmul"]
    assert matrix.devices == DEVICES
    assert matrix.output == ROOT / "out"


def test_a_full_matrix_is_read_with_paths_relative_to_its_file(tmp_path: Path, probes_dir: Path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "check.py").write_text("def run(device):\n    return {'outcome': 'pass'}\n")
    matrix = load_matrix(
        write(
            tmp_path,
            """
            torch:
              - 1.10          # a YAML float, read as the text written
              - version: 2.2.0
                python: ["3.10", 3.12]
                pins: ["numpy==1.26.4"]
            probes: [autograd_dot, mine/check.py]
            devices: [cpu]
            timeout: 12
            repeat: 5
            strict: true
            output: out
            find_links: [wheels]
            pins:
              - torch: "<2"
                require: ["numpy<1.25"]
                reason: old
            """,
        ),
        probes_dir,
    )
    assert [str(entry.version) for entry in matrix.torch] == ["1.10", "2.2.0"]
    assert matrix.torch[1].pythons == ("3.10", "3.12")
    assert [str(pin) for pin in matrix.torch[1].pins] == ["numpy==1.26.4"]
    assert [(probe.name, probe.path) for probe in matrix.probes] == [
        ("autograd_dot", probes_dir / "autograd_dot.py"),
        ("mine/check.py", tmp_path / "mine" / "check.py"),
    ]
    assert matrix.devices == ("cpu",)
    assert matrix.timeout == 12.0
    assert matrix.repeat == 5
    assert matrix.strict is True
    assert matrix.output == tmp_path / "out"
    assert matrix.find_links == (str(tmp_path / "wheels"),)
    assert matrix.pins[0].applies_to(Version("1.13.1")) and not matrix.pins[0].applies_to(Version("2.0.1"))


def test_without_probes_every_probe_in_the_folder_runs(tmp_path: Path, probes_dir: Path) -> None:
    matrix = load_matrix(write(tmp_path, "torch: [1.12.1]\n"), probes_dir)
    assert [probe.name for probe in matrix.probes] == ["autograd_dot", "batched_matmul"]
    assert matrix.find_links is None
    assert matrix.repeat == 1
    assert matrix.strict is False


def test_an_opt_in_probe_runs_only_where_a_matrix_names_it(tmp_path: Path, probes_dir: Path) -> None:
    (probes_dir / "sweep.py").write_text(OPT_IN_PROBE)
    everything = load_matrix(write(tmp_path, "torch: [1.12.1]\n"), probes_dir)
    assert [probe.name for probe in everything.probes] == ["autograd_dot", "batched_matmul"]
    named = load_matrix(write(tmp_path, "torch: [1.12.1]\nprobes: [sweep]\n"), probes_dir)
    assert [probe.name for probe in named.probes] == ["sweep"]


def test_the_shipped_sweep_is_opt_in() -> None:
    matrix = load_matrix(ROOT / "matrix.yaml", ROOT / "probes")
    assert (ROOT / "probes" / "opsweep.py").is_file()
    assert "opsweep" not in [probe.name for probe in matrix.probes]


def test_probe_options_reach_their_probe(tmp_path: Path, probes_dir: Path) -> None:
    text = "torch: [1.12.1]\nprobe_options:\n  autograd_dot: {ops: 'add|mul.*', samples: 2, names: [a, b]}\n"
    matrix = load_matrix(write(tmp_path, text), probes_dir)
    options = {probe.name: probe.options for probe in matrix.probes}
    assert options == {"autograd_dot": {"ops": "add|mul.*", "samples": 2, "names": ["a", "b"]}, "batched_matmul": {}}


OPT_IN_PROBE = "# /// script\n# [tool.torchmatrix]\n# opt-in = true\n# ///\ndef run(device):\n    return {}\n"


@pytest.mark.parametrize(
    ("text", "line", "key", "problem", "hint"),
    [
        ("torch: [1.9.0]\nprobse: [autograd_dot]\n", 2, "probse", "unknown key", "did you mean 'probes'?"),
        ("torch:\n  - version: 1.9.0\n    pyhton: '3.8'\n", 3, "torch[0].pyhton", "unknown key", "'python'"),
        ("torch: [1.9.0, '--index-url=http://evil']\n", 1, "torch[1]", "installer option", ""),
        ("torch: [https://example.com/torch.whl]\n", 1, "torch[0]", "URL", ""),
        ("torch: ['>=1.9']\n", 1, "torch[0]", "not a PEP 440 version", "bisect"),
        ("torch: [1.9.0, 1.9]\n", 1, "torch[1]", "listed twice", ""),
        ("torch: [1.9.0]\nprobes: [autograd_dott]\n", 2, "probes[0]", "no probe", "did you mean 'autograd_dot'?"),
        ("torch: [1.9.0]\nprobes: ['../evil.py']\n", 2, "probes[0]", "neither a probe name", ""),
        ("torch: [1.9.0]\ndevices: [gpu]\n", 2, "devices[0]", "unknown device", ""),
        ("torch: [1.9.0]\ntimeout: -1\n", 2, "timeout", "seconds", ""),
        ("torch: [1.9.0]\ntimeout: 3e2\n", 2, "timeout", "got a string", "YAML reads 3e2 as text: write"),
        ("torch: !!python/object:os.system {}\n", 1, "torch", "not allowed", ""),
        ("torch: [1.9.0]\ntorch: [2.0.1]\n", 2, "torch", "duplicate key", "line 1"),
        ("torch: [1.9.0\n", 2, "", "YAML syntax error", ""),
        ("", None, "", "empty", ""),
        ("torch:\n  - version: 2.2.0\n    pins: ['numpy @ https://x/numpy.whl']\n", 3, "torch[0].pins[0]", "URL", ""),
        ("torch: [1.9.0]\ndevices: gpu\n", 2, "devices", "unknown device 'gpu'", "did you mean"),
        ("torch: [1.9.0]\ndevices: []\n", 2, "devices", "no device: a matrix runs on one at least", "use 'auto'"),
        ("torch: [1.9.0]\nindex_url: --no-index\n", 2, "index_url", "not an http(s) or file URL", "https://"),
        ("torch: [1.9.0]\nfind_links: ['--index-url=http://evil']\n", 2, "find_links[0]", "installer option", "folder"),
        ("torch: [1.9.0]\nmachine: a\x00b\n", 2, "", "character #x0000", "remove it"),
        ("torch: " + "[" * 3000 + "]" * 3000, 1, "", "nested more than 64 deep", "a few levels"),
        ("torch: [2024-01-15]\n", 1, "torch[0]", "'2024-01-15' is not a PEP 440 version", ""),
        ("torch: [1.9.0]\ntimeout: soon\n", 2, "timeout", "seconds", "e.g. timeout: 300"),
        ("torch: [1.9.0]\ntimeout: inf\n", 2, "timeout", "seconds", "e.g. timeout: 300"),  # no such as inf
        ("torch: [1.9.0]\ntimeout: 1e400\n", 2, "timeout", "seconds", "e.g. timeout: 300"),
        (
            "torch: [1.9.0]\nprobe_options: {autograd_dott: {}}\n",
            2,
            "probe_options.autograd_dott",
            "not a probe",
            "did you mean 'autograd_dot'?",
        ),
        (
            "torch: [1.9.0]\nprobe_options: {autograd_dot: [add]}\n",
            2,
            "probe_options.autograd_dot",
            "expected a mapping of options",
            "",
        ),
        (
            "torch: [1.9.0]\nprobe_options: {autograd_dot: {x: .nan}}\n",
            2,
            "probe_options.autograd_dot.x",
            "no number JSON can hold",
            "",
        ),
        ("torch: [1.9.0]\nprobe_options: [autograd_dot]\n", 2, "probe_options", "probe names to their options", ""),
        ("torch: [1.9.0]\nrepeat: 0\n", 2, "repeat", "runs from 1 to 1000", "e.g. repeat: 5"),
        ("torch: [1.9.0]\nrepeat: 2.5\n", 2, "repeat", "got a number (2.5)", "e.g. repeat: 5"),
        ("torch: [1.9.0]\nrepeat: true\n", 2, "repeat", "got a boolean", ""),
        ("torch: [1.9.0]\nstrict: 1\n", 2, "strict", "expected true or false, got a number (1)", "e.g. strict: true"),
        ("torch: [1.9.0]\nenv: {PATH: /x}\n", 2, "env.PATH", "set by torchmatrix", "pass_env: [PATH]"),
        ("torch: [1.9.0]\nenv: {PYTHONHASHSEED: '1'}\n", 2, "env.PYTHONHASHSEED", "set by torchmatrix", ""),
        ("torch: [1.9.0]\nenv: {TORCHMATRIX_INPUTS: /x}\n", 2, "env.TORCHMATRIX_INPUTS", "set by torchmatrix", ""),
        ("torch: [1.9.0]\nenv: {A=B: x}\n", 2, "env.A=B", "not a variable name", "MY_BACKEND"),
        ("torch: [1.9.0]\nenv: {A: [x]}\n", 2, "env.A", "expected a single value", 'e.g. "1"'),
        ("torch: [1.9.0]\nenv: [A]\n", 2, "env", "mapping of variable names", ""),
        ("torch: [1.9.0]\nenv: {A: " + "x" * 40000 + "}\n", 2, "env.A", "longer than 32 KiB", "a file"),
        ('torch: [1.9.0]\nenv: {A: "\\ud800"}\n', 2, "env.A", "no process can be handed", "\\udce9"),
        ("torch: [1.9.0]\npass_env: ['*']\n", 2, "pass_env[0]", "not a variable name or pattern", "MY_*"),
        ("torch: [1.9.0]\npass_env: [VIRTUAL_ENV]\n", 2, "pass_env[0]", "set by torchmatrix", ""),
        ("torch: [1.9.0]\nmachine: ../evil\n", 2, "machine", "cannot name a results folder", "evil"),
        ("torch: [1.9.0]\nmachine: my box\n", 2, "machine", "cannot name a results folder", "e.g. machine: my_box"),
    ],
)
def test_each_mistake_names_file_line_key_and_a_hint(
    tmp_path: Path, probes_dir: Path, text: str, line: int | None, key: str, problem: str, hint: str
) -> None:
    error = error_for(tmp_path, probes_dir, text)
    assert error.file.endswith("matrix.yaml")
    assert error.line == line
    assert error.key == key
    assert problem in error.problem
    assert hint in error.hint
    assert str(error).startswith(f"{error.file}:{line}:" if line else f"{error.file}:")


def test_a_value_that_is_no_utf8_text_is_the_bytes_a_pair_is_handed(tmp_path: Path, probes_dir: Path) -> None:
    # YAML writes a byte that is no UTF-8 as the escape Python holds it by (surrogateescape): it loads, never a crash
    matrix = load_matrix(write(tmp_path, 'torch: [1.9.0]\nenv: {A: "caf\\udce9"}\n'), probes_dir)
    assert [(name, os.fsencode(value)) for name, value in matrix.env] == [("A", b"caf\xe9")]


def test_the_known_pins_file_is_valid() -> None:
    rules = load_pin_rules(ROOT / "src" / "torchmatrix" / "known_pins.yaml")
    numpy = [rule for rule in rules if any(req.name == "numpy" for req in rule.constrain)]
    assert numpy and numpy[0].applies_to(Version("2.2.0")) and not numpy[0].applies_to(Version("2.3.0"))
    assert all(not rule.require for rule in rules)  # a known pin constrains: it adds no package to any cell


EXPECT = """
torch: [1.9.0, 1.12.1]
devices: [cpu, mps]
expect:
  - probe: autograd_dot
    device: mps
    torch: ">=1.12"
    outcome: pass
  - probe: autograd_dot
    device: mps
    torch: "<1.12"
    outcome: fail
    python: "3.8"
    machine: darwin-arm64
    reason: "torch.dot returns 0 on Apple Silicon builds before 1.12"
  - probe: batched_matmul
    device: cpu
    outcome: pass
"""


def test_expectations_are_read_with_their_place_in_the_file(tmp_path: Path, probes_dir: Path) -> None:
    fixed, broken, everywhere = load_matrix(write(tmp_path, EXPECT), probes_dir).expect
    assert (fixed.probe, fixed.device, str(fixed.torch), fixed.outcome) == (
        "autograd_dot",
        "mps",
        ">=1.12",
        Outcome.PASS,
    )
    assert (broken.python, broken.reason) == ("3.8", "torch.dot returns 0 on Apple Silicon builds before 1.12")
    assert fixed.where == "matrix.yaml:5 expect[0]" and broken.where == "matrix.yaml:9 expect[1]"
    assert everywhere.covers(Version("2.13.0"), "3.11") and everywhere.covers(Version("2.14.0rc1"), None)
    assert broken.covers(Version("1.9.0"), "3.8") and not broken.covers(Version("1.9.0"), "3.9")
    assert not broken.covers(Version("1.12.0"), "3.8")
    assert broken.machine == "darwin-arm64" and fixed.machine is None
    assert broken.describe() == "autograd_dot on mps, torch <1.12, Python 3.8, machine darwin-arm64: fail"


@pytest.mark.parametrize(
    ("entry", "line", "key", "problem", "hint"),
    [
        ("- {probe: autograd_dot, device: cpu}", 4, "expect[0]", "missing required key 'outcome'", ""),
        ("- {probe: autograd_dot, device: cpu, outcome: passed}", 4, "expect[0].outcome", "unknown outcome", "'pass'"),
        (
            "- {probe: autograd_dot, device: cpu, outcome: within-tolerance}",
            4,
            "expect[0].outcome",
            "unknown outcome",
            "",
        ),  # a table's word for a pass, never a stored outcome
        (
            "- {probe: autograd_dott, device: cpu, outcome: pass}",
            4,
            "expect[0].probe",
            "not a probe of",
            "autograd_dot",
        ),
        ("- {probe: 'a probe', device: cpu, outcome: pass}", 4, "expect[0].probe", "not a probe name", "test id"),
        ("- {probe: my/x.py, device: cpu, outcome: pass}", 4, "expect[0].probe", "not a probe of", "node id"),
        (
            "- {probe: autograd_dot, device: cuda, outcome: pass}",
            4,
            "expect[0].device",
            "does not run on cuda",
            "devices",
        ),
        ("- {probe: autograd_dot, device: gpu, outcome: pass}", 4, "expect[0].device", "unknown device", ""),
        ("- {probe: autograd_dot, device: auto, outcome: pass}", 4, "expect[0].device", "one device", ""),
        ("- {probe: autograd_dot, device: cpu, outcome: pass, torch: 1.12}", 4, "expect[0].torch", "range", ">=1.12"),
        ("- {probe: autograd_dot, device: cpu, outcome: pass, python: 3}", 4, "expect[0].python", "3.10", ""),
        ("- {probe: autograd_dot, device: cpu, outcome: pass, why: x}", 4, "expect[0].why", "unknown key", ""),
    ],
)
def test_each_bad_expectation_names_file_line_key_and_a_hint(
    tmp_path: Path, probes_dir: Path, entry: str, line: int, key: str, problem: str, hint: str
) -> None:
    error = error_for(tmp_path, probes_dir, f"torch: [1.9.0]\ndevices: [cpu, mps]\nexpect:\n  {entry}\n")
    assert (error.line, error.key) == (line, key)
    assert problem in error.problem
    assert hint in error.hint


def test_scripts_and_tests_are_probes_of_their_own_kind(tmp_path: Path, probes_dir: Path) -> None:
    (tmp_path / "repro.py").write_text(
        "import os, torch\nprint(torch.ones(1, device=os.environ['TORCHMATRIX_DEVICE']))\n"
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_dot.py").write_text("def test_dot():\n    pass\n\ndef test_grad():\n    pass\n")
    (tmp_path / "more").mkdir()
    (tmp_path / "more" / "test_more.py").write_text("def test_more(torchmatrix_device):\n    pass\n")
    text = "torch: [1.12.1]\nprobes: [autograd_dot, repro.py, tests/test_dot.py::test_grad, more]\n"
    matrix = load_matrix(write(tmp_path, text), probes_dir)
    assert [(probe.name, probe.kind, probe.devices) for probe in matrix.probes] == [
        ("autograd_dot", Kind.MODULE, None),
        ("repro.py", Kind.SCRIPT_OR_TESTS, None),  # it reads TORCHMATRIX_DEVICE; tests or a script: pytest says
        ("tests/test_dot.py::test_grad", Kind.PYTEST, ("cpu",)),  # these never ask for the device
        ("more/", Kind.PYTEST, None),
    ]


def test_a_probe_is_its_path_so_two_files_of_one_name_are_two_probes(tmp_path: Path, probes_dir: Path) -> None:
    (tmp_path / "sub").mkdir()
    for path in (tmp_path / "repro.py", tmp_path / "sub" / "repro.py", probes_dir / "bug.py"):
        path.write_text("import torch\nprint(torch.ones(1))\n")
    options = "probe_options: {sub/repro.py: {size: 3}}\n"
    text = "torch: [1.12.1]\nprobes: [repro.py, sub/repro.py, bug, probes/batched_matmul.py]\n" + options
    matrix = load_matrix(write(tmp_path, text), probes_dir)
    assert [(probe.name, probe.path, probe.options) for probe in matrix.probes] == [
        ("repro.py", tmp_path / "repro.py", {}),
        ("sub/repro.py", tmp_path / "sub" / "repro.py", {"size": 3}),
        ("bug", probes_dir / "bug.py", {}),  # a file of probes/ keeps the name the matrix can give it
        ("batched_matmul", probes_dir / "batched_matmul.py", {}),  # however the matrix names it
    ]
    again = error_for(tmp_path, probes_dir, "torch: [1.12.1]\nprobes: [batched_matmul, probes/batched_matmul.py]\n")
    assert (again.key, again.problem) == ("probes[1]", "a probe named 'batched_matmul' is listed twice")


def test_a_probe_entry_may_say_the_kind_of_a_file_that_is_both(tmp_path: Path, probes_dir: Path) -> None:
    (tmp_path / "both.py").write_text("def test_dot():\n    pass\n\nif __name__ == '__main__':\n    test_dot()\n")
    (tmp_path / "check.py").write_text("def run(device):\n    return {'outcome': 'pass'}\n\ndef test_a():\n    pass\n")
    told = "torch: [1.12.1]\nprobes: [{probe: both.py, kind: script}, {probe: check.py, kind: tests}]\n"
    script, tests = load_matrix(write(tmp_path, told), probes_dir).probes
    (asked,) = load_matrix(write(tmp_path, "torch: [1.12.1]\nprobes: [both.py]\n"), probes_dir).probes
    assert [(probe.name, probe.kind, probe.kind_reason) for probe in (script, tests, asked)] == [
        ("both.py", Kind.SCRIPT, "the matrix says kind: script"),
        ("check.py", Kind.PYTEST, "the matrix says kind: tests"),
        (
            "both.py",
            Kind.SCRIPT_OR_TESTS,
            "a .py file without run(device): pytest, asked in the cell, says whether it holds tests",
        ),
    ]
    (tmp_path / "tests").mkdir()
    wrong = error_for(tmp_path, probes_dir, "torch: [1.12.1]\nprobes:\n  - {probe: tests/, kind: script}\n")
    assert (wrong.line, wrong.key, wrong.problem) == (
        3,
        "probes[0].kind",
        "a folder holds tests: it cannot run as a script",
    )
    unknown = error_for(tmp_path, probes_dir, "torch: [1.12.1]\nprobes:\n  - {probe: both.py, kind: test}\n")
    assert (unknown.key, unknown.problem, unknown.hint) == (
        "probes[0].kind",
        "unknown kind 'test'",
        "did you mean 'tests'?",
    )
    missing = error_for(tmp_path, probes_dir, "torch: [1.12.1]\nprobes:\n  - {probe: gone.py}\n")
    assert (missing.key, missing.problem) == ("probes[0].probe", f"no file {tmp_path / 'gone.py'}")


@pytest.mark.parametrize(
    ("text", "line", "key", "problem", "hint"),
    [
        ("torch: [1.9.0]\nprobes: [tests/, tests/test_dot.py]\n", 2, "probes[1]", "hold the same tests", "once"),
        ("torch: [1.9.0]\nprobes: [repro.py]\ndevices: [cuda]\n", 2, "probes[0]", "runs on cpu alone", "reads"),
        ("torch: [1.9.0]\nprobes: [tests/nothing.txt]\n", 2, "probes[0]", "no file", ""),
        ("torch: [1.9.0]\nprobes: [tests/data.txt]\n", 2, "probes[0]", "not a .py file", ""),
        ("torch: [1.9.0]\nprobes: ['.']\n", 2, "probes[0]", "is a folder", "tests/"),
        (
            "torch: [1.9.0]\nprobes: [tests/]\ndevices: [cpu, mps]\nexpect:\n"
            "  - {probe: tests/test_dot.py::test_dot, device: mps, outcome: pass}\n",
            5,
            "expect[0].device",
            "tests/ runs on cpu alone",
            "torchmatrix_device",
        ),
    ],
)
def test_each_mistake_about_scripts_and_tests_is_named(
    tmp_path: Path, probes_dir: Path, text: str, line: int, key: str, problem: str, hint: str
) -> None:
    (tmp_path / "repro.py").write_text("print(1)\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_dot.py").write_text("def test_dot():\n    pass\n")
    (tmp_path / "tests" / "data.txt").write_text("")
    error = error_for(tmp_path, probes_dir, text)
    assert (error.line, error.key) == (line, key)
    assert problem in error.problem and hint in error.hint


def test_an_expectation_may_name_a_test_of_the_matrix_s_tests(tmp_path: Path, probes_dir: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_dot.py").write_text("def test_dot():\n    pass\n")
    expect = "expect:\n  - {probe: tests/test_dot.py::test_dot, device: cpu, outcome: pass}\n"
    text = "torch: [1.9.0]\nprobes: [tests/test_dot.py]\n" + expect
    (expectation,) = load_matrix(write(tmp_path, text), probes_dir).expect
    assert expectation.probe == "tests/test_dot.py::test_dot"


def test_probes_given_for_one_run_replace_the_matrix_s_and_may_lie_anywhere(tmp_path: Path, probes_dir: Path) -> None:
    elsewhere = tmp_path.parent / f"{tmp_path.name}-downloads" / "bug.py"
    elsewhere.parent.mkdir()
    elsewhere.write_text("import torch\nprint(torch.ones(1))\n")
    matrix_file = write(tmp_path, EXPECT)
    matrix = load_matrix(matrix_file, probes_dir, probes=[str(elsewhere), "batched_matmul"])
    assert [(probe.name, probe.kind) for probe in matrix.probes] == [
        (f"../{tmp_path.name}-downloads/bug.py", Kind.SCRIPT_OR_TESTS),  # its path from the matrix's folder
        ("batched_matmul", Kind.MODULE),
    ]
    (tmp_path / "bug.py").write_text("print(1)\n")
    rooted = write(tmp_path, EXPECT + "probes_root: ..\n")
    matrix = load_matrix(rooted, probes_dir, probes=[str(elsewhere), str(tmp_path / "bug.py")])
    assert [probe.name for probe in matrix.probes] == [f"{tmp_path.name}-downloads/bug.py", f"{tmp_path.name}/bug.py"]
    assert matrix.run_from == tmp_path.parent
    with pytest.raises(ConfigError, match="is no folder"):
        load_matrix(write(tmp_path, EXPECT + "probes_root: nowhere\n"), probes_dir)
    matrix = load_matrix(write(tmp_path, EXPECT), probes_dir, probes=[str(elsewhere), "batched_matmul"])
    assert [expectation.probe for expectation in matrix.expect] == ["batched_matmul"]  # those of other probes go
    with pytest.raises(UsageError, match="TORCHMATRIX_PROBES: no probe 'nowhere.py'"):
        load_matrix(matrix_file, probes_dir, probes=["nowhere.py"])
    with pytest.raises(UsageError, match="TORCHMATRIX_PROBES: '/etc/hostname' is not a .py file"):
        load_matrix(matrix_file, probes_dir, probes=["/etc/hostname"])


def test_a_probe_given_for_one_run_that_the_matrix_lists_is_the_matrix_s_with_its_kind(
    tmp_path: Path, probes_dir: Path
) -> None:
    """``$TORCHMATRIX_PROBES`` (bisect's cells, ``torchmatrix probe FILE``) naming a file the matrix lists with a
    ``kind:``, by any path: it runs as the matrix says, never asked again."""
    (tmp_path / "both.py").write_text("def test_dot():\n    pass\n\nif __name__ == '__main__':\n    test_dot()\n")
    matrix_file = write(tmp_path, "torch: [1.12.1]\nprobes: [{probe: both.py, kind: script}]\n")
    for given in ("both.py", str(tmp_path / "both.py")):
        (probe,) = load_matrix(matrix_file, probes_dir, probes=[given]).probes
        assert (probe.name, probe.kind, probe.kind_reason) == ("both.py", Kind.SCRIPT, "the matrix says kind: script")
    with_options = "torch: [1.12.1]\nprobes: [{probe: both.py, kind: tests}]\nprobe_options: {both.py: {size: 9}}\n"
    matrix_file = write(tmp_path, with_options)
    (probe,) = load_matrix(matrix_file, probes_dir, probes=["./both.py"]).probes
    assert (probe.kind, probe.options) == (Kind.PYTEST, {"size": 9})
    with pytest.raises(UsageError, match="'both.py::test_dot' is a test of both.py, which the matrix gives"):
        load_matrix(matrix_file, probes_dir, probes=["both.py::test_dot"])


def test_a_probe_that_is_not_there_is_said_where_it_is_written_with_what_is_there(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "repro.py").write_text("print(1)\n")
    (tmp_path / "probes").mkdir()
    typo = error_for(tmp_path, tmp_path / "probes", "torch: [1.9.0]\nprobes: [sub/repr.py]\n")
    assert (typo.line, typo.key, typo.hint) == (2, "probes[0]", "did you mean 'sub/repro.py'?")
    far = error_for(tmp_path, tmp_path / "probes", "torch: [1.9.0]\nprobes: [elsewhere/check.py]\n")
    assert far.hint == f"a path is relative to {tmp_path}"
    (tmp_path / "repro.py").write_text("print(1)\n")
    stem = error_for(tmp_path, tmp_path / "probes", "torch: [1.9.0]\nprobes: [repro]\n")
    assert stem.hint == "did you mean 'repro.py'?", "a name that is none of probes/: the script beside it"
    with pytest.raises(UsageError) as given:  # $TORCHMATRIX_PROBES
        load_matrix(write(tmp_path, "torch: [1.9.0]\n"), tmp_path / "probes", probes=["sub/repr.py"])
    assert str(given.value).endswith("\n  hint: did you mean 'sub/repro.py'?")


def test_a_matrix_of_no_probe_says_so_rather_than_an_empty_list(tmp_path: Path) -> None:
    empty = tmp_path / "probes"
    empty.mkdir()
    options = error_for(tmp_path, empty, "torch: [1.9.0]\nprobe_options:\n  autograd_dot: {a: 1}\n")
    assert options.hint == "this matrix runs no probe"
    expect = error_for(tmp_path, empty, "torch: [1.9.0]\nexpect:\n  - {probe: repro.py, device: cpu, outcome: pass}\n")
    assert expect.hint == "this matrix runs no probe; a test goes by its node id"
    named = error_for(tmp_path, empty, "torch: [1.9.0]\nprobes: [autograd_dot]\n")
    assert named.hint == f"{empty} holds no probe; a script or tests go by their path, relative to {tmp_path}"


def test_a_listed_probe_named_again_through_a_linked_folder_is_the_matrix_s_and_its_tests_alone_are_refused(
    tmp_path: Path, probes_dir: Path
) -> None:
    """``current`` links to ``real``: ``current/both.py`` given for one run is the matrix's, with its ``kind:`` and
    options, and a test of it, or of a folder the matrix gives options, named alone is refused."""
    (tmp_path / "real" / "tests").mkdir(parents=True)
    (tmp_path / "real" / "both.py").write_text("def test_a():\n    pass\n\nif __name__ == '__main__':\n    test_a()\n")
    (tmp_path / "real" / "tests" / "test_b.py").write_text("def test_b():\n    pass\n")
    (tmp_path / "current").symlink_to(tmp_path / "real", target_is_directory=True)
    matrix_file = write(
        tmp_path,
        "torch: [1.12.1]\nprobes: [{probe: current/both.py, kind: tests}, current/tests/]\n"
        "probe_options: {current/both.py: {size: 3}, current/tests/: {size: 4}}\n",
    )
    [listed, _] = load_matrix(matrix_file, probes_dir).probes
    for given in ("current/both.py", "real/both.py", str(tmp_path / "current" / "both.py")):
        [probe] = load_matrix(matrix_file, probes_dir, probes=[given]).probes
        assert (probe.name, probe.kind, probe.options) == ("current/both.py", Kind.PYTEST, {"size": 3})
    for test in ("current/both.py::test_a", "real/tests/test_b.py::test_b"):
        with pytest.raises(UsageError, match="which the matrix gives probe_options"):
            load_matrix(matrix_file, probes_dir, probes=[test])
