"""`nox -s bisect -- …`: its arguments, and the answer a person reads at the end."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from packaging.version import Version

from torchmatrix import releases, results
from torchmatrix.bisection import Observation, Status, Step, Verdict
from torchmatrix.core import Kind, Outcome, Probe, Record
from torchmatrix.criteria import Criterion
from torchmatrix.errors import UsageError
from torchmatrix.matrix import Matrix
from torchmatrix.sessions.bisect import Request, answer, parse, run

from .test_plan import THIS_MACHINE
from .test_project import project
from .test_results import result

MATRIX = Matrix(
    Path("/m/matrix.yaml"),
    (),
    (Probe("autograd_dot", Path("/m/probes/autograd_dot.py")), Probe("batched_matmul", Path("/m/b.py"))),
    ("cpu", "mps"),
    60.0,
    Path("/m/reports"),
    None,
    "https://pypi.org/simple",
    None,
    (),
)


def test_the_arguments_become_a_request() -> None:
    assert parse(["autograd_dot", "--from", "1.9", "--to", "1.12.1"], MATRIX) == Request(
        "autograd_dot", Version("1.9.0"), Version("1.12.1")
    )
    request = parse(
        ["batched_matmul", "--from=2.1.0rc1", "--to", "2.2.0", "--device", "mps", "--metric", "max_abs_diff",
         "--below", "1e-6", "--pre"],
        MATRIX,
    )  # fmt: skip
    assert request == Request(
        "batched_matmul", Version("2.1.0rc1"), Version("2.2.0"), "mps", Criterion("max_abs_diff", 1e-6, False), True
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "the following arguments are required: PROBE, --from, --to"),
        (["autograd_dott", "--from", "1.9.0", "--to", "1.12.1"], "did you mean 'autograd_dot'?"),
        (["autograd_dot", "--from", "1.9.0", "--to", "1.12.1", "--device", "cuda"], "does not run on cuda"),
        (["autograd_dot", "--from", "1.9.0", "--to", "1.12.1", "--device", "tpu"], "invalid choice: 'tpu'"),
        (["autograd_dot", "--from", "latest", "--to", "1.12.1"], "--from 'latest' is not a torch release"),
        (["autograd_dot", "--from", "1.12.1", "--to", "1.12.1"], "--from 1.12.1 must be older than --to 1.12.1"),
        (["autograd_dot", "--from", "1.12.1", "--to", "1.9.0"], "must be older"),
        (["autograd_dot", "--from", "2.1.0rc1", "--to", "2.2.0"], "--from 2.1.0rc1 is a pre-release; add --pre"),
        (["autograd_dot", "--from", "1.9.0", "--to", "1.12.1", "--metric", "x"], "--metric NAME goes with"),
        (["autograd_dot", "--from", "1.9.0", "--to", "1.12.1", "--above", "1"], "--metric NAME goes with"),
        (["autograd_dot", "--from", "1.9.0", "--to", "1.12.1", "--metric", "x", "--above", "nan"], "finite"),
        (
            ["autograd_dot", "--from", "1.9.0", "--to", "1.12.1", "--metric", "x", "--above", "1", "--below", "2"],
            "not allowed with argument",
        ),
        (["autograd_dot", "--from", "1.9.0", "--to", "1.12.1", "--fro", "1"], "unrecognized arguments: --fro"),
        (
            ["autograd_dot", "--from", "1.9.0", "--to", "1.12.1", "--metric", "x", "--above", "1", "--by-output"],
            "choose one",
        ),
        (["nowhere.py", "--from", "1.9.0", "--to", "1.12.1"], "nor a script here"),
    ],  # fmt: skip
)
def test_a_bad_argument_is_one_message_with_the_usage(argv: list[str], message: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse(argv, MATRIX)
    assert message in str(caught.value)
    assert str(caught.value).endswith("usage: nox -s bisect -- PROBE --from OLD --to NEW [--device cpu] "
                                      "[--metric NAME (--above X | --below X) | --by-output] [--pre]")  # fmt: skip
    assert caught.value.exit_code == 2


V = [Version(v) for v in ("1.9.0", "1.10.0", "1.10.1", "1.11.0", "1.12.0")]
OLD, NEW = Observation("fail", "fail (wrong: y)"), Observation("pass", "pass")
REQUEST = Request("autograd_dot", V[0], V[-1])


def verdict(status: Status, steps: list[tuple[int, Observation]], lo: int | None = None, hi: int | None = None):
    return Verdict(
        status,
        tuple(V),
        tuple(Step(V[i], seen, True) for i, seen in steps),
        5,
        V[lo] if lo is not None else None,
        V[hi] if hi is not None else None,
    )


def test_the_answer_names_the_first_release_with_news_outcome_and_the_last_with_olds() -> None:
    found = verdict(Status.FOUND, [(0, OLD), (4, NEW), (2, OLD), (3, NEW)], 2, 3)
    assert answer(found, REQUEST) == [
        "first release with NEW's outcome (pass): torch 1.11.0",
        "last release with OLD's outcome (fail): torch 1.10.1",
    ]


def test_a_range_names_every_release_that_bounds_it_and_why() -> None:
    untestable = Observation(None, "no-interpreter: torch 1.10.1 needs Python 3.6–3.9")
    bounded = verdict(Status.RANGE, [(0, OLD), (4, NEW), (2, untestable), (3, NEW)], 1, 3)
    assert answer(bounded, REQUEST) == [
        "first release with NEW's outcome (pass): one of 1.10.1, 1.11.0: "
        "the answer is bounded by releases that could not be told apart",
        "    1.10.1: could not be tested: no-interpreter: torch 1.10.1 needs Python 3.6–3.9",
        "last release with OLD's outcome (fail): torch 1.10.0",
    ]


def test_same_outcome_at_both_ends_and_an_untestable_end_say_so() -> None:
    same = verdict(Status.SAME, [(0, NEW), (4, NEW)])
    assert answer(same, REQUEST) == [
        "torch 1.9.0 and 1.12.0 both show pass on cpu: nothing to bisect; "
        "widen the range, or compare a metric (--metric)"
    ]
    by_metric = Request("batched_matmul", V[0], V[-1], criterion=Criterion("max_abs_diff", 1e-6))
    below = Observation("not above 1e-06", "max_abs_diff = 0 (not above 1e-06)")
    assert answer(verdict(Status.SAME, [(0, below), (4, below)]), by_metric) == [
        "torch 1.9.0 and 1.12.0 both show max_abs_diff not above 1e-06 on cpu: nothing to bisect; widen the range"
    ]
    dead = verdict(Status.UNTESTABLE_END, [(0, OLD), (4, Observation(None, "install-error: no space left"))])
    assert answer(dead, REQUEST) == [
        "torch 1.12.0 (--to) could not be tested: install-error: no space left; choose another --to"
    ]


class Session:
    """What the bisect session uses of nox's Session: its arguments, and where it speaks."""

    def __init__(self, *posargs: str) -> None:
        self.posargs = list(posargs)
        self.said: list[str] = []

    def log(self, message: str) -> None:
        self.said.append(message)

    warn = log

    def error(self, message: str) -> None:
        raise SessionError(message)


