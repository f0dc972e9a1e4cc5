"""Issue 33, independent read of the fp8 chapter: what its findings fixed."""
import pytest
import torch

from amp_docs_lib.fp8 import float8_training as ft

pytest.importorskip("torchao.prototype.moe_training")


@pytest.mark.parametrize("rule", ft.MX_SCALE_RULES)
def test_mx_training_model_trains_its_linear_biases(rule):
    # Finding 1: torchao 0.18's MXFP8 linear override ignores the bias; the converted GPT must still use and train it.
    cfg = ft.GPTConfig.from_profile(n_embd=64, block_size=16)
    model = ft.build_model(f"mxfp8 {rule} (emulated)", cfg)
    converted = ft.mx_modules(model)
    assert len(converted) == ft.linear_layers(cfg)
    x = torch.randint(0, cfg.vocab_size, (2, 16))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        _, loss = model(x, x)
    loss.backward()
    for name in converted:
        mod = model.get_submodule(name)
        assert mod.bias.grad is not None and mod.bias.grad.abs().sum() > 0, name
        assert mod.weight.grad is not None, name


@pytest.mark.parametrize("rule", ft.MX_SCALE_RULES)
def test_mx_linear_output_includes_the_bias(rule):
    # The false variant is a linear that drops its bias: its output matches x@W.T, ~100% away from x@W.T + b here.
    err = ft.mx_linear_bias_errors(rule=rule)
    assert err["vs x@W.T + b"] < 0.1 < 0.5 < err["vs x@W.T"]
    assert err["bias gradient"] > 0


def test_mx_override_drops_bias_is_measured():
    # torchao 0.18 drops it (moe_training/tensor.py, linear branch); the function must tell a dropped bias from an added one.
    dropped = ft.mx_override_drops_bias()
    from torchao.prototype.moe_training.tensor import MXFP8TrainingWeightWrapperTensor
    w = MXFP8TrainingWeightWrapperTensor(torch.randn(64, 64), ft.mx_training_config())
    x = torch.randn(64, 64)
    with torch.no_grad():
        same = torch.equal(torch.nn.functional.linear(x, w, torch.ones(64)), torch.nn.functional.linear(x, w))
    assert dropped == same
