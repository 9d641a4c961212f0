"""Which (probe, device) records of a cell still answer for a new run, so that a re-run runs only the others.

Freshness is decided per record. A record stands for a new run of its pair
when its identity (:mod:`torchmatrix.identity`) is what a run now would have:
the same inputs (:data:`torchmatrix.identity.PARTS`: requirements,
interpreter and its exact version, the worker's sha256, the torch build and
the package set, where torch comes from, the pairs' environment, the seed, a
timeout that would not change its outcome; the sha256 of its probe file, and
the probe's options where the matrix gives it some), and every file its pair
read unchanged. Records of probes or devices the run does not ask for are none
of its business: two matrices sharing one output folder keep each other's.

The torch build counts as an input (:func:`torchmatrix.environment.cellenv.torch_build`,
read without importing torch), and only in an environment whose install
finished and whose torch imported (:func:`torchmatrix.environment.cellenv.built_torch`).

A cell whose environment holds no such torch (new, rebuilt or half-installed)
runs every pair: without installing, nothing tells which build the installer
would pick, and a skip must never hide a change. A cell whose last run ended
before the probes ran (e.g. ``install-error``) runs again, so a retry retries.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from . import identity, results
from .core import Kind, Outcome, Pair, Probe, Record
from .identity import TORCH_BUILD
from .matrix import kinds
from .results import INSTALLED_SESSION
from .worker import repeats

FORCE = "--force"


@dataclass(frozen=True)
class ToRun:
    """The pairs of a cell to run, and why (one line for the log); none when every stored record stands."""

    pairs: tuple[Pair, ...]
    reason: str


def stale(
    stored: results.CellResult | None,
    pairs: Sequence[Pair],
    inputs: Mapping[str, Any],
    hardware: identity.Machine | None = None,
) -> ToRun:
    """The ``pairs`` whose record in ``stored`` does not stand for a run from ``inputs`` (with :data:`TORCH_BUILD`)
    on the machine ``hardware`` says.

    Decided per (probe, device) record: a record of another probe or device in
    the file (another matrix's) neither runs nor goes. Tests run as one pair,
    and do when any of their records does not stand. Every pair runs where
    ``stored`` was made on another machine (:func:`made_elsewhere`).
    """
    everything = tuple(pairs)
    if stored is None:
        return ToRun(everything, "no stored result")
    if stored.outcome is not None:
        return ToRun(everything, f"the last run ended in {stored.outcome.value}")
    elsewhere = made_elsewhere(stored, hardware)
    if elsewhere:
        return ToRun(everything, elsewhere)
    if inputs.get(TORCH_BUILD) is None:
        why = "no torch installed in the environment yet (new or rebuilt)"
        return ToRun(everything, "; ".join([why, *_besides_the_build(stored, pairs, inputs)]))
    made: dict[tuple[str, str], list[Record]] = {}
    digests = identity.FileDigests()
    for record in stored.records:
        made.setdefault(identity.maker(record), []).append(record)
    missing: dict[str, list[str]] = {}
    said: list[str] = []
    chosen = []
    makers = {(pair.probe.name, pair.device) for pair in pairs}
    for pair in pairs:
        records = made.get((pair.probe.name, pair.device))
        # A record of one of its tests that another probe made (a bisect's node id, from another folder) is
        # what the views show for it, and is not this pair's: the pair runs, and its own replaces it.
        others = [
            record.probe
            for maker, made_by in made.items()
            if maker not in makers
            for record in made_by
            if pair_answers_for(pair, record, records or ())
        ]
        if others:
            said.append(f"{others[0]} was made by another probe than {pair.probe.name}")
        elif not records:
            missing.setdefault(pair.probe.name, []).append(pair.device)
        else:
            found = [
                record_changes(record, _wanted(inputs, record, pair), digests) + kind_changed(record, pair.probe)
                for record in records
            ]
            if not any(found):
                continue
            said += [change for changed in found for change in changed]
        chosen.append(pair)
    if not chosen:
        return ToRun((), f"up to date (every record's probe, torch build and interpreter unchanged since "
                         f"{stored.finished_at}); add `-- {FORCE}` to re-measure")  # fmt: skip
    phrases = [f"no record of {probe} on {', '.join(devices)}" for probe, devices in missing.items()]
    count = f"{len(chosen)} of {len(everything)} pairs: " if len(chosen) < len(everything) else ""
    return ToRun(tuple(chosen), count + "; ".join(dict.fromkeys([*said, *phrases])))


def made_elsewhere(stored: results.CellResult, hardware: identity.Machine | None) -> str:
    """Why the records of ``stored`` are no measurement of the machine ``hardware`` says, though filed under its
    name (one named by hand, ``machine:``, that two machines share): ``stored`` says it was made on another machine
    identity (:data:`identity.HARDWARE`); '' where it was made on this one, or either does not say. Its records
    say nothing of this machine's arithmetic, and a result written here keeps none of them
    (:func:`results.merged`): one file holds one machine's records."""
    made = stored.environment.get(identity.HARDWARE)
    if hardware is None or not isinstance(made, dict):
        return ""
    here = hardware.to_json()
    if made == here:
        return ""
    return (
        f"it was made on another machine, {identity.describe_hardware(made)}; "
        f"this one is {identity.describe_hardware(here)}"
    )


def _wanted(inputs: Mapping[str, Any], record: Record, pair: Pair) -> dict[str, Any]:
    """What a run of ``pair`` from ``inputs`` would make ``record`` from (:func:`identity.record_inputs`)."""
    return identity.record_inputs(inputs, record.probe, pair.probe.name, pair.device)


def _besides_the_build(stored: results.CellResult, pairs: Sequence[Pair], inputs: Mapping[str, Any]) -> list[str]:
    """What else changed for the records of ``pairs`` than what only an environment on disk tells (which a new one
    cannot tell yet): why the environment was made anew (``the constraints changed: …``), once each."""
    off_disk = {
        key: value for key, value in inputs.items() if not (key in identity.PART and identity.PART[key].on_disk)
    }
    said = [
        change
        for pair in pairs
        for record in stored.records
        if identity.maker(record) == (pair.probe.name, pair.device)
        for change in record_changes(record, _wanted(off_disk, record, pair), None)
    ]
    return list(dict.fromkeys(said))


class RunNow(Protocol):
    """What a run now would do (:class:`torchmatrix.project.Project` is one)."""

    @property
    def machine(self) -> str:
        """The name this machine's results are filed under."""

    def owner(self, record_name: str) -> Probe | None:
        """The probe that makes records named ``record_name``; None when it runs none such."""

    def identity_now(self, result: results.CellResult, record: Record) -> Mapping[str, Any] | None:
        """What a run now would make ``record`` of ``result`` from; None when it would not run its cell."""

    @property
    def hardware(self) -> identity.Machine:
        """How this machine computes: a result filed under its name but made on another is not its own."""


def marked_stale(found: Iterable[results.CellResult], current: RunNow) -> list[results.CellResult]:
    """``found``, each record whose identity is not what a run now would have shown as :data:`Outcome.STALE`.

    Its message keeps what it was and says what changed: every view shows it so, and none takes it for
    a current outcome. Of a record of a probe ``current`` does not run (another matrix sharing the output
    runs it), only the files it read are asked, its probe's among them. Records filed under another machine
    than ``current``'s are compared by what means the same everywhere (:attr:`identity.Part.portable`): their
    interpreter and files are that machine's.
    """
    marked = []
    digests = identity.FileDigests()
    for result in found:
        records = []
        here = result.machine == current.machine
        elsewhere = made_elsewhere(result, current.hardware) if here else ""
        for record in result.records:
            wanted = current.identity_now(result, record)
            holder = file_probe(record, current)
            if holder is not None:  # a test of a file the matrix now runs as a module or a script: not its record
                said = kind_changed(record, holder) or [f"probe {holder.name} makes no test records now"]
            elif current.owner(record.probe) is None:  # another matrix's: what it read is all there is to ask
                read = identity.Identity.stored(record.inputs).changed_files(digests) if here else []
                said = [words(change) for change in read]
            elif wanted is None:
                said = ["no cell of the matrix would make it (its torch is no release)"]
            else:
                differs = changes(record, wanted if here else identity.portable(wanted), digests if here else None)
                said = [words(change) for change in differs if not _of_a_removed_environment(change, result)]
                said += kind_changed(record, current.owner(record.probe))
            said = [elsewhere, *said] if elsewhere else said
            records.append(_stale(record, said) if said else record)
        marked.append(dataclasses.replace(result, records=tuple(records)))
    return marked


def _of_a_removed_environment(change: identity.Change, result: results.CellResult) -> bool:
    """Whether ``change`` is of a file in the environment ``result``'s cell ran in, which is gone (``nox -s clean``
    removed it): what it held is the environment's, whose build and packages nothing can ask now either, so neither
    counts against the record (a run builds the environment again, and then asks them)."""
    python = result.environment.get("python_executable")
    if change.part is not identity.READ_PART or result.session == INSTALLED_SESSION or not isinstance(python, str):
        return False
    env = Path(python).parent.parent  # a cell's venv: ENV/bin/python, ENV\\Scripts\\python.exe
    path = identity.path_read(change.subject)
    within = path == str(env) or path.startswith(os.path.join(str(env), ""))
    return within and not env.exists()


WAS = "was"
"""The one metric a stale record keeps: the outcome it had (its numbers are of what has changed since)."""


def _stale(record: Record, changes: list[str]) -> Record:
    was = f"was {record.outcome.symbol} {record.outcome.value}"
    return dataclasses.replace(
        record, outcome=Outcome.STALE, metrics={WAS: record.outcome.value}, message=f"{was}; {'; '.join(changes)}"
    )


def answers_for(record: Record, wanted: Mapping[str, Any], files: identity.FileDigests | None = None) -> bool:
    """Whether ``record`` answers for a run of its probe from ``wanted`` (:func:`identity.record_inputs`)."""
    return not record_changes(record, wanted, files or identity.FileDigests())


def record_changes(record: Record, wanted: Mapping[str, Any], files: identity.FileDigests | None) -> list[str]:
    """The words of each :func:`changes` of ``record`` (``probe autograd_dot changed``, ``/src/helper.py changed``)."""
    return [words(change) for change in changes(record, wanted, files)]


def changes(record: Record, wanted: Mapping[str, Any], files: identity.FileDigests | None) -> list[identity.Change]:
    """Each part of ``wanted`` (what a run now would make it from) that ``record`` was not made from, and each file
    it read that is not as it was.

    Only the parts ``wanted`` holds are compared: bisect and verify, which have no
    environment at hand, leave out the torch build and the package set. ``files``:
    the files it read as hashed now (one :class:`identity.FileDigests` for a pass over many records); None where
    they are not compared, as only the machine it ran on has them. The timeout counts only
    where it could change the outcome: a record that finished in less than the
    new limit would finish again, one that ran past its limit would run past a
    lower one too, and one of several runs of which some ran past it (``unstable``)
    might not under a higher one. A test's record is timed from its own start alone, while its
    limit also holds pytest's collection before it and the fixtures' teardown
    after it: any lower limit counts for it.
    """
    made = identity.Identity.stored(record.inputs)
    probe = identity.maker(record)[0]
    if "requirements" in wanted and "requirements" not in record.inputs:  # nothing was installed for it
        return [identity.Change(identity.PART["requirements"], None, wanted["requirements"], probe)]
    found = [
        change
        for change in made.changes(wanted, probe)
        if change.part.key != "timeout" or not _timeout_keeps(record, change.before, change.after)
    ]
    return found + (made.changed_files(files) if files is not None else [])


def file_probe(record: Record, current: RunNow) -> Probe | None:
    """The probe of the matrix that is the file ``record``, a test's, is of, where no probe makes that test's record
    now: the matrix runs the file as a module or a script (its ``kind:`` removed or changed, ``run(device)``
    added). None where the record is no test's, or a probe makes it."""
    file, colons, _ = record.probe.partition("::")
    if not colons or current.owner(record.probe) is not None:
        return None
    holder = current.owner(file)
    return holder if isinstance(holder, Probe) and not holder.kind.may_be_tests else None


def pair_answers_for(pair: Pair, record: Record, own: Iterable[Record]) -> bool:
    """Whether a run of ``pair``, whose own records are ``own``, says what ``record`` (another probe's) is now.

    A file's or a test's run holds every test it covers (pytest collects a file it is named); a folder's holds only
    the files pytest collects there: a script beside its tests (``tests/repro.py``), a test file named otherwise
    (``tests/check_dot.py``, which pytest collects only where it is named) or one its options ignore holds no record
    of the folder's, and the folder's run says nothing of it. A file under the folder that is gone is the folder's
    to say: no run of any probe makes its records again, and ``pytest tests/`` holds none of them."""
    if record.device != pair.device or not pair.probe.covers(record.probe):
        return False
    if not pair.probe.name.endswith("/"):
        return True
    file = record.probe.partition("::")[0]
    if any(mine.probe.partition("::")[0] == file for mine in own):
        return True
    root = pair.probe.root
    return root is not None and not (root / file).exists() and _read_there(record, root / file)


def _read_there(record: Record, path: Path) -> bool:
    """Whether ``record`` was made of the file at ``path``, as the files it read say: another matrix that shares the
    output, from another folder, names its own ``tests/check_dot.py`` so too, and its record is its own to replace.
    Where the record could not say what it read, it is taken for this folder's."""
    read = record.inputs.get(identity.READ)
    if not isinstance(read, dict):
        return True
    return str(path) in read or os.path.realpath(path) in read


def kind_changed(record: Record, probe: Probe | None) -> list[str]:
    """``the probe's kind changed: script → module``, where ``record`` ran as a kind a run of ``probe`` now would
    not make (:func:`kinds.kinds_made`): one that ran on a host whose Python told it
    otherwise; none where its kind was not recorded, or the cell decides it."""
    if probe is None or record.kind is None:
        return []
    made = kinds.kinds_made(probe)
    if made is None or record.kind in made:
        return []
    return [words(identity.Change(identity.KIND_PART, record.kind.value, probe.kind.value, probe.name))]


def _timeout_keeps(record: Record, made_under: Any, limit: Any) -> bool:
    if not all(isinstance(value, (int, float)) and not isinstance(value, bool) for value in (made_under, limit)):
        return False
    runs = repeats.runs_of(record)  # a record of several runs: each had the whole limit
    ended = [run for run in runs if run.get("outcome") != Outcome.TIMEOUT.value]
    if len(ended) < len(runs) and limit > made_under:  # a run stopped at its limit might finish under a higher one
        return False
    if not ended:  # every run ran past its limit: it runs past a lower one too
        return True
    if record.kind is Kind.PYTEST:  # its duration is the test's alone, not the collection or teardown around it
        return limit >= made_under
    took = [run.get("duration") for run in ended]
    return all(isinstance(seconds, (int, float)) and seconds < limit for seconds in took)


def words(change: identity.Change) -> str:
    """A change as the log and every view say it: ``the Python version changed: 3.9.17 → 3.9.18``."""
    part, before, after = change.part, change.before, change.after
    if part.key == identity.READ:
        if not change.subject and change.before is None:
            return "the record does not say what its pair read"
        if not change.subject:
            return "what it read is not a list of files with their digests"
        return f"{change.subject} {_file_change(before, after)}"
    if part.key == "requirements" and before is None:
        return f"{change.subject} was measured by {INSTALLED_SESSION}, in a torch installed already"
    if part.key == "probe":
        recorded = before is not None
        return f"probe {change.subject} changed" if recorded else f"probe {change.subject}'s digest was not recorded"
    if part.key == "options":
        return f"the options of probe {change.subject} changed"
    if part.key == TORCH_BUILD and before is None:
        return "the torch build was not recorded"
    if part.key == identity.ENVIRONMENT:
        return f"{part.label} changed{_variables_changed(before, after)}"
    if part.shown is identity.Shown.BY_KEY and isinstance(before, dict) and isinstance(after, dict):
        changed = sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))
        shown = "; ".join(f"{name} {_short(before.get(name))} → {_short(after.get(name))}" for name in changed)
        return f"{part.label} changed: {shown}"
    if part.shown is identity.Shown.CHANGED:
        return f"{part.label} changed"
    if part.shown is identity.Shown.WHOLE:
        return f"{part.label} changed: {before} → {after}"
    return f"{part.label} changed: {_short(before)} → {_short(after)}"


def _file_change(before: Any, after: Any) -> str:
    """How a file a pair read differs from what it read: gone, there anew, made runnable or not, or changed."""
    if after is None:
        return "is gone"
    if before is None:
        return "appeared"
    runnable = identity.EXECUTABLE
    if str(before).removesuffix(runnable) == str(after).removesuffix(runnable):
        return "was made runnable" if str(after).endswith(runnable) else "was made not runnable"
    return "changed"


def _variables_changed(before: Any, after: Any) -> str:
    """``: TERM, LANG``: the variables whose value, or whose presence, differs between two stored environments
    (:func:`identity.environment_identity`); '' where either is not such a record."""
    if not isinstance(before, dict) or not isinstance(after, dict):
        return ""

    def flat(environment: dict[str, Any]) -> dict[str, Any]:
        return {name: value for why in environment.values() if isinstance(why, dict) for name, value in why.items()}

    old, new = flat(before), flat(after)
    names = sorted(name for name in old.keys() | new.keys() if old.get(name) != new.get(name))
    return f": {', '.join(names)}" if names else ""


def _short(value: Any) -> str:
    text = (" ".join(map(str, value)) or "none") if isinstance(value, list) else str(value)
    return text if len(text) <= 60 else text[:59] + "…"
