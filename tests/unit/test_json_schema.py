"""matrix.schema.json is what the key tables generate, and agrees with the loader on the matrices we ship and show."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from torchmatrix.errors import ConfigError
from torchmatrix.matrix import json_schema, loader

from ..conftest import ROOT
from .test_docs import PAGES, code_of, key_paths

COMMITTED = ROOT / "matrix.schema.json"
MATRICES = sorted(
    {
        ROOT / "matrix.yaml",
        *ROOT.glob("matrix-*.yaml"),
        *ROOT.glob("examples/*/matrix*.yaml"),
        ROOT / "src" / "torchmatrix" / "standalone" / "matrix.yaml",
        ROOT / "tests" / "faults" / "gpu.yaml",
    }
)


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft7Validator:
    generated = json_schema.json_schema()
    jsonschema.Draft7Validator.check_schema(generated)
    return jsonschema.Draft7Validator(generated)


def refusals(validator: jsonschema.Draft7Validator, value: Any) -> list[str]:
    return [f"{error.json_path}: {error.message}" for error in validator.iter_errors(value)]


def test_the_committed_schema_is_what_the_key_tables_generate() -> None:
    assert COMMITTED.read_text(encoding="utf-8") == json_schema.text(), (
        "matrix.schema.json is out of date: run python -m torchmatrix.matrix.json_schema matrix.schema.json"
    )


def test_check_says_whether_a_file_is_up_to_date(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "matrix.schema.json"
    assert json_schema.main([str(file), "--check"]) == 1
    assert "out of date" in capsys.readouterr().out
    assert json_schema.main([str(file)]) == 0
    assert json_schema.main([str(file), "--check"]) == 0
    assert json.loads(file.read_text(encoding="utf-8")) == json_schema.json_schema()


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (["--check"], "--check needs the FILE to compare"),  # checking nothing must not pass for a check
        (["{folder}"], "is a folder: name the file"),
        (["{folder}/a-file/matrix.schema.json"], "cannot write"),
    ],
)
def test_a_mistaken_command_is_one_message_and_a_failing_exit(
    arguments: list[str], said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a-file").write_text("")
    with pytest.raises(SystemExit) as exited:
        json_schema.main([argument.format(folder=tmp_path) for argument in arguments])
    assert exited.value.code != 0
    assert said in capsys.readouterr().err


@pytest.mark.parametrize("path", [path for path, _ in key_paths()])
def test_each_key_carries_its_help_and_an_example_its_schema_accepts(path: str) -> None:
    key = dict(key_paths())[path]
    fragment = json_schema.property_schema(key)
    assert fragment["description"] == key.help
    [example] = fragment["examples"]
    jsonschema.Draft7Validator(fragment).validate(example)


@pytest.mark.parametrize("matrix", MATRICES, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_matrix_we_ship_is_valid(matrix: Path, validator: jsonschema.Draft7Validator) -> None:
    assert refusals(validator, yaml.safe_load(matrix.read_text(encoding="utf-8"))) == []


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_matrix_the_docs_show_is_valid(page: Path, validator: jsonschema.Draft7Validator) -> None:
    for info, code in code_of(page):
        if info == "yaml":
            assert refusals(validator, yaml.safe_load(code)) == [], code


REFUSED = {
    "an unknown key": "torch: [2.2.0]\ntourch: [1.9.0]",
    "no torch": "probes: [autograd_dot]",
    "no release": "torch: []",
    "an unknown key in an entry": 'torch: [{version: 2.2.0, pyhton: ["3.10"]}]',
    "an entry without its version": 'torch: [{python: ["3.10"]}]',
    "a Python that is no version": 'torch: [{version: 2.2.0, python: ["py3"]}]',
    "an option for a version": "torch: [--index-url=x]",
    "a URL for a requirement": 'torch: [2.2.0]\nrequires: ["pkg @ https://example.org/pkg.whl"]',
    "an unknown device": "torch: [2.2.0]\ndevices: [gpu]",
    "a device twice": "torch: [2.2.0]\ndevices: [cpu, cpu]",
    "no device": "torch: [2.2.0]\ndevices: []",
    "seconds as text": 'torch: [2.2.0]\ntimeout: "300"',
    "no runs": "torch: [2.2.0]\nrepeat: 0",
    "no probe": "torch: [2.2.0]\nprobes: []",
    "an expectation without its outcome": "torch: [2.2.0]\nexpect: [{probe: autograd_dot, device: cpu}]",
    "an unknown outcome": "torch: [2.2.0]\nexpect: [{probe: autograd_dot, device: cpu, outcome: passed}]",
    "an expectation on every device": "torch: [2.2.0]\nexpect: [{probe: autograd_dot, device: auto, outcome: pass}]",
    "a range that is no range": 'torch: [2.2.0]\npins: [{torch: "2.2", require: ["numpy<2"]}]',
    "an index that is no URL": "torch: [2.2.0]\nindex_url: ftp://example.org/simple",
    "an option for a folder of wheels": "torch: [2.2.0]\nfind_links: [--index-url=x]",
    "a variable torchmatrix sets": "torch: [2.2.0]\nenv: {PATH: /bin}",
    "a variable that is no name": "torch: [2.2.0]\nenv: {MY-VAR: 1}",
    "a pattern of every variable": 'torch: [2.2.0]\npass_env: ["*"]',
    "options that are no mapping": "torch: [2.2.0]\nprobe_options: {opsweep: add}",
}


@pytest.mark.parametrize("matrix", REFUSED.values(), ids=REFUSED.keys())
def test_what_the_loader_refuses_the_schema_refuses(
    matrix: str, validator: jsonschema.Draft7Validator, tmp_path: Path
) -> None:
    file = tmp_path / "matrix.yaml"
    file.write_text(matrix + "\n")
    with pytest.raises(ConfigError):
        loader.load_matrix(file, probes_dir=ROOT / "probes")
    assert refusals(validator, yaml.safe_load(matrix)) != []


ACCEPTED = {
    "releases YAML reads as one float": "torch: [1.1, 1.10]",
    "a Python written as a number": "torch: [{version: 2.2.0, python: 3.10}]",
    "a range with a trailing comma": 'torch: [2.2.0]\npins: [{torch: ">=1.12,", require: ["numpy<2"]}]',
    "a reason YAML reads as a boolean": 'torch: [2.2.0]\npins: [{torch: "<2", require: ["numpy<2"], reason: yes}]',
    "a URL scheme in capitals": "torch: [2.2.0]\nindex_url: HTTPS://example.org/simple",
    "a folder of wheels named by a number": "torch: [2.2.0]\nfind_links: [2024]",
    "a variable YAML reads as a boolean": "torch: [2.2.0]\npass_env: [yes]",
}


@pytest.mark.parametrize("matrix", ACCEPTED.values(), ids=ACCEPTED.keys())
def test_what_the_loader_accepts_as_text_the_schema_accepts(
    matrix: str, validator: jsonschema.Draft7Validator, tmp_path: Path
) -> None:
    """The loader reads a value as the text written; YAML reads some as numbers or booleans."""
    file = tmp_path / "matrix.yaml"
    file.write_text(matrix + "\n")
    loader.load_matrix(file, probes_dir=ROOT / "probes")
    assert refusals(validator, yaml.safe_load(matrix)) == []
