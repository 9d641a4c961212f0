import os

import pytest


@pytest.fixture
def device():
    """cpu when the tests run by hand; under torchmatrix, each device in turn (TORCHMATRIX_DEVICE)."""
    return os.environ.get("TORCHMATRIX_DEVICE", "cpu")
