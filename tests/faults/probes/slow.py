"""Runs for a while, but within the time limit ($TORCHMATRIX_FAULTS_SLOW seconds, default 2)."""

import os
import time

import torch


def run(device):
    seconds = float(os.environ.get("TORCHMATRIX_FAULTS_SLOW", "2"))
    started = time.time()
    total = torch.zeros(1, device=device)
    while time.time() - started < seconds:
        total += torch.ones(1, device=device)
        time.sleep(0.05)
    return {"outcome": "pass", "metrics": {"seconds": time.time() - started}, "message": "slow but in time"}
