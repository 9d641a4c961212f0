"""`nox -s bisect -- …`: its arguments, and the answer a person reads at the end."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from pathlib import Path

import pytest
from packaging.version import Version

from torchmatrix import identity, results
from torchmatrix.bisection import criteria, summaries
from torchmatrix.bisection.criteria import Criterion
from torchmatrix.bisection.request import USAGE, BisectRequest, in_order, parse
from torchmatrix.bisection.search import Observation, Status, Step, Verdict
from torchmatrix.bisection.words import answer
from torchmatrix.core import Kind, Outcome, Probe, Record
from torchmatrix.errors import UsageError
from torchmatrix.index import releases
from torchmatrix.matrix import Matrix, TorchEntry
from torchmatrix.project import Project
from torchmatrix.sessions import childnox
from torchmatrix.sessions.bisect import _Bisection, _result_handed_back, run
from torchmatrix.sessions.handback import HandBack, Stored
from torchmatrix.worker import repeats
from torchmatrix.worker.printed import Printed

from ..conftest import rewrite
from .test_plan import THIS_MACHINE
from .test_project import project
from .test_results import result

READ_NOTHING = {identity.READ: {}}
"""What the runner says a record's pair read, where it read no file: every record it makes says it."""

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
    assert parse(["autograd_dot", "--from", "1.9", "--to", "1.12.1"], MATRIX) == BisectRequest(
        ("autograd_dot",), ("cpu",), Version("1.9.0"), Version("1.12.1")
    )
    request = parse(
        ["batched_matmul", "--from=2.1.0rc1", "--to", "2.2.0", "--device", "mps", "--metric", "max_abs_diff",
         "--below", "1e-6", "--pre", "--repeat", "5"],
        MATRIX,
    )  # fmt: skip
    assert request == BisectRequest(
        ("batched_matmul",), ("mps",), Version("2.1.0rc1"), Version("2.2.0"), Criterion("max_abs_diff", 1e-6, False),
        pre=True, repeat=5,
    )  # fmt: skip


def test_all_asks_of_every_probe_on_every_device_or_those_named_from_any_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "wheels").mkdir()
    nightly = "https://download.pytorch.org/whl/nightly/cpu"
    every = parse(
        ["--all", "--pre", "--from", "2.6.0.dev20241001", "--to", "2.6.0.dev20241031", "--index-url", nightly + "/",
         "--find-links", "wheels", "--find-links", "https://example.org/torch.html"],
        MATRIX,
    )  # fmt: skip
    assert (every.probes, every.devices, every.every) == (("autograd_dot", "batched_matmul"), ("cpu", "mps"), True)
    assert every.keys == [("autograd_dot", "cpu"), ("autograd_dot", "mps"), ("batched_matmul", "cpu"),
                          ("batched_matmul", "mps")]  # fmt: skip
    assert every.index_url == nightly
    assert every.find_links == (str(Path("wheels").absolute()), "https://example.org/torch.html")
    assert every.describe() == "every probe (autograd_dot, batched_matmul) on cpu, mps by outcome"
    some = parse(["--all", "--device", "mps", "--from", "1.9.0", "--to", "2.0.0"], MATRIX)
    assert some.devices == ("mps",) and some.index_url is None and some.find_links is None


def test_a_check_narrows_the_outcome_or_the_metric_and_a_metric_without_threshold_is_its_value() -> None:
    def criterion(*words: str) -> Criterion:
        return parse(["autograd_dot", "--from", "1.9.0", "--to", "1.12.1", *words], MATRIX).criterion

    assert criterion("--check", "nn.functional.conv2d") == Criterion(check="nn.functional.conv2d")
    assert criterion("--check", "add", "--metric", "error", "--above", "1") == Criterion("error", 1.0, True, "add")
    by_value = criterion("--check", "add", "--metric", "observed")
    assert by_value == Criterion("observed", None, False, "add") and by_value.by_value
    assert by_value.describe() == "by the value of observed of check 'add'"


def test_a_script_that_is_not_there_is_said_with_the_closest_one_where_the_pairs_run(tmp_path: Path) -> None:
    (tmp_path / "repro.py").write_text("print(1)\n")
    bare = dataclasses.replace(MATRIX, probes=(), workdir=tmp_path)
    with pytest.raises(UsageError, match=r"nor a script here; did you mean 'repro.py'\?\n"):
        parse(["repr.py", "--from", "1.9.0", "--to", "1.12.1"], bare)


def test_a_find_links_folder_that_is_not_there_is_refused_first_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    ends = ["autograd_dot", "--from", "8.0.0", "--to", "8.10.0"]
    with pytest.raises(UsageError) as caught:
        parse([*ends, "--find-links", "/nonexistent"], MATRIX)
    assert str(caught.value).startswith("--find-links '/nonexistent': the folder does not exist; name a folder")
    assert caught.value.exit_code == 2 and str(caught.value).endswith(f"usage: {USAGE}")
    with pytest.raises(UsageError, match=rf"--find-links 'wheels': the folder \({re.escape(str(tmp_path))}/wheels\) "):
        parse([*ends, "--find-links", "wheels"], MATRIX)
    (tmp_path / "wheels").write_text("")
    with pytest.raises(UsageError, match="--find-links 'wheels': .* is not a folder"):
        parse([*ends, "--find-links", "wheels"], MATRIX)
    with pytest.raises(UsageError, match="--find-links 'file:///nonexistent/w': the folder .* does not exist"):
        parse([*ends, "--find-links", "file:///nonexistent/w"], MATRIX)
    listed = dataclasses.replace(MATRIX, find_links=("/m/wheels",))
    with pytest.raises(UsageError, match=r"matrix.yaml's find_links: entry '/m/wheels': the folder does not exist"):
        parse(ends, listed)
    (tmp_path / "here").mkdir()
    assert parse([*ends, "--find-links", "here"], listed).find_links == (str(tmp_path / "here"),)
    assert parse([*ends, "--find-links", "https://example.org/torch.html"], MATRIX).find_links is not None


def test_a_script_that_is_not_there_is_never_taken_for_the_noxfile(tmp_path: Path) -> None:
    (tmp_path / "noxfile.py").write_text("import nox\n")
    bare = dataclasses.replace(MATRIX, probes=(), workdir=tmp_path)
    with pytest.raises(UsageError) as caught:
        parse(["nope.py", "--from", "1.9.0", "--to", "1.12.1"], bare)
    assert "noxfile.py" not in str(caught.value)
    assert "nor a script here; this matrix runs no probe; or give a script's path\n" in str(caught.value)
    (tmp_path / "beta.py").write_text("print(1)\n")
    with pytest.raises(UsageError, match=r"nor a script here; did you mean 'beta.py'\?\n"):
        parse(["bet.py", "--from", "1.9.0", "--to", "1.12.1"], bare)


