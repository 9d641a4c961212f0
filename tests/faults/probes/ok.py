"""Passes: 2 + 2 computed by torch. The pairs around a misbehaving probe must still get this."""

import torch


def run(device):
    observed = (torch.ones(2, device=device) * 2).sum().item()
    check = {
        "name": "2+2",
        "observed": observed,
        "expected": 4.0,
        "error": abs(observed - 4.0),
        "tolerance": 0.0,
        "ok": observed == 4.0,
    }
    return {"outcome": "pass" if check["ok"] else "fail", "metrics": {"checks": [check]}, "message": "fine"}
