"""Issue 34 finding 3 (rest): whether torchao's DA8W4 CPU kernel is built, read as torchao itself decides it."""

import pytest
import torch

from amp_docs_lib.quantization import kernels, ptq


def test_a_built_cpu_kernel_is_seen():
    assert kernels.da8w4_cpu_kernel("aten::mm")["CPU kernel"] is True  # the same reading of an op that has one


def test_the_reading_agrees_with_torchaos_own_refusal():
    from torchao.prototype.quantization.int4 import Int8DynamicActivationInt4WeightConfig

    status = kernels.da8w4_cpu_kernel()
    assert status["op"] == "torchao::da8w4_linear_cpu"
    model = torch.nn.Sequential(torch.nn.Linear(64, 64)).eval()
    config = Int8DynamicActivationInt4WeightConfig(group_size=32, set_inductor_config=False)
    if status["CPU kernel"]:
        ptq.quantize_copy(model, config)  # built: torchao quantizes
    else:
        assert "CPU" not in status["kernels registered for"].split(", ")
        with pytest.raises(AssertionError, match="da8w4_linear_cpu kernel"):
            ptq.quantize_copy(model, config)
