"""Returns a list instead of a dict."""


def run(device):
    return ["pass"]
