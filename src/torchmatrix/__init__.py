"""torchmatrix: run the same PyTorch probes across torch releases, Pythons and devices.

What another repository's noxfile or another tool may import is declared in
``__all__`` of three modules, and nothing else is promised:

- :mod:`torchmatrix.noxsessions`: ``register(__file__)``, the sessions for a noxfile;
- :mod:`torchmatrix.results`: reading result files (``read``, ``scan``, ``CellResult``);
- :mod:`torchmatrix.core`: the values results hold (``Outcome``, ``Record``, ``DEVICES``).
"""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["__version__"]
