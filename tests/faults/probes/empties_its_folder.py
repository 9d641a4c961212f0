"""Deletes everything in its working folder, as a careless clean-up step does, then writes a file there.

It refuses outside the system's temporary folder: a worker that ran probes in
its own working folder (the torchmatrix checkout nox runs from) would lose it.
"""

import os
import shutil
import tempfile


def run(device):
    here = os.getcwd()
    if not os.path.realpath(here).startswith(os.path.realpath(tempfile.gettempdir()) + os.sep):
        return {"outcome": "fail", "metrics": {"cwd": here}, "message": "refused to empty " + here}
    deleted = sorted(os.listdir(here))
    for name in deleted:
        path = os.path.join(here, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.remove(path)
    with open("left-behind.txt", "w") as left:
        left.write("written by empties_its_folder\n")
    return {"outcome": "pass", "metrics": {"cwd": here, "deleted": deleted}, "message": "emptied its folder"}
