"""The project a nox run works on: the matrix, its plan, and what a cell's result depends on.

config -> plan, made once when the noxfile loads; the session modules
(:mod:`torchmatrix.sessions`) take it from there.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from . import core, freshness, identity, interpreters, results, variables
from .environment import cellenv, disk, givenenv, library
from .errors import ConfigError, TorchmatrixError, UsageError
from .index import releases
from .index.findlinks import pip_find_links
from .index.releases import Listing
from .interpreters import Interpreter
from .matrix import DEFAULT_INDEX_URL, Matrix, PinRule, TorchEntry, kinds, loader, schema
from .planner import KNOWN_PINS_FILE, Cell, plan
from .results import CellResult
from .util.arguments import typed
from .worker import runner

PYTEST = "pytest"
"""What a cell whose probes may be tests installs, unless its requirements name a pytest of their own."""


@dataclass(frozen=True)
class Project:
    """A loaded matrix with its plan: everything the sessions need."""

    matrix: Matrix
    cells: tuple[Cell, ...]
    machine: str
    find_links: tuple[str, ...]
    listing: Listing
    interpreters: tuple[Interpreter, ...]
    platforms: tuple[str, ...]
    known_pins: tuple[PinRule, ...]
    given_probes: tuple[str, ...] = ()
    """The probes named for this run instead of the matrix's (``$TORCHMATRIX_PROBES``), as a child nox gets them."""
    caller: Mapping[str, str] = dataclasses.field(default_factory=dict, hash=False)
    """The environment nox was started in: what ``pass_env:`` and the variables that steer torch are taken from."""
    hardware: identity.Machine = identity.Machine("", "")
    """How this machine computes, whatever its name: stored with each of its results (:func:`load` asks it)."""
    envdir: Path | None = None
    """The folder of the cells' environments (nox's ``--envdir``) where a session runs: the environment a run now
    would take tells which torch build and packages it would find (:meth:`environment_now`); None: not known."""
    _run_inputs: dict[tuple[str, str | None], dict[str, object] | None] = dataclasses.field(
        default_factory=dict, init=False, compare=False, repr=False
    )
    """What a run now would make a stored result from, by its (torch, Python asked): worked out once per result of
    :meth:`identity_now`, not once per record (a test suite's result holds a record per test)."""
    _installed_parts: dict[str, dict[str, object]] = dataclasses.field(
        default_factory=dict, init=False, compare=False, repr=False
    )
    """What each Python with a torch installed already says of its environment (:meth:`installed_inputs`), asked
    once."""

    @property
    def offline(self) -> bool:
        """The index could not be read when the plan was made: uv installs from its cache alone."""
        return self.listing.offline

    def torch_releases(self) -> list[str]:
        """Every torch version the index and find-links list, as released and as built (``2.13.0``, ``2.13.0+cpu``):
        what a script's output may name of any release, which by-output compares as the same text in every cell."""
        return sorted({text for wheel in self.listing.wheels for text in (str(wheel.version), wheel.version.public)})

    @property
    def notes(self) -> tuple[str, ...]:
        """What the listing says of its freshness (e.g. a cached copy used offline)."""
        return self.listing.notes

    @property
    def results_dir(self) -> Path:
        return self.matrix.output / "results"

    @property
    def machine_dir(self) -> Path:
        """Where this machine's results go."""
        return self.results_dir / self.machine

    def refuse_unlisted(self, command: str | None = None) -> None:
        """Raise the mistake of a matrix release the index (read just now) does not list: ``2.0.3``, a typo; its hint
        names the ``command`` that started the session (nox's: None).

        Asked by the sessions that run the matrix's releases, before any of them runs, not when the noxfile
        loads: a bisect's ``--index-url`` may list what the matrix's index does not. A release with wheels for
        other platforms only is a cell (``no-wheel``), and so is any release while the index cannot be read: an
        old listing may not know a new release yet.
        """
        if not self.listing.known or self.listing.offline:
            return
        for number, entry in enumerate(self.matrix.torch):
            if self.listing.wheels_for(entry.version):
                continue
            problem = self.listing.missing(entry.version)
            if entry.line is None:
                raise UsageError(f"{variables.TORCH.name}: {problem}")
            hint = f"`{typed(command, 'plan')}` lists the cells; torch's releases are those on the index's torch page"
            raise ConfigError(str(self.matrix.file), entry.line, f"torch[{number}]", problem, hint)

    def require_writable(self, folder: Path) -> None:
        """Raise a :class:`ConfigError` unless ``folder`` can be written in: asked by the sessions that write.

        Not asked at loading: a read-only output folder must not stop what only reads (``nox -l``, plan, verify).
        """
        problem = _unwritable(folder)
        if problem:
            hint = f"name a folder you can write in (`output:`, or ${variables.OUTPUT.name} for one run)"
            raise ConfigError(str(self.matrix.file), None, "output", problem, hint)

    def with_repeat(self, repeat: int) -> Project:
        """This project with each (probe, device) pair run ``repeat`` times (``-- --repeat N``)."""
        return dataclasses.replace(self, matrix=dataclasses.replace(self.matrix, repeat=repeat))

    def with_sources(self, index_url: str, find_links: Sequence[str]) -> Project:
        """This project installing torch from ``index_url`` and ``find_links`` (bisect's ``--index-url``, ...)."""
        matrix = dataclasses.replace(self.matrix, index_url=index_url, find_links=tuple(find_links))
        return dataclasses.replace(self, matrix=matrix, find_links=tuple(find_links))

    def plan_release(self, version: Version, listing: Listing | None = None, python: str | None = None) -> Cell:
        """The cell ``TORCHMATRIX_TORCH=<version> nox -s probe`` runs (the first, if the matrix pins Pythons);
        with ``python``, the one it runs on that Python (``TORCHMATRIX_PYTHON``, as a bisect holds one)."""
        matrix = with_releases(self.matrix, [version])
        if python is not None:
            matrix = with_python(matrix, python)
        needs = library.requires_python(matrix.project)
        return plan(matrix, listing or self.listing, self.interpreters, self.platforms, self.known_pins, needs)[0]

    def with_only(self, entry: str) -> Project:
        """This project with one probe, ``entry`` (a path, or a test's node id), as ``$TORCHMATRIX_PROBES`` gives it."""
        probes = loader.given_probes([entry], self.matrix.probes_from, self.matrix.named_probes, self.matrix.devices,
                                     self.matrix.probes)  # fmt: skip
        matrix = dataclasses.replace(self.matrix, probes=probes, expect=())
        return dataclasses.replace(self, matrix=matrix, given_probes=(entry,))

    def stored(self, found: Iterable[CellResult]) -> dict[tuple[Version, str | None], CellResult]:
        """This machine's newest result per cell, by (torch release, the Python the matrix asked for)."""
        mine = results.latest(result for result in found if result.machine == self.machine)
        return {(results.version_of(result.torch), result.python_request): result for result in mine}

    # --- session parameters --------------------------------------------------

    def session_parameters(self) -> list[tuple[str | bool, str]]:
        """(python, cell parameter) per probe session: the interpreter's path, or False for a cell that cannot run.

        The parameter is a plain string, not the cell: nox writes parameters as JSON
        (``nox --report``, and every session under ``nox -j``), and for a CI
        job reading ``nox -l --json`` a plain id is the useful value. Where
        results cannot be written, no cell gets an environment: nox would make
        it before the session says so.
        """
        writable = not _unwritable(self.machine_dir)
        return [
            (cell.interpreter.path if cell.interpreter and not cell.outcome and writable else False, cell.parameter)
            for cell in self.cells
        ]

    def session_ids(self) -> list[str]:
        return [cell.parameter for cell in self.cells]

    def session_tags(self) -> list[list[str]]:
        """nox's tags of each probe session: its torch minor and its Python (``nox -t torch-2.2``, ``nox -t py3.11``).

        The sessions' Pythons are paths (the planner found them outside PATH too), so ``nox -p 3.11`` matches
        none of them: the tags are how to choose by Python.
        """
        return [
            [f"torch-{cell.torch.major}.{cell.torch.minor}", *([f"py{cell.python}"] if cell.python else [])]
            for cell in self.cells
        ]

    # --- cells ---------------------------------------------------------------

    def cell(self, parameter: str) -> Cell:
        """The cell whose probe session is ``probe(<parameter>)``.

        Under ``nox -j`` each session's nox plans again: a matrix edited in between may have no such cell.
        """
        found = next((cell for cell in self.cells if cell.parameter == parameter), None)
        if found is None:
            raise TorchmatrixError(f"probe({parameter}) is no longer in the plan of {self.matrix.file}: run nox again")
        return found

    def installer_options(self) -> list[str]:
        """Where the installer looks for torch: the matrix's index and the find-links in effect."""
        options = [option for link in self.find_links for option in ("--find-links", link)]
        if self.matrix.index_url != DEFAULT_INDEX_URL:
            options += ["--index-url", self.matrix.index_url]
        return options

    def install_requirements(self, cell: Cell, *, build: bool = True) -> list[str]:
        """What a cell installs: its requirements (torch and its pins), the matrix's ``project:``, then each
        probe's own, once. The project is its wheel, built where needed; ``build=False`` names its folder."""
        own = [] if self.matrix.project is None else [f"{library.distribution_name(self.matrix.project)} (built)"]
        if build and self.built_library:
            own = [str(self.built_library.wheel)]
        return list(dict.fromkeys([*cell.requirements, *own, *self._probes_requirements(cell)]))

    def installed_names(self, cell: Cell) -> list[str]:
        """The packages besides torch that a cell names, to install, to bound or as its seed: what its fingerprint
        lists the versions of (None where it has none)."""
        wanted = [*cell.requirements[1:], *self._probes_requirements(cell), *cell.constraints, *cell.seed]
        own = [self.built_library.name] if self.built_library else []
        return list(dict.fromkeys([*own, *(Requirement(requirement).name for requirement in wanted)]))

    def _probes_requirements(self, cell: Cell) -> list[str]:
        """Each probe's own requirements, and pytest where a probe is tests, or a file pytest is asked about, and
        nothing else names it: the matrix decides, so every cell of it installs one package set."""
        listed = [requirement for probe in self.matrix.probes for requirement in probe.requires]
        named = {Requirement(requirement).name.lower() for requirement in [*cell.requirements, *listed]}
        tests = any(probe.kind.may_be_tests for probe in self.matrix.probes)
        return [*listed, *([PYTEST] if tests and PYTEST not in named else [])]

    @functools.cached_property
    def built_library(self) -> library.Built | None:
        """The matrix's ``project:``, built into a wheel (once per change of what it packs); None without one."""
        if self.matrix.project is None:
            return None
        return library.build(self.matrix.project)

    def pairs(self) -> list[core.Pair]:
        """Every (probe, device) pair a cell runs, in the order it runs them: each probe on the devices it runs on."""
        return [
            core.Pair(probe, device)
            for probe in self.matrix.probes
            for device in self.matrix.devices
            if probe.runs_on(device)
        ]

    def with_stored_probes(self, found: Iterable[CellResult]) -> Project:
        """This project with each probe that the records ``found`` were made by and no probe of its matrix makes, as a
        run is given it (:func:`loader.given_probes`: a script, a folder or file of tests, a test's node id, a probe's
        name), as a probe of it: one a run was given (the ``torchmatrix`` command's,
        whose matrix may list probes of its own besides) is then judged as a run of it now would make it, its torch
        build, packages and folder and all, not as another matrix's, asked what it read alone."""
        matrix, probes = self.matrix, list[core.Probe]()
        names = [identity.maker(record)[0] for result in found for record in result.records]  # a node id, a file
        for name in dict.fromkeys(name for name in names if self.owner(name) is None):
            # None a run could be given now (another matrix's, or a script broken since): its records are stale by
            # what they read, their probe's file among it.
            with contextlib.suppress(TorchmatrixError, OSError):
                probes += loader.given_probes([name], matrix.probes_from, matrix.named_probes, matrix.devices)
        if not probes:
            return self
        return dataclasses.replace(self, matrix=dataclasses.replace(matrix, probes=matrix.probes + tuple(probes)))

    def owner(self, record_name: str) -> core.Probe | None:
        """The probe of the matrix that makes records named ``record_name``: itself, or the tests holding that test."""
        return next((probe for probe in self.matrix.probes if probe.covers(record_name)), None)

    def record_inputs(
        self, run_inputs: dict[str, object], record_name: str, device: str | None = None
    ) -> dict[str, object]:
        """What a record named ``record_name`` of a run from ``run_inputs`` on ``device`` is made from, the probe that
        made it too (:func:`identity.record_inputs`)."""
        owner = self.owner(record_name)
        return identity.record_inputs(run_inputs, record_name, owner.name if owner else None, device)

    def identity_now(self, result: CellResult, record: core.Record) -> dict[str, object] | None:
        """What a run now would make ``record`` of the stored ``result`` from; None when no cell of this matrix
        would make it (:class:`freshness.RunNow`).

        A cell of the plan, or else the cell a run of that release on that Python would be (``--torch``,
        ``$TORCHMATRIX_PYTHON``): a release bisect built, a Python it held, or one the matrix pinned once, is
        a cell that is not the matrix's (the report says so, :mod:`torchmatrix.views.cells`), whose record
        is as fresh as it is. A record measured in a torch installed already is made from its probe and the
        folder it ran from alone.
        """
        if result.session == results.INSTALLED_SESSION:
            python = str(result.inputs.get("installed_python", ""))
            return self.record_inputs(self.installed_inputs(python), record.probe, record.device)
        key = (result.torch, result.python_request)
        if key not in self._run_inputs:
            cell = self._cell_of(result)
            self._run_inputs[key] = None if cell is None else self.inputs(cell, self.environment_now(cell))
        run_inputs = self._run_inputs[key]
        return None if run_inputs is None else self.record_inputs(run_inputs, record.probe, record.device)

    def _cell_of(self, result: CellResult) -> Cell | None:
        for cell in self.cells:
            if str(cell.torch) == result.torch and cell.python_request == result.python_request:
                return cell
        try:
            version = Version(result.torch)
        except InvalidVersion:
            return None
        return self.plan_release(version, python=result.python_request)

    def identified(self, run_inputs: dict[str, object], record: core.Record) -> core.Record:
        """``record`` with its whole identity: the inputs of its run, and what its pair read (:data:`identity.READ`)."""
        read = {identity.READ: record.inputs[identity.READ]} if identity.READ in record.inputs else {}
        made = self.record_inputs(run_inputs, record.probe, record.device)
        return dataclasses.replace(record, inputs={**made, **read})

    def result_file(self, cell: Cell) -> Path:
        """Where the cell's result on this machine is stored."""
        return results.result_path(self.results_dir, self.machine, cell.id)

    def pair_environment(self, python: str) -> dict[str, str]:
        """What every pair of a cell whose Python is ``python`` sees (:func:`identity.pair_environment`), and the
        folder of inputs its machine's pairs share (:data:`variables.INPUTS`)."""
        seen = identity.pair_environment(python, dict(self.matrix.env), self.matrix.pass_env, self.caller)
        return {**seen, variables.INPUTS.name: str(results.inputs_path(self.results_dir, self.machine))}

    def environment_identity(self) -> dict[str, object]:
        """What of the pairs' environment a record depends on (:func:`identity.environment_identity`)."""
        return identity.environment_identity(dict(self.matrix.env), self.matrix.pass_env, self.caller)

    def unseen_variables(self) -> list[str]:
        """The caller's variables no pair sees (:func:`identity.left_out`): what the plan names."""
        return identity.left_out(dict(self.matrix.env), self.matrix.pass_env, self.caller)

    def inputs(self, cell: Cell, env: Path | None = None) -> dict[str, object]:
        """What the cell's result depends on, made here alone: a change in any of it makes the stored result stale.

        What only the environment on disk tells (:attr:`identity.Part.on_disk`) is read from ``env``, the cell's
        environment, where the probe session has one: its package set, and its torch build once that torch imported
        there (:func:`cellenv.built_torch`; None before, which nothing stored stands for).
        """
        return {
            **({} if env is None else {identity.TORCH_BUILD: cellenv.built_torch(env)}),
            **({} if env is None else {identity.PACKAGES: cellenv.package_set(env)}),
            "requirements": self.install_requirements(cell, build=False),
            identity.CONSTRAINTS: list(cell.constraints),
            identity.VENV_SEED: list(cell.seed),
            "interpreter": cell.interpreter.path if cell.interpreter else None,
            "python_version": ".".join(map(str, cell.interpreter.version)) if cell.interpreter else None,
            identity.INTERPRETER_BUILD: interpreters.build(cell.interpreter.path) if cell.interpreter else None,
            "devices": list(self.matrix.devices),
            "timeout": self.matrix.timeout,
            "repeat": self.matrix.repeat,
            "probes": dict(self._probe_hashes),
            "worker": self._worker_hash,
            "project": f"{self.built_library.name} {self.built_library.contents}" if self.built_library else None,
            "index": identity.build_source(self.matrix.index_url, self.find_links),
            **self._reaching_the_pairs(),
            "seed": identity.SEED,
            "workdir": identity.folder_text(self.matrix.run_from),
            **self._options(),
        }

    def environment_now(self, cell: Cell) -> Path | None:
        """The environment of ``cell`` a run now would take as it is: in :attr:`envdir`, or in the folder of the
        Python a bisect holds, made with the cell's Python, its torch installed in full from the cell's index and
        imported, for what the cell asks (:func:`environment_asks`). None where there is none (a run would build
        one), or where both are and hold other builds or packages: which a run takes is its own to say (a bisect
        that holds the Python takes its own)."""
        if self.envdir is None or cell.interpreter is None:
            return None
        inputs, source = self.inputs(cell), identity.build_source(self.matrix.index_url, self.find_links)
        taken: dict[Path, tuple[str, str | None]] = {}
        for folder in dict.fromkeys([self.envdir, disk.envdir_for(self.envdir, cell.python_request)]):
            env = disk.environment_of(folder, cell.parameter)
            build = cellenv.built_torch(env)
            if build is not None and not (
                cellenv.interpreter_mismatch(env, cell.interpreter)
                or cellenv.source_mismatch(env, source)
                or cellenv.asked_mismatch(env, environment_asks(inputs))
            ):
                taken[env] = (build, cellenv.package_set(env))
        return next(iter(taken)) if len(set(taken.values())) == 1 else None

    def installed_inputs(self, python: str) -> dict[str, object]:
        """What a record measured in the torch installed already in ``python`` is made from: its probe, its options,
        the folder it runs from, what reaches its pairs from this machine, and what ``python``'s environment says of
        itself where it is here (:func:`givenenv.parts`). Not what a cell's install is made from (requirements,
        constraints, seed, index), which nothing installed; nor the timeout, the runs per pair and the worker, which
        such records made before did not hold."""
        if python not in self._installed_parts:
            self._installed_parts[python] = givenenv.parts(python)
        return {
            **self._installed_parts[python],
            "probes": dict(self._probe_hashes),
            **self._reaching_the_pairs(),
            "workdir": identity.folder_text(self.matrix.run_from),
            **self._options(),
        }

    def _reaching_the_pairs(self) -> dict[str, object]:
        """What reaches every pair from this machine and the caller: the variables, the CPUs, the resource limits,
        the credentials and the rest of the process state they inherit."""
        return {
            identity.ENVIRONMENT: self.environment_identity(),
            identity.CPUS: identity.usable_cpus(),
            identity.LIMITS: identity.resource_limits(),
            identity.CREDENTIALS: identity.credentials(),
            identity.PROCESS: identity.inherited(),
        }

    def _options(self) -> dict[str, object]:
        """The probes' options, by probe, where the matrix gives any: what :func:`identity.record_inputs` reads."""
        options = {probe.name: probe.options for probe in self.matrix.probes if probe.options}
        return {"probe_options": options} if options else {}

    def up_to_date(
        self,
        cell: Cell,
        stored: Mapping[tuple[Version, str | None], CellResult],
        pairs: Iterable[tuple[str, str]],
    ) -> CellResult | None:
        """The cell's result among ``stored`` (see :meth:`stored`) if its records of ``pairs`` (probe, device) stand.

        The torch build and the packages are compared where the environment a run would take is there
        (:meth:`environment_now`); elsewhere nothing but installing tells which a new run would get. A result made on
        another machine identity, though filed under this machine's name, stands for no run here
        (:func:`freshness.made_elsewhere`), as the report and a probe run say.
        """
        result = stored.get((cell.torch, cell.python_request))
        if result is None or result.outcome is not None or freshness.made_elsewhere(result, self.hardware):
            return None
        inputs, digests = self.inputs(cell, self.environment_now(cell)), identity.FileDigests()
        records = {(record.probe, record.device): record for record in result.records}
        for probe, device in pairs:
            record = records.get((probe, device))
            if record is None or not freshness.answers_for(record, self.record_inputs(inputs, probe, device), digests):
                return None
        return result

    # Read once per run: bisect and verify ask for many cells' inputs.
    @functools.cached_property
    def _probe_hashes(self) -> dict[str, str]:
        return {probe.name: self._probe_digest(probe) for probe in self.matrix.probes}

    def _probe_digest(self, probe: core.Probe) -> str:
        """What a probe's records depend on of it (:func:`kinds.digest`), and where it is from the matrix's folder
        where its name is from another (``probes_root:``): that name means another file once ``probes_root:``
        changes."""
        digest = kinds.digest(probe)
        if self.matrix.probes_root is None:
            return digest
        where = Path(os.path.relpath(probe.path, self.matrix.file.parent)).as_posix()
        return hashlib.sha256(f"{where}\0{digest}".encode()).hexdigest()

    @functools.cached_property
    def _worker_hash(self) -> str:
        """The sha256 of the whole of the code that runs in a cell: the worker, its package and its pytest plugin."""
        digest = hashlib.sha256()
        for path in runner.WORKER_FILES:
            digest.update(path.relative_to(runner.WORKER.parent).as_posix().encode() + b"\0" + path.read_bytes())
        return digest.hexdigest()


