"""Real nox and uv over a find-links folder of stand-in torch wheels: --all, --pre, nightlies, repeats.

The wheels (tests/standin.py) install in a second and need no download: a
final 9.0.0, sixteen nightlies 9.1.0.dev20241001 … dev20241016, 9.1.0rc1 and
9.1.0, in which probe ``alpha`` breaks in the nightly of 2024-10-05 and probe
``beta`` is fixed in that of 2024-10-12, while ``steady`` always passes; and
five nightlies 9.2.0.dev20241101 … dev20241105 in which ``flaky`` passes,
passes, fails at random, fails, fails. No index has a torch 9, so every
candidate comes from the folder.
"""

from __future__ import annotations

import json
import re
import shutil
import textwrap
from pathlib import Path

import pytest

from torchmatrix import results
from torchmatrix.core import Outcome

from .. import standin
from . import nox

pytestmark = pytest.mark.integration

NIGHTLIES = [f"9.1.0.dev202410{day:02}" for day in range(1, 17)]
FLAKY = [f"9.2.0.dev202411{day:02}" for day in range(1, 6)]
RUNS = 21
"""Runs of the flaky probe: all alike by chance once in 2**20 of its releases."""

MATRIX = """
torch: [9.1.0.dev20241001]
probes: [alpha.py, beta.py, steady.py]
devices: [cpu]
timeout: 60
output: out
find_links: [wheels]
"""
FLAKY_MATRIX = f"""
torch: [{FLAKY[2]}]
probes: [flaky.py]
devices: [cpu]
timeout: 60
repeat: {RUNS}
output: out-flaky
find_links: [wheels]
"""


def behaviour(version: str) -> dict[str, str]:
    if version in FLAKY:
        return {"flaky": ["pass", "pass", "random", "fail", "fail"][FLAKY.index(version)]}
    alpha_broken = version not in NIGHTLIES[:4] and version != "9.0.0"
    beta_fixed = version not in NIGHTLIES[:11] and version != "9.0.0"
    return {"alpha": "fail" if alpha_broken else "pass", "beta": "pass" if beta_fixed else "fail"}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bisect-all")
    for version in ["9.0.0", *NIGHTLIES, "9.1.0rc1", "9.1.0", *FLAKY]:
        standin.wheel(path / "wheels", version, behaviour(version))
    for name in ("alpha", "beta", "steady", "flaky"):
        standin.probe(path, name)
    (path / "matrix.yaml").write_text(textwrap.dedent(MATRIX))
    (path / "flaky.yaml").write_text(textwrap.dedent(FLAKY_MATRIX))
    return path


def output(run) -> str:
    return run.stdout + run.stderr


def built(run) -> list[str]:
    """The releases built, in order, as the `[build n/N] torch X` lines name them."""
    return re.findall(r"\[build \d+/\d+\] torch (\S+)", output(run))


@pytest.fixture(scope="module")
def every(folder: Path):
    """One bisection of every probe over the sixteen nightlies, each pair run twice."""
    return nox(
        folder, folder / "matrix.yaml", "-s", "bisect", "--",
        "--all", "--pre", "--repeat", "2", "--from", NIGHTLIES[0], "--to", NIGHTLIES[-1],
    )  # fmt: skip


def test_all_finds_both_changes_at_their_nightlies_building_each_release_once_within_the_bound(every) -> None:
    text = output(every)
    assert every.returncode == 0, text
    assert (
        f"16 releases from {NIGHTLIES[0]} (2024-10-01) to {NIGHTLIES[-1]} (2024-10-16) "
        f"({NIGHTLIES[0]} (2024-10-01), {NIGHTLIES[1]} (2024-10-02), " in text
    )
    names = ("alpha.py ", "beta.py ", "steady.py ")
    rows = [line.split() for line in every.stdout.splitlines() if line.startswith(names)]
    assert rows == [
        ["alpha.py", "cpu", "pass", "→", "fail", NIGHTLIES[4], "(2024-10-05)", NIGHTLIES[3], "(2024-10-04)", "2"],
        ["beta.py", "cpu", "fail", "→", "pass", NIGHTLIES[11], "(2024-10-12)", NIGHTLIES[10], "(2024-10-11)", "2"],
    ]
    assert "2 of 3 (probe, device) pairs" in text
    releases = built(every)
    assert len(releases) == len(set(releases)), f"a release was built twice: {releases}"
    assert len(releases) <= 10 < len(NIGHTLIES)
    assert f"built {len(releases)} of at most 10 cells (2 ends + 2 × ⌈log₂ 16⌉ = 10)" in text
    for probe, old, new in (("alpha.py", NIGHTLIES[3], NIGHTLIES[4]), ("beta.py", NIGHTLIES[10], NIGHTLIES[11])):
        hashes = standin.git_hash(old), standin.git_hash(new)
        assert (
            f"{probe} on cpu: commits from torch {old} ({hashes[0]}) to {new} ({hashes[1]}): "
            f"https://github.com/pytorch/pytorch/compare/{hashes[0]}...{hashes[1]}" in text
        )


