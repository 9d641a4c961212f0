"""2 * torch.dot(x, x) and its gradient: the Apple Silicon report of torch 1.9.0.

On a MacBook (torch 1.9.0) `x = torch.arange(4.0); x.requires_grad_(True);
2 * torch.dot(x, x)` printed tensor(0.) where it must print tensor(28.).
Checks, on the given device:
  * that exact snippet: y == 28 and, after backward, x.grad == [0, 4, 8, 12]
    (all exact in float32: small integers, and a gradient of 4x);
  * the same product without requires_grad;
  * dot products of longer random vectors against a float64 CPU reference,
    within the rounding-error bound gamma_n = n*u / (1 - n*u) (u = 2**-24)
    relative to sum(|a_i * b_i|), and their gradient d/da = b exactly.
"""

import torch

FLOAT32_UNIT_ROUNDOFF = 2.0**-24
FLOAT64_UNIT_ROUNDOFF = 2.0**-53
RANDOM_LENGTHS = (1000, 100000)


def run(device):
    checks = snippet(device)
    for length in RANDOM_LENGTHS:
        checks.extend(random_vectors(device, length))
    failed = [check["name"] for check in checks if not check["ok"]]
    return {
        "outcome": "fail" if failed else "pass",
        "metrics": {"checks": checks},
        "message": "wrong: " + ", ".join(failed) if failed else "",
    }


def snippet(device):
    """The report's three lines, then the same product on a tensor that does not require grad."""
    x = torch.arange(4.0).to(device)
    x.requires_grad_(True)
    y = 2 * torch.dot(x, x)
    y.backward()
    plain = torch.arange(4.0).to(device)
    return [
        exact("y = 2 * dot(x, x)", y.item(), 28.0),
        exact("x.grad after y.backward()", x.grad.cpu().tolist(), [0.0, 4.0, 8.0, 12.0]),
        exact("y without requires_grad", (2 * torch.dot(plain, plain)).item(), 28.0),
    ]


def random_vectors(device, length):
    generator = torch.Generator().manual_seed(length)
    a = torch.rand(length, generator=generator)
    b = torch.rand(length, generator=generator)
    reference = torch.dot(a.double(), b.double()).item()  # float32 products are exact in float64
    tolerance = gamma(length, FLOAT32_UNIT_ROUNDOFF) + gamma(length, FLOAT64_UNIT_ROUNDOFF)
    a_device = a.to(device).requires_grad_(True)
    observed = torch.dot(a_device, b.to(device))
    observed.backward()
    relative_error = abs(observed.item() - reference) / reference  # a, b >= 0: reference = sum |a_i b_i|
    gradient = a_device.grad.cpu()
    return [
        {
            "name": "dot of {} random floats".format(length),
            "observed": observed.item(),
            "expected": reference,
            "error": relative_error,
            "tolerance": tolerance,
            "ok": relative_error <= tolerance,
        },
        {
            "name": "gradient of the dot of {} random floats (= b)".format(length),
            "observed": "equal to b" if torch.equal(gradient, b) else "differs from b",
            "expected": "equal to b",
            "error": (gradient - b).abs().max().item(),
            "tolerance": 0.0,
            "ok": bool(torch.equal(gradient, b)),
        },
    ]


def gamma(length, unit_roundoff):
    """Higham's bound on the relative error of a length-n dot product: n*u / (1 - n*u)."""
    return length * unit_roundoff / (1 - length * unit_roundoff)


def exact(name, observed, expected):
    pairs = zip(observed, expected) if isinstance(expected, list) else [(observed, expected)]
    error = max(abs(o - e) for o, e in pairs)
    return {
        "name": name,
        "observed": observed,
        "expected": expected,
        "error": error,
        "tolerance": 0.0,
        "ok": observed == expected,
    }