def load(root: Path, environ: dict[str, str] | None = None) -> Project:
    """Read the matrix (``$TORCHMATRIX_MATRIX`` or ``root/matrix.yaml``) and plan its cells.

    The variables of :mod:`torchmatrix.variables` replace what they name; everything else of the matrix stays.
    """
    environ = dict(os.environ if environ is None else environ)
    matrix_file = Path(variables.MATRIX.get(environ) or root / "matrix.yaml")
    if not matrix_file.is_file():
        hint = f"{variables.MATRIX.name} names it" if variables.MATRIX.get(environ) else "write one (see README)"
        raise ConfigError(str(matrix_file.absolute()), None, "", "no such matrix file", hint)
    output = Path(variables.OUTPUT.get(environ)).absolute() if variables.OUTPUT.get(environ) else None
    probes = [entry.strip() for entry in variables.PROBES.get(environ).split(",") if entry.strip()] or None
    matrix = loader.load_matrix(matrix_file, probes_dir=root / "probes", output=output, probes=probes)
    if variables.TORCH.get(environ):
        matrix = with_releases(matrix, _releases_from(variables.TORCH.get(environ)))
    if variables.PYTHON.get(environ):
        matrix = with_python(matrix, _python_from(variables.PYTHON.get(environ)))
    if variables.REQUIRES.get(environ):
        matrix = dataclasses.replace(matrix, requires=(*matrix.requires, *_requirements_from(environ)))
    matrix = _with_index(matrix, environ)
    if variables.WORKDIR.get(environ):
        matrix = dataclasses.replace(matrix, workdir=_workdir_from(variables.WORKDIR.get(environ)))
    find_links = matrix.find_links if matrix.find_links is not None else pip_find_links(environ)
    listing = releases.listing(matrix.index_url, find_links, wanted=[entry.version for entry in matrix.torch])
    matrix = as_listed(matrix, listing)
    found = tuple(interpreters.discover(environ))
    platforms = tuple(interpreters.host_platforms())
    known_pins = loader.load_pin_rules(KNOWN_PINS_FILE)
    cells = plan(matrix, listing, found, platforms, known_pins, library.requires_python(matrix.project))
    hardware = identity.this_machine()
    named = variables.MACHINE.get(environ) or matrix.machine or hardware.name()
    for variable in (variables.MACHINE, variables.MACHINE_LABEL):
        given = variable.get(environ)
        if given and schema.machine_name_problem(given):
            problem, example = schema.machine_name_problem(given), schema.machine_name_example(given)
            raise UsageError(f"{variable.name}: {problem}\n  hint: e.g. {variable.name}={example}")
    if variables.MACHINE_LABEL.get(environ):
        named = f"{named}+{variables.MACHINE_LABEL.get(environ)}"
    return Project(
        matrix, cells, results.safe_name(named), tuple(find_links), listing, found, platforms, known_pins,
        given_probes=tuple(probes or ()), caller=environ, hardware=hardware,
    )  # fmt: skip


