"""Raises, with a message of several lines."""


def run(device):
    raise RuntimeError("probe failed on purpose\nsecond line of the message")