def test_each_step_is_a_stored_cell_of_two_runs_and_the_reports_show_the_changes(folder: Path, every) -> None:
    stored = {result.torch: result for result in results.scan(folder / "out" / "results").results}
    assert set(stored) == set(built(every))
    alpha = next(r for r in stored[NIGHTLIES[4]].records if r.probe == "alpha.py")
    assert (alpha.outcome, len(alpha.metrics["repeats"]), alpha.inputs["repeat"]) == (Outcome.FAIL, 2, 2)
    assert stored[NIGHTLIES[4]].environment["git_version"] == standin.git_hash(NIGHTLIES[4])
    (path,) = (folder / "out/bisect/ci-box").glob(f"_all-cpu-*{NIGHTLIES[0]}-{NIGHTLIES[-1]}-*.json")
    summary = json.loads(path.read_text())
    assert [(c["probe"], c["last_old"], c["first_new"]) for c in summary["changes"]] == [
        ("alpha.py", NIGHTLIES[3], NIGHTLIES[4]),
        ("beta.py", NIGHTLIES[10], NIGHTLIES[11]),
    ]
    report = nox(folder, folder / "matrix.yaml", "-s", "report")
    assert report.returncode == 0, output(report)
    page = (folder / "out" / "COMPATIBILITY.md").read_text(encoding="utf-8")
    section = page[page.index("## Changed in") :]
    row = f"| alpha.py | cpu | pass → fail | {NIGHTLIES[4]} (2024-10-05) | {NIGHTLIES[3]} (2024-10-04) |  | 2 |"
    assert row in section
    compare = f"https://github.com/pytorch/pytorch/compare/{standin.git_hash(NIGHTLIES[10])}"
    assert compare in section and compare in (folder / "out" / "compatibility.html").read_text(encoding="utf-8")


def test_pre_releases_are_candidates_in_version_order_only_with_pre(folder: Path, every) -> None:
    finals = nox(folder, folder / "matrix.yaml", "-s", "bisect", "--", "steady.py", "--from", "9.0.0", "--to", "9.1.0")
    assert "2 releases from 9.0.0 to 9.1.0 (9.0.0, 9.1.0)" in output(finals)
    assert finals.returncode == 1 and "both show pass on cpu: nothing to bisect" in output(finals)
    ordered = nox(
        folder, folder / "matrix.yaml", "-s", "bisect", "--", "steady.py", "--pre", "--from", "9.0.0", "--to", "9.1.0"
    )
    listed = ", ".join(f"{v} (2024-10-{v[-2:]})" for v in NIGHTLIES)
    assert f"19 releases from 9.0.0 to 9.1.0 (9.0.0, {listed}, 9.1.0rc1, 9.1.0); 2 known already" in output(ordered)
    assert built(ordered) == [], "both ends are stored already"
    refused = nox(
        folder, folder / "matrix.yaml", "-s", "bisect", "--", "--all", "--from", NIGHTLIES[0], "--to", "9.1.0"
    )
    assert refused.returncode == 2
    assert f"--from {NIGHTLIES[0]} is a pre-release; add --pre" in output(refused)


INDEX_MATRIX = """
torch: [9.1.0.dev20241003]
probes: [alpha.py]
devices: [cpu]
timeout: 60
output: out-index
find_links: []
"""


def test_any_pep_503_index_serves_the_candidates_and_the_builds(folder: Path) -> None:
    (folder / "index.yaml").write_text(textwrap.dedent(INDEX_MATRIX))  # no find-links: the index alone
    with standin.index(folder / "wheels") as url:
        run = nox(
            folder, folder / "index.yaml", "-s", "bisect", "--",
            "alpha.py", "--pre", "--index-url", url, "--from", NIGHTLIES[2], "--to", NIGHTLIES[6],
        )  # fmt: skip
        gone = nox(
            folder, folder / "index.yaml", "-s", "bisect", "--",
            "alpha.py", "--pre", "--index-url", url, "--from", "9.1.0.dev20240901", "--to", NIGHTLIES[6],
        )  # fmt: skip
    text = output(run)
    assert run.returncode == 0, text
    assert f"5 releases from {NIGHTLIES[2]} (2024-10-03) to {NIGHTLIES[6]} (2024-10-07)" in text
    assert f"first release with NEW's outcome (fail): torch {NIGHTLIES[4]} (2024-10-05) (1 run)" in text
    assert built(run) and all(version in NIGHTLIES for version in built(run))
    logs = (folder / "out-index" / "bisect" / "ci-box" / "logs").glob("*.log")
    assert all(f"--index-url {url}" in log.read_text() for log in logs), "each build installed from the index"
    assert gone.returncode == 2
    assert (
        "torchmatrix: error: --from 9.1.0.dev20240901: the index lists no torch 9.1.0.dev20240901; the releases "
        f"around it are 9.0.0 and {NIGHTLIES[0]} (2024-10-01); the oldest it has for this platform is 9.0.0, the "
        f"newest {FLAKY[-1]} (2024-11-05)" in gone.stderr
    )