def environment_asks(inputs: Mapping[str, object]) -> dict[str, object]:
    """What an environment is asked to hold, of a cell's ``inputs``: its requirements, constraints and seed."""
    return {key: inputs.get(key) for key in ("requirements", identity.CONSTRAINTS, identity.VENV_SEED)}


def with_releases(matrix: Matrix, versions: Iterable[Version]) -> Matrix:
    """``matrix`` with only ``versions`` as its torch releases; a release it lists keeps its Pythons and pins."""
    entries = {entry.version: entry for entry in matrix.torch}
    return dataclasses.replace(matrix, torch=tuple(entries.get(version, TorchEntry(version)) for version in versions))


def with_python(matrix: Matrix, python: str) -> Matrix:
    """``matrix`` with every torch release on Python ``python`` alone, its pins kept."""
    torch = tuple(dataclasses.replace(entry, pythons=(python,)) for entry in matrix.torch)
    return dataclasses.replace(matrix, torch=torch)


def _python_from(text: str) -> str:
    parts = text.split(".")
    if len(parts) != 2 or not all(part.isdigit() for part in parts):
        raise UsageError(f"{variables.PYTHON.name}: {text!r} is not a Python version as 3.10 is")
    return text


def _with_index(matrix: Matrix, environ: Mapping[str, str]) -> Matrix:
    """``matrix`` with the index and find-links that :data:`variables.INDEX_URL` and ``FIND_LINKS`` name."""
    index_url, find_links = variables.INDEX_URL.get(environ), variables.FIND_LINKS.get(environ).split()
    for variable, problem in [
        (variables.INDEX_URL, schema.url_problem(index_url) if index_url else ""),
        *[(variables.FIND_LINKS, schema.location_problem(link)) for link in find_links],
        *[(variables.FIND_LINKS, schema.folder_problem(link)) for link in find_links],
    ]:
        if problem:
            raise UsageError(f"{variable.name}: {problem}")
    if index_url:
        matrix = dataclasses.replace(matrix, index_url=index_url.rstrip("/"))
    if find_links:
        absolute = tuple(link if "://" in link else str(Path(link).absolute()) for link in find_links)
        matrix = dataclasses.replace(matrix, find_links=absolute)
    return matrix


