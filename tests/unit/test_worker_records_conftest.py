"""What a pytest run that ended before a test said, in its record's first line."""

from __future__ import annotations

from types import SimpleNamespace


def test_a_conftest_that_failed_to_import_is_named_with_what_it_raised_in_the_first_line() -> None:
    """pytest's exit code 4 where a conftest.py failed to import has no `ERROR:` line: the first line names the
    conftest.py and what it raised, as pytest does by hand, never an empty reason."""
    from torchmatrix.envside.torchmatrix_worker import records

    log = (
        "ImportError while loading conftest '/x/conftest.py'.\nconftest.py:1: in <module>\n"
        "    import torch.nope\nE   ModuleNotFoundError: No module named 'torch.nope'\n"
    )
    said = records.tests_ended({"pytest_exit": 4}, SimpleNamespace(log_tail=log), "t.py")
    assert said["message"].splitlines()[0] == (
        "pytest exited with code 4 before running a test: ImportError while loading conftest '/x/conftest.py'. "
        "ModuleNotFoundError: No module named 'torch.nope':"
    )