class SessionError(Exception):
    pass


def offline_index(cache: Path, *filenames: str) -> releases.Listing:
    """Fill the listing cache as a fetch of the index would, so the session reads it without a network."""
    body = json.dumps({"files": [{"filename": name} for name in filenames]})
    return releases.listing(
        "https://pypi.org/simple",
        fetch=lambda url: ("application/vnd.pypi.simple.v1+json", body),
        cache=cache / "index",
    )


def store(here, version: str, outcome: Outcome) -> None:
    cell = here.plan_release(Version(version))
    inputs = here.inputs(cell)
    records = (Record("autograd_dot", "cpu", outcome, {}, "", 0.1, results.record_inputs(inputs, "autograd_dot")),)
    found = result(version, cell_id=cell.id, python=cell.python, machine=here.machine, records=records)
    results.write(here.results_dir, dataclasses.replace(found, inputs=inputs))


def test_a_bisection_from_stored_results_and_the_plan_builds_nothing(tmp_path: Path, private_cache: Path) -> None:
    listing = offline_index(
        private_cache,
        "torch-1.11.0-cp310-cp310-manylinux1_x86_64.whl",
        "torch-1.11.1-cp39-cp39-manylinux1_x86_64.whl",  # no Python 3.9 here: the plan rules it out
        "torch-1.12.0-cp310-cp310-manylinux1_x86_64.whl",
        "torch-1.12.1-cp310-cp310-manylinux1_x86_64.whl",
        "torch-1.13.0-cp310-cp310-win_amd64.whl",  # not for this platform
    )
    only_310 = tuple(python for python in THIS_MACHINE if python.minor == "3.10")
    here = dataclasses.replace(project(tmp_path), listing=listing, interpreters=only_310)
    store(here, "1.11.0", Outcome.FAIL)
    store(here, "1.12.0", Outcome.PASS)
    store(here, "1.12.1", Outcome.PASS)
    session = Session("autograd_dot", "--from", "1.11.0", "--to", "1.12.1")
    run(here, session, tmp_path / "noxfile.py")  # a build would run nox on this missing noxfile, and fail

    assert session.said[0].startswith("bisect autograd_dot on cpu by outcome: 4 releases from 1.11.0 to 1.12.1")
    assert "4 known already, at most 4 cells to build" in session.said[0]
    assert session.said[-4:] == [
        f"built 0 of at most 4 cells; summary: {tmp_path}/reports/bisect/ci-box/autograd_dot-cpu-1.11.0-1.12.1.json",
        "first release with NEW's outcome (pass): one of 1.11.1, 1.12.0: "
        "the answer is bounded by releases that could not be told apart",
        "    1.11.1: could not be tested: no-interpreter: torch 1.11.1 needs Python 3.9; found 3.10; "
        "install one, e.g. `uv python install 3.9` or `pyenv install 3.9`",
        "last release with OLD's outcome (fail): torch 1.11.0",
    ]
    summary = json.loads((tmp_path / "reports/bisect/ci-box/autograd_dot-cpu-1.11.0-1.12.1.json").read_text())
    assert summary["candidates"] == ["1.11.0", "1.11.1", "1.12.0", "1.12.1"]
    assert (summary["status"], summary["last_old"], summary["first_new"]) == ("range", "1.11.0", "1.12.0")
    assert [(step["version"], step["how"], step["category"]) for step in summary["steps"]] == [
        ("1.11.0", "stored", "fail"),
        ("1.12.1", "stored", "pass"),
        ("1.11.1", "planned", None),
        ("1.12.0", "stored", "pass"),
    ]


