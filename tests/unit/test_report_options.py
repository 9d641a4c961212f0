"""The options after `nox -s report --`: formats and a result set to diff against; a mistake is one message."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchmatrix.errors import HelpShown, UsageError
from torchmatrix.views.options import ReportOptions, parse
from torchmatrix.views.publish import DEFAULT_FORMATS, FORMATS


def test_no_option_writes_the_default_formats() -> None:
    assert parse([]) == ReportOptions(DEFAULT_FORMATS, None)
    assert "rst" not in DEFAULT_FORMATS


def test_formats_are_chosen_by_name_list_or_all() -> None:
    assert parse(["--format", "rst"]).formats == ("rst",)
    assert parse(["--format", "md,RST", "--format", "csv"]).formats == ("md", "rst", "csv")
    assert parse(["--format=all"]).formats == FORMATS


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--format", "xml"],
            "--format: unknown format 'xml'\n"
            "  hint: choose from md, rst, html, json, csv, changes, supported, junit, all",
        ),
        (["--format", ","], "--format: no format given"),
        (["--fromat", "md"], "unknown option --fromat: did you mean '--format'?\n  usage: nox -s report -- [--format"),
        (["--diff"], "argument --diff: expected one argument"),
    ],
)
def test_a_mistake_is_one_usage_error(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(UsageError) as raised:
        parse(argv)
    assert str(raised.value).startswith(message)
    assert raised.value.exit_code == 2
    assert capsys.readouterr() == ("", "")  # argparse printed nothing of its own
    with pytest.raises(UsageError) as typed:  # from the torchmatrix command, its own words
        parse(argv, "torchmatrix")
    assert str(typed.value) == str(raised.value).replace("nox -s report --", "torchmatrix report")


def test_diff_takes_a_results_folder_or_an_output_folder_holding_one(tmp_path: Path) -> None:
    (tmp_path / "out" / "results").mkdir(parents=True)
    assert parse(["--diff", str(tmp_path / "out")]).diff == tmp_path / "out" / "results"
    assert parse(["--diff", str(tmp_path / "out" / "results")]).diff == tmp_path / "out" / "results"
    with pytest.raises(UsageError, match="is not a folder"):
        parse(["--diff", str(tmp_path / "missing")])


def test_diff_refuses_a_folder_that_holds_no_results_never_says_every_cell_is_new(tmp_path: Path) -> None:
    """``--diff ../last-week`` where the results are in ``../last-week/out/results``: compared with nothing, every
    cell would be said to have changed; a folder of other files is no results folder either. An empty one is."""
    (tmp_path / "last-week" / "out" / "results" / "linux").mkdir(parents=True)
    (tmp_path / "last-week" / "out" / "compatibility.json").write_text("{}")
    with pytest.raises(UsageError, match=r"holds no results/, but .*last-week/out does"):
        parse(["--diff", str(tmp_path / "last-week")])
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("")
    with pytest.raises(UsageError, match="holds neither results/ nor a machine's result files"):
        parse(["--diff", str(tmp_path / "notes")])
    (tmp_path / "empty").mkdir()
    assert parse(["--diff", str(tmp_path / "empty")]).diff == tmp_path / "empty"


def test_diff_refuses_a_project_folder_whose_json_files_are_no_results(tmp_path: Path) -> None:
    """``--diff ../project``, whose output folder is ``build/reports`` and which holds an editor's settings
    (``.vscode/settings.json``): a JSON file one folder down is no result file, and every cell would be said to be
    new; the hint names the output folder. A folder of result files is taken."""
    project = tmp_path / "project"
    (project / "build" / "reports" / "results" / "linux").mkdir(parents=True)
    (project / ".vscode").mkdir()
    (project / ".vscode" / "settings.json").write_text("{}")
    with pytest.raises(UsageError, match=r"holds no results/, but .*project/build/reports does"):
        parse(["--diff", str(project)])
    (project / ".vscode" / "other").mkdir()
    with pytest.raises(UsageError, match="holds neither results/ nor a machine's result files"):
        parse(["--diff", str(project / ".vscode")])
    (tmp_path / "results" / "linux").mkdir(parents=True)
    (tmp_path / "results" / "linux" / "torch-2.13.0-py3.13.json").write_text('{"schema": 2, "records": []}')
    assert parse(["--diff", str(tmp_path / "results")]).diff == tmp_path / "results"


def test_help_prints_the_options_and_ends_the_session_not_the_run(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(HelpShown):  # never SystemExit, which would end nox inside the session
        parse(["--help"])
    assert "--format FORMAT[,FORMAT...]" in capsys.readouterr().out


def test_the_probe_sessions_force_is_accepted_so_one_command_can_name_both() -> None:
    assert parse(["--force"]) == parse([])
    assert parse(["--force", "--format", "rst"]).formats == ("rst",)
