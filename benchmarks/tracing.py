"""What watching a pair's reads costs it: the worker's audit hook in the pair's process, and its list of files.

Run ``python benchmarks/tracing.py`` (any Python 3.8+; no torch needed). Each
sample is a new process that does what a pair does to files: it imports
``--modules`` modules of its own folder, asks ``os.stat`` about ``--asks`` data files (``os.path.getsize``, as a
test deciding by a file's size does) and reads ``--files`` of them, once
with the worker's ``FilesRead`` (``torchmatrix_worker/reads.py``) watching, up to what the process tells at its end,
and once without. The worker then makes the list of files of what it told and of its journal, in this process,
outside the pair's, as the worker does. A pair's cost is the difference of the two samples and the worker's list,
each the median of ``--repeat`` interleaved samples (this machine is shared).
The default sizes are a script's; ``--modules 400 --files 400 --asks 400`` is a test suite's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ENVSIDE = Path(__file__).resolve().parents[1] / "src" / "torchmatrix" / "envside"

SAMPLE = textwrap.dedent(
    """\
    import json, os, sys, time
    folder, modules, files, asks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    watched = sys.argv[5] == "1"
    sys.path.insert(0, {envside!r})
    from torchmatrix_worker.reads import FilesRead
    sys.path[0] = folder
    began = time.perf_counter()
    reads = FilesRead(folder + "/scratch") if watched else None
    for index in range(modules):
        __import__("module_%d" % index)
    for index in range(asks):
        os.path.getsize("%s/data_%d.txt" % (folder, index))
    for index in range(files):
        with open("%s/data_%d.txt" % (folder, index)) as data:
            data.read()
    told = reads.entries() if reads else []
    took = time.perf_counter() - began
    print(json.dumps([took, reads.journal if reads else None, told]))
    """
).format(envside=str(ENVSIDE))


sys.path.insert(0, str(ENVSIDE))
from torchmatrix_worker.reads import entries_in, excluded_prefixes, files_read, journaled  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", type=int, default=20, help="modules a pair imports (default: 20)")
    parser.add_argument("--files", type=int, default=20, help="data files a pair reads (default: 20)")
    parser.add_argument("--asks", type=int, default=20, help="data files a pair asks os.stat about (default: 20)")
    parser.add_argument("--repeat", type=int, default=15, help="samples of each side (default: 15)")
    args = parser.parse_args()
    if not hasattr(sys, "addaudithook"):
        sys.exit("this Python has no audit hooks: the worker watches nothing here")
    with tempfile.TemporaryDirectory(prefix="torchmatrix-tracing-") as folder:
        scratch = Path(folder, "scratch")
        scratch.mkdir()  # the worker's, where the watcher keeps its journal
        sample = Path(folder, "sample.py")  # a file, as a pair's script and tests are: their own code asking
        sample.write_text(SAMPLE)
        for index in range(args.modules):
            Path(folder, f"module_{index}.py").write_text(f"VALUE = {index}\n")
        for index in range(max(args.files, args.asks)):
            Path(folder, f"data_{index}.txt").write_text("x" * 1000)
        seconds: dict[bool, list[float]] = {False: [], True: []}
        listing: list[float] = []
        listed = 0
        for _ in range(args.repeat):
            for watched in (False, True):
                sizes = [str(args.modules), str(args.files), str(args.asks)]
                command = [sys.executable, "-B", str(sample), folder, *sizes]
                out = subprocess.run([*command, str(int(watched))], capture_output=True, text=True, check=True).stdout
                took, journal, told = json.loads(out)
                seconds[watched].append(took)
                if journal:  # the worker's part: outside the pair's process, where no hook hears it
                    began = time.perf_counter()
                    lines = [json.dumps(entry).encode("ascii") for entry in told]  # as the reply carries them
                    entries = journaled(journal) + entries_in(lines)
                    found, _ = files_read(entries, excluded_prefixes(str(scratch)))
                    listing.append(time.perf_counter() - began)
                    listed = max(listed, len(found))
                    Path(journal).unlink()
    plain, watched, worker = (statistics.median(each) * 1000 for each in (seconds[False], seconds[True], listing))
    did = f"importing {args.modules} modules, asking about {args.asks} files and reading {args.files}"
    print(f"a pair {did} ({listed} files listed):")
    print(f"  unwatched {plain:.2f} ms, watched {watched:.2f} ms, the worker's list {worker:.2f} ms:")
    print(f"  watching costs {watched - plain + worker:.2f} ms per pair")


if __name__ == "__main__":
    main()
