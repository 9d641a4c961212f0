"""Changes what every later probe of a shared process would see: torch's settings, an environment variable, the cwd."""

import os

import torch


def run(device):
    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float64)
    torch.set_grad_enabled(False)
    torch.use_deterministic_algorithms(True)
    if hasattr(torch, "set_float32_matmul_precision"):  # torch 1.12 and newer
        torch.set_float32_matmul_precision("medium")
    os.environ["TORCHMATRIX_FAULTS_CHANGED"] = "changed by changes_state"
    os.chdir("/")
    return {"outcome": "pass", "metrics": {}, "message": "changed everything it could"}
