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
