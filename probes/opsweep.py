# /// script
# dependencies = ["numpy", "expecttest", "pyyaml", "packaging", "setuptools"]
#
# [tool.torchmatrix]
# opt-in = true
# ///
"""Every operator of torch's own operator database (op_db), on its sample inputs: float32 here, float64 on the CPU.

torch ships, in every wheel, a database of its operators with generators of
sample inputs (torch.testing._internal.common_methods_invocations.op_db). For
each operator that supports float32 on the device, this runs its first few
samples in float32 on the device and the same values in float64 on the CPU,
and records one check per operator:

  * samples: for each sample, a digest of its input (values, shapes, strides,
    dtypes and the other arguments) and of its exact float32 output bits
    (NaNs made one NaN), so that outputs are compared across releases only
    where the inputs are the same;
  * observed: a digest of all its samples' outputs;
  * error: the worst |float32 - float64| / (atol + rtol * |float64|) over its
    output elements, with torch.testing's float32 tolerances (rtol 1.3e-6,
    atol 1e-5): at most 1 (tolerance) is within them;
  * raised: the first exception a sample raised, if any.

Random operators get the same seed before every call. A sample whose output
is not the same in two calls (uninitialised memory, as torch.empty returns)
has no output digest: it is never taken for a change. The record passes when
the sweep ran: which operators are beyond tolerance or raise is what its
checks say.

Runs only where a matrix lists it (opt-in, above). Options, under the
matrix's probe_options: {opsweep: {...}}:

  ops:     a regular expression the full name (name.variant) must match
           entirely, or a list of full names; default every operator
  samples: how many samples per operator, at most (default 3)
  seed:    the seed of inputs and random operators (default 0)
  store:   a folder of samples captured by hand (capture, below), relative to
           this file's folder; by default the store beside this machine's
           results (torchmatrix names its folder in TORCHMATRIX_INPUTS), which
           the first cell that runs captures and every other replays

Its record asks the report for a repro script per sample whose output changed
(metrics.repro): each calls reproduce(), below, on its sample, from the store
the record replayed.
"""

import contextlib
import copy
import hashlib
import itertools
import json
import os
import random
import re
import signal
import sys
import time
import traceback

import torch

OPTIONS_VARIABLE = "TORCHMATRIX_PROBE_OPTIONS"
INPUTS_VARIABLE = "TORCHMATRIX_INPUTS"
"""The folder beside this machine's results that torchmatrix gives every pair, where the sweep keeps its store."""
DEFAULTS = {"ops": None, "samples": 3, "seed": 0, "store": None}
RTOL, ATOL = 1.3e-6, 1e-5  # torch.testing.assert_close's defaults for float32
DIGEST_CHARS = 16
MESSAGE_CHARS = 200
SLOWEST_KEPT = 5
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
UNINITIALISED = re.compile(r"(new_)?empty(_|$)")
"""torch.empty and its kin return whatever memory held: their outputs are never digested (a pair of calls may agree
by chance, and the next run not)."""


def run(device):
    options = read_options()
    op_db = load_op_db()
    store = open_store(options, os.environ.get(INPUTS_VARIABLE))
    wanted = op_filter(options["ops"])
    swept, not_float32 = [], []
    for op in op_db:
        name = full_name(op)
        if not wanted(name):
            continue
        if torch.float32 not in op.supported_dtypes(torch.device(device).type):
            not_float32.append(name)
            continue
        swept.append((op, name))
    checks, seconds = sweep_all(swept, device, options, store)
    metrics = summary(op_db, checks, not_float32, seconds, options, store)
    return {"outcome": "pass", "metrics": metrics, "message": describe(metrics)}


