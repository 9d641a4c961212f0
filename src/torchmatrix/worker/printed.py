"""What a script or a test printed, as `bisect … --by-output` compares it: all of it, less what is per-process.

The worker reads a script's whole output, and a test's captured stdout
(``envside/torchmatrix_worker/records.py``, ``read_output``): it replaces the
cell's own folders (the pair's, the worker's, the environment's: it knows
them), what provably differs from one process to the next (:data:`RULES`)
and the cell's own torch version, then keeps the sha256 of all of it
(``metrics.output_sha256``) and, for a person to read, its last 64 KiB as
lines (``output``; ``output_truncated`` when there was more). What it raised
(the exception's type and message, never a traceback), or the text it exited
with, is kept the same way (``raised``). A release is then how it ended (its
outcome, exit code and what it raised) and the digest: a change anywhere in
the normalised output, kept or not, is a change; its size as printed
(``output_bytes``) is never compared. Of repeated runs (``--repeat N``), a
line that differs between runs of one release is per-process
(:func:`one_release`), and a release with per-process lines is compared with
another by :func:`same`: by the words every run of it prints, and by its lines
as patterns, never by digest.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import importlib
import itertools
import json
import operator
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core import Outcome

KEPT = "the end kept"
SHARED = "words every run prints"
"""The mark of a category that holds them, on the line after its digest's."""
PER_PROCESS_LINE = "<differs between runs>"
"""What stands for a line that differs between runs of one release."""
NO_OUTPUT = "no output recorded"


def _worker() -> Any:
    """The worker's module: it applies the rules, in each cell's Python (it is no typed module of the host's)."""
    return importlib.import_module("torchmatrix.envside.torchmatrix_worker.records")


@dataclass(frozen=True)
class Rule:
    what: str
    pattern: re.Pattern[bytes]
    replacement: bytes | Callable[[re.Match[bytes]], bytes]
    example: str
    """A line it changes, for the docs and the tests."""
    untouched: tuple[str, ...]
    """Lines it must leave as printed: each a way it could hide a change."""

    def apply(self, line: str) -> str:
        return self.pattern.sub(self.replacement, line.encode("utf-8")).decode("utf-8")


EXAMPLE_SCRATCH = "/tmp/torchmatrix-worker-k2j4x9_a"
EXAMPLE_FOLDER = EXAMPLE_SCRATCH + "/torchmatrix-pair-9xq1b2c3"
EXAMPLE_ENVIRONMENT = "/home/me/project/.nox/probe-1-12-1"
EXAMPLE_VERSION = "1.12.1"
_EXAMPLE_PLACES = (EXAMPLE_FOLDER, EXAMPLE_SCRATCH, EXAMPLE_ENVIRONMENT) + tuple(
    path.rpartition("/")[2] for path in (EXAMPLE_FOLDER, EXAMPLE_SCRATCH, EXAMPLE_ENVIRONMENT)
)
_EXAMPLES = {
    _worker().PER_PROCESS[0][0]: (
        "<weakref at 0x7f3a2c1d5e80; to 'A' at 0x7f3a2c1d9a10>",
        (
            "bits of 0.3: 0x3e99999a",
            "at 0x3e99999a",
            "<0x3e99999a>",
            "<bits 0x3e99999a>",
            "id 0x7f3a2c1d5e80 >",
            "<mask at 0x" + "f" * 17 + ">",
        ),
    ),
    _worker().PLACES[0][0]: (
        f"saved to {EXAMPLE_FOLDER}/model.pt",
        (f"{EXAMPLE_FOLDER}2/model.pt", "/tmp/tmpab12_x9q/model.pt", "torchmatrix-pair-9xq1b2c3"),
    ),
    _worker().PLACES[1][0]: (f"cache in {EXAMPLE_SCRATCH}/cache", (f"{EXAMPLE_SCRATCH}-old/cache",)),
    _worker().PLACES[2][0]: (
        f"{EXAMPLE_ENVIRONMENT}/lib/python3.10/site-packages/torch/__init__.py",
        (
            f"{EXAMPLE_ENVIRONMENT}0/bin/python",
            f"{EXAMPLE_ENVIRONMENT}.0/bin/python",
            f"/mnt{EXAMPLE_ENVIRONMENT}/bin/python",
        ),
    ),
    _worker().PLACES[3][0]: (
        "cwd: torchmatrix-pair-9xq1b2c3",
        ("torchmatrix-pair-9xq1b2c3x", "torchmatrix-pair-9xq1b2c3-old", "torchmatrix-pair-9xq1b2c4"),
    ),
    _worker().PLACES[4][0]: (
        "../torchmatrix-worker-k2j4x9_a/data",
        ("torchmatrix-worker-k2j4x9_ab", "xtorchmatrix-worker-k2j4x9_a", "torchmatrix-worker-k2j4x9_a.0"),
    ),
    _worker().PLACES[5][0]: ("environment: probe-1-12-1", ("probe-1-12-10", "xprobe-1-12-1")),
    _worker().VERSION_RULE: (
        f"torch v{EXAMPLE_VERSION} on python 3.10",
        (
            f"xv{EXAMPLE_VERSION}",
            f"1{EXAMPLE_VERSION}",
            f"{EXAMPLE_VERSION}0",
            f"{EXAMPLE_VERSION}.2",
            f"v{EXAMPLE_VERSION}0",
        ),
    ),
}