def _workdir_from(text: str) -> Path:
    folder = Path(text).expanduser().absolute()
    if not folder.is_dir():
        raise UsageError(
            f"{variables.WORKDIR.name}: {text!r} is not a folder\n  hint: name the folder the pairs run from"
        )
    return folder


def _requirements_from(environ: Mapping[str, str]) -> list[Requirement]:
    """:data:`variables.REQUIRES`'s requirements, one a line; a line that is none is refused by name."""
    found = []
    for line in filter(None, (line.strip() for line in variables.REQUIRES.get(environ).splitlines())):
        try:
            found.append(Requirement(line))
        except InvalidRequirement as error:
            raise UsageError(f"{variables.REQUIRES.name}: {line!r} is not a requirement ({error})") from None
    return found


def as_listed(matrix: Matrix, listing: Listing) -> Matrix:
    """``matrix`` with each torch release spelled as the index lists it: ``8.1`` and ``8.1.0.0`` are ``8.1.0``
    (one release, one cell and one row of a table, whichever way it was written)."""
    torch = []
    for entry in matrix.torch:
        listed = {Version(wheel.version.public) for wheel in listing.wheels_for(entry.version)}
        spelled = min(listed, key=str) if entry.version.local is None and listed else entry.version
        torch.append(dataclasses.replace(entry, version=spelled))
    return dataclasses.replace(matrix, torch=tuple(torch))


