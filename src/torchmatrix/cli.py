"""``torchmatrix SESSION …`` (and ``python -m torchmatrix``): the noxfile's sessions in any folder, with no noxfile.

``torchmatrix bisect repro.py --from 1.9 --to 2.2`` runs the ``bisect`` session of
the noxfile shipped in the package (``standalone/noxfile.py``) with nox's ``-f``,
on a matrix chosen this way:

- ``--matrix FILE``, or ``matrix.yaml`` in the current folder when there is one;
- otherwise the default matrix (cpu alone, no probes of its own), written once as
  ``matrix.yaml`` in the output folder (``--output``, default
  :data:`DEFAULT_OUTPUT`), whose results then go there too.

The environments go to ``.nox`` beside that matrix, as a noxfile beside it would
keep them. Paths given on the command line are made absolute first, since nox runs
in the noxfile's folder; the pairs run from the folder the command was started in
(``$TORCHMATRIX_WORKDIR``), as ``python repro.py`` would. Scripts named to ``probe`` and ``plan`` are their probes
(``$TORCHMATRIX_PROBES``), ``--torch`` their releases (``$TORCHMATRIX_TORCH``);
``--with REQ`` (repeatable) installs REQ in every cell beside the matrix's
``requires:`` (``$TORCHMATRIX_REQUIRES``); every other word goes to the session
as it is. ``torchmatrix SESSION --help`` is answered here, from the session's own
parser: no matrix is written, no nox started.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from . import __version__, variables
from .bisection import request
from .errors import HelpShown, TorchmatrixError, UsageError, did_you_mean, say
from .matrix import loader, schema
from .sessions import childnox, clean, installed, plan, probe, verify
from .util import tethered
from .util.arguments import Parser
from .views import options

STANDALONE = Path(__file__).with_name("standalone")
NOXFILE = STANDALONE / "noxfile.py"
DEFAULT_MATRIX = STANDALONE / "matrix.yaml"
DEFAULT_OUTPUT = "torchmatrix-results"
"""The output folder, in the current folder, when there is no matrix.yaml there and no ``--output``."""


@dataclass(frozen=True)
class Command:
    usage: str
    does: str
    arguments: Callable[[str | None], Parser]
    """The session's parser of its arguments, given the command's name for its usage line: the help it prints."""
    takes_scripts: bool = False
    """Its words that are not options are the probes to run, and ``--torch`` names its releases."""


COMMANDS = {
    "bisect": Command(
        "torchmatrix bisect (SCRIPT | PROBE | --all) --from OLD --to NEW [bisect's options]",
        "the first torch release whose outcome (or output, with `--by-output`) is NEW's",
        request.arguments_parser,
    ),
    "probe": Command(
        "torchmatrix probe [SCRIPT …] [--torch V[,V…]] [--force] [--repeat N] [--strict]",
        "run the scripts (or the matrix's probes) in each release, then print the table",
        probe.arguments_parser,
        takes_scripts=True,
    ),
    "plan": Command(
        "torchmatrix plan [SCRIPT …] [--torch V[,V…]]",
        "each cell's Python, requirements and status, and what each release keeps on disk; nothing is built",
        plan.arguments_parser,
        takes_scripts=True,
    ),
    "report": Command(
        "torchmatrix report [--format F[,F…]] [--all-cells] [--diff OTHER]",
        "render the stored results",
        options.arguments_parser,
    ),
    "verify": Command(
        "torchmatrix verify [--run] [--machine NAME]",
        "check the stored results against `expect:`",
        verify.arguments_parser,
    ),
    "clean": Command(
        "torchmatrix clean RELEASE [RELEASE …] [--dry-run]",
        "remove releases' environments and the cached wheels no other release keeps",
        clean.arguments_parser,
    ),
    "probe-installed": Command(
        "torchmatrix probe-installed PYTHON [PYTHON …]",
        "run the probes in a torch installed already",
        installed.arguments_parser,
    ),
}
"""The sessions the command runs, each as ``nox -s NAME`` would: the docs' reference lists them from here."""

COMMAND = "torchmatrix"
"""The command's name, as its sessions' usage lines give it."""
USAGE = "torchmatrix [--matrix FILE] [--output DIR] [--with REQUIREMENT …] SESSION [ARGUMENTS …]"
OWN_OPTIONS = ("--matrix", "--output", "--with")
"""Options of the command itself, taken out wherever they stand: no session has options of these names."""


@dataclass(frozen=True)
class Invocation:
    """What one command line runs: a nox command and the variables it adds."""

    argv: tuple[str, ...]
    environ: Mapping[str, str] = field(default_factory=dict)
    matrix: Path = Path()
    output: Path | None = None
    """Where results go, when the command chose it (``--output``, or the default matrix's folder); None: the
    matrix's ``output:``."""
    written: bool = False
    """Whether the default matrix was written by this command."""