def _rules() -> tuple[Rule, ...]:
    """The worker's rules with their examples: the cell's own folders (as they are in :data:`_EXAMPLE_PLACES`), then
    what is per-process everywhere, then the cell's own torch version (:data:`EXAMPLE_VERSION`)."""
    worker = _worker()
    places = [[path, token] for path, (_, token) in zip(_EXAMPLE_PLACES, worker.PLACES, strict=True)]
    folders = [
        (what, *worker.output_rules([place], [])[0]) for (what, _), place in zip(worker.PLACES, places, strict=True)
    ]
    everywhere = [(what, re.compile(pattern), replacement) for what, pattern, replacement in worker.PER_PROCESS]
    version = [(worker.VERSION_RULE, *worker.output_rules([], [EXAMPLE_VERSION])[-1])]  # the last: after PER_PROCESS
    return tuple(Rule(what, pattern, replacement, *_EXAMPLES[what]) for what, pattern, replacement in
                 folders + everywhere + version)  # fmt: skip


RULES = _rules()
TORCH_VERSION = _worker().TORCH_VERSION.decode("utf-8")


def normalised(text: str, torch_versions: Sequence[str] = (), places: Sequence[tuple[str, str]] = ()) -> str:
    """``text`` as the worker normalises what a script printed in a cell of ``torch_versions`` whose folders are
    ``places`` (path, what replaces it)."""
    worker = _worker()
    rules = worker.output_rules([list(place) for place in places], list(torch_versions))
    return str(worker.normalised_output(text.encode("utf-8"), rules).decode("utf-8"))