def test_a_matrix_of_no_probe_says_so_rather_than_an_empty_list() -> None:
    bare = dataclasses.replace(MATRIX, probes=())  # the torchmatrix command's default matrix
    with pytest.raises(UsageError, match=r"nor a script here; this matrix runs no probe; or give a script's path\n"):
        parse(["elsewhere/x.py", "--from", "1.9.0", "--to", "1.12.1"], bare)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "the following arguments are required: --from, --to"),
        (["--from", "1.9.0", "--to", "1.12.1"], "name one PROBE, or --all for every probe of matrix.yaml, not both"),
        (["autograd_dot", "--all", "--from", "1.9.0", "--to", "1.12.1"], "name one PROBE, or --all"),
        (["autograd_dot", "--from", "1.9.0", "--to", "1.12.1", "--device", "cpu", "--device", "mps"], "--all takes"),
        (["--all", "--from", "1.9.0", "--to", "1.12.1", "--device", "cuda"], "does not run on cuda"),
        (["autograd_dot", "--from", "1.9.0", "--to", "1.12.1", "--repeat", "0"], "'0' is not a number of runs"),
        (["autograd_dot", "--from", "1.9.0", "--to", "1.12.1", "--index-url", "--no-index"], "expected one argument"),
        (["autograd_dot", "--from", "1.9.0", "--to", "1.12.1", "--index-url", "ftp://x"], "not an http(s) or file URL"),
        (["autograd_dot", "--from", "1.9.0", "--to", "1.12.1", "--find-links=-f"], "looks like an installer option"),
        (["autograd_dot", "--from", "1.9.0", "--to", "1.12.1", "--find-links", "my wheels"], "holds a space"),
        (["autograd_dott", "--from", "1.9.0", "--to", "1.12.1"], "did you mean 'autograd_dot'?"),
        (["autograd_dot", "--from", "1.9.0", "--to", "1.12.1", "--device", "cuda"], "does not run on cuda"),
        (["autograd_dot", "--from", "1.9.0", "--to", "1.12.1", "--device", "tpu"], "invalid choice: 'tpu'"),
        (["autograd_dot", "--from", "latest", "--to", "1.12.1"], "--from 'latest' is not a torch release"),
        (["autograd_dot", "--from", "2.1.0rc1", "--to", "2.2.0"], "--from 2.1.0rc1 is a pre-release; add --pre"),
        (["autograd_dot", "--from", "1.9.0", "--to", "1.12.1", "--metric", ""], "--metric needs a name"),
        (["autograd_dot", "--from", "1.9.0", "--to", "1.12.1", "--check", " "], "--check needs a name"),
        (["autograd_dot", "--from", "1.9.0", "--to", "1.12.1", "--above", "1"], "--above X and --below X go with"),
        (["autograd_dot", "--from", "2.1.0", "--to", "2.2.0.dev20231101"], "--to 2.2.0.dev20231101 is a pre-release"),
        (["autograd_dot", "--from", "1.9.0", "--to", "1.12.1", "--metric", "x", "--above", "nan"], "finite"),
        (
            ["autograd_dot", "--from", "1.9.0", "--to", "1.12.1", "--metric", "x", "--above", "1", "--below", "2"],
            "not allowed with argument",
        ),
        (["autograd_dot", "--from", "1.9.0", "--to", "1.12.1", "--fro", "1"], "unknown option --fro: did you mean"),
        (["autograd_dot", "--frm", "1.9.0", "--to", "1.12.1"], "unknown option --frm: did you mean '--from'?\n  usage"),
        (["autograd_dot", "--from=1.9.0", "--too=1.12.1"], "unknown option --too: did you mean '--to'?"),
        (["--all", "--from", "1.9.0", "--to", "1.12.1", "--xyzzy"], "unknown option --xyzzy: --help lists the options"),
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
    assert str(caught.value).endswith(f"usage: {USAGE}")
    assert USAGE == (
        "nox -s bisect -- (PROBE | --all) --from OLD --to NEW [--device D] [--check NAME] "
        "[--metric NAME [--above X | --below X] | --by-output] [--pre] [--repeat N] "
        "[--index-url URL] [--find-links DIR]"
    )
    assert caught.value.exit_code == 2
    with pytest.raises(UsageError) as typed:  # started by the torchmatrix command: its words, not nox's
        parse(argv, MATRIX, "torchmatrix")
    assert str(typed.value).endswith(f"usage: torchmatrix bisect {USAGE.removeprefix('nox -s bisect -- ')}")


V = [Version(v) for v in ("1.9.0", "1.10.0", "1.10.1", "1.11.0", "1.12.0")]
OLD, NEW = Observation("fail", "fail (wrong: y)"), Observation("pass", "pass")
REQUEST = BisectRequest(("autograd_dot",), ("cpu",), V[0], V[-1])


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
        "first release with NEW's outcome (pass): torch 1.11.0 (1 run)",
        "last release with OLD's outcome (fail): torch 1.10.1 (1 run)",
    ]
    five = verdict(Status.FOUND, [(0, OLD), (4, NEW), (2, dataclasses.replace(OLD, runs=5)), (3, NEW)], 2, 3)
    assert answer(five, REQUEST)[1] == "last release with OLD's outcome (fail): torch 1.10.1 (5 runs)"


def test_a_range_names_every_release_that_bounds_it_and_why() -> None:
    untestable = Observation(None, "no-interpreter: torch 1.10.1 needs Python 3.6–3.9")
    bounded = verdict(Status.RANGE, [(0, OLD), (4, NEW), (2, untestable), (3, NEW)], 1, 3)
    assert answer(bounded, REQUEST) == [
        "first release with NEW's outcome (pass): one of 1.10.1, 1.11.0: "
        "the answer is bounded by releases that could not be told apart",
        "    1.10.1: could not be tested: no-interpreter: torch 1.10.1 needs Python 3.6–3.9",
        "last release with OLD's outcome (fail): torch 1.10.0 (1 run)",
    ]