def invocation(argv: Sequence[str], cwd: Path, python: str = sys.executable) -> Invocation:
    """The nox command line ``torchmatrix ARGV`` runs from ``cwd``, writing the default matrix where it needs it."""
    own, words = _own_options(list(argv))
    if not words:
        raise UsageError(f"name a session\n  usage: {USAGE}")
    name, *rest = words
    if name not in COMMANDS:
        hint = did_you_mean(name, COMMANDS, f"sessions: {', '.join(COMMANDS)}")
        raise UsageError(f"no session {name!r}\n  usage: {USAGE}\n  hint: {hint}")
    command = COMMANDS[name]
    environ: dict[str, str] = {}
    scripts: list[str] = []
    if command.takes_scripts:
        scripts, torch, rest = _scripts_and_releases(rest)
        if torch:
            environ[variables.TORCH.name] = torch
    rest = [_absolute(word, cwd) for word in rest]
    matrix, output = _matrix(own, cwd)
    for script in scripts:
        _refuse_missing(script, cwd, matrix.parent, command)
    written = not matrix.is_file()  # the default matrix, written once a mistake can no longer stop the command
    if written:
        _write_default(matrix)
    if scripts:
        environ[variables.PROBES.name] = ",".join(_absolute(script, cwd) for script in scripts)
    if output is not None and output != matrix.parent:  # the default matrix's output is its own folder
        environ[variables.OUTPUT.name] = str(output)
    environ[variables.MATRIX.name] = str(matrix)
    environ[variables.WORKDIR.name] = str(cwd.absolute())  # where `python repro.py` would run, whatever the matrix
    if own.get("--with"):
        environ[variables.REQUIRES.name] = own["--with"]
    nox = childnox.nox_command(python, NOXFILE, matrix.parent / ".nox")
    nox += ["--sessions", name, *(["--", *rest] if rest else [])]
    return Invocation(tuple(nox), environ, matrix, output, written)


def shows_help(argv: Sequence[str]) -> bool:
    """Whether ``torchmatrix ARGV`` asks for its session's help (``-h``, ``--help``, where that session's parser
    reads them so), which is then printed, as the session would print it: nothing is written, no nox is started."""
    words = _own_options(list(argv))[1]
    if not words or words[0] not in COMMANDS:
        return False  # no session: what invocation() refuses
    name, *rest = words
    parser = COMMANDS[name].arguments(COMMAND)
    if COMMANDS[name].takes_scripts:  # the words the command reads for the session, which its help names too
        parser.add_argument("scripts", nargs="*", metavar="SCRIPT", help="a script, test or probe to run as a probe")
        parser.add_argument("--torch", metavar="V[,V…]", help="only these releases (repeatable)")
    parser.epilog = f"The command's own options ({', '.join(OWN_OPTIONS)}): {COMMAND} --help."
    try:
        parser.parse_known_args(rest)
    except HelpShown:
        return True
    except UsageError:  # the session reads its arguments and says their mistakes where it runs
        pass
    return False


def help_text() -> str:
    width = max(map(len, COMMANDS))
    lines = [f"usage: {USAGE}", "", "Run a torchmatrix session in any folder, with no noxfile.", "", "sessions:"]
    lines += [f"  {name:<{width}}  {command.does.replace('`', '')}" for name, command in COMMANDS.items()]
    lines += [
        "",
        "options:",
        "  --matrix FILE  the matrix (default: matrix.yaml here, else the default matrix in the output folder)",
        f"  --output DIR   where results go (default: the matrix's output:, or ./{DEFAULT_OUTPUT})",
        "  --with REQ     also install REQ in every cell (repeatable), as a bug report's requirements ask: numpy",
        "",
        f"`torchmatrix SESSION --help` shows a session's own options. torchmatrix {__version__}",
    ]
    return "\n".join(lines)


def _own_options(words: list[str]) -> tuple[dict[str, str], list[str]]:
    own: dict[str, str] = {}
    rest: list[str] = []
    extra: list[str] = []  # --with, as often as given
    index = 0
    while index < len(words):
        word = words[index]
        option, equals, value = word.partition("=")
        if option in OWN_OPTIONS:
            if not equals:
                index += 1
                if index == len(words) or words[index].startswith("-"):
                    raise UsageError(f"{option} needs a value\n  usage: {USAGE}")
                value = words[index]
            if option == "--with":
                extra.append(value)
            else:
                own[option] = value
        else:
            rest.append(word)
        index += 1
    if extra:
        own["--with"] = "\n".join(extra)
    return own, rest


