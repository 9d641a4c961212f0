"""Whether CUDA was set up before this pair began (it must not be: a forked child cannot use a CUDA context its
parent made), and that a kernel then runs in this pair's process."""

import os

import torch


def run(device):
    # is_initialized() is False in a child forked from a process that set CUDA up: that child is in a bad fork.
    bad_fork = getattr(torch.cuda, "_is_in_bad_fork", lambda: False)()
    before = torch.cuda.is_initialized() or bad_fork
    total = float(torch.ones(1 << 20, device=device).sum())
    metrics = {"cuda_initialised_before": before, "pid": os.getpid(), "sum": total}
    if before:
        return {"outcome": "fail", "metrics": metrics, "message": "CUDA was set up before the pair began"}
    if total != float(1 << 20):
        return {"outcome": "fail", "metrics": metrics, "message": "a sum of ones came out {}".format(total)}
    return {"outcome": "pass", "metrics": metrics, "message": "CUDA set up in this pair's process"}
