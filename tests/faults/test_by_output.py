"""`bisect --by-output` on real torch: what counts as a change, read from real records of real scripts."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from torchmatrix.bisection.criteria import Criterion, observe
from torchmatrix.bisection.search import Observation
from torchmatrix.results import CellResult

from .conftest import Torch, Workspace

pytestmark = pytest.mark.integration

BITS = "import torch\nx = torch.tensor(0.3)\n{}print(hex(x.view(torch.int32).item()))\n"
ASSERTS = "import torch\nx = torch.tensor({}).item()\nassert x == 0.9, x\n"
SCRIPTS = {
    # The same last 64 KiB of one line over 64 KiB; its first character differs.
    "long_a": "import torch\nprint('a' + 'x' * 70000)\n",
    "long_b": "import torch\nprint('b' + 'x' * 70000)\n",
    "long_a_again": "import torch\nprint('a' + 'x' * 70000)\n",
    # A float's bit pattern: 0x3e99999a, and the next float up, 0x3e99999b.
    "bits": BITS.format(""),
    "bits_next": BITS.format("x = torch.nextafter(x, torch.tensor(1.0))\n"),
    "bits_again": BITS.format(""),
    # Both fail, with two different values in the message.
    "asserts": ASSERTS.format("0.9642857"),
    "asserts_other": ASSERTS.format("0.9642858"),
    # An address differs in every process; a random number too: its line is per-process.
    "addresses": "import torch\nprint(torch.Generator(), object())\n",
    "randomness": "import os, torch\nprint('seeded', torch.rand(1).item())\nprint(os.urandom(8).hex())\n",
    # The same in every pair a worker forks, and another in the next worker's: two runs share no worker.
    "parent": "import os\nprint('worker', os.getppid())\n",
    # Its first run prints one line, its second two: runs that cannot be one release.
    "counts": "import os\npath = {counter!r}\nopen(path, 'a').write('x')\n"
    "print('run\\n' * os.path.getsize(path), end='')\n",
}


@dataclass(frozen=True)
class Seen:
    result: CellResult

    def __call__(self, name: str) -> Observation:
        return observe(self.result, f"scripts/{name}.py", "cpu", Criterion(by_output=True))


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory, envdir: Path, suite_cache: Path, torch_here: Torch) -> Seen:
    """One cell of the torch here running each script twice (``repeat: 2``)."""
    workspace = Workspace(tmp_path_factory.mktemp("by_output"), envdir, suite_cache)
    (workspace.folder / "scripts").mkdir()
    for name, source in SCRIPTS.items():
        (workspace.folder / "scripts" / f"{name}.py").write_text(source.format(counter=str(workspace.folder / "n")))
    probes = ", ".join(f"scripts/{name}.py" for name in SCRIPTS)
    workspace.matrix_file.write_text(
        f"torch:\n  - {torch_here.entry}\nprobes: [{probes}]\ndevices: [cpu]\ntimeout: 60\nrepeat: 2\noutput: out\n"
    )
    run = workspace.nox("-s", "probe")
    assert run.returncode == 0, run.output
    (result,) = workspace.scan().results
    return Seen(result)


def test_a_change_before_the_last_64_kib_of_one_long_line_is_a_change(seen: Seen) -> None:
    a, b, again = seen("long_a"), seen("long_b"), seen("long_a_again")
    assert a.testable and b.testable and a.category != b.category and a.category == again.category
    assert a.detail.startswith("pass, prints more than 64 KiB, of which the end kept: ") and a.runs == 2


def test_hex_output_is_compared_as_printed(seen: Seen) -> None:
    bits, following, again = seen("bits"), seen("bits_next"), seen("bits_again")
    assert bits.detail == "pass, prints '0x3e99999a'" and following.detail == "pass, prints '0x3e99999b'"
    assert bits.category != following.category and bits.category == again.category


def test_an_exception_s_message_is_compared(seen: Seen) -> None:
    old, new = seen("asserts"), seen("asserts_other")
    assert old.detail.startswith("fail: AssertionError: 0.964285") and old.detail.endswith(", prints nothing")
    assert old.category != new.category


def test_only_what_is_per_process_is_no_change_and_a_line_that_differs_between_runs_is_per_process(
    seen: Seen,
) -> None:
    addresses, random, counts = seen("addresses"), seen("randomness"), seen("counts")
    assert addresses.testable and addresses.runs == 2, addresses.detail
    assert "object at 0x…>" in addresses.detail
    assert (random.testable, random.runs) == (True, 2), random.detail
    assert random.detail.endswith("(line 2 per-process: differ between runs)")
    assert random.detail.startswith("pass, prints 'seeded 0.49625658988952637' / '<differs between runs>'")
    parent = seen("parent")
    assert parent.detail == "pass, prints 'worker <differs between runs>' (line 1 per-process: differ between runs)"
    assert (counts.testable, counts.unstable, counts.runs) == (False, True, 2)
    # Its first run's top level ran twice, under pytest (asked whether the file holds tests) and as the script.
    assert counts.detail.endswith("of 2 runs; first difference: line 3: nothing → 'run'"), counts.detail


# Each prints what differs between two releases only where it is the cell's own: its version, its folders.
ACROSS = {
    "version": "import torch\nprint(torch.__version__)\nprint(f'torch v{torch.__version__}')\n",
    # torch's folder up to its lib/pythonX.Y: the two releases here need two Pythons, which a bisect never does
    "folders": "import os, sys, tempfile, torch\nprint(torch.__file__.split('/lib/')[0])\n"
    "print(sys.executable, os.environ['VIRTUAL_ENV'])\nprint(os.getcwd())\n"
    "print(os.path.basename(tempfile.gettempdir()), os.path.basename(os.path.dirname(os.getcwd())))\n"
    "print(os.path.relpath(os.getcwd(), os.path.join(os.path.dirname(os.path.dirname(os.getcwd())), 'a', 'b')))\n",
    "reprs": "import weakref, torch\nt = torch.ones(1)\nprint(weakref.ref(t), compile('1', 'f', 'eval'))\n",
}
FAILING_TEST = """
import torch