def _scripts_and_releases(words: list[str]) -> tuple[list[str], str, list[str]]:
    """The words that are not options (the scripts), ``--torch``'s value, and the session's own words."""
    scripts: list[str] = []
    torch: list[str] = []
    rest: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        option, equals, value = word.partition("=")
        if option == "--torch":
            if not equals:
                index += 1
                if index == len(words):
                    raise UsageError(f"--torch needs releases, e.g. --torch 1.12.1,2.2.0\n  usage: {USAGE}")
                value = words[index]
            torch.append(value)
        elif word.startswith("-"):
            rest.append(word)
            if option == "--repeat" and not equals and index + 1 < len(words):  # probe's one option with a value
                index += 1
                rest.append(words[index])
        else:
            scripts.append(word)
        index += 1
    return scripts, ",".join(torch), rest


def _absolute(word: str, cwd: Path) -> str:
    """``word`` with its path made absolute from ``cwd`` where it names a file or folder there (or ``--x=PATH``)."""
    option, equals, value = word.partition("=")
    if equals and option.startswith("--"):
        return f"{option}={_absolute(value, cwd)}"
    if word.startswith("-") or not word:
        return word
    target, separator, test = word.partition("::")  # a test's node id: tests/test_dot.py::test_grad
    path = Path(target).expanduser()
    if path.is_absolute() or not (cwd / path).exists():
        return word
    return str((cwd / path).absolute()) + separator + test


def _refuse_missing(script: str, cwd: Path, beside: Path, command: Command) -> None:
    """A script that names nothing here, nor beside the matrix (``beside``), nor a probe in its probes/, is refused
    as it was typed, with the closest it may have meant: a file here, or a probe of the matrix's."""
    target = script.partition("::")[0]
    probes = beside / "probes"
    if any((folder / target).exists() for folder in (cwd, beside)) or (
        schema.PROBE_NAME.match(script) and (probes / f"{script}.py").is_file()
    ):
        return
    named = bool(schema.PROBE_NAME.match(script))  # it may have meant a probe of the matrix's
    near = loader.nearby(target, cwd) + (loader.available_probes(probes) if named else [])
    hint = did_you_mean(target, near, "a script's path is relative to the folder you are in")
    nor = f", nor a probe of that name in {probes}" if named else ""
    raise UsageError(f"no file {target!r} in {cwd}{nor}\n  usage: {command.usage}\n  hint: {hint}")


def _matrix(own: Mapping[str, str], cwd: Path) -> tuple[Path, Path | None]:
    """The matrix file (the default one, in the output folder, where none is named or here, which may not be
    written yet), and the output folder the command chose (None: the matrix's)."""
    given = (cwd / Path(own["--output"]).expanduser()).absolute() if own.get("--output") else None
    if own.get("--matrix"):
        named = (cwd / Path(own["--matrix"]).expanduser()).absolute()
        if not named.is_file():
            raise UsageError(f"--matrix {own['--matrix']}: no such file")
        return named, given
    if (cwd / "matrix.yaml").is_file():
        return (cwd / "matrix.yaml").absolute(), given
    output = given or (cwd / DEFAULT_OUTPUT).absolute()
    return output / "matrix.yaml", output


def _write_default(matrix: Path) -> None:
    """Write the default matrix as ``matrix``, or raise a :class:`TorchmatrixError` saying why it cannot."""
    try:
        matrix.parent.mkdir(parents=True, exist_ok=True)
        matrix.write_text(DEFAULT_MATRIX.read_text(encoding="utf-8"), encoding="utf-8")
    except OSError as error:
        raise TorchmatrixError(
            f"cannot write the default matrix to {matrix}: {error.strerror or error}\n"
            "  hint: name a folder you can write in with --output DIR"
        ) from None


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``torchmatrix ARGV``: one nox session of the packaged noxfile; its exit status."""
    words = sys.argv[1:] if argv is None else list(argv)
    if words[:1] in ([], ["-h"], ["--help"]):
        print(help_text())
        return 0 if words else 2
    if words == ["--version"]:
        print(f"torchmatrix {__version__}")
        return 0
    try:
        if shows_help(words):
            return 0
        run = invocation(words, Path.cwd())
    except TorchmatrixError as error:
        say(error)
        return error.exit_code
    if run.written:
        print(f"torchmatrix: no matrix.yaml here: wrote the default one, {run.matrix}", file=sys.stderr)
    where = f"results in {run.output}" if run.output else "results in the folder its output: names"
    print(f"torchmatrix: matrix {run.matrix}; {where}", file=sys.stderr, flush=True)
    try:
        status = tethered.run(run.argv, env={**os.environ, **run.environ})
    except KeyboardInterrupt:
        return 130
    return status if status >= 0 else 128 - status  # nox ended by a signal: as a shell says it (SIGTERM: 143)
