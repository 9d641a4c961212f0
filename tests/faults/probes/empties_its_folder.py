"""Deletes everything in its temporary folder, as a careless clean-up step does, then writes a file there.

It refuses unless that folder is a pair's own (``torchmatrix-pair-…``): a worker that let it use the
system's temporary folder, which every process of the machine shares, would lose that.
"""

import os
import shutil
import tempfile


def run(device):
    here = tempfile.gettempdir()
    if not os.path.basename(here).startswith("torchmatrix-pair-"):
        return {"outcome": "fail", "metrics": {"folder": here}, "message": "refused to empty " + here}
    deleted = sorted(os.listdir(here))
    for name in deleted:
        path = os.path.join(here, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.remove(path)
    with open(os.path.join(here, "left-behind.txt"), "w") as left:
        left.write("written by empties_its_folder\n")
    return {"outcome": "pass", "metrics": {"folder": here, "deleted": deleted}, "message": "emptied its folder"}
