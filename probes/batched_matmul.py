"""Batched `(C @ X.unsqueeze(-1)).squeeze(-1)` against the same product slice by slice.

On macOS arm64 with torch 2.2.0 the batched product was neither equal nor
allclose to a loop over the batch, only when C was an nn.Parameter and only for
some batch sizes. The three cases of that report, in float32 and float64:
X 8x50x32 with C (32x32) an nn.Parameter, X 16x50x32 likewise, and X 8x50x32
with C detached.

PyTorch does not promise that batched and sliced products are bit-identical
(its numerical-accuracy notes say so), so bit-identity is recorded, not
required. What is required is the bound that float rounding allows: each
result element is a length-K dot product (K = 32), whose error is at most
gamma_K = K*u / (1 - K*u) times sum_k |C_ik X_k| (Higham). Two such results may
differ by twice that, and each must be within gamma_K of a float64 CPU
reference. Errors are reported relative to that scale, |C| @ |X|.
"""

import torch

UNIT_ROUNDOFF = {torch.float32: 2.0**-24, torch.float64: 2.0**-53}
CASES = (
    ("X 8x50x32, C an nn.Parameter", 8, True),
    ("X 16x50x32, C an nn.Parameter", 16, True),
    ("X 8x50x32, C detached", 8, False),
)
ROWS, K = 50, 32


def run(device):
    checks = []
    for dtype in (torch.float32, torch.float64):
        if device == "mps" and dtype == torch.float64:
            continue  # MPS has no float64
        for name, batch, parameter in CASES:
            checks.extend(compare(device, dtype, name, batch, parameter))
    failed = [check["name"] for check in checks if not check["ok"]]
    identical = all(check.get("bit_identical", True) for check in checks)
    return {
        "outcome": "fail" if failed else "pass",
        "metrics": {"checks": checks, "bit_identical": identical},
        "message": ("beyond rounding: " + "; ".join(failed))
        if failed
        else ("bit-identical" if identical else "within rounding, not bit-identical"),
    }


def compare(device, dtype, name, batch, parameter):
    generator = torch.Generator().manual_seed(batch)
    C_cpu = torch.randn(K, K, generator=generator, dtype=torch.float64)
    X_cpu = torch.randn(batch, ROWS, K, generator=generator, dtype=torch.float64)
    C = C_cpu.to(device=device, dtype=dtype)
    if parameter:
        C = torch.nn.Parameter(C)
    X = X_cpu.to(device=device, dtype=dtype)

    batched = (C @ X.unsqueeze(-1)).squeeze(-1).detach().cpu().double()
    looped = torch.stack([(C @ X[i].unsqueeze(-1)).squeeze(-1) for i in range(batch)]).detach().cpu().double()
    C_used, X_used = C.detach().cpu().double(), X.cpu().double()
    reference = (C_used @ X_used.unsqueeze(-1)).squeeze(-1)
    scale = (C_used.abs() @ X_used.abs().unsqueeze(-1)).squeeze(-1)

    gamma = K * UNIT_ROUNDOFF[dtype] / (1 - K * UNIT_ROUNDOFF[dtype])
    gamma64 = K * UNIT_ROUNDOFF[torch.float64] / (1 - K * UNIT_ROUNDOFF[torch.float64])
    label = "{} ({})".format(name, str(dtype).replace("torch.", ""))
    between = relative(batched, looped, scale)
    to_reference = relative(batched, reference, scale)
    return [
        {
            "name": "batched vs looped: " + label,
            "observed": between,
            "expected": "<= {:.3g}".format(2 * gamma),
            "error": between,
            "tolerance": 2 * gamma,
            "ok": between <= 2 * gamma,
            "bit_identical": bool(torch.equal(batched, looped)),
            "max_abs_diff": (batched - looped).abs().max().item(),
        },
        {
            "name": "batched vs float64 reference: " + label,
            "observed": to_reference,
            "expected": "<= {:.3g}".format(gamma + gamma64),
            "error": to_reference,
            "tolerance": gamma + gamma64,
            "ok": to_reference <= gamma + gamma64,
        },
    ]


def relative(result, other, scale):
    """The largest elementwise |result - other| / (|C| @ |X|): error relative to the result's scale."""
    return ((result - other).abs() / scale).max().item()
