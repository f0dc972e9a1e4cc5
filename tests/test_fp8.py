"""FP8 and MX: casts and quantizers against torch, ml_dtypes and torchao bit for bit; scales; errors."""

import math

import ml_dtypes
import numpy as np
import pytest
import torch

from amp_docs_lib.numbers import formats as registry
from amp_docs_lib.fp8 import capture, gemm, memory, scaling, float8_training
from amp_docs_lib.fp8 import formats as F
from amp_docs_lib.fp8 import transformer_engine as te_info


# ---- formats and casts ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", F.MX_ELEMENT_FORMATS)
def test_cast_matches_torch_and_ml_dtypes_bit_for_bit(name):
    r = F.casts_agree_in_range(name, n=20_000)
    assert r["library vs ml_dtypes mismatches"] == 0
    assert r["library vs torch mismatches"] in (0, None)
    assert (r["library vs torch mismatches"] is None) == (name not in F.FP8_FORMATS)


@pytest.mark.parametrize("name", ["FP8 E4M3FN", "FP8 E5M2", "FP6 E2M3", "FP4 E2M1", "E8M0"])
def test_every_code_matches_the_definition(name):
    codes = F.all_codes(name)
    f = registry.get_format(name)
    assert len(codes) == 2 ** f.total_bits
    for row in codes.itertuples():
        want = registry.value_from_fields(row.sign, row._4, row._5, f)
        assert (math.isnan(want) and math.isnan(row.value)) or want == row.value, row


def test_e4m3fn_saturates_where_the_library_says():
    x = torch.tensor([448.0, 463.9, 464.0, 1000.0, -1e6, math.inf, math.nan])
    out = F.cast(x, "FP8 E4M3FN")
    assert out[:6].tolist() == [448.0, 448.0, 448.0, 448.0, -448.0, 448.0]
    assert math.isnan(out[6])
    assert F.encode_tensor(torch.tensor([1000.0]), "FP8 E4M3FN").item() == 0x7E
    # ml_dtypes does not saturate: the library's choice is a real difference
    assert math.isnan(float(np.float32(1000.0).astype(ml_dtypes.float8_e4m3fn)))
    # torch (2.12+) saturates like the library
    assert torch.tensor([1000.0]).to(torch.float8_e4m3fn).float().item() == 448.0
    # the saturation threshold: 464 = 448 + half the top spacing; below it, plain rounding
    assert scaling.overflow_threshold("FP8 E4M3FN") == 464.0
    assert scaling.overflow_threshold("FP8 E5M2") == 61440.0
    q = scaling.quantize_tensorwise(torch.tensor([[1.0, 2.0, 3.0]]), amax=1.0)  # stale amax: 3 saturates
    assert q.saturated.tolist() == [[False, True, True]]
    assert q.dequantized[0, 2].item() == pytest.approx(1.0)


def test_non_saturating_cast_follows_torch():
    x = torch.tensor([1000.0])
    assert F.cast(x, "FP8 E5M2", saturate=False).item() == 1024.0
    assert math.isinf(F.cast(torch.tensor([1e6]), "FP8 E5M2", saturate=False).item())


def test_unsupported_formats_raise_naming_the_valid_ones():
    with pytest.raises(ValueError, match="valid: .*FP8 E4M3FN.*FP4 E2M1"):
        F.cast(torch.ones(2), "FP16")
    with pytest.raises(ValueError, match="valid"):
        scaling.mx_quantize(torch.ones(2, 32), "BF16")
    with pytest.raises(TypeError):
        F.cast([1.0], "FP8 E4M3FN")


# ---- MX -------------------------------------------------------------------------------------------
def _mx_inputs():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(16, 128, generator=g) * torch.exp2(torch.randint(-20, 20, (16, 1), generator=g).float())
    x[0, :32] = 0.0                                   # an all-zero block
    x[1, 32:64] *= 1e-30                              # a block near E8M0's bottom
    x[2, 5] = 3.0e4                                   # an outlier
    x[3, :32] = torch.linspace(-1.9, 1.9, 32)         # amax with a large mantissa: FLOOR saturates
    return x


@pytest.mark.slow
@pytest.mark.parametrize("fmt", F.MX_ELEMENT_FORMATS)
@pytest.mark.parametrize("mode", scaling.MX_MODES)
def test_mx_matches_torchao_bit_for_bit(fmt, mode):
    x = _mx_inputs()
    ours = scaling.mx_quantize(x, fmt, 32, mode)
    ts, tc = scaling.torchao_to_mx(x, fmt, 32, mode)
    assert ts.dtype == torch.float8_e8m0fnu
    assert torch.equal(ours.scale_e8m0.view(torch.uint8), ts.view(torch.uint8))
    assert torch.equal(ours.codes, tc)


