"""A child nox, really run: the named sessions of a noxfile, with the variables given, into a log or through."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from torchmatrix import variables
from torchmatrix.sessions import childnox

pytestmark = pytest.mark.integration


NOXFILE = textwrap.dedent(
    """
    import json, os, sys
    import nox

    @nox.session(python=False)
    def probe(session):
        print("hello from", session.name)
        with open(os.environ["OUT"], "w") as out:
            found = {"torch": os.environ.get("TORCHMATRIX_TORCH"), "cache": str(session.cache_dir)}
            json.dump(dict(found, posargs=session.posargs), out)

    @nox.session(python=False)
    def other(session):
        session.error("must not run")
    """
)


def test_the_sessions_run_with_the_variables_and_their_output_goes_to_the_log(tmp_path: Path) -> None:
    noxfile = tmp_path / "noxfile.py"
    noxfile.write_text(NOXFILE)
    out, log = tmp_path / "out.json", tmp_path / "logs" / "probe.log"
    settings = {"OUT": str(out), variables.TORCH.name: "1.12.0"}
    code = childnox.run(noxfile, tmp_path / "envs", ["probe"], settings, log, ["--repeat", "5"])
    assert code == 0
    assert json.loads(out.read_text()) == {
        "torch": "1.12.0",
        "cache": str(tmp_path / "envs" / ".cache"),
        "posargs": ["--repeat", "5"],
    }
    text = log.read_text()
    assert text.startswith(f"$ {sys.executable} -m nox --noxfile {noxfile} --envdir {tmp_path / 'envs'}")
    assert "hello from probe" in text and "must not run" not in text


def test_the_exit_code_is_nox_s(tmp_path: Path) -> None:
    noxfile = tmp_path / "noxfile.py"
    noxfile.write_text(NOXFILE)
    assert childnox.run(noxfile, tmp_path / "envs", ["other"], {}, tmp_path / "other.log") == 1