def test_an_end_the_folder_lacks_names_the_oldest_and_newest_it_has(folder: Path) -> None:
    run = nox(
        folder, folder / "matrix.yaml", "-s", "bisect", "--", "--all", "--pre", "--from", "9.1.0.dev20240901",
        "--to", NIGHTLIES[-1],
    )  # fmt: skip
    assert run.returncode == 2
    assert (
        "torchmatrix: error: --from 9.1.0.dev20240901: the index lists no torch 9.1.0.dev20240901; the releases "
        f"around it are 9.0.0 and {NIGHTLIES[0]} (2024-10-01); the oldest it has for this platform is " in run.stderr
    )  # the index's oldest torch, then the folder's newest:
    assert f", the newest {FLAKY[-1]} (2024-11-05)\n" in run.stderr


@pytest.fixture(scope="module")
def probed(folder: Path):
    """The flaky matrix's one cell: the nightly whose probe fails at random, run RUNS times."""
    return nox(folder, folder / "flaky.yaml", "-s", f"probe({FLAKY[2]})")


def test_a_probe_that_fails_at_random_is_unstable_with_its_counts(probed) -> None:
    text = output(probed)
    assert probed.returncode == 0, text
    assert f"[1/1] flaky.py on cpu (run {RUNS} of {RUNS}) ..." in text
    counts = re.search(rf"± unstable over {RUNS} runs \(((\d+) (pass|fail), (\d+) (pass|fail))\)", text)
    assert counts and int(counts[2]) + int(counts[4]) == RUNS, text
    assert ["flaky.py", "±"] in [line.split()[-2:] for line in probed.stdout.splitlines()]  # the table
    assert "± unstable" in probed.stdout  # its legend


def test_an_unstable_release_in_the_middle_is_skipped(folder: Path, probed) -> None:
    run = nox(
        folder, folder / "flaky.yaml", "-s", "bisect", "--", "flaky.py", "--pre", "--from", FLAKY[0], "--to", FLAKY[-1]
    )
    text = output(run)
    assert run.returncode == 0, text
    assert FLAKY[2] not in built(run), "stored already, by the probe run"
    assert (
        f"first release with NEW's outcome (fail): one of {FLAKY[2]} (2024-11-03), {FLAKY[3]} (2024-11-04): "
        "the answer is bounded by releases that could not be told apart" in text
    )
    assert re.search(rf"    {FLAKY[2]}: could not be tested: unstable: \d+ (pass|fail), \d+ (pass|fail)\n", text)
    assert f"last release with OLD's outcome (pass): torch {FLAKY[1]} (2024-11-02) ({RUNS} runs)" in text


def test_an_unstable_end_is_refused_with_what_to_do(folder: Path, probed) -> None:
    run = nox(
        folder, folder / "flaky.yaml", "-s", "bisect", "--", "flaky.py", "--pre", "--from", FLAKY[2], "--to", FLAKY[-1]
    )
    assert run.returncode == 1
    assert built(run) == [], "the end is stored, and found unstable before anything is built"
    assert re.search(
        rf"torch {re.escape(FLAKY[2])} \(--from\) is unstable: \d+ (pass|fail), \d+ (pass|fail) over {RUNS} runs; "
        r"an end must give one answer: raise --repeat .* \(--metric NAME --above X\)",
        output(run),
    )


TESTS_MATRIX = """
torch: [9.1.0.dev20241003]
probes: [steady.py, tests/]
devices: [cpu]
timeout: 60
output: out-tests
find_links: [wheels]
"""
TESTS = """\
import torch


def test_alpha():
    assert torch.behaviour["alpha"] == "pass"


def test_beta():
    assert torch.behaviour["beta"] == "fail"
"""