@dataclass(frozen=True)
class Printed:
    """One release as by-output compares it: how it ended, and all it printed (by digest)."""

    ended: str
    """The outcome, the exit code where not 0, and what it raised or exited with (newlines as ``\\n``)."""
    sha256: str
    """Of all it printed, normalised; where lines are per-process, of its lines with each such one as
    :data:`PER_PROCESS_LINE`."""
    cut: bool
    """Whether ``lines`` are only the end of what it printed."""
    lines: tuple[str, ...]
    per_process: tuple[int, ...] = ()
    """The lines (from 1) that differed between its runs."""
    shared: tuple[str, ...] | None = None
    """Where lines differed between its runs: the words (split at spaces) that every run printed, as many times as
    each run printed them at least, sorted; None for one run, or runs that printed alike."""

    @classmethod
    def of_run(cls, outcome: str, message: str, metrics: Mapping[str, Any]) -> Printed | str:
        """A run's record (its outcome, message and metrics) as compared; what is missing, as text, if it cannot be."""
        lines, digest, unseen = metrics.get("output"), metrics.get("output_sha256"), metrics.get("output_unseen")
        if isinstance(unseen, str):  # pytest's capture was off: it printed where no one saw, which is not nothing
            return f"{NO_OUTPUT}: {unseen}: the test's output is not seen; remove it to compare by output"
        if not isinstance(lines, list):
            return (f"{NO_OUTPUT}: a run(device) probe's record keeps what run() returned, not what it printed; "
                    "compare it by outcome, or by --metric")  # fmt: skip
        if not isinstance(digest, str):
            return "no digest of the whole output: a record of an older torchmatrix, run it again"
        ended = outcome
        code = metrics.get("exit_code")
        if isinstance(code, int) and not isinstance(code, bool) and code != 0:
            ended += f" (exit code {code})"
        raised = metrics.get("raised")
        if isinstance(raised, str) and raised:
            ended += ": " + _one_line(raised)
        elif outcome in (Outcome.CRASH, Outcome.TIMEOUT, Outcome.ERROR) and message.strip():
            ended += ": " + message.strip().splitlines()[0]
        whole = metrics.get("raised_sha256")  # a message longer than a record keeps: all of it, by digest
        if isinstance(whole, str) and whole:
            ended += f" (all {whole[:16]})"
        cut = metrics.get("output_truncated") is True
        return cls(ended, digest, cut, tuple(str(line) for line in lines))

    def category(self) -> str:
        """What is compared, as one text: equal texts, equal releases. Never the size as printed: a torch version
        or a folder printed is as long as it is, and normalised away."""
        marks = [", cut"] if self.cut else []
        if self.per_process:
            marks.append(", per-process lines " + " ".join(map(str, self.per_process)))
        shared = [] if self.shared is None else [json.dumps(self.shared)]
        if self.shared is not None:
            marks.append(f", {SHARED}")
        return "\n".join([self.ended, f"sha256 {self.sha256}{''.join(marks)}", *shared, *self.lines])

    @classmethod
    def from_category(cls, text: str) -> Printed:
        ended, digest, *lines = text.split("\n")
        sha256, *marks = digest.removeprefix("sha256 ").split(", ")
        per_process = next((mark.removeprefix("per-process lines ") for mark in marks if mark.startswith("per-")), "")
        numbers = tuple(int(number) for number in per_process.split())
        shared = tuple(str(word) for word in json.loads(lines.pop(0))) if SHARED in marks else None
        return cls(ended, sha256, "cut" in marks, tuple(lines), numbers, shared)

    def every_run_prints(self) -> Counter[str] | None:
        """The words every run printed, each as many times as every run printed it; None where the lines do not
        say (only their end was kept, or a category of an older torchmatrix)."""
        if self.shared is not None:
            return Counter(self.shared)
        return None if self.cut or self.per_process else Counter(_words(self.lines))

    def describe(self, limit: int = 100) -> str:
        """``fail: AssertionError: 0.96, prints 'x'``; where the record kept only its end, that it printed more."""
        ended = self.ended if len(self.ended) <= limit else self.ended[: limit - 1] + "…"
        shown = describe(self.lines, limit)
        if self.cut:
            shown = f"prints more than 64 KiB, of which {KEPT}: {shown.removeprefix('prints ')}"
        if self.per_process:
            numbers = ", ".join(map(str, self.per_process))
            shown += f" (line{'s' if len(self.per_process) > 1 else ''} {numbers} per-process: differ between runs)"
        return f"{ended}, {shown}"


def one_release(runs: Sequence[Printed]) -> Printed | str:
    """The runs of one release as one: a line that differs between them is per-process, and stands as
    :data:`PER_PROCESS_LINE`; where they cannot be one (how they ended differs, the lines they printed do not pair
    up, or differ before the end kept), how they differ, for an ``unstable`` release."""
    first = runs[0]
    if all(run == first for run in runs):
        return first
    kinds = Counter(runs)
    if len({(run.ended, run.cut, len(run.lines)) for run in runs}) == 1 and not first.cut:
        lines = tuple(zip(*(run.lines for run in runs), strict=True))
        differ = tuple(number for number, seen in enumerate(lines, start=1) if len(set(seen)) > 1)
        if differ:
            kept = tuple(_as_one(seen) if number in differ else seen[0] for number, seen in enumerate(lines, 1))
            digest = hashlib.sha256("\n".join(kept).encode("utf-8")).hexdigest()
            shared = functools.reduce(operator.and_, (Counter(_words(run.lines)) for run in runs))
            return Printed(first.ended, digest, False, kept, differ, tuple(sorted(shared.elements())))
    (most, _), (other, _) = kinds.most_common(2)
    split = "; ".join(f"{run.describe(80)} in {times}" for run, times in kinds.most_common())
    return f"{split} of {len(runs)} runs; first difference: {first_change(most, other)}"


