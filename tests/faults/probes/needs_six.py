"""Needs a package besides torch, named in its PEP 723 block: every cell that runs it installs it.

# (The block below is what counts; this docstring only explains it.)
"""

# /// script
# dependencies = ["six"]
# ///

import six
import torch


def run(device):
    ok = six.PY3 and torch.ones(1, device=device).item() == 1.0
    return {
        "outcome": "pass" if ok else "fail",
        "metrics": {"six": six.__version__},
        "message": "six " + six.__version__,
    }
