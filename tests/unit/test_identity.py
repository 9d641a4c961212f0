"""A record's identity: the environment a pair sees, what is recorded of it, the files read, the machine's name."""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from pathlib import Path

import pytest

from torchmatrix import freshness, identity
from torchmatrix.errors import TorchmatrixError
from torchmatrix.util import storedjson

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


def changed_files(read: object) -> list[str]:
    """What of ``read`` is not as it was, as the views say it."""
    return [freshness.words(change) for change in identity.Identity.stored({identity.READ: read}).changed_files()]


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
        "passed": {"MY_TOKEN": identity.passed_digest("s3cret")},
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


def test_a_passed_value_s_digest_is_keyed_by_a_secret_of_the_user_s_so_a_guess_cannot_be_tried_on_it(
    private_cache: Path,
) -> None:
    """A results file shared or committed holds a digest of each passed value: a plain sha256 of a value that can be
    guessed gives it away. Keyed by a secret in the user's cache folder (made once, for this user alone), one value
    has one digest on this machine, which no one without the key can try guesses on."""
    digest = identity.passed_digest("prod")
    assert digest != hashlib.sha256(b"prod").hexdigest()
    assert identity.passed_digest("prod") == digest != identity.passed_digest("staging")
    key = private_cache / identity.PASSED_KEY
    assert len(key.read_bytes()) == 32 and key.stat().st_mode & 0o077 == 0
    assert list(private_cache.iterdir()) == [key]  # nothing else left behind
    key.unlink()
    assert identity.passed_digest("prod") != digest  # a new key: such records re-run once
    key.unlink()
    key.mkdir()
    with pytest.raises(TorchmatrixError, match="passed-values.key: Is a directory: .* remove what is there"):
        identity.passed_digest("prod")


def test_a_passed_value_that_is_no_utf8_text_has_a_digest_of_its_bytes(private_cache: Path) -> None:
    """A variable of the shell whose bytes are no UTF-8 text (``MY_TOKEN=$'a\\xff'``) reaches the pair as those
    bytes: its digest is theirs, one for each such value, never an error that stops the run and the report."""
    latin = os.fsdecode(b"caf\xe9")
    other = os.fsdecode(b"caf\xe8")
    digest = identity.passed_digest(latin)
    assert digest == identity.passed_digest(latin) != identity.passed_digest(other)
    assert identity.passed_digest("café") != digest  # the same letters in UTF-8 are other bytes
    described = identity.environment_identity({}, ("MY_TOKEN",), {**CALLER, "MY_TOKEN": latin})
    assert described["passed"] == {"MY_TOKEN": digest}


def test_a_variable_held_by_value_that_is_no_utf8_text_is_held_as_its_bytes_in_text_a_file_can_hold() -> None:
    """``TORCH_MYVAR=$'a\\xff'`` reaches the pair as those bytes: the record holds them, one text for each such
    value, and a result file can hold it (a lone surrogate stopped the run as its result was written)."""
    latin, other = os.fsdecode(b"a\xff"), os.fsdecode(b"a\xfe")
    name = os.fsdecode(b"TORCH_\xff")
    described = identity.environment_identity({}, (), {**CALLER, "TORCH_MYVAR": latin, "LANG": other, name: "1"})
    json.dumps(described, ensure_ascii=False).encode("utf-8")  # what writing the result does
    assert described["steering"]["TORCH_MYVAR"] == "\0b'a\\xff'" and described["needed"]["LANG"] == "\0b'a\\xfe'"
    assert described["steering"]["\0b'TORCH_\\xff'"] == "1"
    assert identity.environment_identity({}, (), {**CALLER, "TORCH_MYVAR": other}) != described
    literal = identity.environment_identity({}, (), {**CALLER, "TORCH_MYVAR": "\\0b'a\\xff'"})
    assert literal["steering"]["TORCH_MYVAR"] == "\\0b'a\\xff'" != described["steering"]["TORCH_MYVAR"]


