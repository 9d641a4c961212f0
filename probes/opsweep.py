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
"""

import contextlib
import copy
import hashlib
import itertools
import json
import os
import random
import re
import time
import traceback

import torch

OPTIONS_VARIABLE = "TORCHMATRIX_PROBE_OPTIONS"
DEFAULTS = {"ops": None, "samples": 3, "seed": 0}
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
    wanted = op_filter(options["ops"])
    checks, not_float32, seconds = [], [], {}
    for op in op_db:
        name = full_name(op)
        if not wanted(name):
            continue
        if torch.float32 not in op.supported_dtypes(torch.device(device).type):
            not_float32.append(name)
            continue
        started = time.perf_counter()
        checks.append(sweep(op, name, device, options))
        seconds[name] = time.perf_counter() - started
    metrics = summary(op_db, checks, not_float32, seconds, options)
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


def sweep(op, name, device, options):
    """The check of one operator: its samples' digests, its worst error against float64, what it raised."""
    check = {"name": name, "samples": [], "tolerance": 1.0, "expected": "<= 1"}
    ratios, missing = [], []
    try:
        samples = first_samples(op, device, options)
    except Exception as error:
        samples = []
        note_raised(check, "sample_inputs", error)
    for sample in samples:
        entry, ratio, why_none = run_sample(op, name, sample, options["seed"], check)
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
        check["reference"] = "none for {} of {} samples: {}".format(len(missing), len(samples), reasons)
    check["ok"] = "raised" not in check and (check["error"] is None or check["error"] <= check["tolerance"])
    return check


def first_samples(op, device, options):
    """The operator's first samples, made from the same seed whatever ran before."""
    seed_everything(options["seed"])
    return list(itertools.islice(op.sample_inputs(device, torch.float32, requires_grad=False), options["samples"]))


def run_sample(op, name, sample, seed, check):
    """One sample: its digests ``{input, output}``, its error against float64 (None: not compared) and why not."""
    values = sample_values(sample)
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
        return entry, worst_ratio(output, reference), ""
    except Exception as error:
        return entry, None, "float64 raised " + short(error)


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


def summary(op_db, checks, not_float32, seconds, options):
    slowest = sorted(seconds.items(), key=lambda item: -item[1])[:SLOWEST_KEPT]
    known = set(full_name(op) for op in op_db)
    return {
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
    }


def describe(metrics):
    return (
        "{swept} operators, {samples_run} samples: {beyond_tolerance} beyond float32 tolerance of float64, "
        "{raised} raised".format(**metrics)
    )


def beyond_tolerance(check):
    return check["error"] is not None and check["error"] > check["tolerance"]
