"""What of the machine's side of two records differs: the CPU capability torch dispatched to, its BLAS, the GPU.

Two releases on one machine do not always run the same kernels: torch picks
its CPU kernels by the capability it detects and was built for (AVX2 up to
2.0 and AVX512 from 2.1 on one AMD EPYC), links its own BLAS, and a cuda
column's records may come from other GPUs, CUDA or cuDNN. A change between
two such records may be the dispatch's, not torch's code: the views say so.
Read from each result's ``environment`` (the worker's fingerprint); a value
missing on either side is no difference, as nothing is known of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

CPU_KEYS = (("cpu_capability", "CPU capability"), ("blas", "BLAS"), ("lapack", "LAPACK"))
GPU_KEYS = (("cuda", "CUDA"), ("cudnn", "cuDNN"), ("hip", "HIP"))


def differences(before: Mapping[str, Any], after: Mapping[str, Any], device: str) -> tuple[str, ...]:
    """What differs between the fingerprints ``before`` and ``after`` that bears on ``device``'s results, each as
    ``CPU capability AVX2 → AVX512``; () where nothing known differs."""
    found = [_differs(label, before.get(key), after.get(key)) for key, label in CPU_KEYS]
    if device != "cpu":
        found += [_differs(label, before.get(key), after.get(key)) for key, label in GPU_KEYS]
        found.append(_differs("GPU", _gpu(before, device), _gpu(after, device)))
    return tuple(text for text in found if text)


def _gpu(environment: Mapping[str, Any], device: str) -> str | None:
    devices = environment.get("devices")
    named = devices.get(device) if isinstance(devices, Mapping) else None
    if isinstance(named, list) and all(isinstance(name, str) for name in named):
        return ", ".join(named) or None
    return named if isinstance(named, str) else None


def _differs(label: str, before: Any, after: Any) -> str:
    if before is None or after is None or isinstance(before, bool | dict | list) or before == after:
        return ""
    return f"{label} {before} → {after}"
