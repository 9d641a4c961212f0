"""What of torch's view of the machine differs between two records: CPU capability, BLAS, the GPU."""

from __future__ import annotations

from torchmatrix.views.machine_side import differences

AVX2 = {"cpu_capability": "AVX2", "blas": "mkl", "lapack": "mkl", "cuda": "11.7", "devices": {"cuda": ["A100"]}}


def test_the_cpu_capability_torch_dispatches_to_is_named_with_both_sides() -> None:
    assert differences(AVX2, dict(AVX2, cpu_capability="AVX512"), "cpu") == ("CPU capability AVX2 → AVX512",)
    assert differences(AVX2, dict(AVX2, blas="openblas"), "cpu") == ("BLAS mkl → openblas",)
    assert differences(AVX2, dict(AVX2), "cpu") == ()


def test_the_gpu_and_its_libraries_count_only_for_a_gpu_column() -> None:
    other = dict(AVX2, cuda="12.1", devices={"cuda": ["H200"]})
    assert differences(AVX2, other, "cpu") == ()
    assert differences(AVX2, other, "cuda") == ("CUDA 11.7 → 12.1", "GPU A100 → H200")


def test_what_either_side_does_not_know_is_no_difference() -> None:
    assert differences({}, AVX2, "cuda") == ()
    assert differences({"cpu_capability": None, "devices": "junk"}, AVX2, "cuda") == ()
    assert differences({"blas": ["odd"]}, {"blas": ["other"]}, "cpu") == ()