def _releases_from(text: str) -> list[Version]:
    versions: list[Version] = []
    for part in text.replace(",", " ").split():
        try:
            version = Version(part)
        except InvalidVersion:
            raise UsageError(f"{variables.TORCH.name}: {part!r} is not a torch release (e.g. 1.12.1)") from None
        if version not in versions:
            versions.append(version)
    return versions


@dataclass(frozen=True)
class Loaded:
    """The project the noxfile loaded, or the mistake in the matrix that kept it from loading.

    A broken matrix must not stop the sessions that do not need it (``tests``,
    ``docs``): each session that does asks for :meth:`project`, which raises
    the mistake then, to become one message and its exit code.
    """

    found: Project | None
    error: TorchmatrixError | None = None

    @classmethod
    def of(cls, root: Path) -> Loaded:
        try:
            return cls(load(root))
        except TorchmatrixError as error:
            return cls(None, error)

    def project(self) -> Project:
        if self.found is None:
            assert self.error is not None
            raise self.error
        return self.found


def _unwritable(folder: Path) -> str:
    """Why results cannot go under ``folder`` (it is under a file, or read-only); '' when they can."""
    existing = folder
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        return f"results cannot go under {folder}: {existing} is a file"
    if not os.access(existing, os.W_OK):
        return f"results cannot go under {folder}: {existing} is read-only"
    return ""
