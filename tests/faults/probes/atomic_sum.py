"""Sums a million float32 values into one slot with index_add_, twice. On a GPU the additions are atomic and
their order differs from run to run, so the two sums may differ in their last bits: it fails when they do, and
under `repeat:` a pair that sometimes differs is `unstable`. On the CPU the order is fixed."""

import torch


def run(device):
    generator = torch.Generator().manual_seed(0)
    values = torch.rand(1 << 20, generator=generator).to(device)
    slots = torch.zeros(1 << 20, dtype=torch.long, device=device)

    def total():
        return torch.zeros(1, device=device).index_add_(0, slots, values).item()

    first, second = total(), total()
    metrics = {"first": first.hex(), "second": second.hex()}
    if first != second:
        return {"outcome": "fail", "metrics": metrics, "message": "{} then {}".format(first.hex(), second.hex())}
    return {"outcome": "pass", "metrics": metrics, "message": "the same bits twice: {}".format(first.hex())}