def read_options():
    """This probe's options: what the matrix's probe_options gives it, over the defaults."""
    given = json.loads(os.environ.get(OPTIONS_VARIABLE) or "{}").get("opsweep") or {}
    unknown = sorted(set(given) - set(DEFAULTS))
    if unknown:
        raise ValueError("unknown option {!r} of opsweep; it takes {}".format(unknown[0], ", ".join(sorted(DEFAULTS))))
    options = dict(DEFAULTS, **given)
    ops = options["ops"]
    if not (ops is None or isinstance(ops, str) or isinstance(ops, list) and all(isinstance(n, str) for n in ops)):
        raise ValueError("opsweep's ops must be a regular expression or a list of names, not {!r}".format(ops))
    if not (options["store"] is None or isinstance(options["store"], str) and options["store"]):
        raise ValueError("opsweep's store must be a folder, not {!r}".format(options["store"]))
    for key, least in (("samples", 1), ("seed", 0)):
        value = options[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ValueError("opsweep's {} must be a whole number of at least {}, not {!r}".format(key, least, value))
    return options


def load_op_db():
    # torch 1.9's testing helpers use distutils.version without importing it (common_cuda.py); importing it first
    # lets them load. Python 3.12 has no distutils: there setuptools provides it, and torch needs none.
    with contextlib.suppress(ImportError):
        import distutils.version  # noqa: F401
    try:
        from torch.testing._internal.common_methods_invocations import op_db
    except Exception as error:  # the outcome is an error saying why, not a crash of the sweep
        raise RuntimeError("torch's operator database cannot be imported here: " + short(error)) from error
    return op_db


def op_filter(ops):
    if ops is None:
        return lambda name: True
    if isinstance(ops, list):
        names = set(ops)
        return lambda name: name in names
    pattern = re.compile(ops)
    return lambda name: pattern.fullmatch(name) is not None


def full_name(op):
    """``name.variant`` as torch's own OpInfo.full_name (which releases before 2.1 lack) has it."""
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


# --- one operator -------------------------------------------------------------


def sweep_all(ops, device, options, store):
    """Every (op, name) of ``ops`` swept: their checks, and the seconds each took.

    On the CPU, on a system with fork, in a process forked for the purpose: an input that kills it (a division
    by zero in integer code, SIGFPE) is that sample's output, ``raised SIGFPE``, and the sweep goes on in a new
    process from the next sample. A forked child cannot use its parent's CUDA context: elsewhere, in this one.
    """
    checks, seconds = [], {}
    if device != "cpu" or not hasattr(os, "fork"):
        for op, name in ops:
            started = time.perf_counter()
            checks.append(sweep(op, name, device, options, store))
            seconds[name] = time.perf_counter() - started
        return checks, seconds
    crashed = {}  # name -> {index of the sample: the signal that ended the process}
    while len(checks) < len(ops):
        reading, writing = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            os.close(reading)
            sweep_in_child(ops[len(checks) :], device, options, store, crashed, writing)
        os.close(writing)
        done = 0  # samples of the operator being swept
        with os.fdopen(reading, "rb") as stream:
            for line in stream:
                if line == b"sample\n":
                    done += 1
                    continue
                answer = json.loads(line.decode("utf-8"))
                checks.append(answer["check"])
                seconds[answer["check"]["name"]] = answer["seconds"]
                done = 0
        _, status = os.waitpid(pid, 0)
        if len(checks) == len(ops):
            break
        name = ops[len(checks)][1]
        if not os.WIFSIGNALED(status) or done in crashed.get(name, {}):
            raise RuntimeError("the sweep of {} ended its process with status {}".format(name, status))
        crashed.setdefault(name, {})[done] = signal.Signals(os.WTERMSIG(status)).name
    return checks, seconds


def sweep_in_child(ops, device, options, store, crashed, writing):
    """Sweep ``ops`` and write, line by line, ``sample`` as each sample ends and each operator's check; exit."""
    status = 1
    try:
        with os.fdopen(writing, "wb", 0) as stream:
            for op, name in ops:
                started = time.perf_counter()
                check = sweep(op, name, device, options, store, crashed.get(name), lambda: stream.write(b"sample\n"))
                answer = {"check": check, "seconds": time.perf_counter() - started}
                stream.write((json.dumps(answer) + "\n").encode("utf-8"))
        status = 0
    finally:
        os._exit(status)


def sweep(op, name, device, options, store=None, crashed=None, progress=None):
    """The check of one operator: its samples' digests, its worst error against float64, what it raised.

    With a ``store``, the samples are those captured there (each run from a seed of its own), where the store
    has the operator; otherwise the operator's own, as this release's op_db generates them.
    """
    check = {"name": name, "samples": [], "tolerance": 1.0, "expected": "<= 1"}
    ratios, missing = [], []
    stored = store.samples(name) if store is not None else None
    if stored is None:
        samples = generated_samples(op, device, options, check)
        if store is not None:
            check["inputs"] = "generated"  # not in the store: op_db's samples of this release
    else:
        samples = replayed_samples(store, stored, device, options, check)
    for index, (values, seed, reference_raised) in enumerate(samples):
        if crashed and index in crashed:
            entry, ratio, why_none = (
                {"input": digest(values, with_strides=True), "output": "raised " + crashed[index]},
                None,
                "its process died",
            )
            if "raised" not in check:
                check["raised"] = "float32: the process died of {}".format(crashed[index])
        else:
            entry, ratio, why_none = run_sample(op, name, values, seed, check)
        if progress is not None:
            progress()
        output = entry["output"]
        if reference_raised is None and output is not None and output.startswith("raised "):
            check["refused"] = check.get("refused", 0) + 1  # the release that captured it took this sample
        check["samples"].append(entry)
        if ratio is None:
            missing.append(why_none)
        else:
            ratios.append(ratio)
    outputs = [entry["output"] for entry in check["samples"]]
    check["observed"] = digest(outputs) if any(output is not None for output in outputs) else None
    check["error"] = max(ratios) if ratios else None
    if missing:
        reasons = "; ".join(sorted(set(missing)))
        check["reference"] = "none for {} of {} samples: {}".format(len(missing), len(check["samples"]), reasons)
    check["ok"] = "raised" not in check and (check["error"] is None or check["error"] <= check["tolerance"])
    return check


def generated_samples(op, device, options, check):
    """The operator's first samples as op_db makes them here, each with the sweep's seed."""
    try:
        made = first_samples(op, device, options)
    except Exception as error:
        note_raised(check, "sample_inputs", error)
        return []
    return [(sample_values(sample), options["seed"], "") for sample in made]


def replayed_samples(store, stored, device, options, check):
    """The operator's captured samples, rebuilt on ``device``, each with the seed of its own it was captured
    with; one that this release cannot rebuild (a dtype it lacks) is a sample it refused."""
    if stored.get("left_out"):
        check["not_captured"] = len(stored["left_out"])  # the reference's samples the store could not hold
    samples = []
    for sample in stored["samples"][: options["samples"]]:
        try:
            values = store.decode(sample["value"], device)
        except Exception as error:
            check["samples"].append({"input": "stored " + sample["key"], "output": "raised " + type(error).__name__})
            check["refused"] = check.get("refused", 0) + 1
            note_raised(check, "replay", error)
            continue
        samples.append((values, sample_seed(sample["key"]), sample.get("raised")))
    return samples


def sample_seed(key):
    """A sample's own seed, from its key in the store: the same in every release, another for every sample."""
    return int(key[:8], 16)


def first_samples(op, device, options):
    """The operator's first samples, made from the same seed whatever ran before."""
    seed_everything(options["seed"])
    return list(itertools.islice(op.sample_inputs(device, torch.float32, requires_grad=False), options["samples"]))


def run_sample(op, name, values, seed, check):
    """One sample: its digests ``{input, output}`` (and its distance from float64 in ulps), its error against
    float64 (None: not compared) and why not."""
    entry = {"input": digest(values, with_strides=True), "output": None}
    try:
        output, drew = call(op, values, seed)
        again, _ = call(op, values, seed)
    except Exception as error:
        entry["output"] = "raised " + type(error).__name__
        note_raised(check, "float32", error)
        return entry, None, "float32 raised"
    output_digest = digest(output)
    if UNINITIALISED.match(name) or output_digest != digest(again):
        check["nondeterministic"] = True  # no output digest: it would change from run to run
        return entry, None, "its output differs from call to call"
    entry["output"] = output_digest
    if drew:
        check["random"] = True
        return entry, None, "it draws random numbers, which float64 draws otherwise"
    if torch.float64 not in op.supported_dtypes("cpu"):
        return entry, None, "the operator has no float64 on the CPU"
    try:
        reference, _ = call(op, as_float64_on_cpu(values), seed)
    except Exception as error:
        return entry, None, "float64 raised " + short(error)
    ulps = ulp_distance(output, reference)
    if ulps is not None:
        entry["ulps"] = ulps
    return entry, worst_ratio(output, reference), ""


def call(op, values, seed):
    """The operator on a copy of ``values`` (it may write into its input), from ``seed``: its output, and whether
    it drew random numbers."""
    tensor, args, kwargs = fresh_copy(values)
    torch.manual_seed(seed)
    given = any(isinstance(value, torch.Generator) for value in itertools.chain(args, kwargs.values()))
    with RandomUse() as use:
        output = op(tensor, *args, **kwargs)
    return output, given or use.seen


class RandomUse(object):
    """Whether the code inside moved torch's random state or seeded it itself.

    op_db wraps its random operators so that they seed themselves and put the state back afterwards
    (wrapper_set_seed), which leaves the state as it was: the call to torch.manual_seed gives them away.
    """

    def __enter__(self):
        self.seen = False
        self.before = random_state()
        self.manual_seed = torch.manual_seed

        def seeding(seed):
            self.seen = True
            return self.manual_seed(seed)

        torch.manual_seed = seeding
        return self

    def __exit__(self, *exc_info):
        torch.manual_seed = self.manual_seed
        self.seen = self.seen or random_state() != self.before
        return False


def fresh_copy(values):
    try:
        return copy.deepcopy(values)  # keeps storages whole: views and as_strided see the same memory
    except Exception:  # tensors that cannot be deep-copied (sparse CSR, in some releases) are cloned
        return structured(values, lambda value: value.clone() if isinstance(value, torch.Tensor) else value)


def random_state():
    state = torch.get_rng_state().numpy().tobytes()
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state += b"".join(each.numpy().tobytes() for each in torch.cuda.get_rng_state_all())
    return state


def note_raised(check, stage, error):
    """Keep the first exception an operator raised, with the end of its traceback."""
    if "raised" not in check:
        check["raised"] = "{}: {}".format(stage, short(error))
        check["traceback"] = traceback.format_exc(limit=-3)[-MESSAGE_CHARS * 4 :]


def sample_values(sample):
    return (sample.input, tuple(sample.args), dict(sample.kwargs))


# --- the input store: samples captured once, replayed in every release ------------------------------------------
#
# A folder of two files: samples.json, every captured sample of every operator as JSON (tensors by the key of
# their array, floats by float.hex, torch's dtypes, layouts and memory formats by name), and arrays-<digest>.npz,
# every tensor's storage as a NumPy array, named by its own sha256. NumPy and JSON, never torch.save, so that
# every release reads what another wrote.

STORE_FORMAT = 1
MANIFEST = "samples.json"
CAPTURE_DEVICE = "cpu"
MOST_SAMPLE_BYTES = 1 << 20
"""A sample's tensors may hold 1 MiB: the store is committed beside the results (grid_sampler_3d's first
samples hold 7 MB each, and all others 0.4 MB together)."""


class CannotStore(Exception):
    """A sample holds something the store does not keep (a sparse tensor, a function)."""


def replayed(store):
    """The folder of the store a record replayed, relative to this file's folder, as its repro scripts find it;
    None where it replayed none (each release's own samples)."""
    if store is None:
        return None
    return os.path.relpath(os.path.dirname(store.path), os.path.dirname(os.path.abspath(__file__)))


def store_folder(store):
    """The store's folder: ``store`` as given, relative to this probe file's folder."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), store)


STORE_NAME = "opsweep"
"""The store's folder in the one torchmatrix gives (:data:`INPUTS_VARIABLE`)."""
LOCK = ".lock"
CAPTURE_KEYS = ("format", "device", "ops_asked", "samples", "seed", "probe")
"""What makes a capture, in its manifest: a store beside the results made with other values of any is captured again."""


def open_store(options, inputs_folder):
    """The store this sweep replays: the ``store`` option's, captured by hand; else the one in ``inputs_folder``
    (beside this machine's results), which the first cell to run captures and every other replays; None where
    neither is given (a run by hand, or by a runner without that folder): each release's own samples."""
    if options["store"] is not None:
        store = Store(store_folder(options["store"]))
        refuse_other_capture(store, options)
        return store
    if not inputs_folder:
        return None
    return shared_store(os.path.join(inputs_folder, STORE_NAME), options)


def refuse_other_capture(store, options):
    """A store captured by hand with other samples or another seed than the options ask is not replayed: its
    samples would be mixed with op_db's own where it has fewer."""
    manifest = store.manifest
    differ = [key for key in ("samples", "seed") if manifest.get(key) != options[key]]
    if differ:
        held = ", ".join("{} {}".format(key, manifest.get(key)) for key in differ)
        asked = ", ".join("{} {}".format(key, options[key]) for key in differ)
        raise ValueError(
            "the store {} was captured with {}, but the options ask {}: capture it again with those, or ask for "
            "what it holds".format(os.path.dirname(store.path), held, asked)
        )


def shared_store(folder, options):
    """The store in ``folder``, captured now where it holds none or one another capture made (other options,
    another version of this probe), with why (``store.captured_here``); replayed as it is otherwise.

    Under the folder's lock: two cells at once (``nox -j 2``) neither both capture nor read a store half written;
    the second waits, then replays what the first captured.
    """
    if not os.path.isdir(folder):
        os.makedirs(folder)
    wanted = capture_identity(options["ops"], options["samples"], options["seed"])
    with locked(folder):
        why = recapture_reason(folder, wanted)
        if why:
            capture_apart(folder, options)
        store = Store(folder)
    store.captured_here = why
    return store


def capture_apart(folder, options):
    """Capture into ``folder`` with ``options``, in a process forked for it where the system forks: the threads
    the operators start there are never those of a process the sweep forks later, and an input that kills the
    process (a division by zero in integer code) is an error saying so, not the end of the pair."""
    if not hasattr(os, "fork"):
        capture(folder, options["ops"], options["samples"], options["seed"])
        return
    reading, writing = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(reading)
        status = 1
        try:
            capture(folder, options["ops"], options["samples"], options["seed"])
            status = 0
        except BaseException as error:
            os.write(writing, short(error).encode("utf-8"))
        finally:
            os._exit(status)
    os.close(writing)
    with os.fdopen(reading, "rb") as stream:
        said = stream.read().decode("utf-8", "replace")
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        ended = "died of " + signal.Signals(os.WTERMSIG(status)).name
    elif os.WEXITSTATUS(status):
        ended = "raised " + said
    else:
        return
    raise RuntimeError("capturing the samples into {}: the process that captured them {}".format(folder, ended))


def capture_identity(ops, samples, seed):
    """What a capture with these options is made from, as its manifest says it (:data:`CAPTURE_KEYS`; the
    ``ops`` option as ``ops_asked``, beside the operators captured)."""
    return {"format": STORE_FORMAT, "device": CAPTURE_DEVICE, "ops_asked": ops, "samples": samples, "seed": seed,
            "probe": probe_digest()}  # fmt: skip


def probe_digest():
    """The sha256 of this probe's file: another version of the sweep may capture otherwise."""
    with open(os.path.abspath(__file__), "rb") as stream:
        return hashlib.sha256(stream.read()).hexdigest()


def recapture_reason(folder, wanted):
    """Why the store in ``folder`` is to be captured (again): '' where it holds a capture made as ``wanted``."""
    path = os.path.join(folder, MANIFEST)
    if not os.path.isfile(path):
        return "no samples were captured there yet"
    try:
        with open(path, "rb") as stream:
            manifest = json.loads(stream.read().decode("utf-8"))
    except (OSError, ValueError) as error:
        return "the store there cannot be read ({})".format(short(error))
    differ = [key for key in CAPTURE_KEYS if manifest.get(key) != wanted[key]]
    if not differ:
        return ""
    if differ == ["probe"]:
        return "the samples there were captured by another version of this probe"
    return "the samples there were captured with other options ({})".format(
        ", ".join("{} {} -> {}".format(key, json.dumps(manifest.get(key)), json.dumps(wanted[key]))
                  for key in differ if key != "probe"))  # fmt: skip


@contextlib.contextmanager
def locked(folder):
    """``folder``'s lock held by this process alone, waiting for it as long as another holds it.

    Its file is opened to write only: what a pair writes is its own, not what its record depends on.
    """
    fd = os.open(os.path.join(folder, LOCK), os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        try:
            import fcntl
        except ImportError:  # Windows
            import msvcrt

            while True:
                try:
                    msvcrt.locking(fd, msvcrt.LK_LOCK, 1)
                    break
                except OSError:  # LK_LOCK gives up after 10 s; a capture takes longer
                    continue
        else:
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing it releases the lock


class Store(object):
    """The samples captured into a folder, rebuilt in this release."""

    def __init__(self, folder):
        path = os.path.join(folder, MANIFEST)
        if not os.path.isfile(path):
            raise RuntimeError(
                "no samples are captured in {}: run python {} capture {} in the reference release".format(
                    folder, os.path.basename(__file__), folder
                )
            )
        with open(path, "rb") as stream:
            text = stream.read()
        self.manifest = json.loads(text.decode("utf-8"))
        self.digest = hashlib.sha256(text).hexdigest()[:DIGEST_CHARS]
        """This capture's own name: the replaying records say which capture they replayed."""
        self.captured_here = ""
        """Why this sweep captured the store before replaying it; '' where another had."""
        if self.manifest.get("format") != STORE_FORMAT:
            raise RuntimeError(
                "{} is of format {!r}; this probe reads {}".format(path, self.manifest.get("format"), STORE_FORMAT)
            )
        import numpy

        self.arrays = numpy.load(os.path.join(folder, self.manifest["arrays"]), allow_pickle=False)
        self.path = path

    def samples(self, name):
        """The operator's entry (``samples``, ``left_out``, ``torch``), or None where the store has no samples of it."""
        return self.manifest["ops"].get(name)

    def captured_by(self):
        """The releases that captured its samples, by their number (one, unless operators were added by hand)."""
        found = set(entry.get("torch", "?") for entry in self.manifest["ops"].values())
        return sorted(found, key=lambda release: [int(part) for part in re.findall(r"\d+", release)])

    def decode(self, encoded, device):
        """A stored value rebuilt on ``device``."""
        return decode(encoded, lambda key: self.arrays[key], device)


def decode(encoded, array, device):
    """The value ``encoded`` stands for, its tensors made from ``array(key)`` on ``device``."""
    if "tensor" in encoded:
        return decode_tensor(encoded, array(encoded["tensor"]), device)
    ((kind, value),) = encoded.items()
    if kind == "value":
        return value
    if kind == "float":
        return float.fromhex(value)
    if kind == "complex":
        return complex(float.fromhex(value[0]), float.fromhex(value[1]))
    if kind == "torch":
        return getattr(torch, value)  # a dtype, layout or memory format; one a release lacks is refused there
    if kind == "device":
        return torch.device(device)
    if kind == "device_name":
        return str(torch.device(device))
    if kind == "size":
        return torch.Size(value)
    if kind == "slice":
        return slice(*(decode(part, array, device) for part in value))
    if kind == "ellipsis":
        return Ellipsis
    if kind in ("list", "tuple"):
        items = [decode(item, array, device) for item in value]
        return items if kind == "list" else tuple(items)
    if kind == "dict":
        return dict((key, decode(item, array, device)) for key, item in value.items())
    raise ValueError("a stored value of unknown kind {!r}".format(kind))


def decode_tensor(encoded, array, device):
    flat = torch.from_numpy(array.copy())
    if encoded["dtype"] == "bfloat16":  # NumPy has none: its bits are stored as int16
        flat = flat.view(torch.bfloat16)
    elif getattr(torch, encoded["dtype"]) != flat.dtype:
        raise TypeError("a stored {} array is not of dtype {}".format(array.dtype, encoded["dtype"]))
    tensor = flat.to(device).as_strided(encoded["shape"], encoded["stride"], encoded["offset"])
    if encoded.get("grad"):
        tensor.requires_grad_(True)
    return tensor


def encode(value, arrays):
    """``value`` as JSON data, every tensor's storage put in ``arrays`` by its key; CannotStore where it cannot."""
    if isinstance(value, torch.Tensor):
        return encode_tensor(value, arrays)
    if value is None or isinstance(value, bool):
        return {"value": value}
    if isinstance(value, str):
        return {"device_name": True} if value == CAPTURE_DEVICE else {"value": value}
    if isinstance(value, int):
        return {"value": value}
    if isinstance(value, float):
        return {"float": value.hex()}
    if isinstance(value, complex):
        return {"complex": [value.real.hex(), value.imag.hex()]}
    if isinstance(value, (torch.dtype, torch.layout, torch.memory_format)):
        return {"torch": str(value).replace("torch.", "", 1)}
    if isinstance(value, torch.device):
        return {"device": True}
    if isinstance(value, torch.Size):
        return {"size": list(value)}
    if isinstance(value, slice):
        return {"slice": [encode(part, arrays) for part in (value.start, value.stop, value.step)]}
    if value is Ellipsis:
        return {"ellipsis": True}
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return {"list" if isinstance(value, list) else "tuple": [encode(item, arrays) for item in value]}
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        return {"dict": dict((key, encode(item, arrays)) for key, item in value.items())}
    raise CannotStore("a {}".format(type(value).__name__))


def encode_tensor(tensor, arrays):
    if tensor.layout != torch.strided:
        raise CannotStore("a {} tensor".format(str(tensor.layout).replace("torch.", "")))
    if tensor.is_quantized or str(tensor.dtype).replace("torch.", "", 1) not in STORED_DTYPES:
        raise CannotStore("a {} tensor".format(tensor.dtype))
    tensor = tensor.detach()
    for resolve in ("resolve_conj", "resolve_neg"):
        if hasattr(tensor, resolve):
            tensor = getattr(tensor, resolve)()
    shape, stride, offset = list(tensor.shape), list(tensor.stride()), tensor.storage_offset()
    extent = offset + sum((size - 1) * step for size, step in zip(shape, stride)) + 1 if tensor.numel() else offset
    flat = tensor.as_strided((extent,), (1,), 0).cpu()  # the storage from its start: the offset is kept too
    name = str(tensor.dtype).replace("torch.", "", 1)
    array = (flat.view(torch.int16) if name == "bfloat16" else flat).numpy()
    key = hashlib.sha256("{} {}:".format(name, extent).encode() + array.tobytes()).hexdigest()[:DIGEST_CHARS]
    arrays[key] = array
    encoded = {"tensor": key, "dtype": name, "shape": shape, "stride": stride, "offset": offset}
    if tensor.requires_grad:
        encoded["grad"] = True
    return encoded


STORED_DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16") + (
    "float32",
    "float64",
    "complex64",
    "complex128",
)
"""The dtypes the store holds, by name: those NumPy has (bfloat16 as its bits)."""


def capture(folder, ops=None, samples=3, seed=0, add=False):
    """Capture the samples of every operator of this release's op_db (that takes float32 on the CPU) into
    ``folder``; with ``add``, only of those the store does not have yet. Returns the manifest."""
    import numpy

    manifest = dict(capture_identity(ops, samples, seed), ops={})
    arrays = {}
    path = os.path.join(folder, MANIFEST)
    if add and os.path.isfile(path):
        store = Store(folder)
        manifest = dict(store.manifest, probe=manifest["probe"])
        arrays = dict((key, store.arrays[key]) for key in store.arrays.files)
    options = {"samples": samples, "seed": seed}
    wanted = op_filter(ops)
    for op in load_op_db():
        name = full_name(op)
        if not wanted(name) or name in manifest["ops"] or torch.float32 not in op.supported_dtypes(CAPTURE_DEVICE):
            continue
        manifest["ops"][name] = captured(op, options, arrays)
    used = set()
    for entry in manifest["ops"].values():
        for sample in entry["samples"]:
            used.update(keys_of(sample["value"]))
    if not os.path.isdir(folder):
        os.makedirs(folder)
    old = manifest.get("arrays")
    manifest["arrays"] = write_arrays(folder, dict((key, arrays[key]) for key in used), numpy)
    write_atomically(os.path.join(folder, MANIFEST), manifest_text(manifest).encode("utf-8"))
    if old and old != manifest["arrays"] and os.path.isfile(os.path.join(folder, old)):
        os.remove(os.path.join(folder, old))
    return manifest


def manifest_text(manifest):
    """The manifest as JSON, an operator a line (a capture's diff shows the operators it changed)."""
    head = dict(manifest)
    ops = head.pop("ops")
    lines = [
        json.dumps(name) + ": " + json.dumps(ops[name], sort_keys=True, separators=(",", ":")) for name in sorted(ops)
    ]
    return json.dumps(head, sort_keys=True)[:-1] + ', "ops": {\n' + ",\n".join(lines) + "\n}}\n"


def captured(op, options, arrays):
    """One operator's entry in the store: its first samples, encoded, and whether this release raised on each."""
    entry = {"torch": torch.__version__.split("+")[0], "samples": [], "left_out": []}
    try:
        made = first_samples(op, CAPTURE_DEVICE, options)
    except Exception as error:
        entry["left_out"].append("sample_inputs raised " + short(error))
        return entry
    for sample in made:
        values = sample_values(sample)
        held = {}
        try:
            encoded = encode(values, held)
        except CannotStore as error:
            entry["left_out"].append(str(error))
            continue
        size = sum(array.nbytes for array in held.values())
        if size > MOST_SAMPLE_BYTES:
            entry["left_out"].append("{:.1f} MB of tensors, more than a sample may hold".format(size / 1e6))
            continue
        arrays.update(held)
        key = hashlib.sha256(json.dumps(encoded, sort_keys=True).encode()).hexdigest()[:DIGEST_CHARS]
        stored = {"key": key, "value": encoded}
        try:
            call(op, values, sample_seed(key))
        except Exception as error:
            stored["raised"] = type(error).__name__
        entry["samples"].append(stored)
    return entry


def keys_of(encoded):
    """The array keys a stored value uses."""
    if isinstance(encoded, dict):
        found = [encoded["tensor"]] if "tensor" in encoded else []
        for item in encoded.values():
            found += keys_of(item)
        return found
    if isinstance(encoded, list):
        return [key for item in encoded for key in keys_of(item)]
    return []


def write_arrays(folder, arrays, numpy):
    """Every array into one .npz of ``folder``, written the same way for the same arrays; its name, by its sha256."""
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for key in sorted(arrays):
            data = io.BytesIO()
            numpy.lib.format.write_array(data, numpy.ascontiguousarray(arrays[key]), allow_pickle=False)
            info = zipfile.ZipInfo(key + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data.getvalue())
    blob = buffer.getvalue()
    name = "arrays-{}.npz".format(hashlib.sha256(blob).hexdigest()[:DIGEST_CHARS])
    write_atomically(os.path.join(folder, name), blob)
    return name


def write_atomically(path, data):
    temporary = path + ".tmp"
    with open(temporary, "wb") as stream:
        stream.write(data)
    os.replace(temporary, path)


# --- distance from float64 in ulps --------------------------------------------------------------------------


def ulp_distance(output, reference):
    """The most units in the last place of float32 between a float32 output and the float64 reference rounded to
    float32 (0: the float32 nearest to the float64 result); None where an output is no float32 tensor, or a NaN
    stands against a number."""
    pairs = list(float32_pairs(output, reference))
    if not pairs:
        return None
    worst = 0
    for out, ref in pairs:
        if out.shape != ref.shape:
            return None
        if out.numel() == 0:
            continue
        out, ref = out.detach().cpu(), ref.to(torch.float32)
        a, b = ordered_bits(out), ordered_bits(ref)
        nan_a, nan_b = torch.isnan(out).reshape(-1).numpy(), torch.isnan(ref).reshape(-1).numpy()
        if (nan_a != nan_b).any():
            return None
        distance = abs(a - b)
        distance[nan_a] = 0
        worst = max(worst, int(distance.max()))
    return worst


def float32_pairs(output, reference):
    if isinstance(output, torch.Tensor) and isinstance(reference, torch.Tensor):
        if output.dtype == torch.float32 and output.layout == torch.strided and reference.is_floating_point():
            yield output, reference.detach().cpu()
    elif isinstance(output, (list, tuple)) and isinstance(reference, (list, tuple)) and len(output) == len(reference):
        for a, b in zip(output, reference):
            for pair in float32_pairs(a, b):
                yield pair


def ordered_bits(tensor):
    """float32 values as integers in the order of the floats they stand for, a step apart for adjacent floats."""
    import numpy

    bits = tensor.detach().cpu().contiguous().reshape(-1).numpy().view(numpy.int32).astype(numpy.int64)
    return numpy.where(bits < 0, -(bits & 0x7FFFFFFF), bits)


# --- digests ------------------------------------------------------------------


def digest(value, with_strides=False):
    """A short sha256 of a value's exact contents: tensors by dtype, shape and bits (and strides, for inputs)."""
    hasher = hashlib.sha256()
    feed(hasher, value, with_strides)
    return hasher.hexdigest()[:DIGEST_CHARS]


def feed(hasher, value, with_strides):
    if isinstance(value, torch.Tensor):
        layout = (value.stride(), value.storage_offset()) if with_strides and value.layout == torch.strided else ()
        hasher.update("tensor {} {} {}:".format(value.dtype, tuple(value.shape), layout).encode())
        hasher.update(tensor_bytes(value))
    elif isinstance(value, (list, tuple)):
        hasher.update("{}[".format(type(value).__name__).encode())
        for item in value:
            feed(hasher, item, with_strides)
        hasher.update(b"]")
    elif isinstance(value, dict):
        hasher.update(b"{")
        for key in sorted(value, key=str):
            hasher.update(str(key).encode() + b"=")
            feed(hasher, value[key], with_strides)
        hasher.update(b"}")
    else:
        hasher.update(stable_repr(value).encode() + b";")


def tensor_bytes(tensor):
    """The tensor's values as bytes in logical order; every NaN the same NaN."""
    tensor = tensor.detach().cpu()
    if tensor.layout != torch.strided:
        tensor = tensor.to_dense()
    for resolve in ("resolve_conj", "resolve_neg"):  # lazy conjugate and negation views, torch >= 1.10
        if hasattr(tensor, resolve):
            tensor = getattr(tensor, resolve)()
    if tensor.is_complex():
        tensor = tensor.to(torch.complex128)
        tensor = torch.stack((tensor.real, tensor.imag), dim=-1)
    if tensor.is_floating_point():
        tensor = tensor.to(torch.float64) if tensor.dtype in (torch.float16, torch.bfloat16) else tensor
        tensor = torch.where(torch.isnan(tensor), torch.full_like(tensor, float("nan")), tensor)
    if tensor.dtype == torch.bool:
        tensor = tensor.to(torch.uint8)
    return tensor.contiguous().numpy().tobytes()


def stable_repr(value):
    """A repr that is the same in every run: functions by name, objects without their memory address."""
    if callable(value) and hasattr(value, "__qualname__"):
        return "{}.{}".format(getattr(value, "__module__", ""), value.__qualname__)
    return _ADDRESS.sub("", repr(value))


# --- float64 reference ----------------------------------------------------------


def as_float64_on_cpu(values):
    """The same values on the CPU, floating and complex tensors in double precision."""
    return structured(values, tensor_as_float64_on_cpu)


def tensor_as_float64_on_cpu(value):
    if not isinstance(value, torch.Tensor):
        return value
    value = value.detach().cpu()
    if value.is_complex():
        return value.to(torch.complex128)
    return value.to(torch.float64) if value.is_floating_point() else value


def structured(value, convert):
    """``value`` with ``convert`` applied to every item of its lists, tuples and dicts, at any depth."""
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a named tuple
        return type(value)(*(structured(item, convert) for item in value))
    if isinstance(value, (list, tuple)):
        return type(value)(structured(item, convert) for item in value)
    if isinstance(value, dict):
        return {key: structured(item, convert) for key, item in value.items()}
    return convert(value)


def worst_ratio(output, reference):
    """The largest |output - reference| / (ATOL + RTOL * |reference|) over every element; inf where they disagree
    in kind (shape, structure, an integer result), 0 where they are equal (the same infinity, NaN and NaN)."""
    if isinstance(output, torch.Tensor) and isinstance(reference, torch.Tensor):
        return tensor_ratio(output.detach().cpu(), reference.detach().cpu())
    if isinstance(output, (list, tuple)) and isinstance(reference, (list, tuple)):
        if len(output) != len(reference):
            return float("inf")
        return max([worst_ratio(a, b) for a, b in zip(output, reference)] or [0.0])
    if isinstance(output, (int, float, complex)) and isinstance(reference, (int, float, complex)):
        return tensor_ratio(torch.tensor(output), torch.tensor(reference))
    return 0.0 if output == reference else float("inf")


def tensor_ratio(output, reference):
    if output.layout != torch.strided:
        output, reference = output.to_dense(), reference.to_dense()
    if output.shape != reference.shape:
        return float("inf")
    if output.numel() == 0:
        return 0.0
    if not (output.is_floating_point() or output.is_complex()):
        return 0.0 if torch.equal(output, reference.to(output.dtype)) else float("inf")
    wide = torch.complex128 if output.is_complex() or reference.is_complex() else torch.float64
    output, reference = output.to(wide), reference.to(wide)
    same = (output == reference) | (torch.isnan(output) & torch.isnan(reference))
    ratio = (output - reference).abs() / (ATOL + RTOL * reference.abs())
    ratio = torch.where(same, torch.zeros_like(ratio), ratio)
    ratio = torch.where(torch.isnan(ratio), torch.full_like(ratio, float("inf")), ratio)
    return ratio.max().item()


def seed_everything(seed):
    torch.manual_seed(seed)
    random.seed(seed)
    try:
        import numpy

        numpy.random.seed(seed)
    except ImportError:
        pass


def short(error):
    text = "{}: {}".format(type(error).__name__, _ADDRESS.sub("", str(error)))
    text = " ".join(text.split())
    return text if len(text) <= MESSAGE_CHARS else text[: MESSAGE_CHARS - 1] + "…"


# --- the record -----------------------------------------------------------------


def summary(op_db, checks, not_float32, seconds, options, store=None):
    slowest = sorted(seconds.items(), key=lambda item: -item[1])[:SLOWEST_KEPT]
    known = set(full_name(op) for op in op_db)
    metrics = {
        "checks": checks,
        "op_db": len(op_db),
        "swept": len(checks),
        "samples_run": sum(len(check["samples"]) for check in checks),
        "raised": sum("raised" in check for check in checks),
        "beyond_tolerance": sum(beyond_tolerance(check) for check in checks),
        "nondeterministic": sum(bool(check.get("nondeterministic")) for check in checks),
        "not_float32": not_float32,
        "not_in_op_db": sorted(set(options["ops"]) - known) if isinstance(options["ops"], list) else [],
        "tolerance": {"rtol": RTOL, "atol": ATOL, "against": "the same values in float64 on the CPU"},
        "options": options,
        "slowest": [[name, round(spent, 3)] for name, spent in slowest],
        "repro": {
            "function": "reproduce",
            "arguments": {"seed": options["seed"], "samples": options["samples"], "store": replayed(store)},
            "folders": ["store"],
        },
    }
    if store is not None:
        metrics["store"] = {
            "manifest": os.path.basename(store.path),
            "arrays": store.manifest["arrays"],
            "capture": store.digest,
            "captured_by": store.captured_by(),
            "replayed": sum("inputs" not in check for check in checks),
            "generated": sorted(check["name"] for check in checks if "inputs" in check),
            "refused": sum(check.get("refused", 0) for check in checks),
            "not_captured": sum(check.get("not_captured", 0) for check in checks),
        }
        if store.captured_here:
            metrics["store"]["captured_here"] = store.captured_here
    return metrics


def describe(metrics):
    text = (
        "{swept} operators, {samples_run} samples: {beyond_tolerance} beyond float32 tolerance of float64, "
        "{raised} raised".format(**metrics)
    )
    store = metrics.get("store")
    if store:
        if store.get("captured_here"):
            text += "; captured the samples every other release replays ({})".format(store["captured_here"])
        else:
            text += "; replayed the samples torch {} captured".format(", ".join(store["captured_by"]))
        text += "; {} samples the store holds refused here".format(store["refused"]) if store["refused"] else ""
        text += "; {} operators not in the store".format(len(store["generated"])) if store["generated"] else ""
    return text


def beyond_tolerance(check):
    return check["error"] is not None and check["error"] > check["tolerance"]


# --- a repro of one sample: what the report's repro scripts call (the record's metrics.repro) --------------------

ELEMENTS = 8
"""How many of each output tensor's first elements a repro prints."""


def reproduce(operator, input_digest, device, seed=DEFAULTS["seed"], samples=DEFAULTS["samples"], store=None):
    """Run ``operator`` on the sample whose inputs' digest is ``input_digest``, as the sweep does; print the output's
    digest (the one the sweep records) and its first elements on stdout, which bisect --by-output compares, and the
    release on stderr. Exit 125 (bisect's "skip") where this release cannot run it.

    ``store``: the folder of captured samples, as given (a repro script gives it relative to itself); ``seed`` and
    ``samples``: the sweep's options, where it ran the operator on op_db's own samples, which are made again.
    """
    sys.stderr.write("torch {}\n".format(torch.__version__))
    try:
        op_db = load_op_db()
    except RuntimeError as error:
        sys.stderr.write("{}\n".format(error))
        sys.exit(125)
    ops = [op for op in op_db if full_name(op) == operator]
    if not ops:
        sys.stderr.write("this torch's op_db has no operator {}\n".format(operator))
        sys.exit(125)
    found = find_sample(ops[0], input_digest, device, store, {"seed": seed, "samples": samples})
    if found is None:
        sys.stderr.write("no sample of {} with the input {} here\n".format(operator, input_digest))
        sys.exit(125)
    values, seeded_with = found
    print("{} on {}: input {}".format(operator, device, input_digest))
    try:
        output, _ = call(ops[0], values, seeded_with)
    except Exception as error:
        print("output raised " + type(error).__name__)
        sys.stderr.write(short(error) + "\n")
        return
    print("output " + digest(output))
    for line in elements(output, "output"):
        print(line)


def find_sample(op, input_digest, device, store, options):
    """The sample's values and seed: from the store, else from op_db's own samples; None where neither has it."""
    if store:
        stored = Store(store)
        for sample in (stored.samples(full_name(op)) or {}).get("samples", []):
            try:
                values = stored.decode(sample["value"], device)
            except Exception:  # a dtype this release lacks
                continue
            if digest(values, with_strides=True) == input_digest:
                return values, sample_seed(sample["key"])
    try:
        made = first_samples(op, device, options)
    except Exception:
        return None
    for sample in made:
        values = sample_values(sample)
        if digest(values, with_strides=True) == input_digest:
            return values, options["seed"]
    return None


def elements(value, where):
    """A line per output tensor: its dtype, shape and first elements, as Python prints them in any release."""
    if isinstance(value, torch.Tensor):
        tensor = value.detach().cpu()
        if tensor.layout != torch.strided:
            tensor = tensor.to_dense()
        for resolve in ("resolve_conj", "resolve_neg"):
            if hasattr(tensor, resolve):
                tensor = getattr(tensor, resolve)()
        flat = tensor.reshape(-1)
        shown = " ".join(repr(item) for item in flat[:ELEMENTS].tolist())
        more = " ..." if flat.numel() > ELEMENTS else ""
        dtype = str(tensor.dtype).replace("torch.", "")
        yield "{} {} {}: {}{}".format(where, dtype, list(tensor.shape), shown, more)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            for line in elements(item, "{}[{}]".format(where, index)):
                yield line
    else:
        yield "{} {}".format(where, stable_repr(value))


# --- capturing, by hand: python probes/opsweep.py capture FOLDER --------------------------------------------------


def main(arguments=None):
    import argparse

    parser = argparse.ArgumentParser(
        prog="opsweep.py", description="Capture the samples of op_db's operators into a store every release replays."
    )
    commands = parser.add_subparsers(dest="command")
    command = commands.add_parser("capture", help="capture this release's samples into FOLDER")
    command.add_argument("folder")
    command.add_argument("--ops", help="a regular expression the full names must match (default: every operator)")
    command.add_argument("--samples", type=int, default=DEFAULTS["samples"], help="samples per operator, at most")
    command.add_argument("--seed", type=int, default=DEFAULTS["seed"], help="the seed op_db's generators start from")
    command.add_argument("--add", action="store_true", help="keep the store's operators; add only those it lacks")
    given = parser.parse_args(arguments)
    if given.command != "capture":
        parser.error("say what to do: capture")
    manifest = capture(given.folder, given.ops, given.samples, given.seed, given.add)
    held = sum(len(entry["samples"]) for entry in manifest["ops"].values())
    left = sum(len(entry["left_out"]) for entry in manifest["ops"].values())
    print("{} operators, {} samples in {} ({} left out: the store cannot hold them)".format(
        len(manifest["ops"]), held, given.folder, left))  # fmt: skip


if __name__ == "__main__":
    main()
