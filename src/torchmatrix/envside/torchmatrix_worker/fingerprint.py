"""What identifies the build and the machine, and which devices this torch has here."""

import platform
import re
import sys


def device_available(torch, device):
    if device == "cpu":
        return True, ""
    if device == "cuda":
        if torch.version.cuda is None and getattr(torch.version, "hip", None) is None:
            return False, "this torch build has no CUDA support"
        if not torch.cuda.is_available():
            return False, "torch has CUDA support but this machine has no usable CUDA device"
        return True, ""
    if device == "mps":
        backend = getattr(torch.backends, "mps", None)
        if backend is None:
            return False, "torch {} has no MPS backend (added in 1.12)".format(torch.__version__)
        if not backend.is_built():
            return False, "this torch build has no MPS support"
        if not backend.is_available():
            return False, "this machine has no MPS device"
        return True, ""
    return False, "unknown device {!r}".format(device)


def fingerprint(torch):
    """What identifies the build and the machine, in the spirit of torch.utils.collect_env."""
    config = safe(lambda: torch.__config__.show(), "")
    cudnn = safe(lambda: torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None)
    return {
        "torch": torch.__version__,
        "git_version": getattr(torch.version, "git_version", None),
        "cuda": torch.version.cuda,
        "hip": getattr(torch.version, "hip", None),
        "cudnn": cudnn,
        "debug": getattr(torch.version, "debug", None),
        "blas": config_value(config, r"BLAS_INFO=(\w+)"),
        "lapack": config_value(config, r"LAPACK_INFO=(\w+)"),
        "cpu_capability": safe(lambda: torch.backends.cpu.get_cpu_capability())
        or config_value(config, r"CPU capability usage: (\w+)"),
        "num_threads": torch.get_num_threads(),
        "numpy": safe(lambda: __import__("numpy").__version__),
        "python": platform.python_version(),
        "python_executable": sys.executable,
        "os": platform.platform(),
        "machine": platform.machine(),
        "devices": device_names(torch),
    }


def device_names(torch):
    names = {"cpu": cpu_name()}
    if safe(lambda: torch.cuda.is_available(), False):
        names["cuda"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    if safe(lambda: torch.backends.mps.is_available(), False):
        names["mps"] = "Apple MPS"
    return names


def cpu_name():
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def config_value(config, pattern):
    match = re.search(pattern, config)
    return match.group(1) if match else None


def safe(compute, default=None):
    try:
        return compute()
    except Exception:
        return default