def test_mx_floor_saturates_and_ceil_does_not():
    x = _mx_inputs()
    assert scaling.mx_quantize(x, "FP8 E4M3FN", mode="floor").saturated[3].any()
    assert not scaling.mx_quantize(x, "FP8 E4M3FN", mode="ceil").saturated.any()


def test_e8m0_scales_are_powers_of_two_and_match_the_rule():
    x = _mx_inputs()
    q = scaling.mx_quantize(x, "FP8 E4M3FN")
    s = q.scale_e8m0.to(torch.float64)
    assert torch.equal(torch.exp2(torch.log2(s).round()), s)
    amax = x.reshape(16, 4, 32).abs().amax(-1).double()
    nz = amax > 0
    expect = torch.exp2(torch.floor(torch.log2(amax[nz])) - 8).clamp(min=2.0 ** -127)
    assert torch.equal(s[nz], expect)


def test_mx_block_and_mode_errors_name_valid_values():
    with pytest.raises(ValueError, match=r"valid: \[32\]"):
        scaling.mx_quantize(torch.ones(2, 64), block_size=16)
    with pytest.raises(ValueError, match="valid: .*floor.*ceil"):
        scaling.mx_quantize(torch.ones(2, 64), mode="round")
    with pytest.raises(ValueError, match="multiple of the block size"):
        scaling.mx_quantize(torch.ones(2, 40))
    with pytest.raises(ValueError, match="valid"):
        scaling.quantize(torch.ones(2, 32), "FP8 E4M3FN", "per-channel")


# ---- scaling strategies ---------------------------------------------------------------------------
def test_current_scaling_maps_amax_to_max_and_rowwise_is_per_row():
    x = torch.tensor([[1.0, -4.0], [0.5, 0.25]])
    q = scaling.quantize_tensorwise(x)
    assert q.scale.item() == pytest.approx(448.0 / 4.0)
    r = scaling.quantize_rowwise(x)
    assert r.scale.flatten().tolist() == pytest.approx([448.0 / 4.0, 448.0 / 0.5])
    assert torch.equal(r.dequantized, x)  # these values are exact in E4M3 after scaling


def test_delayed_scaler_follows_transformer_engines_rule():
    s = scaling.DelayedScaler("FP8 E4M3FN", history_len=3, margin=1)
    amaxes = [2.0, 8.0, 1.0, 1.0, 1.0]
    used = []
    for a in amaxes:
        used.append(float(s.quantize(torch.tensor([[a]])).scale))
    # step 0 uses the initial scale 1; then 448 / max(last 3 amaxes) / 2^margin
    assert used == pytest.approx([1.0, 448 / 2 / 2, 448 / 8 / 2, 448 / 8 / 2, 448 / 8 / 2])
    assert float(s.scale) == pytest.approx(448 / 1 / 2)  # the 8 has left the 3-step history
    with pytest.raises(ValueError, match="valid"):
        scaling.DelayedScaler(algo="mean")


def test_delayed_scaling_overflow_window_matches_the_ramp():
    x = torch.randn(8, 32, generator=torch.Generator().manual_seed(0))
    stream = scaling.spike_stream(x, 30, spike_at=5, ramp_at=15, ramp_steps=4, growth=1.5)
    run = scaling.delayed_scaling_run(stream, history_len=8, margins=(0, 1))
    w = scaling.overflow_windows(run).set_index("method")
    assert w.loc["current", "steps with saturation"] == 0
    sat0 = set(run[(run.method == "delayed, margin 0") & (run.saturated > 0)].step)
    sat1 = set(run[(run.method == "delayed, margin 1") & (run.saturated > 0)].step)
    assert {5, 15, 16, 17, 18} <= sat0 and sat1 == {5}


def test_outlier_hurts_per_tensor_most():
    x = torch.randn(64, 64, generator=torch.Generator().manual_seed(0))
    t = scaling.outlier_sensitivity(x, factors=(1e5,)).set_index("strategy")
    assert t.loc["per-tensor", "flushed to zero"] > t.loc["MX block 32", "flushed to zero"]
    assert t.loc["per-tensor", "SQNR (dB)"] < t.loc["per-row", "SQNR (dB)"]


