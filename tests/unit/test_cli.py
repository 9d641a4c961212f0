"""The `torchmatrix` command: which nox command line a command line becomes, and the matrix it chooses."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchmatrix import cli, variables
from torchmatrix.errors import UsageError
from torchmatrix.matrix import loader
from torchmatrix.sessions import childnox

SCRIPT = "import torch\nprint(2 * torch.dot(torch.arange(4.0), torch.arange(4.0)))\n"


def session_words(run: cli.Invocation) -> list[str]:
    """What follows ``--sessions`` in the nox command line."""
    return list(run.argv[run.argv.index("--sessions") + 1 :])


def test_a_bisect_in_a_folder_without_a_matrix_writes_the_default_one_beside_its_results(tmp_path: Path) -> None:
    (tmp_path / "repro.py").write_text(SCRIPT)
    run = cli.invocation(["bisect", "repro.py", "--from", "1.9", "--to", "2.2"], tmp_path, python="py")
    output = tmp_path / cli.DEFAULT_OUTPUT
    assert run.written and run.matrix == output / "matrix.yaml" and run.output == output
    assert (output / "matrix.yaml").read_text() == cli.DEFAULT_MATRIX.read_text()
    assert run.argv[:6] == ("py", "-c", childnox.NOX_MAIN, "--noxfile", str(cli.NOXFILE), "--envdir")
    assert run.argv[6] == str(output / ".nox")
    assert session_words(run) == ["bisect", "--", str(tmp_path / "repro.py"), "--from", "1.9", "--to", "2.2"]
    assert run.environ == {variables.MATRIX.name: str(output / "matrix.yaml"), variables.WORKDIR.name: str(tmp_path)}
    again = cli.invocation(["report"], tmp_path)
    assert not again.written and again.matrix == run.matrix  # the folder's matrix, as it was left


def test_the_default_matrix_runs_on_cpu_alone_with_no_probe_of_its_own_and_keeps_its_results_beside_it(
    tmp_path: Path,
) -> None:
    copy = tmp_path / "matrix.yaml"
    copy.write_text(cli.DEFAULT_MATRIX.read_text())
    matrix = loader.load_matrix(copy, probes_dir=tmp_path / "probes")
    assert matrix.devices == ("cpu",) and matrix.probes == () and matrix.output == tmp_path
    assert len(matrix.torch) > 1


def test_a_matrix_yaml_in_the_folder_is_the_matrix_and_names_its_own_output(tmp_path: Path) -> None:
    (tmp_path / "matrix.yaml").write_text("torch: [2.2.0]\n")
    run = cli.invocation(["probe"], tmp_path)
    assert run.matrix == tmp_path / "matrix.yaml" and run.output is None and not run.written
    assert run.argv[6] == str(tmp_path / ".nox")  # where a noxfile beside it keeps its environments
    assert not (tmp_path / cli.DEFAULT_OUTPUT).exists()
    assert variables.OUTPUT.name not in run.environ


def test_output_and_matrix_are_the_commands_own_options_wherever_they_stand(tmp_path: Path) -> None:
    (tmp_path / "ci").mkdir()
    (tmp_path / "ci" / "gpu.yaml").write_text("torch: [2.2.0]\n")
    run = cli.invocation(["report", "--format", "md", "--matrix", "ci/gpu.yaml", "--output=out"], tmp_path)
    assert run.matrix == tmp_path / "ci" / "gpu.yaml" and run.output == tmp_path / "out"
    assert run.environ[variables.OUTPUT.name] == str(tmp_path / "out")
    assert session_words(run) == ["report", "--", "--format", "md"]
    with pytest.raises(UsageError, match="no such file"):
        cli.invocation(["report", "--matrix", "missing.yaml"], tmp_path)
    with pytest.raises(UsageError, match="--output needs a value"):
        cli.invocation(["report", "--output"], tmp_path)


def test_with_names_requirements_every_cell_installs_as_often_as_it_is_given(tmp_path: Path) -> None:
    run = cli.invocation(["bisect", "t.py", "--with", "numpy==1.26.4", "--from", "2.1", "--with=scipy>=1,<2"], tmp_path)
    assert run.environ[variables.REQUIRES.name] == "numpy==1.26.4\nscipy>=1,<2"  # a comma is a requirement's own
    assert session_words(run) == ["bisect", "--", "t.py", "--from", "2.1"]
    assert variables.REQUIRES.name not in cli.invocation(["plan"], tmp_path).environ


def test_the_default_matrix_in_another_output_folder_keeps_its_results_there(tmp_path: Path) -> None:
    run = cli.invocation(["--output", "try", "plan"], tmp_path)
    assert run.matrix == tmp_path / "try" / "matrix.yaml" and run.output == tmp_path / "try"
    assert variables.OUTPUT.name not in run.environ  # the default matrix says `output: .`


def test_scripts_of_probe_and_plan_are_their_probes_and_torch_their_releases(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "repro.py").write_text(SCRIPT)
    (tmp_path / "tests" / "test_dot.py").write_text("def test_dot():\n    pass\n")
    words = ["probe", "repro.py", "tests/test_dot.py::test_dot", "--torch", "1.12.1,2.2.0", "--repeat", "3"]
    run = cli.invocation(words, tmp_path)
    probes = f"{tmp_path / 'repro.py'},{tmp_path / 'tests' / 'test_dot.py'}::test_dot"
    assert run.environ[variables.PROBES.name] == probes
    assert run.environ[variables.TORCH.name] == "1.12.1,2.2.0"
    assert session_words(run) == ["probe", "--", "--repeat", "3"]
    plan = cli.invocation(["plan", "--torch=2.2.0", "--torch", "2.13.0"], tmp_path)
    assert plan.environ[variables.TORCH.name] == "2.2.0,2.13.0" and session_words(plan) == ["plan"]
    assert variables.PROBES.name not in plan.environ


def test_a_script_that_is_not_there_is_refused_as_typed_with_the_closest_file_and_nothing_written(
    tmp_path: Path,
) -> None:
    (tmp_path / "repro.py").write_text(SCRIPT)
    with pytest.raises(UsageError) as typo:
        cli.invocation(["probe", "repr.py", "--torch", "2.2.0"], tmp_path)
    assert str(typo.value) == (
        f"no file 'repr.py' in {tmp_path}\n  usage: {cli.COMMANDS['probe'].usage}\n  hint: did you mean 'repro.py'?"
    )
    with pytest.raises(UsageError, match=r"no file 'gone' in .*, nor a probe of that name in .*probes\n"):
        cli.invocation(["plan", "gone"], tmp_path)
    assert not (tmp_path / cli.DEFAULT_OUTPUT).exists(), "a refused command writes no default matrix"
    (tmp_path / "ci" / "probes").mkdir(parents=True)
    (tmp_path / "ci" / "matrix.yaml").write_text("torch: [2.2.0]\n")
    (tmp_path / "ci" / "probes" / "autograd_dot.py").write_text("def run(device):\n    return {}\n")
    (tmp_path / "ci" / "mine.py").write_text(SCRIPT)
    with pytest.raises(UsageError, match="did you mean 'autograd_dot'"):  # a probe of the matrix's
        cli.invocation(["--matrix", "ci/matrix.yaml", "plan", "autograd_do"], tmp_path)
    beside = cli.invocation(["--matrix", "ci/matrix.yaml", "probe", "autograd_dot", "mine.py"], tmp_path)
    assert beside.environ[variables.PROBES.name] == "autograd_dot,mine.py", "the matrix resolves what is beside it"


def test_paths_are_made_absolute_since_nox_runs_in_the_noxfiles_folder(tmp_path: Path) -> None:
    (tmp_path / "wheels").mkdir()
    (tmp_path / "repro.py").write_text(SCRIPT)
    words = ["bisect", "repro.py", "--from", "1.9", "--to", "2.2", "--find-links", "wheels", "--find-links=wheels"]
    run = cli.invocation(words, tmp_path)
    wheels = str(tmp_path / "wheels")
    assert session_words(run)[2:] == [str(tmp_path / "repro.py"), "--from", "1.9", "--to", "2.2",
                                      "--find-links", wheels, f"--find-links={wheels}"]  # fmt: skip
    assert cli.invocation(["bisect", "autograd_dot", "--from", "1.9", "--to", "2.2"], tmp_path).argv[-5] == (
        "autograd_dot"  # a probe's name is no path
    )


def test_an_unknown_session_is_refused_with_the_closest_one(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no session 'bisec'") as error:
        cli.invocation(["bisec", "repro.py"], tmp_path)
    assert "did you mean 'bisect'?" in str(error.value)
    assert not (tmp_path / cli.DEFAULT_OUTPUT).exists()


def test_help_lists_every_session_and_a_mistake_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert cli.main(["--help"]) == 0
    shown = capsys.readouterr().out
    assert all(f"  {name} " in shown for name in cli.COMMANDS)
    assert cli.main([]) == 2
    assert cli.main(["frob"]) == 2
    assert "torchmatrix: error: no session 'frob'" in capsys.readouterr().err


def test_a_sessions_help_is_its_parsers_printed_by_the_command_before_anything_is_written(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli.main(["--output", "out", "probe", "repro.py", "--torch", "2.2.0", "--help"]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith("usage: torchmatrix probe [SCRIPT …] [--torch V[,V…]] [--force]")
    assert "--strict" in shown and "--torch V[,V…]" in shown and "torchmatrix --help" in shown
    assert cli.main(["bisect", "repro.py", "-h"]) == 0  # before bisect's missing --from and --to
    assert capsys.readouterr().out.startswith("usage: torchmatrix bisect (PROBE | --all) --from OLD")
    assert list(tmp_path.iterdir()) == []
    assert not cli.shows_help(["bisect", "--from", "--help"])  # a mistake first: the session says it


def test_clean_runs_the_clean_session_on_the_releases_in_the_folders_environments(tmp_path: Path) -> None:
    (tmp_path / "matrix.yaml").write_text("torch: [2.1.0]\n")
    run = cli.invocation(["clean", "2.1.0", "--dry-run"], tmp_path)
    assert session_words(run) == ["clean", "--", "2.1.0", "--dry-run"]
    assert run.argv[run.argv.index("--envdir") + 1] == str(tmp_path / ".nox")  # the environments plan sized