_MARKS_AT_START = re.compile(r"\W*")
"""The marks of punctuation a word begins with (matched at its start, and at its reversed end's: never a pattern
that tries each place its end could be, which takes a time that grows as the square of a word's length)."""
_MARKS = re.compile(r"(\W)\1*")
"""A mark of punctuation, or a run of one mark (``...``)."""
_SIGNED = re.compile(r"[-+]\d")


def _word_ends(word: str) -> tuple[str, str, str]:
    """A word as the marks that begin it, what is between them, and the marks that end it; a sign that begins a
    number is the number's (``(-1.5),``: ``(``, ``-1.5``, ``),``)."""
    begins = _MARKS_AT_START.match(word).group()  # type: ignore[union-attr]  # every text matches
    if len(begins) == len(word):
        return "", "", word
    ends = _MARKS_AT_START.match(word[::-1]).group()[::-1]  # type: ignore[union-attr]
    core = word[len(begins) : len(word) - len(ends)]
    if begins and _SIGNED.match(begins[-1] + core[:1]):
        begins, core = begins[:-1], begins[-1] + core
    return begins, core, ends


def _words(lines: Sequence[str]) -> list[str]:
    """The words of ``lines``, each mark of punctuation that begins or ends one a word of its own: a set or a
    mapping printed in another order (``{'cuda', 'cpu'}``, ``{'cpu', 'cuda'}``) is the same words, though which of
    its items comes last, before the ``}``, is each process's own. A number keeps its sign (``-0.2``), and a run of
    one mark is one word (``...``): a value each run prints anew would otherwise leave a ``-`` or a ``.`` that
    every run of one release happened to print, and another's did not."""
    words = []
    for word in (word for line in lines for word in line.split()):
        begins, core, ends = _word_ends(word)
        marks = (mark.group(0) for mark in itertools.chain(_MARKS.finditer(begins), _MARKS.finditer(ends)))
        words += [*marks, *([core] if core else [])]
    return words


def same(one: str, other: str) -> bool:
    """Whether two categories are one output as by-output compares them. Equal texts are; where neither has
    per-process lines, nothing else is (the digests differ). Where one has, what only the runs' own processes
    decide is no evidence either way, and the two are the same where they ended alike, every run of each printed
    the same words (:meth:`Printed.every_run_prints`: a word printed in another place, or another order, is still
    printed) and some output could be either's: line by line, each ``<differs between runs>`` may stand for any
    text, none included (:func:`_compatible`). Not an equivalence: a release may be the same as two that are not."""
    if one == other:
        return True
    first, second = Printed.from_category(one), Printed.from_category(other)
    if first.shared is None and second.shared is None:
        return False
    words = first.every_run_prints(), second.every_run_prints()
    if first.ended != second.ended or None in words or words[0] != words[1]:
        return False
    return len(first.lines) == len(second.lines) and all(map(_compatible, first.lines, second.lines))


def _compatible(one: str, other: str) -> bool:
    """Whether some line matches both, where :data:`PER_PROCESS_LINE` matches any text: whether a walk through
    both consumes them, a mark taking the other's characters or nothing. Row by row of ``one``, the places in
    ``other`` reached are the bits of an int."""
    if PER_PROCESS_LINE not in one and PER_PROCESS_LINE not in other:
        return one == other
    mine, theirs = _pattern(one), _pattern(other)
    marks = sum(1 << place for place, each in enumerate(theirs) if each is None)
    at: dict[str, int] = {}
    for place, each in enumerate(theirs):
        if each is not None:
            at[each] = at.get(each, 0) | 1 << place
    everywhere = (1 << (len(theirs) + 1)) - 1
    reached = 1
    for each in mine:
        if each is None:  # a mark of mine takes any of theirs: every place from the first reached on
            reached = everywhere & ~((reached & -reached) - 1) if reached else 0
        else:
            reached |= (reached & marks) << 1  # a mark of theirs takes nothing more (marks never touch)
            reached = (reached & marks) | (reached & at.get(each, 0)) << 1
    reached |= (reached & marks) << 1
    return bool(reached >> len(theirs) & 1)


def _pattern(line: str) -> list[str | None]:
    """A line's characters, each mark (two that touch as one) as None."""
    pattern: list[str | None] = []
    for number, text in enumerate(line.split(PER_PROCESS_LINE)):
        if number and (not pattern or pattern[-1] is not None):
            pattern.append(None)
        pattern.extend(text)
    return pattern