def test_sqnr_by_strategy_is_one_row_per_fp8_format_and_strategy():
    g = torch.Generator().manual_seed(0)
    tensors = {"activation:a": torch.randn(8, 64, generator=g), "gradient:a": torch.randn(8, 64, generator=g) * 1e-6}
    summ = scaling.strategy_summary(scaling.strategy_table(tensors))
    t = scaling.sqnr_by_strategy(summ)
    assert t.columns.tolist() == ["format", "strategy", "activation median SQNR (dB)", "gradient median SQNR (dB)",
                                  "gradient flushed (fraction)"]
    assert list(zip(t["format"], t["strategy"])) == [(f, s) for f in F.FP8_FORMATS for s in scaling.STRATEGIES]
    s = summ.set_index(["kind", "format", "strategy"])
    for r in t.itertuples(index=False):
        assert r[2] == s.loc[("activation", r[0], r[1]), "median SQNR (dB)"]
        assert r[4] == s.loc[("gradient", r[0], r[1]), "mean flushed"]
    e4 = t.set_index(["format", "strategy"]).loc[("FP8 E4M3FN", "none (scale 1)"), "gradient flushed (fraction)"]
    assert e4 == 1.0  # 1e-6 gradients lie below E4M3's smallest subnormal unscaled
    with pytest.raises(ValueError, match="no rows with a format"):
        scaling.sqnr_by_strategy(summ, fmts=("FP8 E3M4",))


# ---- GEMM -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("api", [a for a in gemm.APIS if a == "torch._scaled_mm" or gemm.public_scaled_mm_available()])
@pytest.mark.parametrize("gran", gemm.GRANULARITIES)
def test_scaled_mm_wrong_convention_is_detected(api, gran):
    a, b = gemm.operands(64, 64, 32)
    a8, da, qa = gemm.quantize_operand(a, gran)
    b8, db, qb = gemm.quantize_operand(b, gran)
    right = gemm.scaled_mm(a8, b8, da, db, api=api, out_dtype=torch.float32)
    wrong = gemm.scaled_mm(a8, b8, qa, qb, api=api, out_dtype=torch.float32)
    assert gemm.check_scale_convention(a, b, right)["ok"]
    bad = gemm.check_scale_convention(a, b, wrong)
    assert not bad["ok"] and "wrong scale convention" in bad["verdict"]
    assert gemm.rel_error(right, a.double() @ b.double().t()) < 0.1
    if gran == "tensorwise":
        assert bad["factor"] == pytest.approx(float((qa * qb) ** 2), rel=0.02)


def test_gemm_argument_errors():
    with pytest.raises(ValueError, match="valid"):
        gemm.quantize_operand(torch.ones(16, 16), "blockwise")
    with pytest.raises(ValueError, match="valid"):
        gemm.quantize_operand(torch.ones(16, 16), fmt="FP4 E2M1")
    with pytest.raises(ValueError, match="multiple of 16"):
        gemm.operands(20, 16, 16)


# ---- memory, capture, training, TE ------------------------------------------------------------------
def test_memory_measured_equals_predicted():
    m = memory.memory_table(64, 128).set_index("storage")
    for row in m.index:
        want = (1 + 1 / 32) / (0.75 + 1 / 32) if row == "MXFP6 (E2M3)" else 1.0
        assert m.loc[row, "measured / predicted"] == pytest.approx(want, rel=1e-12), row


def test_capture_returns_each_kind_for_each_linear():
    t = capture.capture_tensors(steps=1)
    for kind in capture.KINDS:
        sel = capture.select(t, kind)
        assert len(sel) == 8 and all(v.dim() == 2 and torch.isfinite(v).all() for v in sel.values())
    with pytest.raises(ValueError, match="valid"):
        capture.select(t, "bias")


@pytest.mark.slow
def test_float8_training_converts_linears_and_runs():
    from amp_docs_lib.gpt import GPTConfig

    cfg = GPTConfig(vocab_size=64, block_size=16, n_layer=1, n_head=2, n_embd=32)
    m = float8_training.build_model("float8 rowwise", cfg)
    names = float8_training.float8_modules(m)
    assert len(names) == 4 and "lm_head" not in names
    c = float8_training.train_curves(("bf16", "float8 tensorwise"), steps=2, cfg=cfg)
    assert len(c) == 4 and c["loss"].notna().all()
    with pytest.raises(ValueError, match="valid"):
        float8_training.build_model("float8 blockwise", cfg)
    rc = float8_training.recipe_config_table().set_index("recipe")
    assert rc.loc["tensorwise", "grad_output"].endswith("float8_e5m2")
    assert rc.loc["rowwise", "grad_output"].endswith("float8_e4m3fn")


def test_transformer_engine_table_names_the_five_recipes():
    names = set(te_info.recipe_table()["recipe"])
    assert names == {"DelayedScaling", "Float8CurrentScaling", "MXFP8BlockScaling", "Float8BlockScaling",
                     "NVFP4BlockScaling"}
    assert te_info.FORMAT_MAXIMA["E4M3"] == F.max_finite("FP8 E4M3FN")
    assert te_info.FORMAT_MAXIMA["E5M2"] == F.max_finite("FP8 E5M2")
    assert te_info.FORMAT_MAXIMA["E2M1"] == F.max_finite("FP4 E2M1")
    assert set(te_info.autocast_table()["status"]) == {"current", "deprecated"}
