"""The standard normal's log CDF, log Φ(x), finite far into its lower tail where torch allows.

torch 1.12 added ``torch.special.log_ndtr``, accurate for any x. On older
releases the library falls back to ``log(Φ(x))``, which is as good down to
x ≈ -5 but underflows to -inf below x ≈ -13 in float32 (Φ(-14) is below the
smallest float32): its compatibility table says so.
"""

import math

import torch

__all__ = ["log_cdf"]


def log_cdf(x):
    """log Φ(x) of a tensor, elementwise, in its dtype and on its device."""
    log_ndtr = getattr(torch.special, "log_ndtr", None)
    if log_ndtr is not None:
        return log_ndtr(x)
    return torch.log(0.5 * torch.erfc(-x / math.sqrt(2.0)))