_PIECE = re.compile(r"[-+]?\d[\w.]*(?:(?<=[eE])[-+]\d+)?|\w+|\s+|.")
"""A piece of a line that differs between runs or not as a whole: a number (``-0.3411``, ``1.2e-05``,
``0x7f3a``), a word, a run of spaces, or one other character."""


def _as_one(seen: Sequence[str]) -> str:
    """A line as its runs printed it, what differs between them as :data:`PER_PROCESS_LINE`, word by word (words: runs
    of what is not a space): a word that differs, each of its pieces (:data:`_PIECE`) that differs (``loss
    <differs between runs> dtype=float32``), or the word whole where the runs do not split it into as many. Where
    the runs do not hold as many words, their words are lined up first (:func:`_stretches`): each stretch between
    the words every run shares is taken so, or as one mark where the runs hold unlike numbers of words in it
    (``<differs between runs>tmpfile result fail``). What is the same in every run still counts, and the marks that
    only punctuation parts are one: a per-process value (a uuid, whose pieces vary in number) reads the same however
    it split."""
    words = [re.split(r"(\s+)", line) for line in seen]
    joined = "".join(_stretch_as_one(stretch, _word_as_one) for stretch in _stretches(words))
    mark = re.escape(PER_PROCESS_LINE)
    return re.sub(f"{mark}(?:[^\\w\\s]*{mark})+", PER_PROCESS_LINE, joined)


def _stretches(words: Sequence[list[str]]) -> list[list[list[str]]]:
    """The runs' words (and the spaces between them) in stretches, each a list of what every run holds in it: the
    whole line where the runs hold as many words; else, lined up by :class:`difflib.SequenceMatcher` on the first
    run's against each other's, each word that every run holds where the others hold theirs is a stretch alone, and
    what lies between two such words another."""
    if len({len(each) for each in words}) == 1:
        return [list(words)]
    first, others = words[0], words[1:]
    places = [_matched(first, other) for other in others]
    shared = sorted(set.intersection(*(set(place) for place in places)))
    stretches, starts = [], [0] * len(words)
    for index in shared:
        ends = [index, *(place[index] for place in places)]
        stretches.append([each[start:end] for each, start, end in zip(words, starts, ends, strict=True)])
        stretches.append([[first[index]]] * len(words))
        starts = [end + 1 for end in ends]
    stretches.append([each[start:] for each, start in zip(words, starts, strict=True)])
    return stretches


def _matched(first: list[str], other: list[str]) -> dict[int, int]:
    """Where each word of ``first`` that lines up with one of ``other`` is in ``other``, by its place in ``first``."""
    blocks = difflib.SequenceMatcher(None, first, other, autojunk=False).get_matching_blocks()
    return {block.a + offset: block.b + offset for block in blocks for offset in range(block.size)}


def _stretch_as_one(stretch: Sequence[list[str]], as_one: Callable[[Sequence[str]], str]) -> str:
    """A stretch of words (or of a word's pieces) as its runs printed it: each as one (``as_one``) where they hold
    as many, else one mark."""
    if len({len(items) for items in stretch}) > 1:
        return PER_PROCESS_LINE
    return "".join(as_one(item) for item in zip(*stretch, strict=True))


def _word_as_one(seen: Sequence[str]) -> str:
    """A word (or the spaces between two) as its runs printed it: see :func:`_as_one`. Where the runs split it into
    unlike numbers of pieces (a uuid glued to what the bug is about, ``4f1c-9ab2:dot=fail``), its pieces are lined
    up as a line's words are (:func:`_stretches`), so that the pieces every run prints beside the noise still count."""
    if len(set(seen)) == 1:
        return seen[0]
    pieces = [_PIECE.findall(word) for word in seen]
    return "".join(_stretch_as_one(stretch, _piece_as_one) for stretch in _stretches(pieces))


def _piece_as_one(seen: Sequence[str]) -> str:
    """A piece of a word as its runs printed it: as they all did, or the mark where they differ."""
    return seen[0] if len(set(seen)) == 1 else PER_PROCESS_LINE


def _one_line(text: str) -> str:
    """``text`` on one line, told apart from any other: backslashes and line ends escaped."""
    return text.replace("\\", "\\\\").replace("\r", "\\r").replace("\n", "\\n")