def test_same_outcome_at_both_ends_ends_the_session_with_an_error(tmp_path: Path, private_cache: Path) -> None:
    listing = offline_index(
        private_cache, *(f"torch-{v}-cp310-cp310-manylinux1_x86_64.whl" for v in ("1.11.0", "1.12.1"))
    )
    here = dataclasses.replace(project(tmp_path), listing=listing)
    store(here, "1.11.0", Outcome.PASS)
    store(here, "1.12.1", Outcome.PASS)
    with pytest.raises(SessionError, match="torch 1.11.0 and 1.12.1 both show pass on cpu: nothing to bisect"):
        run(here, Session("autograd_dot", "--from", "1.11.0", "--to", "1.12.1"), tmp_path / "noxfile.py")
    summary = json.loads((tmp_path / "reports/bisect/ci-box/autograd_dot-cpu-1.11.0-1.12.1.json").read_text())
    assert summary["status"] == "same" and summary["built"] == 0


def test_an_end_the_index_lacks_is_a_usage_error_naming_the_nearest_releases(
    tmp_path: Path, private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unreachable(url: str) -> tuple[str, str]:
        raise OSError("network is unreachable")

    monkeypatch.setattr(releases, "http_fetch", unreachable)  # a missing release refreshes the listing: offline here
    offline_index(
        private_cache, *(f"torch-{v}-cp310-cp310-manylinux1_x86_64.whl" for v in ("1.11.0", "1.12.1", "1.13.0"))
    )
    with pytest.raises(
        UsageError, match=r"--to 1.12.5: the index lists no torch 1.12.5; the releases around it are 1.12.1 and 1.13.0"
    ):
        run(project(tmp_path), Session("autograd_dot", "--from", "1.11.0", "--to", "1.12.5"), tmp_path / "noxfile.py")


def test_a_script_the_matrix_does_not_list_runs_alone_and_a_test_goes_by_its_node_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # where nox runs the session: the noxfile's folder
    (tmp_path / "repro.py").write_text("import torch\nprint(2 * torch.dot(torch.arange(4.0), torch.arange(4.0)))\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_dot.py").write_text("def test_dot():\n    pass\n")
    tests = Probe("tests/", tmp_path / "tests", kind=Kind.PYTEST, root=tmp_path)
    matrix = dataclasses.replace(MATRIX, file=tmp_path / "matrix.yaml", probes=(*MATRIX.probes, tests))
    script = parse(["repro.py", "--from", "1.9.0", "--to", "1.12.1", "--by-output"], matrix)
    assert (script.probe, script.alone, script.criterion) == (
        "repro",
        str(tmp_path / "repro.py"),
        Criterion(by_output=True),
    )
    test = parse(["tests/test_dot.py::test_dot", "--from", "1.9.0", "--to", "1.12.1"], matrix)
    assert (test.probe, test.alone) == ("tests/test_dot.py::test_dot", None)  # the matrix runs it
    with pytest.raises(UsageError, match="repro runs on cpu alone, not on mps"):
        parse(["repro.py", "--from", "1.9.0", "--to", "1.12.1", "--device", "mps"], matrix)
    with pytest.raises(UsageError, match="holds tests: name one of them"):
        parse(
            ["tests/test_dot.py", "--from", "1.9.0", "--to", "1.12.1"],
            dataclasses.replace(matrix, probes=MATRIX.probes),
        )


def test_by_output_the_answer_names_the_first_line_printed_that_changed() -> None:
    versions = [Version("1.9.1"), Version("1.10.0")]
    old = Observation("pass\ntensor([0.9609], dtype=torch.bfloat16)\ntensor([0.9643])", "")
    new = Observation("pass\ntensor([0.9648], dtype=torch.bfloat16)\ntensor([0.9643])", "")
    steps = (Step(versions[0], old, True), Step(versions[1], new, True))
    verdict = Verdict(Status.FOUND, tuple(versions), steps, 3, last_old=versions[0], first_new=versions[1])
    request = Request("sigmoid", versions[0], versions[1], criterion=Criterion(by_output=True))
    assert answer(verdict, request) == [
        "first release with NEW's outcome (pass, prints 'tensor([0.9648], dtype=torch.bfloat16)' / "
        "'tensor([0.9643])'): torch 1.10.0",
        "last release with OLD's outcome (pass, prints 'tensor([0.9609], dtype=torch.bfloat16)' / "
        "'tensor([0.9643])'): torch 1.9.1",
        "what it printed, from OLD to NEW: line 1: 'tensor([0.9609], dtype=torch.bfloat16)' → "
        "'tensor([0.9648], dtype=torch.bfloat16)'",
    ]
