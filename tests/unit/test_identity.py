"""A record's identity: the environment a pair sees, what is recorded of it, the files read, the machine's name."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from torchmatrix import identity

CALLER = {
    "PATH": "/home/me/.venv/bin:/usr/bin",
    "VIRTUAL_ENV": "/home/me/.venv",
    "PYTHONPATH": "/home/me/src",
    "HOME": "/home/me",
    "LC_ALL": "C.UTF-8",
    "MY_BACKEND": "numpy",
    "MY_TOKEN": "s3cret",
    "OMP_NUM_THREADS": "4",
    "AWS_SECRET_ACCESS_KEY": "x",
}


def cell_python(tmp_path: Path) -> str:
    (tmp_path / "env" / "bin").mkdir(parents=True)
    (tmp_path / "env" / "pyvenv.cfg").write_text("version = 3.11.7\n")
    return str(tmp_path / "env" / "bin" / "python")


def test_a_pair_sees_the_cells_python_first_and_nothing_of_the_callers_shell_it_was_not_given(tmp_path: Path) -> None:
    seen = identity.pair_environment(cell_python(tmp_path), {}, (), CALLER)
    assert seen["PATH"] == os.pathsep.join([str(tmp_path / "env" / "bin"), os.defpath])
    assert seen["VIRTUAL_ENV"] == str(tmp_path / "env")
    assert seen["PYTHONHASHSEED"] == str(identity.SEED)
    assert (seen["HOME"], seen["LC_ALL"], seen["OMP_NUM_THREADS"]) == ("/home/me", "C.UTF-8", "4")
    assert not {"PYTHONPATH", "MY_BACKEND", "MY_TOKEN", "AWS_SECRET_ACCESS_KEY"} & seen.keys()


def test_declared_variables_win_and_passed_ones_come_from_the_caller(tmp_path: Path) -> None:
    declared = {"MY_BACKEND": "torch", "PYTHONPATH": "/declared"}
    seen = identity.pair_environment(cell_python(tmp_path), declared, ("MY_T*", "PATH"), CALLER)
    assert (seen["MY_BACKEND"], seen["PYTHONPATH"], seen["MY_TOKEN"]) == ("torch", "/declared", "s3cret")
    assert seen["PATH"] == os.pathsep.join([str(tmp_path / "env" / "bin"), CALLER["PATH"]])


def test_a_python_outside_a_venv_gets_no_virtual_env(tmp_path: Path) -> None:
    assert "VIRTUAL_ENV" not in identity.pair_environment(str(tmp_path / "python3"), {}, (), CALLER)


def test_what_a_record_depends_on_holds_values_set_digests_of_values_passed_and_what_steers_torch() -> None:
    described = identity.environment_identity({"MY_BACKEND": "torch"}, ("MY_TOKEN",), CALLER)
    assert described == {
        "set": {"MY_BACKEND": "torch"},
        "passed": {"MY_TOKEN": hashlib.sha256(b"s3cret").hexdigest()},
        "steering": {"OMP_NUM_THREADS": "4"},
        "needed": {"HOME": "/home/me", "LC_ALL": "C.UTF-8"},
    }
    assert "s3cret" not in repr(described)
    other_token = identity.environment_identity({"MY_BACKEND": "torch"}, ("MY_TOKEN",), {**CALLER, "MY_TOKEN": "x"})
    assert other_token != described
    threads = identity.environment_identity({"MY_BACKEND": "torch"}, ("MY_TOKEN",), {**CALLER, "OMP_NUM_THREADS": "1"})
    assert threads != described
    unrelated = identity.environment_identity({"MY_BACKEND": "torch"}, ("MY_TOKEN",), {**CALLER, "EDITOR": "vi"})
    assert unrelated == described
    for shaping in ({"TZ": "Asia/Tokyo"}, {"LANG": "de_DE.UTF-8"}, {"HOME": "/home/other"}):
        assert identity.environment_identity({"MY_BACKEND": "torch"}, ("MY_TOKEN",), {**CALLER, **shaping}) != described


SHELL = {
    **CALLER,
    "USER": "me",
    "LOGNAME": "me",
    "TERM": "xterm-256color",
    "TMPDIR": "/var/tmp/me",
    "TEMP": "/var/tmp/me",
    "ATEN_CPU_CAPABILITY": "default",
    "DNNL_MAX_CPU_ISA": "AVX2",
    "ONEDNN_VERBOSE": "1",
    "CUBLASLT_WORKSPACE_SIZE": "1024",
    "TORCHMATRIX_WORKER_START": "spawn",
    "EDITOR": "vi",
    "SSH_AUTH_SOCK": "/tmp/ssh-x/agent.1",
    "MY_DECLARED": "from the shell",
}


@pytest.mark.parametrize("name", sorted(SHELL))
def test_a_variable_that_reaches_a_pair_is_in_its_identity_and_one_that_does_not_is_not(
    tmp_path: Path, name: str
) -> None:
    """Passes ⇔ recorded: changing a variable of the shell changes what a pair sees exactly when it changes the
    identity of its records, so no change a pair saw leaves its record up to date."""
    python, declared, passed = cell_python(tmp_path), {"MY_DECLARED": "declared"}, ("MY_TOKEN", "PATH")
    changed = {**SHELL, name: SHELL[name] + "-changed"}
    sees = identity.pair_environment(python, declared, passed, changed) != identity.pair_environment(
        python, declared, passed, SHELL
    )
    recorded = identity.environment_identity(declared, passed, changed) != identity.environment_identity(
        declared, passed, SHELL
    )
    assert sees == recorded


def test_a_pair_sees_what_it_needs_to_run_and_what_steers_torch_and_nothing_else_of_the_shell(tmp_path: Path) -> None:
    seen = identity.pair_environment(cell_python(tmp_path), {}, (), SHELL)
    for name in ("USER", "LOGNAME", "TMPDIR", "TEMP", "ATEN_CPU_CAPABILITY", "DNNL_MAX_CPU_ISA", "ONEDNN_VERBOSE"):
        assert seen[name] == SHELL[name]
    assert not {"TERM", "EDITOR", "SSH_AUTH_SOCK", "MY_DECLARED"} & seen.keys()  # a pair's output goes to a file
    described = identity.environment_identity({}, (), SHELL)
    assert described["steering"]["ATEN_CPU_CAPABILITY"] == "default"
    assert described["needed"]["TMPDIR"] == "/var/tmp/me"


def test_what_reaches_no_pair_is_named(tmp_path: Path) -> None:
    unseen = identity.left_out({"MY_DECLARED": "declared"}, ("MY_TOKEN",), SHELL)
    assert unseen == ["AWS_SECRET_ACCESS_KEY", "EDITOR", "MY_BACKEND", "PATH", "PYTHONPATH", "SSH_AUTH_SOCK", "TERM",
                      "VIRTUAL_ENV"]  # fmt: skip


def test_a_file_read_is_known_by_its_content(tmp_path: Path) -> None:
    helper, data = tmp_path / "helper.py", tmp_path / "data.csv"
    helper.write_text("VALUE = 1\n")
    data.write_text("1,2\n")
    read = identity.files_read([str(helper), str(data)])
    assert identity.changed_files(read) == []
    helper.touch()  # a new mtime, the same content
    assert identity.changed_files(read) == []
    helper.write_text("VALUE = 2\n")
    data.unlink()
    assert identity.changed_files(read) == [f"{data} is gone", f"{helper} changed"]
    for garbage in ("x", ["helper.py"], {"helper.py": 3}):
        assert identity.changed_files(garbage) == ["what it read is not a list of files with their digests"]


def test_a_folder_read_whole_leaves_out_hidden_files_and_bytecode(tmp_path: Path) -> None:
    for name in ("repro.py", "lib/helper.py", ".git/HEAD", "__pycache__/repro.cpython-311.pyc", ".env"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    assert identity.folder_files(tmp_path) == [str(tmp_path / "repro.py"), str(tmp_path / "lib" / "helper.py")]


@pytest.mark.parametrize(
    ("model", "slug"),
    [
        ("AMD EPYC 7B13 64-Core Processor", "amd-epyc-7b13"),
        ("Intel(R) Xeon(R) CPU @ 2.20GHz", "intel-xeon"),
        ("Intel(R) Core(TM) i7-8700K CPU @ 3.70GHz", "intel-core-i7-8700k"),
        ("Apple M1 Pro", "apple-m1-pro"),
        ("NVIDIA H200", "nvidia-h200"),
    ],
)
def test_a_machine_is_named_by_its_cpu_and_gpu(monkeypatch: pytest.MonkeyPatch, model: str, slug: str) -> None:
    monkeypatch.setattr(identity, "cpu_model", lambda: model)
    monkeypatch.setattr(identity, "gpu_models", lambda: [])
    assert identity.default_machine_name().endswith("-" + slug)
    monkeypatch.setattr(identity, "gpu_models", lambda: ["NVIDIA H200"])
    assert identity.default_machine_name().endswith(f"-{slug}-nvidia-h200")


def test_amd_and_intel_machines_of_one_os_and_architecture_are_two_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(identity, "gpu_models", lambda: [])
    names = set()
    for model in ("AMD EPYC", "Intel(R) Xeon(R) Processor"):
        monkeypatch.setattr(identity, "cpu_model", lambda model=model: model)
        names.add(identity.default_machine_name())
    assert len(names) == 2
