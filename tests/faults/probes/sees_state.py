"""Reports the process-wide state it starts with: torch's settings, an environment variable, its folders."""

import os
import tempfile

import torch


def run(device):
    precision = getattr(torch, "get_float32_matmul_precision", None)  # torch 1.12 and newer
    seen = {
        "num_threads": torch.get_num_threads(),
        "default_dtype": str(torch.get_default_dtype()),
        "grad_enabled": torch.is_grad_enabled(),
        "deterministic": torch.are_deterministic_algorithms_enabled(),
        "matmul_precision": precision() if precision else None,
        "variable": os.environ.get("TORCHMATRIX_FAULTS_CHANGED"),
        "cwd": os.getcwd(),
        "temporary": tempfile.gettempdir(),
        "temporary_listing": sorted(os.listdir(tempfile.gettempdir())),
    }
    return {"outcome": "pass", "metrics": seen, "message": "saw what it started with"}
