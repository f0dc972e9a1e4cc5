"""Issue 33, independent read of the fp8 chapter: what its findings fixed."""

import pytest
import torch

from amp_docs_lib.fp8 import float8_training as ft

pytest.importorskip("torchao.prototype.moe_training")
# torchao 0.18 refuses MXFP8 training on torch 2.11 (its own assertion); the chapter leaves the MX runs out there
mx_runs = pytest.mark.skipif(
    ft.mx_training_unsupported() is not None,
    reason=f"torchao refuses MXFP8 training on this torch: {ft.mx_training_unsupported()}",
)


@mx_runs
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


@mx_runs
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


def test_double_quantization_costs_3_db_with_amax_scales_and_nothing_with_power_of_two_scales():
    # Finding 2: the 3 dB loss belongs to exact amax scales; torchao's rowwise (power-of-two) scales requantize exactly.
    from amp_docs_lib.fp8 import scaling

    g = torch.Generator().manual_seed(0)
    x = (
        torch.randn(128, 256, generator=g)
        * torch.exp2(torch.randn(128, 1, generator=g))
        * torch.exp2(torch.randn(1, 256, generator=g))
    )
    dq = scaling.double_quantization_table({"activation:x": x}).set_index(["scales", "format"])
    amax_drops, p2_drops = dq.loc["amax", "drop (dB)"], dq.loc["power of two", "drop (dB)"]
    assert all(abs(d - scaling.DOUBLE_QUANTIZATION_DB) <= 0.5 for d in amax_drops)
    assert all(d < 0.1 for d in p2_drops)
    # the chapter's power-of-two check (< 0.1 dB) rejects the amax result, its plausible false variant
    assert not any(d < 0.1 for d in amax_drops)
    assert all(c < 0.05 for c in dq.loc["power of two", "elements changed"])
    with pytest.raises(ValueError, match="unknown scale rule"):
        scaling.double_quantization_table({"activation:x": x}, scales=("exact",))


def test_power_of_two_rowwise_scales_are_powers_of_two():
    from amp_docs_lib.fp8 import scaling

    x = torch.randn(16, 64) * 3.7
    s = scaling.quantize_rowwise(x, power_of_two=True).scale
    assert torch.equal(s, torch.exp2(torch.log2(s).round()))
    assert torch.all(s <= scaling.quantize_rowwise(x).scale)  # rounded down: the row amax still fits


def test_code_summary_disagreements_catch_a_read_back_that_differs_from_the_specification():
    # Finding 3: the chapter's format counts are checked as agreement of torch / ml_dtypes with the definition.
    from amp_docs_lib.fp8 import formats as fp8f

    summary = fp8f.code_summary(fp8f.CODE_TABLE_FORMATS)
    assert fp8f.code_summary_disagreements(summary, names=fp8f.CODE_TABLE_FORMATS).empty
    assert fp8f.counts_from_definition("FP8 E4M3FN") == {
        "finite values": 254,
        "infinities": 0,
        "NaNs": 2,
        "distinct positive values": 126,
        "largest finite": 448.0,
    }
    assert fp8f.counts_from_definition("FP8 E5M2")["finite values"] == 248
    assert fp8f.counts_from_definition("FP4 E2M1")["distinct positive values"] == 7
    # a read-back in which E4M3FN's top code were NaN-free and reached 480 (no "fn" NaN) must be caught
    wrong = summary.copy()
    row = wrong["format"] == "FP8 E4M3FN"
    wrong.loc[row, "largest finite"] = 480.0
    wrong.loc[row, "finite values"] = 256
    bad = fp8f.code_summary_disagreements(wrong)
    assert set(bad["column"]) == {"largest finite", "finite values"}


def test_rowwise_scale_rule_table_compares_exact_and_power_of_two_scales():
    # Finding 2, last point: the per-row strategy uses exact amax scales; the table shows torchao's power-of-two ones
    from amp_docs_lib.fp8 import scaling

    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 128, generator=g) * torch.exp2(torch.randn(64, 1, generator=g))
    t = scaling.rowwise_scale_rule_table({"activation:x": x}, fmts=("FP8 E5M2",)).iloc[0]
    exact = scaling.error_metrics(x, scaling.quantize_rowwise(x, "FP8 E5M2"))["SQNR (dB)"]
    p2 = scaling.error_metrics(x, scaling.quantize_rowwise(x, "FP8 E5M2", power_of_two=True))["SQNR (dB)"]
    assert t["per-row, amax scales (dB)"] == pytest.approx(exact)
    assert t["per-row, power-of-two scales (dB)"] == pytest.approx(p2)
    assert exact != p2  # the two rules differ on this tensor, so the table would show a swapped column
    assert t["edge, power-of-two scales (dB)"] == pytest.approx(p2 - t["per-tensor (dB)"])