def describe(lines: Sequence[str], limit: int = 100) -> str:
    """What was printed, in a few words: ``prints 'a' / 'b'`` when it is short, else its length and last line."""
    if not lines:
        return "prints nothing"
    shown = " / ".join(repr(line) for line in lines)
    if len(lines) <= 3 and len(shown) <= limit:
        return f"prints {shown}"
    if len(lines) == 1:
        return f"prints 1 line of {len(lines[0])} characters, {_shortened(lines[0], limit // 2)!r}"
    last = _shortened(lines[-1], limit // 2)
    return f"prints {len(lines)} lines, the last {last!r}"


def _shortened(line: str, limit: int) -> str:
    return line if len(line) <= limit else line[: limit - 1] + "…"


def what_changed(old: str, new: str) -> list[str]:
    """Between two categories: how the ending changed, and the first line printed that did, or that the output
    changed before the end kept."""
    before, after = Printed.from_category(old), Printed.from_category(new)
    said = []
    if before.ended != after.ended:
        said.append(f"how it ended, from OLD to NEW: {_ending_change(before, after)}")
    patterns = _patterns_changed(before, after)
    if patterns is not None:
        return said + patterns
    if before.sha256 != after.sha256:
        where = f" (of {KEPT})" if first_difference(before.lines, after.lines) and (before.cut or after.cut) else ""
        said.append(f"what it printed, from OLD to NEW{where}: {_output_change(before, after)}")
    return said


def _patterns_changed(before: Printed, after: Printed) -> list[str] | None:
    """As :func:`same` compares two categories where one has per-process lines: the first line no output matches in
    both, and the words every run of one printed that not every run of the other did; None where it does not."""
    gone, come = before.every_run_prints(), after.every_run_prints()
    if (before.shared is None and after.shared is None) or gone is None or come is None:
        return None
    said = []
    pairs = enumerate(itertools.zip_longest(before.lines, after.lines), start=1)
    unlike = next(((n, one, other) for n, (one, other) in pairs
                   if one is None or other is None or not _compatible(one, other)), None)  # fmt: skip
    if unlike is not None:
        number, one, other = unlike
        said.append(f"what it printed, from OLD to NEW: line {number}: {_around(one, other)} → {_around(other, one)}")
    if gone != come:
        lost, found = (" ".join(sorted((one - other).elements())) for one, other in ((gone, come), (come, gone)))
        said.append(f"the words every run prints, from OLD to NEW: {_around(lost, found)} → {_around(found, lost)}")
    return said


def first_change(before: Printed, after: Printed) -> str:
    """Where two runs differ first: how they ended, else the first line printed, or what its lines do not show."""
    if before.ended != after.ended:
        return f"how it ended: {_ending_change(before, after)}"
    return _output_change(before, after)


def _ending_change(before: Printed, after: Printed) -> str:
    return f"{_around(before.ended, after.ended)} → {_around(after.ended, before.ended)}"


def _output_change(before: Printed, after: Printed) -> str:
    """How the output of two runs with different digests differs: its first line that does, or what lines hide."""
    difference = first_difference(before.lines, after.lines)
    if difference:
        return difference
    if before.cut or after.cut:
        return f"{KEPT} is the same, what came before it is not"
    # lines read alike, bytes do not: line ends, controls, not UTF-8
    return (
        "bytes its lines do not show (a line's end, \\r or \\f, or bytes that are not UTF-8): compare its output "
        "byte by byte"
    )


def first_difference(old: Sequence[str], new: Sequence[str]) -> str:
    """The first line where two outputs differ: ``line 1: 'tensor(0.)' → 'tensor(28.)'``; '' when none does.

    A long line is shown around where it changes.
    """
    for number, (before, after) in enumerate(itertools.zip_longest(old, new), start=1):
        if before != after:
            return f"line {number}: {_around(before, after)} → {_around(after, before)}"
    return ""


def _around(line: str | None, other: str | None, width: int = 60) -> str:
    """``line`` as shown beside ``other``: whole if short, else from a little before where they differ."""
    if line is None:
        return "nothing"
    if len(line) <= width:
        return repr(line)
    start = next(
        (i for i, (a, b) in enumerate(zip(line, other or "", strict=False)) if a != b), min(len(line), len(other or ""))
    )
    start = max(0, start - 10)
    shown = ("…" if start else "") + line[start : start + width] + ("…" if start + width < len(line) else "")
    return repr(shown)