def test_message():
    print(torch.__version__, torch.ones(2))
    raise RuntimeError("All tensors must have the same dtype")
"""


@pytest.fixture(scope="module")
def releases(
    tmp_path_factory: pytest.TempPathFactory, envdir: Path, suite_cache: Path, torch_here: Torch, torch_other: Torch
) -> list[CellResult]:
    """Two cells, of two releases, running each of :data:`ACROSS` and a test that prints and fails."""
    workspace = Workspace(tmp_path_factory.mktemp("by_output_across"), envdir, suite_cache)
    for folder in ("scripts", "tests"):
        (workspace.folder / folder).mkdir()
    for name, source in ACROSS.items():
        (workspace.folder / "scripts" / f"{name}.py").write_text(source)
    # Both releases named as text, alike in every cell: in neither is it a change torch made.
    literal = f"print('fixed in {torch_here.version}, broken in v{torch_other.version}')\n"
    (workspace.folder / "scripts" / "literal.py").write_text(literal)
    (workspace.folder / "tests" / "test_prints.py").write_text(FAILING_TEST)
    probes = ", ".join([*(f"scripts/{name}.py" for name in [*ACROSS, "literal"]), "tests/test_prints.py"])
    workspace.matrix_file.write_text(
        f"torch:\n  - {torch_other.entry}\n  - {torch_here.entry}\nprobes: [{probes}]\ndevices: [cpu]\n"
        "timeout: 60\noutput: out\n"
    )
    run = workspace.nox("-s", "probe")
    assert run.returncode == 0, run.output
    found = workspace.scan().results
    assert len(found) == 2
    return list(found)


@pytest.mark.parametrize(
    "name", [*(f"scripts/{name}.py" for name in [*ACROSS, "literal"]), "tests/test_prints.py::test_message"]
)
def test_what_is_the_cell_s_own_is_no_change_between_releases(releases: list[CellResult], name: str) -> None:
    old, new = (observe(result, name, "cpu", Criterion(by_output=True)) for result in releases)
    assert old.testable and old.category == new.category, (old.detail, new.detail)
    assert "0x7" not in old.detail and ".nox" not in old.detail


def test_a_test_s_failure_is_compared_by_its_message_and_what_it_printed(releases: list[CellResult]) -> None:
    seen = observe(releases[0], "tests/test_prints.py::test_message", "cpu", Criterion(by_output=True))
    assert seen.detail == (
        "fail: RuntimeError: All tensors must have the same dtype, prints '<torch version> tensor([1., 1.])'"
    )
