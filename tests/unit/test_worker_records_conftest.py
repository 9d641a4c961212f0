"""What a pytest run that ended before a test said, in its record's first line."""

from __future__ import annotations

from types import SimpleNamespace

import pytest


def test_a_conftest_that_failed_to_import_is_named_with_what_it_raised_in_the_first_line() -> None:
    """pytest's exit code 4 where a conftest.py failed to import has no `ERROR:` line: the first line names the
    conftest.py and what it raised, as pytest does by hand, never an empty reason."""
    from torchmatrix.envside.torchmatrix_worker import records

    log = (
        "ImportError while loading conftest '/x/conftest.py'.\nconftest.py:1: in <module>\n"
        "    import torch.nope\nE   ModuleNotFoundError: No module named 'torch.nope'\n"
    )
    said = records.tests_ended({"pytest_exit": 4}, SimpleNamespace(log_tail=log, places=()), "t.py", "/x/conftest.py")
    assert said["message"].splitlines()[0] == (
        "pytest exited with code 4 before running a test: ImportError while loading conftest '/x/conftest.py'. "
        "ModuleNotFoundError: No module named 'torch.nope':"
    )
    assert said["metrics"] == {"pytest_exit": 4, "before_tests": True, "conftest_failed": "/x/conftest.py"}


def test_a_conftest_whose_traceback_the_log_tail_cut_is_named_by_what_it_raised() -> None:
    """A conftest.py whose import failed deep in a chain of imports: pytest's traceback is longer than the log's end
    the worker keeps, which begins past pytest's `ImportError while loading conftest` line; the first line still
    says what it raised."""
    from torchmatrix.envside.torchmatrix_worker import records

    frames = "".join(f"helpers/h{i}.py:1: in <module>\n    from helpers import h{i + 1}\n" for i in range(30))
    log = "…" + frames + "E   ModuleNotFoundError: No module named 'torch.newthing'\n"
    said = records.tests_ended({"pytest_exit": 4}, SimpleNamespace(log_tail=log, places=()), "t.py", "/x/conftest.py")
    assert said["message"].splitlines()[0] == (
        "pytest exited with code 4 before running a test: ModuleNotFoundError: No module named 'torch.newthing':"
    )
    assert said["metrics"]["conftest_failed"] == "/x/conftest.py"


SUMMARY = "\n============================ no tests ran in 0.15s =============================\n"
"""pytest's last line, which holds how long it ran: it differs run to run."""
HOOK_RAISED = (
    "INTERNALERROR> Traceback (most recent call last):\n"
    'INTERNALERROR>   File "/x/_pytest/main.py", line 283, in wrap_session\n'
    "INTERNALERROR>     session.exitstatus = doit(config, session) or 0\n"
    "INTERNALERROR>                          ^^^^^^^^^^^^^^^^^^^^^^\n"
    'INTERNALERROR>   File "/x/conftest.py", line 2, in pytest_collection_modifyitems\n'
    "INTERNALERROR>     raise RuntimeError('modify broke')\n"
    "INTERNALERROR> RuntimeError: modify broke\n"
    "INTERNALERROR>\n" + SUMMARY + "every check passed\n"
)
GROUP_RAISED = (
    "INTERNALERROR>   + Exception Group Traceback (most recent call last):\n"
    'INTERNALERROR>   |   File "/x/conftest.py", line 2, in pytest_collection_modifyitems\n'
    "INTERNALERROR>   |     raise ExceptionGroup('hooks failed', [ValueError('a'), KeyError('b')])\n"
    "INTERNALERROR>   | ExceptionGroup: hooks failed (2 sub-exceptions)\n"
    "INTERNALERROR>   +-+---------------- 1 ----------------\n"
    "INTERNALERROR>     | ValueError: a\n" + SUMMARY
)


@pytest.mark.parametrize(
    ("log", "said"),
    [
        (HOOK_RAISED, ": RuntimeError: modify broke:"),
        (GROUP_RAISED, ": ExceptionGroup: hooks failed (2 sub-exceptions):"),
        ("all good\n", ":"),
    ],
    ids=["raised", "exception-group", "no-traceback"],
)
def test_a_hook_that_raised_is_named_by_what_it_raised_never_by_what_was_printed_after_it(log: str, said: str) -> None:
    """A conftest.py's pytest_collection_modifyitems that raises: pytest prints INTERNALERROR, then its summary (how
    long it ran, which differs run to run) and what a pytest_unconfigure printed; the first line, which a bisect
    by output compares, says what was raised (an exception group by its own line), never the summary nor the
    print."""
    from torchmatrix.envside.torchmatrix_worker import records

    ended = records.tests_ended({"pytest_exit": 3}, SimpleNamespace(log_tail=log, places=()), "t.py")
    assert ended["message"].splitlines()[0] == "pytest exited with code 3 before running a test" + said


def test_what_a_hook_raised_is_said_as_by_output_compares_it_never_with_an_address_or_the_cells_own_folder() -> None:
    """A hook that raises with a repr (an address each process has its own) or a path in the cell's environment in
    its message: the first line, which a bisect by output compares between releases, holds neither as printed, or
    every release differs from the one before and the first is blamed."""
    from torchmatrix.envside.torchmatrix_worker import records

    seen = []
    for address, where in (("0x7f5f7a9a1fb0", "/tmp/torchmatrix-worker-ab12"), ("0x7fed7d5a1f50", "/tmp/tmpq9_x")):
        places = records.cell_places(where + "/torchmatrix-pair-cd34", where)
        log = (
            "INTERNALERROR> Traceback (most recent call last):\n"
            'INTERNALERROR>   File "/x/conftest.py", line 2, in pytest_collection_modifyitems\n'
            "INTERNALERROR>     raise RuntimeError(...)\n"
            f"INTERNALERROR> RuntimeError: no toolkit for <object object at {address}> in {where}/cache\n"
        )
        said = records.tests_ended({"pytest_exit": 3}, SimpleNamespace(log_tail=log, places=places), "t.py")
        seen.append(said["message"].splitlines()[0])
    assert seen[0] == seen[1], seen
    assert "0x7f" not in seen[0] and "/tmp/" not in seen[0], seen