def test_all_asks_of_each_test_that_the_ends_ran_and_finds_its_change(folder: Path) -> None:
    (folder / "tests.yaml").write_text(textwrap.dedent(TESTS_MATRIX))
    (folder / "tests").mkdir(exist_ok=True)
    (folder / "tests" / "test_behaviour.py").write_text(TESTS)
    run = nox(
        folder, folder / "tests.yaml", "-s", "bisect", "--",
        "--all", "--pre", "--from", NIGHTLIES[2], "--to", NIGHTLIES[6],
    )  # fmt: skip
    text = output(run)
    assert run.returncode == 0, text
    assert "every probe (steady.py, tests/test_behaviour.py::test_alpha, tests/test_behaviour.py::test_beta)" in text
    rows = [line.split()[:7] for line in run.stdout.splitlines() if line.startswith("tests/")]
    assert rows == [["tests/test_behaviour.py::test_alpha", "cpu", "pass", "→", "fail", NIGHTLIES[4], "(2024-10-05)"]]
    releases = built(run)
    assert releases[:2] == [NIGHTLIES[2], NIGHTLIES[6]] and len(releases) == len(set(releases)) <= 5
    assert f"built {len(releases)} of at most" in text


BREAKS = """\
import torch

if torch.behaviour["alpha"] == "fail":
    raise ImportError("an API this module needs is gone")


def test_one():
    pass
"""
GROWS = """\
import torch


def test_always():
    pass


if torch.behaviour["alpha"] == "fail":

    def test_new():
        pass
"""


def test_all_bisects_tests_whose_module_stops_importing_and_a_second_run_builds_nothing(folder: Path) -> None:
    work = folder / "imports"
    (work / "tests").mkdir(parents=True)
    shutil.copytree(folder / "wheels", work / "wheels")
    (work / "tests" / "test_breaks.py").write_text(BREAKS)
    (work / "tests" / "test_grows.py").write_text(GROWS)
    (work / "matrix.yaml").write_text(textwrap.dedent(TESTS_MATRIX).replace("steady.py, ", ""))
    ask = ["-s", "bisect", "--", "--all", "--pre", "--from", NIGHTLIES[2], "--to", NIGHTLIES[6]]
    first, second = nox(work, work / "matrix.yaml", *ask), nox(work, work / "matrix.yaml", *ask)
    for run in (first, second):
        assert run.returncode == 0, output(run)
        rows = [line.split()[:7] for line in run.stdout.splitlines() if line.startswith("tests/")]
        assert rows == [["tests/test_breaks.py::test_one", "cpu", "pass", "→", "error", NIGHTLIES[4], "(2024-10-05)"]]
        assert "tests/test_grows.py::test_new" in output(run)  # at NEW alone: not compared
    assert built(second) == [], "every release it needs is stored"


def test_an_answer_whose_probe_changed_since_shows_stale_until_it_is_bisected_again(folder: Path, every) -> None:
    probe = folder / "alpha.py"
    kept = probe.read_text()
    try:
        probe.write_text(kept + "\n# edited since the bisection\n")
        report = nox(folder, folder / "matrix.yaml", "-s", "report")
        assert report.returncode == 0, output(report)
        section = (folder / "out" / "COMPATIBILITY.md").read_text(encoding="utf-8").split("## Changed in", 1)[1]
        [row] = [line for line in section.splitlines() if line.startswith("| alpha.py |")]
        assert row.startswith("| alpha.py | cpu | ↻ stale: pass → fail (torch "), row  # and what changed there
        assert "probe alpha.py changed" in row and f") | {NIGHTLIES[4]} (2024-10-05) |" in row, row
        assert f"| beta.py | cpu | fail → pass | {NIGHTLIES[11]} (2024-10-12) |" in section
    finally:
        probe.write_text(kept)


def test_verify_says_a_test_id_its_file_does_not_hold_with_the_closest_and_runs_nothing_for_it(folder: Path) -> None:
    work = folder / "typo"
    (work / "tests").mkdir(parents=True)
    shutil.copytree(folder / "wheels", work / "wheels")
    (work / "tests" / "test_behaviour.py").write_text(TESTS)
    expect = "expect:\n  - probe: tests/test_behaviour.py::test_alpah\n    device: cpu\n    outcome: pass\n"
    (work / "matrix.yaml").write_text(textwrap.dedent(TESTS_MATRIX).replace("steady.py, ", "") + expect)
    said = (
        f"matrix.yaml:9 expect[0]: probe({NIGHTLIES[2]}) holds no test 'tests/test_behaviour.py::test_alpah' on cpu; "
        "did you mean 'tests/test_behaviour.py::test_alpha'?"
    )
    ran = nox(work, work / "matrix.yaml", "-s", "verify", "--", "--run")  # no result yet: the cell runs first
    assert ran.returncode == 1 and f"running 1 cells without an up-to-date result here: probe({NIGHTLIES[2]})" in (
        output(ran)
    ), output(ran)
    assert said in output(ran)
    again = nox(work, work / "matrix.yaml", "-s", "verify")
    assert again.returncode == 1
    assert said in again.stderr and "--run" not in output(again), "running it again would not make such a test"