def test_a_passed_value_s_key_is_made_where_the_cache_s_file_system_has_no_hard_links(
    private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_links(source: object, target: object) -> None:
        raise PermissionError(1, "Operation not permitted")  # as a FAT or SMB folder answers

    monkeypatch.setattr(os, "link", no_links)
    digest = identity.passed_digest("prod")
    key = private_cache / identity.PASSED_KEY
    assert len(key.read_bytes()) == 32 and key.stat().st_mode & 0o077 == 0
    assert list(private_cache.iterdir()) == [key]
    assert identity.passed_digest("prod") == digest  # made once, then read
    key.write_bytes(b"short")
    monkeypatch.setattr(identity.time, "sleep", lambda seconds: None)
    with pytest.raises(TorchmatrixError, match="passed-values.key: not a key of 32 bytes: .* remove what is there"):
        identity.passed_digest("prod")


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
    assert changed_files(read) == []
    helper.touch()  # a new mtime, the same content
    assert changed_files(read) == []
    helper.write_text("VALUE = 2\n")
    data.unlink()
    assert changed_files(read) == [f"{data} is gone", f"{helper} changed"]
    for garbage in ("x", ["helper.py"], {"helper.py": 3}):
        assert changed_files(garbage) == ["what it read is not a list of files with their digests"]


def test_a_file_written_while_its_pair_ran_is_what_the_pair_made_not_what_it_read(tmp_path: Path) -> None:
    data, made = tmp_path / "data.txt", tmp_path / "made_by_a_subprocess.txt"
    data.write_text("42\n")
    given = time.time() + 1
    os.utime(data, (given, given))  # touch -d: a time within the pair's run, given before it began
    before = os.stat(data).st_ctime
    made.write_text("written before the pair\n")
    while os.stat(made).st_ctime <= before:  # until the kernel's clock, which stamps changes, has moved on
        made.write_text("the pair's output\n")  # by a program the pair started: no audit hook saw it written
    began_at = os.stat(made).st_ctime
    while time.time() <= given:  # the pair runs on past the time the data was given
        time.sleep(0.05)
    gone = tmp_path / "never-there"
    assert identity.files_read([str(data), str(made), str(gone)], (began_at, None)) == {
        str(data): identity.file_digest(data), str(gone): None,
    }  # fmt: skip
    assert set(identity.files_read([str(data), str(made)])) == {str(data), str(made)}  # no time: every file counts


def test_a_file_dated_ahead_and_made_runnable_while_its_pair_ran_holds_what_it_held(tmp_path: Path) -> None:
    """Its content's time, given (a copy from a machine whose clock is ahead), is past the kernel's time of its last
    change, which the ``chmod`` stamped as the pair ran: no content was written then."""
    data = tmp_path / "data.txt"
    data.write_text("42\n")
    ahead = time.time() + 3600
    os.utime(data, (ahead, ahead))
    began_at = os.stat(data).st_ctime
    data.chmod(0o755)
    assert identity.files_read([str(data)], (began_at, None)) == {str(data): identity.file_digest(data)}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_pipe_where_a_file_was_is_no_file_and_nothing_waits_for_a_writer(tmp_path: Path) -> None:
    pipe = tmp_path / "data.txt"
    os.mkfifo(pipe)
    digests: list[str | None] = []
    asking = threading.Thread(target=lambda: digests.append(identity.file_digest(pipe)), daemon=True)
    asking.start()
    asking.join(60)
    if asking.is_alive():
        os.close(os.open(pipe, os.O_WRONLY | os.O_NONBLOCK))  # its reader waits for a writer: one comes, and goes
    assert digests == [None]


def test_a_file_changed_after_its_pair_ended_holds_no_longer_what_it_read(tmp_path: Path) -> None:
    """The worker begins the next pair before this side asks what the last one read: a file the next one writes is
    neither what the last one made nor what it read."""
    began = tmp_path / "began"
    began.write_text("")
    began_at = os.stat(began).st_ctime
    ended_at = began_at
    rewritten = tmp_path / "zz_out.txt"
    rewritten.write_text("v1\n")
    while os.stat(rewritten).st_ctime <= ended_at:  # until the kernel's clock has moved on past the pair's end
        rewritten.write_text("v1\n")
    assert identity.files_read([str(rewritten)], (began_at, ended_at)) == {
        str(rewritten): "changed after the pair ended"
    }
    assert identity.files_read([str(rewritten)], (began_at, None)) == {}  # its end not known: written while it ran


def test_a_file_the_worker_found_changed_counts_as_it_found_it(tmp_path: Path) -> None:
    """A file the pair updated (or that changed after it read it) holds no longer what it read: the worker says."""
    state = tmp_path / "state.txt"
    state.write_text("updated by the pair")
    assert identity.files_read([str(state)], (time.time() - 3600, None), {str(state): "its digest before"}) == {
        str(state): "its digest before"
    }


def test_a_folder_read_whole_leaves_out_hidden_files_and_bytecode(tmp_path: Path) -> None:
    for name in ("repro.py", "lib/helper.py", ".git/HEAD", "__pycache__/repro.cpython-311.pyc", ".env"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    assert identity.folder_files(tmp_path) == [str(tmp_path / "repro.py"), str(tmp_path / "lib" / "helper.py")]
    assert identity.folder_files(tmp_path, limit=2) is not None
    assert identity.folder_files(tmp_path, limit=1) is None  # not told, rather than told in part


CPUINFO = Path(__file__).parents[1] / "data" / "cpuinfo"


def machine(name: str, gpus: tuple[str, ...] = ()) -> identity.Machine:
    """The machine of the /proc/cpuinfo (or, for ``macos-*``, the ``sysctl``) text ``tests/data/cpuinfo/<name>``."""
    text = (CPUINFO / f"{name}.txt").read_text()
    if name.startswith("macos"):
        return identity.from_sysctl(text, "darwin", "arm64", gpus)
    arm = name.startswith("graviton")
    return identity.from_cpuinfo(text, "linux", "aarch64" if arm else "x86_64", gpus)


@pytest.mark.parametrize(
    ("name", "prefix"),
    [
        ("epyc-milan", "linux-x86_64-amd-epyc-7b13-avx2-"),
        ("xeon-broadwell", "linux-x86_64-intel-xeon-avx2-"),
        ("xeon-cascadelake", "linux-x86_64-intel-xeon-avx512-"),
        ("xeon-emeraldrapids", "linux-x86_64-intel-xeon-avx512-"),
        ("graviton2", "linux-aarch64-neon-"),
        ("graviton3", "linux-aarch64-sve-"),
        ("macos-m1", "darwin-arm64-apple-m1-pro-neon-"),
        ("macos-m4", "darwin-arm64-apple-m4-sme-"),
    ],
)
def test_a_machine_is_named_by_its_cpu_its_widest_isa_and_a_digest_of_the_rest(name: str, prefix: str) -> None:
    named = machine(name).name()
    assert named.startswith(prefix) and len(named) == len(prefix) + 6
    assert machine(name, ("NVIDIA H200",)).name().startswith(prefix + "nvidia-h200-")


def test_two_xeons_of_one_model_string_are_two_machines() -> None:
    """GCP names Broadwell and Cascade Lake alike; one has AVX2, the other AVX-512 and VNNI."""
    broadwell, cascadelake = machine("xeon-broadwell"), machine("xeon-cascadelake")
    assert broadwell.cpu == cascadelake.cpu == "Intel(R) Xeon(R) CPU @ 2.20GHz"
    assert broadwell.levels == ("x86-64-v2", "x86-64-v3") and broadwell.features == ()
    assert cascadelake.levels == ("x86-64-v2", "x86-64-v3", "x86-64-v4") and cascadelake.features == ("avx512_vnni",)
    assert (broadwell.family, broadwell.model, cascadelake.model) == ("6", "79", "85")
    assert broadwell.name() != cascadelake.name()


def test_machines_of_one_level_that_dispatch_differently_have_other_digests() -> None:
    cascadelake, emeraldrapids = machine("xeon-cascadelake"), machine("xeon-emeraldrapids")
    assert cascadelake.level() == emeraldrapids.level() == "avx512"
    assert {"avx512_bf16", "avx512_fp16", "avx_vnni"} <= set(emeraldrapids.features)  # its VM hides AMX
    assert cascadelake.name() != emeraldrapids.name()


def test_what_says_nothing_of_arithmetic_is_no_part_of_the_identity() -> None:
    """Two VMs of one CPU differ in a hypervisor's flags and the clock the OS reads; they are one machine."""
    text = (CPUINFO / "epyc-milan.txt").read_text()
    other = text.replace(" hypervisor", "").replace("cpu MHz\t\t: 2450.000", "cpu MHz\t\t: 3100.000")
    assert identity.from_cpuinfo(other, "linux", "x86_64") == identity.from_cpuinfo(text, "linux", "x86_64")


def test_arm_and_apple_cpus_are_identified_by_their_own_numbers_and_features() -> None:
    graviton3 = machine("graviton3")
    assert (graviton3.vendor, graviton3.family, graviton3.model) == ("0x41", "8", "0xd40")
    assert {"sve", "bf16", "i8mm", "asimd"} <= set(graviton3.features) and graviton3.levels == ()
    m1 = machine("macos-m1")
    assert (m1.cpu, m1.vendor, m1.family) == ("Apple M1 Pro", "Apple", "458787763")
    assert m1.features == ("asimd", "asimddp", "asimdhp")  # named as Linux names them; FEAT_BF16 is 0 there


def test_a_stored_identity_is_described_and_digested_as_it_was_made() -> None:
    milan = machine("epyc-milan")
    assert identity.hardware_digest(milan.to_json()) == milan.digest()
    assert (
        identity.describe_hardware(milan.to_json()) == f"AMD EPYC 7B13 (AuthenticAMD 25/1, x86-64-v3, {milan.digest()})"
    )
    assert identity.describe_hardware({}).startswith("a CPU (? ?/?, ")


def test_a_file_dated_in_the_future_was_not_written_by_the_pair_and_is_read(tmp_path: Path) -> None:
    """A file touched with a time to come (or copied from a machine whose clock is ahead) is an input like any."""
    ahead = tmp_path / "ahead.txt"
    ahead.write_text("b1")
    later = time.time() + 7200
    os.utime(ahead, (later, later))
    assert identity.files_read([str(ahead)], (time.time(), None)) == {str(ahead): identity.file_digest(ahead)}


def test_a_folder_a_pth_file_opened_by_a_byte_order_mark_names_counts_as_python_3_13_reads_it(tmp_path: Path) -> None:
    """Python 3.13's ``site`` reads a ``.pth`` file as ``utf-8-sig``: the folder its first line names, made since,
    is a change; before 3.13 the mark is part of the name, which counts too."""
    (tmp_path / "extra.pth").write_bytes(b"\xef\xbb\xbf" + str(tmp_path / "plugins").encode() + b"\n")
    before = identity.file_digest(tmp_path / identity.SITE_PTH_FILES)
    (tmp_path / "plugins").mkdir()
    assert identity.file_digest(tmp_path / identity.SITE_PTH_FILES) != before


def test_a_cpu_pairs_record_says_the_accelerators_variables_empty_as_its_pair_sees_them() -> None:
    """The worker hides every accelerator from a cpu pair, whatever the matrix sets or the shell passes."""
    caller = {"HIP_VISIBLE_DEVICES": "1", "CUDA_LAUNCH_BLOCKING": "1"}
    given = identity.environment_identity({"CUDA_VISIBLE_DEVICES": "0", "MY_BACKEND": "torch"}, ("HIP_*",), caller)
    run = {identity.ENVIRONMENT: given, "probes": {"dot": "a" * 64}}
    cuda = identity.record_inputs(run, "dot", device="cuda")[identity.ENVIRONMENT]
    cpu = identity.record_inputs(run, "dot", device="cpu")[identity.ENVIRONMENT]
    assert cuda == given
    assert cpu["set"] == {"CUDA_VISIBLE_DEVICES": "", "MY_BACKEND": "torch"}
    assert cpu["passed"] == identity.environment_identity({}, ("HIP_*",), {"HIP_VISIBLE_DEVICES": ""})["passed"]
    assert cpu["steering"] == given["steering"] == {"CUDA_LAUNCH_BLOCKING": "1"}


def test_a_site_folders_pth_files_count_together_by_their_names_and_contents(tmp_path: Path) -> None:
    """``folder/*.pth`` stands for every ``.pth`` file site runs there: one added, changed or removed is a change."""
    pth = tmp_path / identity.SITE_PTH_FILES
    assert identity.file_digest(pth) is None  # none there
    (tmp_path / "distutils-precedence.pth").write_text("import os\n")
    (tmp_path / "notes.txt").write_text("no .pth\n")
    one = identity.file_digest(pth)
    assert one is not None
    (tmp_path / "notes.txt").write_text("still no .pth\n")
    assert identity.file_digest(pth) == one
    (tmp_path / "zz_evil.pth").write_text("import os; os.environ['TM_X'] = 'b'\n")
    two = identity.file_digest(pth)
    assert two not in (None, one)
    (tmp_path / "zz_evil.pth").write_text("import os; os.environ['TM_X'] = 'c'\n")
    assert identity.file_digest(pth) not in (one, two)
    (tmp_path / "zz_evil.pth").unlink()
    assert identity.file_digest(pth) == one


def cgroups(tmp_path: Path, membership: str, mounts: str, limits: dict[str, str]) -> tuple[Path, Path]:
    """A ``/proc/self/cgroup`` saying ``membership``, a ``/proc/self/mountinfo`` saying ``mounts`` (``{fs}``: the
    folder of cgroup folders), and that folder holding ``limits`` (path → content)."""
    tmp_path.mkdir()
    told, mounted, root = tmp_path / "cgroup", tmp_path / "mountinfo", tmp_path / "fs"
    told.write_text(membership)
    mounted.write_text(mounts.format(fs=root))
    root.mkdir()
    for path, content in limits.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(content + "\n")
    return told, mounted


def test_the_gpu_driver_the_kernel_runs_is_part_of_the_state_a_pair_inherits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``cuda`` pair that found the driver too old runs again once it is upgraded: the driver's version, as the
    kernel says it, is in what every pair inherits; nothing is said where no driver is loaded."""
    version = tmp_path / "version"
    monkeypatch.setattr(identity, "NVIDIA_DRIVER", version)
    assert "nvidia_driver" not in identity.inherited()
    version.write_text("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\nGCC\n")
    said = identity.inherited()["nvidia_driver"]
    assert said == "NVRM version: NVIDIA UNIX x86_64 Kernel Module 550.54.15 Tue Mar 5 22:23:56 UTC 2024"


def test_the_memory_and_process_limits_of_a_pairs_control_group_are_part_of_the_state_it_inherits(
    tmp_path: Path,
) -> None:
    """A container's or a batch job's memory limit decides where an allocation is killed, as ``ulimit -v`` does: a
    probe that crashed under one runs again without it. The lowest limit of the group and those above it counts
    (cgroup v2, and v1 seen from inside a container: its own groups from the root of its mount, as the kernel says
    it); none is said where no group sets one, as a machine without limits said before."""
    v2 = cgroups(tmp_path / "v2", "0::/batch/job7\n", "30 23 0:26 / {fs} rw,nosuid - cgroup2 cgroup2 rw\n", {
        "memory.max": "max", "batch/memory.max": "2000000000", "batch/job7/memory.max": "max",
        "batch/job7/pids.max": "64",
    })  # fmt: skip
    assert identity.cgroup_limits(*v2) == {"cgroup_memory_max": "2000000000", "cgroup_pids_max": "64"}
    container = (
        "35 31 0:32 /host/x1 {fs}/memory ro,nosuid - cgroup cgroup rw,memory\n"
        "39 31 0:36 / {fs}/pids ro,nosuid - cgroup cgroup rw,pids\n"
        "41 31 0:38 / {fs}/unified rw - cgroup2 cgroup2 rw\n"
    )
    v1 = cgroups(tmp_path / "v1", "4:memory:/host/x1/trialc\n8:pids:/\n0::/\n", container, {
        "memory/memory.limit_in_bytes": "9223372036854771712", "memory/trialc/memory.limit_in_bytes": "999997440",
        "pids/pids.max": "max", "memory/host/x1/trialc/memory.limit_in_bytes": "7",  # the mount's root is /host/x1
    })  # fmt: skip
    assert identity.cgroup_limits(*v1) == {"cgroup_memory_max": "999997440"}
    free = cgroups(tmp_path / "free", "0::/user.slice\n", "30 23 0:26 / {fs} rw - cgroup2 cgroup2 rw\n", {
        "memory.max": "max", "user.slice/memory.max": "max",
    })  # fmt: skip
    assert identity.cgroup_limits(*free) == {}
    unseen = cgroups(
        tmp_path / "unseen", "4:memory:/elsewhere/job\n", container, {"memory/job/memory.limit_in_bytes": "5"}
    )
    assert identity.cgroup_limits(*unseen) == {}  # a group no mount here shows: not taken for another of its name
    assert identity.cgroup_limits(tmp_path / "no-such-file", tmp_path / "none") == {}


def test_a_folder_named_by_bytes_that_are_no_utf8_is_held_as_a_text_of_its_own() -> None:
    # the folder the pairs run from, where the ``torchmatrix`` command is started in one of Latin-1 names: its record is
    # written (no error as its result is sealed), and another such folder is another value
    held = identity.folder_text(Path(os.fsdecode(b"/srv/caf\xe9")))
    storedjson.sealed({"workdir": held})
    assert held != identity.folder_text(Path(os.fsdecode(b"/srv/caf\xe8")))
    assert identity.folder_text(Path("/srv/café")) == "/srv/café"
