import math

import pytest
import torch
from gausstail import log_cdf


def test_centre(device):
    assert log_cdf(torch.zeros(1, device=device)).item() == pytest.approx(math.log(0.5))


def test_far_tail(device):
    assert log_cdf(torch.tensor(-20.0, device=device)).item() == pytest.approx(-203.91715, abs=1e-3)  # mpmath's


def test_gradient(device):
    x = torch.tensor(-3.0, device=device, requires_grad=True)
    log_cdf(x).backward()
    assert x.grad.item() == pytest.approx(3.28310, abs=1e-4)  # φ(-3) / Φ(-3)
