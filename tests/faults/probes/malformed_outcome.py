"""Claims an outcome only the orchestrator may give."""


def run(device):
    return {"outcome": "crash", "metrics": {}, "message": "I am not allowed to say this"}
