"""The noxfile of the ``torchmatrix`` command: the sessions of any noxfile, for a matrix in any folder.

``torchmatrix bisect repro.py --from 1.9 --to 2.2`` runs ``nox -f`` on this file
(:mod:`torchmatrix.cli`) with ``$TORCHMATRIX_MATRIX`` naming the matrix: the one
in the folder it was started in, or the default one it wrote beside its results.
That matrix's folder is the project's: its ``probes/``, its output.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

NOXFILE = Path(__file__).resolve()
sys.path.insert(0, str(NOXFILE.parents[2]))  # the torchmatrix this file came with, installed or not

from torchmatrix import noxsessions, variables  # noqa: E402

_matrix = variables.MATRIX.get(os.environ)
noxsessions.register(NOXFILE, root=Path(_matrix).parent if _matrix else Path.cwd(), command="torchmatrix")
