"""Indexes out of range inside a kernel. On cuda that is a device-side assert, after which every CUDA call of
the process that ran it fails: the pairs after it on cuda show whether each pair has a process of its own."""

import torch


def run(device):
    values = torch.arange(4.0, device=device)
    index = torch.tensor([7], device=device)
    total = values[index].sum().item()  # raises: IndexError on the CPU, a device-side assert on cuda
    return {"outcome": "fail", "metrics": {"total": total}, "message": "an index out of range was not caught"}
