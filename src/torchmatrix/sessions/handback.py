"""The hand-back file: what a probe session run by a child nox tells the bisect or verify that started it.

Bisect and verify build a cell by running its probe session in a child nox
(:mod:`.childnox`), so that the cell they build is byte for byte the one
`nox -s probe` builds: the same environment made by nox, the same uv install,
the same reuse and lock. Running the cell in-process instead, as `asv find`
does, would mean doing nox's part again or calling into nox's internals. What
the child did comes back in a file, never from its log, which is for people:
``$TORCHMATRIX_HANDBACK/<session>.json`` says how the session ended (it wrote
the cell's result, found it up to date, or stored nothing), the result file,
and the message it stopped with. The probe session writes it on every way out
(:func:`handing_back`); a session that never began writes none.
"""

from __future__ import annotations

import contextlib
import enum
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import variables
from ..errors import TorchmatrixError
from ..results import safe_name
from ..util import atomicfile, safetext, storedjson

SCHEMA = 1


class Stored(enum.Enum):
    """What a probe session left in the cell's result file."""

    WRITTEN = "written"
    """A result this run wrote: records, or a cell outcome (no-wheel, install-error)."""
    UP_TO_DATE = "up-to-date"
    """The stored result, every record of which stands for a run now: nothing ran."""
    NOTHING = "nothing"
    """Nothing: whatever the file holds is no result of this run."""


@dataclass(frozen=True)
class HandBack:
    """How one probe session ended, as it handed it back."""

    session: str
    """The nox session: ``probe(1.12.0)``."""
    stored: Stored
    result: Path | None
    """The cell's result file, unless nothing was stored."""
    finished_at: str = ""
    """When the result it wrote or found finished (its ``finished_at``): a reader takes the file for this
    session's only while it says so, not once another run has replaced it. '' when nothing was stored."""
    message: str = ""
    """Why the session stopped: the torchmatrix error's text, ``session.error``'s or ``session.skip``'s message,
    the reason of a command that failed; '' when it returned."""

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "session": self.session,
            "stored": self.stored.value,
            "result": str(self.result) if self.result is not None else None,
            "finished_at": self.finished_at,
            "message": self.message,
        }

    @classmethod
    def from_json(cls, data: Any) -> HandBack:
        """The hand-back ``data`` holds; ValueError naming what is wrong with it."""
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        if data.get("schema") != SCHEMA:
            raise ValueError(f"schema {data.get('schema')!r}, where this torchmatrix writes {SCHEMA}")
        stored = storedjson.checked(data, "stored", str)
        if stored not in {each.value for each in Stored}:
            raise ValueError(f"'stored' is {stored!r}, not one of {', '.join(each.value for each in Stored)}")
        result = storedjson.checked(data, "result", str, optional=True)
        if (result is None) != (stored == Stored.NOTHING.value):
            raise ValueError(f"'stored' is {stored!r}, and 'result' {'is null' if result is None else 'names a file'}")
        session, message = storedjson.checked(data, "session", str), storedjson.checked(data, "message", str)
        finished_at = storedjson.checked(data, "finished_at", str)
        return cls(session, Stored(stored), Path(result) if result is not None else None, finished_at, message)


def path(folder: Path, session: str) -> Path:
    """Where the probe session ``session`` hands back in ``folder``."""
    return folder / f"{safe_name(session)}.json"


def write(folder: Path, handed: HandBack) -> None:
    """Write ``handed`` in ``folder``, atomically: the parent reads all of it or none."""
    atomicfile.write_json(path(folder, handed.session), handed.to_json())


def received(folder: Path, session: str) -> HandBack | None:
    """What ``session`` handed back in ``folder``; None when it wrote nothing there.

    Read as any stored JSON (:mod:`torchmatrix.util.storedjson`); OSError or ValueError names what is wrong.
    """
    file = path(folder, session)
    if not file.exists():
        return None
    handed = HandBack.from_json(storedjson.read(file))
    if handed.session != session:
        raise ValueError(f"{file} is the hand-back of {handed.session}, not of {session}")
    return handed


@dataclass
class ResultFile:
    """What a probe session says of the cell's result file as it goes: what its hand-back tells."""

    stored: Stored = Stored.NOTHING
    result: Path | None = None
    finished_at: str = ""

    def written(self, result: Path, finished_at: str) -> None:
        self.stored, self.result, self.finished_at = Stored.WRITTEN, result, finished_at

    def up_to_date(self, result: Path, finished_at: str) -> None:
        self.stored, self.result, self.finished_at = Stored.UP_TO_DATE, result, finished_at


@contextlib.contextmanager
def handing_back(session: str, environ: Mapping[str, str]) -> Iterator[ResultFile]:
    """Run the body of probe session ``session``: however it ends, hand back how where ``HANDBACK`` says, if set."""
    folder = variables.HANDBACK.get(environ)
    ending = ResultFile()
    message = ""
    try:
        yield ending
    except BaseException as stop:
        message = _why_stopped(stop)
        raise
    finally:
        if folder:
            _hand_back(Path(folder), HandBack(session, ending.stored, ending.result, ending.finished_at, message))


def _hand_back(folder: Path, handed: HandBack) -> None:
    """Write ``handed``; where it cannot be written (a folder that cannot be made, a full disk), say so and let
    the session end as it did: the parent then finds no hand-back, and says so."""
    try:
        write(folder, handed)
    except OSError as exc:
        said = f"torchmatrix: warning: cannot hand back how {handed.session} ended in {folder}: {exc.strerror or exc}"
        print(safetext.for_terminal(said, keep_newlines=False), file=sys.stderr, flush=True)


def _why_stopped(stop: BaseException) -> str:
    """What ``stop`` says: the text of torchmatrix's errors and of nox's (``session.error``, ``session.skip``, a
    command that failed), which are written for a person; of any other, its type and text too."""
    # session.error and session.skip raise exceptions nox keeps private: told by their module, never imported.
    if isinstance(stop, TorchmatrixError) or type(stop).__module__.partition(".")[0] == "nox":
        return str(stop)
    return f"{type(stop).__name__}: {stop}".removesuffix(": ")
