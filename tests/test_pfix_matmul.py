"""Performance reader finding 5 (issue 34): which library ran a CPU matmul, read from MKL's and oneDNN's own
verbose logs: on x86 torch FP16 runs neither (torch's own fallback kernel)."""

import pytest
import torch

from amp_docs_lib.bench import matmul


@pytest.mark.skipif(not torch.backends.mkl.is_available(), reason="needs a torch built with MKL")
def test_the_verbose_logs_name_the_library():
    assert matmul.cpu_matmul_library("fp32", 64).startswith("MKL SGEMM")
    assert matmul.cpu_matmul_library("bf16", 64).startswith("oneDNN ")
    assert matmul.cpu_matmul_library("fp16", 64) == "neither MKL nor oneDNN"


def test_matmul_bytes_counts_the_fp8_matmuls_bf16_output():
    # performance reader finding 10: torch._scaled_mm writes BF16 here, so FP8's output is 2 bytes, not 1
    assert matmul.matmul_bytes("fp8", 64) == 64 * 64 * (1 + 1 + 2)
    assert matmul.matmul_bytes("fp32", 64) == 64 * 64 * 12
    assert matmul.matmul_bytes("bf16", 64) == 64 * 64 * 6


@pytest.mark.skipif(not torch.backends.mkl.is_available(), reason="needs a torch built with MKL")
def test_mkls_code_path_is_read_even_after_its_header_was_printed():
    # performance reader finding 6: MKL prints its header once per process; the path is kept when first seen
    matmul.cpu_matmul_library("fp32", 32)
    path = matmul.mkl_code_path()
    assert path is not None and path.startswith("Intel(R) 64 architecture")
    assert matmul.mkl_code_path() == path
