"""Puts a tensor in its metrics: not plain JSON data."""

import torch


def run(device):
    return {"outcome": "pass", "metrics": {"observed": torch.ones(2, device=device)}}
