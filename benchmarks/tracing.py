"""What watching a pair's reads costs it: the worker's audit hook and its list of files, per pair.

Run ``python benchmarks/tracing.py`` (any Python 3.8+; no torch needed). Each
sample is a new process that does what a pair does to files: it imports
``--modules`` modules of its own folder and reads ``--files`` data files, once
with the worker's ``FilesRead`` (``torchmatrix_worker/reads.py``) watching (and its list made at the end, as
the worker makes it) and once without. A pair's cost is the difference, the
median of ``--repeat`` interleaved samples of each (this machine is shared).
The default sizes are a script's; ``--modules 400 --files 400`` is a test suite's.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ENVSIDE = Path(__file__).resolve().parents[1] / "src" / "torchmatrix" / "envside"

SAMPLE = textwrap.dedent(
    """\
    import sys, time
    folder, modules, files, watched = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
    sys.path.insert(0, {envside!r})
    from torchmatrix_worker.reads import FilesRead
    sys.path[0] = folder
    began = time.perf_counter()
    reads = FilesRead(folder + "/scratch") if watched else None
    for index in range(modules):
        __import__("module_%d" % index)
    for index in range(files):
        with open("%s/data_%d.txt" % (folder, index)) as data:
            data.read()
    found = reads.paths() if reads else []
    print(time.perf_counter() - began, len(found))
    """
).format(envside=str(ENVSIDE))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", type=int, default=20, help="modules a pair imports (default: 20)")
    parser.add_argument("--files", type=int, default=20, help="data files a pair reads (default: 20)")
    parser.add_argument("--repeat", type=int, default=15, help="samples of each side (default: 15)")
    args = parser.parse_args()
    if not hasattr(sys, "addaudithook"):
        sys.exit("this Python has no audit hooks: the worker watches nothing here")
    with tempfile.TemporaryDirectory(prefix="torchmatrix-tracing-") as folder:
        Path(folder, "scratch").mkdir()  # the worker's, where the watcher keeps its journal
        for index in range(args.modules):
            Path(folder, f"module_{index}.py").write_text(f"VALUE = {index}\n")
        for index in range(args.files):
            Path(folder, f"data_{index}.txt").write_text("x" * 1000)
        seconds: dict[bool, list[float]] = {False: [], True: []}
        listed = 0
        for _ in range(args.repeat):
            for watched in (False, True):
                command = [sys.executable, "-B", "-c", SAMPLE, folder, str(args.modules), str(args.files)]
                out = subprocess.run([*command, str(int(watched))], capture_output=True, text=True, check=True).stdout
                took, found = out.split()
                seconds[watched].append(float(took))
                listed = max(listed, int(found))
    plain, watched = (statistics.median(seconds[side]) * 1000 for side in (False, True))
    print(f"a pair importing {args.modules} modules and reading {args.files} files ({listed} files listed):")
    print(f"  unwatched {plain:.2f} ms, watched {watched:.2f} ms: watching costs {watched - plain:.2f} ms per pair")


if __name__ == "__main__":
    main()
