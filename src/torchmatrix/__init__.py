"""torchmatrix: run the same PyTorch probes across torch releases, Pythons and devices."""

from __future__ import annotations

__version__ = "0.1.0"
