"""The matrix a user wrote, validated: frozen values that the plan, the sessions and verify read.

:func:`torchmatrix.matrix.loader.load_matrix` makes them from ``matrix.yaml``; nothing here reads a file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from ..core import Kind, Outcome, Probe

DEFAULT_INDEX_URL = "https://pypi.org/simple"
DEFAULT_TIMEOUT = 300.0


@dataclass(frozen=True)
class TorchEntry:
    """One torch release of the matrix, with the Pythons pinned for it (empty: choose)."""

    version: Version
    pythons: tuple[str, ...] = ()
    pins: tuple[Requirement, ...] = ()
    line: int | None = field(default=None, compare=False)
    """Where the matrix file lists it, for messages; None for a release given otherwise (``TORCHMATRIX_TORCH``)."""


@dataclass(frozen=True)
class ProbeEntry:
    """An entry of ``probes:``: a name in probes/ or a path, and the kind the matrix says (None: told or asked)."""

    probe: str
    kind: Kind | None = None


@dataclass(frozen=True)
class PinRule:
    """For every torch release the specifier admits: requirements installed beside it (``require``), and
    constraints (``constrain``) that bound the version of a package the cell installs for another reason, and add
    none."""

    torch: SpecifierSet
    require: tuple[Requirement, ...]
    reason: str = ""
    constrain: tuple[Requirement, ...] = ()

    def applies_to(self, version: Version) -> bool:
        return self.torch.contains(version, prereleases=True)


@dataclass(frozen=True)
class Expectation:
    """What a probe's outcome must be on one device for a range of torch releases (``expect:``)."""

    probe: str
    device: str
    torch: SpecifierSet
    outcome: Outcome
    python: str | None = None
    machine: str | None = None
    """Only results filed under this machine name; None: every machine's."""
    reason: str = ""
    where: str = ""
    """Where it is written (``matrix.yaml:14 expect[1]``), for messages."""

    def covers(self, torch: Version, python: str | None) -> bool:
        """Whether a cell of ``torch`` on ``python`` is one this expectation speaks of (on its machine)."""
        return self.torch.contains(torch, prereleases=True) and self.python in (None, python)

    def describe(self) -> str:
        """``autograd_dot on mps, torch >=1.12: pass``."""
        python = f", Python {self.python}" if self.python else ""
        machine = f", machine {self.machine}" if self.machine else ""
        return f"{self.probe} on {self.device}, torch {self.torch or '(any)'}{python}{machine}: {self.outcome.value}"


@dataclass(frozen=True)
class Matrix:
    """A validated matrix file. Paths in it are absolute."""

    file: Path
    torch: tuple[TorchEntry, ...]
    probes: tuple[Probe, ...]
    devices: tuple[str, ...]
    timeout: float
    output: Path
    machine: str | None
    index_url: str
    find_links: tuple[str, ...] | None
    """Local wheel folders or pages; None: those pip is configured with."""
    pins: tuple[PinRule, ...]
    expect: tuple[Expectation, ...] = ()
    project: Path | None = None
    """A local project (the user's library) built into a wheel and installed in every cell."""
    requires: tuple[Requirement, ...] = ()
    """Installed in every cell beside torch and its pins."""
    repeat: int = 1
    """How many times each (probe, device) pair runs, each in a fresh process
    (:mod:`torchmatrix.worker.repeats`)."""
    strict: bool = False
    """Whether a probe session fails on an outcome no expectation allows
    (:func:`torchmatrix.expectations.not_allowed`)."""
    env: tuple[tuple[str, str], ...] = ()
    """Variables every pair finds set (``env:``), as (name, value)."""
    pass_env: tuple[str, ...] = ()
    """Variables (names or patterns) every pair takes from the caller's environment (``pass_env:``)."""
    probes_dir: Path | None = None
    """The folder of the probes the matrix names by name: a module or script there is named by its stem."""
    workdir: Path | None = None
    """The folder every pair runs from where one is named (``$TORCHMATRIX_WORKDIR``); None: :attr:`probes_from`."""
    probes_root: Path | None = None
    """The folder probe paths are relative to and probes are named from (``probes_root:``); None: the matrix file's."""

    @property
    def named_probes(self) -> Path:
        """The folder of the probes the matrix names by name: :attr:`probes_dir`, or ``probes/`` beside the matrix."""
        return self.probes_dir or self.file.parent / "probes"

    @property
    def probes_from(self) -> Path:
        """The folder probe paths are relative to and probes are named from: ``probes_root:``, or the matrix's."""
        return self.probes_root or self.file.parent

    @property
    def run_from(self) -> Path:
        """The folder every pair runs from, its working directory: the one a by-hand run would start in.

        The matrix's probe paths are relative to :attr:`probes_from`, so a user typing them by hand (``pytest
        tests/test_dot.py``, ``python repro.py``) stands there; the ``torchmatrix`` command names the folder it was
        started in instead.
        """
        return self.workdir or self.probes_from