def test_same_outcome_at_both_ends_and_an_untestable_end_say_so() -> None:
    same = verdict(Status.SAME, [(0, NEW), (4, NEW)])
    assert answer(same, REQUEST) == [
        "torch 1.9.0 and 1.12.0 both show pass on cpu: nothing to bisect; "
        "widen the range, or compare a metric (--metric)"
    ]
    by_metric = BisectRequest(("batched_matmul",), ("cpu",), V[0], V[-1], criterion=Criterion("max_abs_diff", 1e-6))
    below = Observation("not above 1e-06", "max_abs_diff = 0 (not above 1e-06)")
    assert answer(verdict(Status.SAME, [(0, below), (4, below)]), by_metric) == [
        "torch 1.9.0 and 1.12.0 both show max_abs_diff not above 1e-06 on cpu: nothing to bisect; widen the range"
    ]
    dead = verdict(Status.UNTESTABLE_END, [(0, OLD), (4, Observation(None, "install-error: no space left"))])
    assert answer(dead, REQUEST) == [
        "torch 1.12.0 (--to) could not be tested: install-error: no space left; make it install (its log says why), "
        "or choose another --to"
    ]
    cases = [f"t.py::test_grad[{n}]" for n in (1, 2)]
    several = Observation(None, criteria.not_one_test("t.py::test_grad", cases))
    assert answer(verdict(Status.UNTESTABLE_END, [(0, several)]), REQUEST) == [
        "torch 1.9.0 (--from): t.py::test_grad is not one test but holds 2 (t.py::test_grad[1], t.py::test_grad[2]): "
        "name one of them"
    ]  # another --from holds the same cases: no end helps
    refused = Observation("error", "error (pytest exited with code 4 before running a test: ERROR: not found: "
                                   "t.py::test_nop)", refused=True)  # fmt: skip
    assert answer(verdict(Status.SAME, [(0, refused), (4, refused)]), REQUEST) == [
        "torch 1.9.0 and 1.12.0 both refuse it on cpu, as pytest did: error (pytest exited with code 4 before running "
        "a test: ERROR: not found: t.py::test_nop); correct the name or the option (`pytest --collect-only -q FILE` "
        "lists a file's tests)"
    ]  # no wider range helps
    every = dataclasses.replace(REQUEST, every=True)  # --all names nothing: no name to change, and no --all to add
    assert answer(verdict(Status.UNTESTABLE_END, [(0, several)]), every) == [
        "torch 1.9.0 (--from): t.py::test_grad is not one test but holds 2 (t.py::test_grad[1], t.py::test_grad[2])"
    ]
    skipped = Observation(None, "skipped: the script exited with 125 (as for git bisect run: it does not apply to "
                                "this release)")  # fmt: skip
    assert answer(verdict(Status.UNTESTABLE_END, [(0, skipped)]), REQUEST) == [
        "torch 1.9.0 (--from) could not be tested: skipped: the script exited with 125 (as for git bisect run: it "
        "does not apply to this release); choose another --from, or a script that applies"
    ]
    module = criteria.observe(
        result(records=(Record("autograd_dot", "cpu", Outcome.PASS, {}, "", 0.1),)),
        "autograd_dot",
        "cpu",
        Criterion(by_output=True),
    )
    assert answer(verdict(Status.UNTESTABLE_END, [(0, module)]), REQUEST) == [
        "torch 1.9.0 (--from) could not be tested: pass, no output recorded: a run(device) probe's record keeps what "
        "run() returned, not what it printed; compare it by outcome, or by --metric"
    ]  # every release's record of it is alike: no other --from helps
    flaky = Observation(None, "unstable: 3 pass, 2 fail", runs=5, unstable=True)
    assert answer(verdict(Status.UNTESTABLE_END, [(0, flaky)]), REQUEST) == [
        "torch 1.9.0 (--from) is unstable: 3 pass, 2 fail over 5 runs; an end must give one answer: raise --repeat "
        "to see how often each outcome comes, or compare a metric with a threshold its noise stays on one side of "
        "(--metric NAME --above X)"
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


def summary_file(folder: Path, named: str) -> Path:
    """The one summary whose name starts with ``named`` (its digest follows)."""
    (found,) = (folder / "reports/bisect/ci-box").glob(f"{named}-*.json")
    return found


def offline_index(cache: Path, *filenames: str) -> releases.Listing:
    """Fill the listing cache as a fetch of the index would, so the session reads it without a network."""
    body = json.dumps({"files": [{"filename": name} for name in filenames]})
    return releases.listing(
        "https://pypi.org/simple",
        fetch=lambda url: ("application/vnd.pypi.simple.v1+json", body),
        cache=cache / "index",
    )


def git(version: str) -> str:
    """A made-up git hash per release, as a build's fingerprint holds one."""
    return hashlib.sha1(version.encode()).hexdigest()


def store(
    here,
    version: str,
    *outcomes: Outcome | Record,
    probes: tuple[str, ...] = ("autograd_dot",),
    python=None,
    packages: dict[str, str | None] | None = None,
) -> None:
    """A stored result of ``version`` on cpu, up to date: one outcome (or record) per probe; on ``python``, as a
    bisect holding it runs the release; with the installed ``packages`` its environment held."""
    cell = here.plan_release(Version(version), python=python)
    inputs = here.inputs(cell)
    made = [
        each if isinstance(each, Record) else Record(probe, "cpu", each, {}, "", 0.1)
        for probe, each in zip(probes, outcomes, strict=True)
    ]
    records = tuple(here.identified(inputs, dataclasses.replace(r, inputs=READ_NOTHING)) for r in made)
    environment = {"torch": version, "git_version": git(version), **({"packages": packages} if packages else {})}
    found = result(version, cell_id=cell.id, python=cell.python, python_request=cell.python_request,
                   machine=here.machine, records=records)  # fmt: skip
    results.write(here.results_dir, dataclasses.replace(found, inputs=inputs, environment=environment))


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
    assert session.said[-5:] == [
        "built 0 of at most 4 cells (the 4 candidates; 2 ends + 1 × ⌈log₂ 4⌉ = 4); "
        f"summary: {summary_file(tmp_path, 'autograd_dot-cpu-1.11.0-1.12.1')}",
        "first release with NEW's outcome (pass): one of 1.11.1, 1.12.0: "
        "the answer is bounded by releases that could not be told apart",
        "    1.11.1: could not be tested: no-interpreter: torch 1.11.1 needs Python 3.9; found 3.10; "
        "install one, e.g. `uv python install 3.9` or `pyenv install 3.9`",
        "last release with OLD's outcome (fail): torch 1.11.0 (1 run)",
        f"commits from torch 1.11.0 ({git('1.11.0')}) to 1.12.0 ({git('1.12.0')}): "
        f"https://github.com/pytorch/pytorch/compare/{git('1.11.0')}...{git('1.12.0')}",
    ]
    written = summary_file(tmp_path, "autograd_dot-cpu-1.11.0-1.12.1")
    summary = json.loads(written.read_text())
    assert summary["schema"] == 2 and summary["candidates"] == ["1.11.0", "1.11.1", "1.12.0", "1.12.1"]
    assert (summary["status"], summary["last_old"], summary["first_new"]) == ("range", "1.11.0", "1.12.0")
    as_written = written.read_text()
    written.write_text(as_written.replace('"first_new": "1.12.0"', '"first_new": "1.11.1"'))
    with pytest.raises(ValueError, match="changed after torchmatrix wrote it"):  # an answer edited by hand
        summaries.read(written)
    written.write_text(as_written)
    assert [(step["version"], step["how"], step["observations"][0]["category"]) for step in summary["steps"]] == [
        ("1.11.0", "stored", "fail"),
        ("1.12.1", "stored", "pass"),
        ("1.11.1", "planned", None),
        ("1.12.0", "stored", "pass"),
    ]
    (change,) = summary["changes"]
    assert (change["last_old"], change["first_new"], change["between"]) == ("1.11.0", "1.12.0", ["1.11.1"])
    assert change["commits"] == {"old": git("1.11.0"), "new": git("1.12.0"), "url": summary_url("1.11.0", "1.12.0")}
    (read,), _ = summaries.scan(tmp_path / "reports" / "bisect")
    assert read.changes[0].commits == summaries.Commits(git("1.11.0"), git("1.12.0"))


def test_a_test_file_asks_each_test_its_ends_ran_and_a_file_that_did_not_collect_is_no_test(
    tmp_path: Path, private_cache: Path
) -> None:
    here = issue_file_project(tmp_path, private_cache, ("1.11.0", "1.12.0", "1.12.1"), ("test_a", "test_b"))
    names = ("tests/test_issue.py::test_a", "tests/test_issue.py::test_b")
    uncollected = Record("tests/test_issue.py", "cpu", Outcome.ERROR, {}, "ImportError: cannot import name 'vmap'", 0)
    store(here, "1.11.0", uncollected, probes=("tests/test_issue.py",))
    store(here, "1.12.0", Outcome.PASS, Outcome.FAIL, probes=names)
    store(here, "1.12.1", Outcome.PASS, Outcome.FAIL, probes=names)
    session = Session("tests/test_issue.py", "--from", "1.11.0", "--to", "1.12.1")
    run(here, session, tmp_path / "noxfile.py")  # a build would run nox on this missing noxfile, and fail

    assert session.said[0].startswith(f"bisect each test of tests/test_issue.py ({', '.join(names)}) on cpu")
    summary = json.loads(summary_file(tmp_path, "tests_test_issue.py-cpu-1.11.0-1.12.1").read_text())
    assert [(change["probe"], change["old"]["category"], change["new"]["category"], change["first_new"])
            for change in summary["changes"]] == [(names[0], "error", "pass", "1.12.0"),
                                                  (names[1], "error", "fail", "1.12.0")]  # fmt: skip
    assert summary["probes"] == list(names) and not summary["all"]

    one = here  # the same file, as its one probe
    store(one, "1.12.1", Outcome.PASS, probes=names[:1])  # a file of one test: that test, as its node id would be
    store(one, "1.12.0", Outcome.PASS, probes=names[:1])
    alone = Session("tests/test_issue.py", "--from", "1.11.0", "--to", "1.12.1")
    run(one, alone, tmp_path / "noxfile.py")
    assert alone.said[0].startswith(f"bisect {names[0]} on cpu by outcome")
    assert "first release with NEW's outcome (pass): torch 1.12.0 (1 run)" in alone.said


def test_a_bisection_holds_one_python_for_every_release_not_the_one_each_would_get_alone(
    tmp_path: Path, private_cache: Path
) -> None:
    # Alone, 1.9.0 gets Python 3.9 and the others 3.10: a change of Python's would pass for torch's.
    listing = offline_index(
        private_cache,
        *(f"torch-{version}-cp{minor}-cp{minor}-manylinux1_x86_64.whl"
          for version, minors in (("1.9.0", (38, 39)), ("1.10.0", (38, 39, 310)), ("1.11.0", (39, 310)),
                                  ("1.12.0", (39, 310)))
          for minor in minors),
    )  # fmt: skip
    here = dataclasses.replace(project(tmp_path), listing=listing)
    assert here.plan_release(Version("1.11.0")).python == "3.10"
    store(here, "1.9.0", Outcome.FAIL)  # 3.9 is its own choice: its cell is the matrix's
    for version, outcome in (("1.10.0", Outcome.FAIL), ("1.11.0", Outcome.PASS), ("1.12.0", Outcome.PASS)):
        store(here, version, outcome, python="3.9")
    store(here, "1.10.0", Outcome.PASS)  # on 3.10, the planner's own choice for it: not this bisection's cell
    session = Session("autograd_dot", "--from", "1.9.0", "--to", "1.12.0")
    run(here, session, tmp_path / "noxfile.py")  # a build would run nox on this missing noxfile, and fail

    assert session.said[0].endswith("on Python 3.9 throughout")
    assert all("Python 3.9" in line for line in session.said if line.startswith("["))
    assert session.said[-3] == "first release with NEW's outcome (pass): torch 1.11.0 (1 run)"
    summary = json.loads(summary_file(tmp_path, "autograd_dot-cpu-1.9.0-1.12.0").read_text())
    assert {step["python"] for step in summary["steps"]} == {"3.9"} and summary["boundaries"] == []


def test_where_no_python_installs_both_sides_of_the_answer_it_says_the_python_changed_there_too(
    tmp_path: Path, private_cache: Path
) -> None:
    listing = offline_index(
        private_cache,
        *(f"torch-{version}-cp{minor}-cp{minor}-manylinux1_x86_64.whl"
          for version, minors in (("1.9.0", (38, 39)), ("1.10.0", (38, 39)), ("1.11.0", (39, 310)),
                                  ("1.12.0", (39, 310)))
          for minor in minors),
    )  # fmt: skip
    without_39 = tuple(python for python in THIS_MACHINE if python.minor != "3.9")
    here = dataclasses.replace(project(tmp_path), listing=listing, interpreters=without_39)
    for version, outcome in (("1.9.0", Outcome.FAIL), ("1.10.0", Outcome.FAIL)):
        store(here, version, outcome)  # on 3.8
    for version in ("1.11.0", "1.12.0"):
        store(here, version, Outcome.PASS)  # on 3.10
    session = Session("autograd_dot", "--from", "1.9.0", "--to", "1.12.0")
    run(here, session, tmp_path / "noxfile.py")

    assert session.said[0].endswith(
        "no Python here installs every release: Python 3.8 for 1.9.0–1.10.0, then 3.10 for 1.11.0–1.12.0; "
        "an answer at a change of Python says so"
    )
    said = (
        "the Python changes here too: torch 1.10.0 ran on Python 3.8, 1.11.0 on 3.10, so the change may be "
        "Python's, not torch's; both have wheels for Python 3.9: install it (`uv python install 3.9`) and bisect again"
    )
    assert session.said[-1] == said
    summary = json.loads(summary_file(tmp_path, "autograd_dot-cpu-1.9.0-1.12.0").read_text())
    assert summary["boundaries"] == [{"probe": "autograd_dot", "device": "cpu", "says": said}]


def test_where_the_matrix_pins_each_side_to_a_python_of_its_own_the_answer_names_the_pins_not_a_bisect_that_repeats(
    tmp_path: Path, private_cache: Path
) -> None:
    # Every release has wheels for 3.9 and 3.10, but the matrix pins the older two to 3.9 and the newer to 3.10: the
    # bisect holds each pin, so no second bisect runs both sides on one Python, whatever Pythons install them.
    versions = ("1.9.0", "1.10.0", "1.11.0", "1.12.0")
    listing = offline_index(
        private_cache, *(f"torch-{v}-cp{m}-cp{m}-manylinux1_x86_64.whl" for v in versions for m in (39, 310))
    )
    here = dataclasses.replace(project(tmp_path), listing=listing)
    pinned = dict(zip(versions, ("3.9", "3.9", "3.10", "3.10"), strict=True))
    entries = tuple(TorchEntry(Version(version), (python,)) for version, python in pinned.items())
    here = dataclasses.replace(here, matrix=dataclasses.replace(here.matrix, torch=entries))
    for version, outcome in zip(versions, (Outcome.FAIL, Outcome.FAIL, Outcome.PASS, Outcome.PASS), strict=True):
        store(here, version, outcome)
    session = Session("autograd_dot", "--from", "1.9.0", "--to", "1.12.0")
    run(here, session, tmp_path / "noxfile.py")

    assert session.said[0].endswith(
        "the matrix pins Python 3.9 for 1.9.0–1.10.0, then 3.10 for 1.11.0–1.12.0; an answer at a change of Python "
        "says so"
    )
    assert session.said[-1] == (
        "the Python changes here too: torch 1.10.0 ran on Python 3.9, 1.11.0 on 3.10, so the change may be "
        "Python's, not torch's; the matrix pins torch 1.10.0 to Python 3.9 and 1.11.0 to 3.10, and both install on "
        "Python 3.10 here: pin both to it, bisect again"
    )


@pytest.mark.parametrize(
    ("numpy", "says"),
    [
        ((None, None), None),  # no cell has numpy: the constraint bounds nothing, torch alone changes
        (("1.26.4", "1.26.4"), None),
        (
            ("1.26.4", "2.1.0"),
            "the packages change here too: torch 2.3.0 has numpy 2.1.0 where 2.2.1 had 1.26.4 (pinned there: numpy<2; "
            "here: none), so the change may be theirs",
        ),
    ],
)
def test_an_answer_where_the_pins_change_names_a_package_only_where_the_environments_differ_in_it(
    tmp_path: Path, private_cache: Path, numpy: tuple[str | None, str | None], says: str | None
) -> None:
    versions = ("2.2.0", "2.2.1", "2.3.0")
    listing = offline_index(private_cache, *(f"torch-{v}-cp310-cp310-manylinux1_x86_64.whl" for v in versions))
    here = dataclasses.replace(project(tmp_path), listing=listing)
    assert here.plan_release(Version("2.2.1")).constraints == ("numpy<2",)
    assert here.plan_release(Version("2.3.0")).constraints == ()
    for version, outcome in zip(versions, (Outcome.FAIL, Outcome.FAIL, Outcome.PASS), strict=True):
        held = numpy[0] if Version(version) < Version("2.3") else numpy[1]
        store(here, version, outcome, packages={"numpy": held, "pip": "23.0.1"})
    session = Session("autograd_dot", "--from", "2.2.0", "--to", "2.3.0")
    run(here, session, tmp_path / "noxfile.py")

    assert "first release with NEW's outcome (pass): torch 2.3.0 (1 run)" in session.said
    summary = json.loads(summary_file(tmp_path, "autograd_dot-cpu-2.2.0-2.3.0").read_text())
    assert summary["boundaries"] == ([{"probe": "autograd_dot", "device": "cpu", "says": says}] if says else [])
    assert (session.said[-1] == says) if says else not any("change here too" in line for line in session.said)


def summary_url(old: str, new: str) -> str:
    return f"https://github.com/pytorch/pytorch/compare/{git(old)}...{git(new)}"


NIGHTLIES = [f"2.6.0.dev202410{day:02}" for day in range(1, 10)]


def nightly_project(tmp_path: Path, cache: Path, *probes: str):
    """A project whose index is nine nightlies for Linux, and whose matrix runs ``probes`` on cpu."""
    listing = offline_index(cache, *(f"torch-{v}-cp310-cp310-manylinux1_x86_64.whl" for v in NIGHTLIES))
    here = dataclasses.replace(project(tmp_path), listing=listing)
    for name in probes:
        (tmp_path / f"{name}.py").write_text(f"# {name}\ndef run(device):\n    return {{'outcome': 'pass'}}\n")
    matrix = dataclasses.replace(
        here.matrix, probes=tuple(Probe(name, tmp_path / f"{name}.py") for name in probes), devices=("cpu",)
    )
    return dataclasses.replace(here, matrix=matrix)


def test_all_finds_every_change_among_stored_nightlies_and_tells_the_commit_ranges(
    tmp_path: Path, private_cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    here = nightly_project(tmp_path, private_cache, "alpha", "beta", "steady")
    for index, version in enumerate(NIGHTLIES):  # alpha breaks in the 4th, beta is fixed in the 7th
        alpha, beta = (Outcome.PASS if index < 3 else Outcome.FAIL), (Outcome.FAIL if index < 6 else Outcome.PASS)
        store(here, version, alpha, beta, Outcome.PASS, probes=("alpha", "beta", "steady"))
    session = Session("--all", "--pre", "--from", NIGHTLIES[0], "--to", NIGHTLIES[-1])
    run(here, session, tmp_path / "noxfile.py")

    assert session.said[0].startswith(
        "bisect every probe (alpha, beta, steady) on cpu by outcome: 9 releases from 2.6.0.dev20241001 (2024-10-01) "
        "to 2.6.0.dev20241009 (2024-10-09) (2.6.0.dev20241001 (2024-10-01), 2.6.0.dev20241002 (2024-10-02), "
    )
    table = capsys.readouterr().out.splitlines()
    assert table[0] == (
        "changed in, torch 2.6.0.dev20241001 (2024-10-01) to 2.6.0.dev20241009 (2024-10-09) by outcome: "
        "2 of 3 (probe, device) pairs"
    )

    def row(probe: str, change: str, first: int) -> list[str]:
        first_new, last_old = (releases.dated(Version(NIGHTLIES[i])).split() for i in (first, first - 1))
        return [probe, "cpu", *change.split(), *first_new, *last_old, "1"]

    assert table[1].split()[:3] == ["probe", "device", "OLD"]
    assert [line.split() for line in table[3:]] == [row("alpha", "pass → fail", 3), row("beta", "fail → pass", 6)]
    assert "[2] torch 2.6.0.dev20241009 (2024-10-09)  Python 3.10  3 pairs: 2 pass, 1 fail  0.0 s" in session.said[2]
    assert (
        "[3] torch 2.6.0.dev20241005 (2024-10-05)  Python 3.10  alpha on cpu: fail; beta on cpu: fail"
        in session.said[3]
    )
    assert session.said[-2:] == [
        f"alpha on cpu: commits from torch 2.6.0.dev20241003 ({git(NIGHTLIES[2])}) to 2.6.0.dev20241004 "
        f"({git(NIGHTLIES[3])}): {summary_url(NIGHTLIES[2], NIGHTLIES[3])}",
        f"beta on cpu: commits from torch 2.6.0.dev20241006 ({git(NIGHTLIES[5])}) to 2.6.0.dev20241007 "
        f"({git(NIGHTLIES[6])}): {summary_url(NIGHTLIES[5], NIGHTLIES[6])}",
    ]
    summary = json.loads(summary_file(tmp_path, "_all-cpu-pre-2.6.0.dev20241001-2.6.0.dev20241009").read_text())
    assert [(c["probe"], c["first_new"]) for c in summary["changes"]] == [
        ("alpha", NIGHTLIES[3]),
        ("beta", NIGHTLIES[6]),
    ]
    assert [(u["probe"], u["status"]) for u in summary["unchanged"]] == [("steady", "same")]
    assert summary["built"] == 0 and summary["budget"] == 9


def flaky_record(probe: str, passes: int, fails: int) -> Record:
    runs = [Record(probe, "cpu", Outcome.PASS, {}, "", 0.1)] * passes + [
        Record(probe, "cpu", Outcome.FAIL, {}, "", 0.1)
    ] * fails
    return repeats.merge(runs)


def test_an_unstable_release_in_the_middle_is_skipped_and_an_unstable_end_refused(
    tmp_path: Path, private_cache: Path
) -> None:
    here = nightly_project(tmp_path, private_cache, "flaky").with_repeat(5)
    for index, version in enumerate(NIGHTLIES):
        stable = flaky_record("flaky", 5, 0) if index < 4 else flaky_record("flaky", 0, 5)
        store(here, version, flaky_record("flaky", 3, 2) if index == 4 else stable, probes=("flaky",))
    session = Session("flaky", "--pre", "--repeat", "5", "--from", NIGHTLIES[0], "--to", NIGHTLIES[-1])
    run(here, session, tmp_path / "noxfile.py")
    assert (
        "[3] torch 2.6.0.dev20241005 (2024-10-05)  Python 3.10  untestable: unstable: 3 pass, 2 fail" in session.said[3]
    )
    assert session.said[-4:] == [
        "first release with NEW's outcome (fail): one of 2.6.0.dev20241005 (2024-10-05), "
        "2.6.0.dev20241006 (2024-10-06): the answer is bounded by releases that could not be told apart",
        "    2.6.0.dev20241005: could not be tested: unstable: 3 pass, 2 fail",
        "last release with OLD's outcome (pass): torch 2.6.0.dev20241004 (2024-10-04) (5 runs)",
        f"commits from torch 2.6.0.dev20241004 ({git(NIGHTLIES[3])}) to 2.6.0.dev20241006 ({git(NIGHTLIES[5])}): "
        + summary_url(NIGHTLIES[3], NIGHTLIES[5]),
    ]

    with pytest.raises(SessionError) as refused:
        run(
            here,
            Session("flaky", "--pre", "--repeat", "5", "--from", NIGHTLIES[4], "--to", NIGHTLIES[-1]),
            tmp_path / "noxfile.py",
        )
    assert str(refused.value) == (
        "torch 2.6.0.dev20241005 (--from) is unstable: 3 pass, 2 fail over 5 runs; an end must give one answer: "
        "raise --repeat to see how often each outcome comes, or compare a metric with a threshold its noise stays "
        "on one side of (--metric NAME --above X)"
    )
    with pytest.raises(SessionError, match=r"torch 2.6.0.dev20241005 \(--from\) is unstable for flaky on cpu: 3 pass"):
        run(here, Session("--all", "--pre", "--repeat", "5", "--from", NIGHTLIES[4], "--to", NIGHTLIES[-1]),
            tmp_path / "noxfile.py")  # fmt: skip


def test_all_with_an_end_that_cannot_run_says_why_once(tmp_path: Path, private_cache: Path) -> None:
    here = nightly_project(tmp_path, private_cache, "alpha", "beta")
    here = dataclasses.replace(here, interpreters=())  # no Python here: the plan rules every cell out
    with pytest.raises(SessionError) as caught:
        run(here, Session("--all", "--pre", "--from", NIGHTLIES[0], "--to", NIGHTLIES[-1]), tmp_path / "noxfile.py")
    assert str(caught.value).startswith(f"torch {NIGHTLIES[0]} (--from) could not be tested: no-interpreter: ")


def test_a_release_whose_probe_session_stored_nothing_is_untestable_with_what_it_handed_back(
    tmp_path: Path, private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = nightly_project(tmp_path, private_cache, "alpha")
    said = "torch-2.6.0.dev20241001-py3.10: the worker ran Python 3.9, but the cell's is 3.10; nothing is stored"

    def child(project, session, noxfile, cells, log, **given) -> dict[str, HandBack]:
        return {cell.session: HandBack(cell.session, Stored.NOTHING, None, message=said) for cell in cells}

    monkeypatch.setattr(childnox, "run_cells", child)
    with pytest.raises(SessionError) as caught:
        run(here, Session("alpha", "--pre", "--from", NIGHTLIES[0], "--to", NIGHTLIES[-1]), tmp_path / "noxfile.py")
    assert f"probe({NIGHTLIES[0]}) stored no result: {said}" in str(caught.value)
    (step,) = json.loads(summary_file(tmp_path, f"alpha-cpu-pre-{NIGHTLIES[0]}").read_text())["steps"]
    assert step["observations"][0]["detail"] == f"probe({NIGHTLIES[0]}) stored no result: {said}"
    assert step["result"] is None


def test_an_end_an_index_of_nightlies_has_dropped_names_the_oldest_and_newest_it_has(
    tmp_path: Path, private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = nightly_project(tmp_path, private_cache, "alpha")
    monkeypatch.setattr(releases, "http_fetch", lambda url: (_ for _ in ()).throw(OSError("unreachable")))
    with pytest.raises(UsageError) as caught:
        run(here, Session("--all", "--pre", "--from", "2.6.0.dev20240901", "--to", NIGHTLIES[-1]), tmp_path / "n.py")
    assert str(caught.value) == (
        "--from 2.6.0.dev20240901: the index lists no torch 2.6.0.dev20240901; the oldest it has for this platform "
        "is 2.6.0.dev20241001 (2024-10-01), the newest 2.6.0.dev20241009 (2024-10-09); an index of nightly builds "
        "keeps only the latest ones"
    )


def test_same_outcome_at_both_ends_ends_the_session_with_an_error(tmp_path: Path, private_cache: Path) -> None:
    listing = offline_index(
        private_cache, *(f"torch-{v}-cp310-cp310-manylinux1_x86_64.whl" for v in ("1.11.0", "1.12.1"))
    )
    here = dataclasses.replace(project(tmp_path), listing=listing)
    store(here, "1.11.0", Outcome.PASS)
    store(here, "1.12.1", Outcome.PASS)
    with pytest.raises(SessionError, match="torch 1.11.0 and 1.12.1 both show pass on cpu: nothing to bisect"):
        run(here, Session("autograd_dot", "--from", "1.11.0", "--to", "1.12.1"), tmp_path / "noxfile.py")
    summary = json.loads(summary_file(tmp_path, "autograd_dot-cpu-1.11.0-1.12.1").read_text())
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


def test_an_end_that_is_no_release_is_said_before_ends_the_wrong_way_round(
    tmp_path: Path, private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(releases, "http_fetch", lambda url: (_ for _ in ()).throw(OSError("unreachable")))
    offline_index(
        private_cache, *(f"torch-{v}-cp310-cp310-manylinux1_x86_64.whl" for v in ("1.11.0", "1.12.1", "1.13.0"))
    )
    with pytest.raises(UsageError) as caught:
        run(project(tmp_path), Session("autograd_dot", "--from", "9.9.9", "--to", "1.11.0"), tmp_path / "noxfile.py")
    assert str(caught.value).startswith("--from 9.9.9: the index lists no torch 9.9.9")
    assert "older" not in str(caught.value)
    with pytest.raises(UsageError, match=r"^--to 0.1.0: the index lists no torch 0.1.0"):
        run(project(tmp_path), Session("autograd_dot", "--from", "1.12.1", "--to", "0.1.0"), tmp_path / "noxfile.py")
    for old, new in (("1.12.1", "1.11.0"), ("1.12.1", "1.12.1")):
        with pytest.raises(UsageError) as caught:
            run(project(tmp_path), Session("autograd_dot", "--from", old, "--to", new), tmp_path / "noxfile.py")
        assert str(caught.value).startswith(f"--from {old} must be older than --to {new}\n")
        assert str(caught.value).endswith(f"usage: {USAGE}") and caught.value.exit_code == 2
    backwards = parse(["autograd_dot", "--from", "1.12.1", "--to", "1.9.0"], MATRIX)  # the index tells first
    with pytest.raises(UsageError, match=r"must be older than --to 1.9.0\n  usage: torchmatrix bisect"):
        in_order(backwards, "torchmatrix")


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
    assert (script.probes[0], script.alone, script.criterion) == (
        "repro.py",
        str(tmp_path / "repro.py"),
        Criterion(by_output=True),
    )
    test = parse(["tests/test_dot.py::test_dot", "--from", "1.9.0", "--to", "1.12.1"], matrix)
    assert (test.probes[0], test.alone) == ("tests/test_dot.py::test_dot", None)  # the matrix runs it
    with pytest.raises(UsageError, match="repro.py runs on cpu alone, not on mps"):
        parse(["repro.py", "--from", "1.9.0", "--to", "1.12.1", "--device", "mps"], matrix)
    whole = parse(["tests/test_dot.py", "--from", "1.9.0", "--to", "1.12.1"], matrix)  # the matrix's: each test
    assert (whole.probes, whole.alone) == (("tests/test_dot.py",), None)
    alone = parse(
        ["tests/test_dot.py", "--from", "1.9.0", "--to", "1.12.1"], dataclasses.replace(matrix, probes=MATRIX.probes)
    )
    assert (alone.probes, alone.alone) == (("tests/test_dot.py",), str(tmp_path / "tests" / "test_dot.py"))
    assert parse(["tests/", "--from", "1.9.0", "--to", "1.12.1"], matrix).probes == ("tests/",)


@pytest.mark.parametrize("matrix_lists_it", [False, True])
@pytest.mark.parametrize("given", ["relative", "absolute", "from elsewhere"])
def test_a_node_id_is_named_as_its_records_are_however_it_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str, matrix_lists_it: bool
) -> None:
    """From the torchmatrix command a node id comes absolute, and from another folder: its records are named from the
    matrix's folder (``..`` and all, outside it), and so is what bisect looks for."""
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    (project / "tests").mkdir(parents=True)
    elsewhere.mkdir()
    (project / "tests" / "test_issue_7.py").write_text("def test_f():\n    pass\n")
    tests = Probe("tests/", project / "tests", kind=Kind.PYTEST, root=project)
    matrix = dataclasses.replace(
        MATRIX, file=project / "matrix.yaml", probes=(*MATRIX.probes, *([tests] if matrix_lists_it else []))
    )
    written = {
        "relative": "tests/test_issue_7.py::test_f",
        "absolute": f"{project}/tests/test_issue_7.py::test_f",
        "from elsewhere": "../project/tests/test_issue_7.py::test_f",
    }[given]
    monkeypatch.chdir(elsewhere if given == "from elsewhere" else project)
    request = parse([written, "--from", "1.9.0", "--to", "1.12.1"], matrix)
    assert request.probes == ("tests/test_issue_7.py::test_f",)
    assert request.alone == (None if matrix_lists_it else f"{project}/tests/test_issue_7.py::test_f")

    outside = tmp_path / "report" / "test_issue_8.py"  # outside the matrix's folder: named from it, .. and all
    outside.parent.mkdir()
    outside.write_text("def test_g():\n    pass\n")
    request = parse([f"{outside}::test_g", "--from", "1.9.0", "--to", "1.12.1"], matrix)
    assert (request.probes, request.alone) == (("../report/test_issue_8.py::test_g",), f"{outside}::test_g")
    rooted = dataclasses.replace(matrix, probes_root=tmp_path)  # probes_root: .., as the torchmatrix command's
    assert parse([f"{outside}::test_g", "--from", "1.9.0", "--to", "1.12.1"], rooted).probes == (
        "report/test_issue_8.py::test_g",
    )


def test_by_output_the_answer_names_the_first_line_printed_that_changed_and_counts_the_runs() -> None:
    versions = [Version("1.9.1"), Version("1.10.0")]
    kept = ("tensor([0.9609], dtype=torch.bfloat16)", "tensor([0.9648], dtype=torch.bfloat16)")
    old, new = (
        Printed("pass", digest * 64, False, (line, "tensor([0.9643])")) for digest, line in zip("ab", kept, strict=True)
    )
    steps = (Step(versions[0], Observation(old.category(), "", 5), True),
             Step(versions[1], Observation(new.category(), "", 5), True))  # fmt: skip
    verdict = Verdict(Status.FOUND, tuple(versions), steps, 3, last_old=versions[0], first_new=versions[1])
    request = BisectRequest(("sigmoid",), ("cpu",), versions[0], versions[1], criterion=Criterion(by_output=True))
    assert answer(verdict, request) == [
        "first release with NEW's outcome (pass, prints 'tensor([0.9648], dtype=torch.bfloat16)' / "
        "'tensor([0.9643])'): torch 1.10.0 (5 runs)",
        "last release with OLD's outcome (pass, prints 'tensor([0.9609], dtype=torch.bfloat16)' / "
        "'tensor([0.9643])'): torch 1.9.1 (5 runs)",
        "what it printed, from OLD to NEW: line 1: 'tensor([0.9609], dtype=torch.bfloat16)' → "
        "'tensor([0.9648], dtype=torch.bfloat16)'",
    ]


def test_each_question_keeps_a_summary_of_its_own_named_by_the_whole_question(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = project(tmp_path)
    monkeypatch.chdir(tmp_path)
    for folder in ("wheels", "other"):
        (tmp_path / folder).mkdir(exist_ok=True)
    ends = [Version("1.9.0"), Version("1.12.1")]

    def path(request: BisectRequest) -> Path:
        return _Bisection(here, Session(), tmp_path / "noxfile.py", request, ends, {}).summary_path

    def name(*asked: str) -> str:
        return path(parse(["autograd_dot", "--from", "1.9", "--to", "1.12.1", *asked], here.matrix)).name

    plain = name()
    assert re.fullmatch(r"autograd_dot-cpu-1\.9\.0-1\.12\.1-[0-9a-f]{8}\.json", plain), plain
    asked = [
        ("--metric", "i", "--above", "5"), ("--metric", "i", "--above", "12"), ("--metric", "i", "--below", "5"),
        ("--metric", "i"), ("--check", "i"), ("--metric", "output"), ("--by-output",), ("--metric", "a/b"),
        ("--metric", "a_b"), ("--check", "mul", "--metric", "error"), ("--pre",), ("--repeat", "2"),
        ("--repeat", "3"), ("--index-url", "https://download.pytorch.org/whl/cpu"), ("--find-links", "wheels"),
        ("--find-links", "other"),
    ]  # fmt: skip
    names = [name(*question) for question in asked]
    assert len({plain, *names}) == len(asked) + 1, names
    assert names[0].startswith("autograd_dot-cpu-metric-i-") and names[0].endswith(".json")
    assert names[9].startswith("autograd_dot-cpu-check-mul-metric-error-")
    assert name("--by-output").startswith("autograd_dot-cpu-output-")
    assert name("--pre").startswith("autograd_dot-cpu-pre-") and name("--repeat", "2").startswith(
        "autograd_dot-cpu-repeat-2-"
    )
    tests = [BisectRequest((test,), ("cpu",), *ends) for test in ("t.py::test_p[a/b]", "t.py::test_p[a_b]")]
    paths = {path(asked) for asked in tests}
    assert len(paths) == 2 and all(found.name.startswith("t.py_test_p_a_b-") for found in paths)
    # A probe named "all" is not --all: every probe has a name no probe can take.
    every, named_all = (
        path(BisectRequest(("autograd_dot",), ("cpu",), *ends, every=True)),
        path(BisectRequest(("all",), ("cpu",), *ends)),
    )
    assert every != named_all and every.name.startswith("_all-cpu-") and named_all.name.startswith("all-cpu-")
    # Which probes --all found (its tests, known as it runs) does not move its summary.
    assert path(BisectRequest(("autograd_dot", "t.py::test_x"), ("cpu",), *ends, every=True)) == every


def test_a_result_another_run_replaced_before_it_was_read_is_not_this_releases(tmp_path: Path) -> None:
    """The hand-back names when its result finished: the file is this run's only while it says the same."""
    path = results.write(tmp_path, result("1.12.1", finished="2026-03-01T00:00:00+00:00"))
    handed = HandBack("probe(1.12.1)", Stored.WRITTEN, path, "2026-03-01T00:00:00+00:00")
    assert _result_handed_back(handed)[0] == results.read(path)
    path = results.write(tmp_path, result("1.12.1", finished="2026-03-01T00:05:00+00:00"))  # another run's
    assert _result_handed_back(handed) == (
        None,
        f"its result {path}, finished at 2026-03-01T00:00:00+00:00, was replaced by another run's, finished at "
        "2026-03-01T00:05:00+00:00, before it was read",
    )


def test_a_test_file_asks_the_tests_it_collected_not_a_node_id_asked_once_that_made_its_own_record(
    tmp_path: Path, private_cache: Path
) -> None:
    here = issue_file_project(tmp_path, private_cache, ("1.11.0", "1.12.0"), ("test_a",))
    names = ("tests/test_issue.py::test_a", "tests/test_issue.py::test_typo")
    for version, outcome in (("1.11.0", Outcome.FAIL), ("1.12.0", Outcome.PASS)):
        store(here, version, outcome, Outcome.ERROR, probes=names)
        path = here.result_file(here.plan_release(Version(version)))
        # `bisect tests/test_issue.py::test_typo` made it: no test
        rewrite(path, lambda stored: stored["records"][1]["inputs"].pop("entry"))
    session = Session("tests/test_issue.py", "--from", "1.11.0", "--to", "1.12.0")
    run(here, session, tmp_path / "noxfile.py")  # a build would run nox on this missing noxfile, and fail

    assert session.said[0].startswith("bisect tests/test_issue.py::test_a on cpu by outcome")
    assert "first release with NEW's outcome (pass): torch 1.12.0 (1 run)" in session.said


def issue_file_project(
    tmp_path: Path, private_cache: Path, releases: tuple[str, ...], tests: tuple[str, ...]
) -> Project:
    """A project whose one probe is the test file tests/test_issue.py holding ``tests``, over ``releases`` (wheels
    for Python 3.10, the one Python here)."""
    listing = offline_index(private_cache, *(f"torch-{v}-cp310-cp310-manylinux1_x86_64.whl" for v in releases))
    (tmp_path / "tests").mkdir()
    body = "\n\n".join(f"def {name}():\n    pass\n" for name in tests)
    (tmp_path / "tests" / "test_issue.py").write_text(body)
    file = Probe("tests/test_issue.py", tmp_path / "tests" / "test_issue.py", kind=Kind.PYTEST, root=tmp_path)
    only_310 = tuple(python for python in THIS_MACHINE if python.minor == "3.10")
    here = project(tmp_path)
    return dataclasses.replace(
        here, matrix=dataclasses.replace(here.matrix, probes=(file,)), listing=listing, interpreters=only_310
    )
