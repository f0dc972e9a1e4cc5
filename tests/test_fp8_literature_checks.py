"""Issue 33 (fp8 and literature review of 2026-11-24): each new check, called with a plausible false value."""

import pytest
import torch

from amp_docs_lib import literature as L
from amp_docs_lib.fp8 import fine_grained, float8_training, gemm, scaling
from amp_docs_lib.fp8 import formats as fp8f
from amp_docs_lib.literature import verdicts as V


# --------------------------------------------------------------------------- literature verdicts
def test_loss_scaling_rejects_a_scale_that_overflows():
    assert V.loss_scaling_recovers(8.0).status == L.HOLDS
    assert V.loss_scaling_recovers(2.0**16).status == L.HOLDS
    bad = V.loss_scaling_recovers(2.0**24)  # a scale GradScaler's growth reaches: the largest gradients overflow
    assert bad.status == L.DOES_NOT_HOLD and "to inf with scale 16,777,216: 4.1%" in bad.measured


@pytest.mark.parametrize(
    "bound, ok", [(65504.0, True), (83000.0, False), (80000.0, False), (60000.0, False), (1.25 * 65504.0, False)]
)
def test_constant_scale_bound_is_resolved_to_one_percent(bound, ok):
    assert (V.constant_scale_bound(bound).status == L.HOLDS) is ok


def test_fine_grained_extent_rejects_an_mx_block_sized_claim():
    assert V.tiles_contain_outliers(128).status == L.HOLDS
    assert V.tiles_contain_outliers(32).status == L.DOES_NOT_HOLD


def test_promotion_gain_depends_on_the_rounding_mode():
    assert V.promotion_helps(128).status == L.HOLDS
    assert V.promotion_helps(128, toward_zero="below").status == L.DOES_NOT_HOLD


def test_promotion_verdict_fails_when_promotion_does_nothing(monkeypatch):
    monkeypatch.setattr(
        fine_grained,
        "limited_precision_matmul",
        lambda a, b, bits=14, promote_every=None, rounding="nearest": (a @ b) * 1.01,
    )
    assert V.promotion_helps(128).status == L.DOES_NOT_HOLD


def test_e4m3_forward_verdict_rejects_the_swapped_formats():
    assert V.e4m3_forward_e5m2_backward("FP8 E4M3FN", "FP8 E5M2").status == L.HOLDS
    assert V.e4m3_forward_e5m2_backward("FP8 E5M2", "FP8 E4M3FN").status == L.DOES_NOT_HOLD


def test_mx_training_is_out_of_reach_by_scale_not_by_mx_hardware():
    v = L.get_claim("mx-training").verdict()
    assert v.status == L.NOT_TESTABLE and v.reason.startswith("needs scale") and "emulated" in v.reason


def test_no_false_variant_is_the_claims_baseline():
    """The registered false variants that used to be the identity (scale 1, one whole-tensor tile, N_C = K)."""
    by_key = {c.key: c for c in L.CLAIMS}
    assert by_key["mpt-loss-scaling"].false_params == {"scale": 2.0**24}
    assert by_key["deepseek-fine-grained"].false_params == {"group_elements": 32}
    assert by_key["deepseek-promotion"].false_params == {"toward_zero": "below"}
    assert "65536" not in by_key["mpt-loss-scaling"].text


@pytest.mark.slow
def test_cards_show_the_false_variant_and_the_kind_of_check(reading_map):
    df = reading_map
    row = df.set_index("claim").loc[L.get_claim("mpt-loss-scaling").text]
    assert row["false variant"].startswith("Scaling the loss by 16,777,216") and "does not hold" in row["false variant"]
    assert set(df["checks"]) == set(L.registry.KINDS.values())


# --------------------------------------------------------------------------- fp8 chapter checks
def _tensors():
    from amp_docs_lib.fp8 import capture

    return capture.capture_tensors()


@pytest.mark.slow
def test_rounding_noise_prediction_rejects_a_truncating_cast():
    x = _tensors()["activation:h.0.mlp.c_fc"]
    q = scaling.quantize_tensorwise(x, "FP8 E4M3FN")
    measured = scaling.error_metrics(x, q)["SQNR (dB)"]
    predicted = scaling.rounding_noise_sqnr_db(x, "FP8 E4M3FN")
    assert abs(measured - predicted) <= 1.0
    # the same scale, but each scaled value truncated to 3 mantissa bits (round toward zero)
    y = x.double() * (448.0 / x.abs().max())
    trunc = fine_grained.round_significand(y, 4, "toward_zero") / (448.0 / x.abs().max())
    err = trunc - x.double()
    trunc_db = float(10 * torch.log10((x.double() ** 2).sum() / (err**2).sum()))
    assert abs(trunc_db - predicted) > 1.0  # the chapter's check would reject it
    assert scaling.sqnr_prediction_db("FP8 E4M3FN") < trunc_db  # the old bound accepted it


@pytest.mark.slow
def test_outlier_channels_in_a_wide_tensor_spare_most_mx_blocks():
    act = _tensors()["activation:h.0.mlp.c_fc"]
    narrow_blocks = act.shape[1] // 32
    assert scaling.outlier_channel_blocks(act) == narrow_blocks  # the old experiment: every block hit
    wide = scaling.tiled_columns(act, 1024)
    assert wide.shape == (act.shape[0], 1024) and torch.equal(wide[:, : act.shape[1]], act)
    assert scaling.outlier_channel_blocks(wide) <= 4
    t = scaling.outlier_channel_table(wide, fmts=("FP8 E4M3FN",), factors=(1000.0,)).set_index("strategy")
    assert t.loc[scaling.MX_STRATEGY, "flushed to zero"] < t.loc["per-row", "flushed to zero"]


@pytest.mark.slow
def test_delayed_scaling_margin_six_absorbs_a_50x_spike():
    act = _tensors()["activation:h.0.mlp.c_fc"]
    stream = scaling.spike_stream(act, 60, spike_at=15, ramp_at=40, ramp_steps=8, growth=1.5)
    run = scaling.delayed_scaling_run(stream, history_len=16, margins=(0, 1, 6))
    w = scaling.overflow_windows(run).set_index("method")
    assert w.loc["delayed, margin 6", "steps with saturation"] == 0
    sat = lambda m: set(run[(run["method"] == m) & (run["saturated"] > 0)]["step"])
    assert 15 in sat("delayed, margin 0") and 15 in sat("delayed, margin 1")


def test_mi300_is_not_an_ocp_fp8_gpu():
    ok, why = gemm.fp8_gemm_support((9, 4), hip_arch="gfx942")
    assert not ok and "FNUZ" in why
    assert gemm.fp8_gemm_support((9, 5), hip_arch="gfx950")[0]
    assert gemm.fp8_gemm_support((12, 0), hip_arch="gfx1201")[0]
    assert not gemm.fp8_gemm_support((9, 0), hip_arch="gfx90a")[0]


def test_fnuz_formats_in_the_code_table():
    s = fp8f.code_summary(fp8f.CODE_TABLE_FORMATS).set_index("format")
    assert float(s.loc["FP8 E4M3FNUZ", "largest finite"]) == 240.0
    assert int(s.loc["FP8 E4M3FNUZ", "NaNs"]) == 1 and int(s.loc["FP8 E4M3FNUZ", "infinities"]) == 0
    assert int(s.loc["FP8 E4M3FNUZ", "zeros"]) == 1 and int(s.loc["FP8 E4M3FN", "zeros"]) == 2
    assert float(s.loc["FP8 E5M2FNUZ", "largest finite"]) == 57344.0


@pytest.mark.slow
def test_training_counts_what_ran():
    from amp_docs_lib.gpt import GPTConfig

    cfg = GPTConfig(vocab_size=64, block_size=16, n_layer=1, n_head=2, n_embd=32)
    curves = float8_training.train_curves(("bf16", "float8 tensorwise"), steps=2, cfg=cfg)
    first = curves.groupby("recipe").first()
    n = float8_training.linear_layers(cfg)
    assert n == 4 and first.loc["float8 tensorwise", "converted linears"] == n
    assert first.loc["float8 tensorwise", "_scaled_mm calls per step"] == 3 * n  # three GEMMs per layer
    if gemm.rowwise_scaled_mm_supported("cpu"):  # torch 2.11's CPU kernel takes per-tensor scales only
        assert (
            float8_training.scaled_mm_calls(
                float8_training.build_model("float8 rowwise_with_gw_hp", cfg),
                *float8_training.pattern_batches(cfg, 2, 1)[0],
            )
            == 2 * n
        )
    assert first.loc["bf16", "_scaled_mm calls per step"] == 0


@pytest.mark.slow
def test_mx_training_converts_every_linear_and_quantizes():
    from amp_docs_lib.gpt import GPTConfig

    if float8_training.mx_training_unsupported() is not None:  # torch 2.11: torchao's own assertion
        pytest.skip(f"torchao refuses MXFP8 training on this torch: {float8_training.mx_training_unsupported()}")

    cfg = GPTConfig(vocab_size=64, block_size=16, n_layer=1, n_head=2, n_embd=32)
    for rule in float8_training.MX_SCALE_RULES:
        model = float8_training.build_model(f"mxfp8 {rule} (emulated)", cfg)
        assert float8_training.converted_linears(model) == float8_training.linear_layers(cfg)
    with pytest.raises(ValueError, match="scale rule"):
        float8_training.mx_training_config("ceil2")
    # the wrapped linear quantizes: its output differs from the plain layer's by MXFP8's error, not 0
    torch.manual_seed(0)
    plain = torch.nn.Linear(256, 256)
    mx = torch.nn.Sequential(torch.nn.Linear(256, 256))
    mx[0].load_state_dict(plain.state_dict())
    float8_training.convert_mx(mx, "rceil", skip=())
    x = torch.randn(64, 256)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = mx(x)
    assert y.dtype == torch.bfloat16  # handed on in the autocast dtype
    rel = float((y.float() - plain(x)).norm() / plain(x).norm())
    assert 0.01 < rel < 0.2
    curves = float8_training.train_curves(("bf16", "mxfp8 rceil (emulated)"), steps=2, cfg=cfg)
    assert curves.groupby("recipe")["converted linears"].first()["mxfp8 rceil (emulated)"] == 4


def test_double_quantization_costs_about_3_db():
    g = torch.Generator().manual_seed(0)
    # rows and columns of different scales, as tokens and channels differ
    x = (
        torch.randn(128, 256, generator=g)
        * torch.exp2(torch.randn(128, 1, generator=g))
        * torch.exp2(torch.randn(1, 256, generator=g))
    )
    dq = scaling.double_quantization_table({"activation:x": x}, scales=("amax",))
    drops = dq.set_index("format")["drop (dB)"]
    assert all(abs(d - scaling.DOUBLE_QUANTIZATION_DB) <= 0.5 for d in drops)
    # a false variant: "requantizing costs nothing" (0 dB) is rejected by the same check
    assert abs(0.0 - scaling.DOUBLE_QUANTIZATION_DB) > 0.5
    # requantizing along the *same* axis lands on the same grid (up to the scale's float rounding): no drop
    xt = x.t().contiguous()
    once = scaling.quantize_rowwise(xt)
    again = scaling.quantize_rowwise(once.dequantized)
    assert abs(scaling.error_metrics(xt, once)["SQNR (dB)"] - scaling.error_metrics(xt, again)["SQNR (dB)"]) < 0.1


def test_fp4_ablation_separates_scale_type_from_block_size():
    from amp_docs_lib.fp8 import nvfp4

    x = nvfp4.gaussian_blocks(64, 512, seed=0)
    ab = nvfp4.fp4_ablation(x).set_index(["block", "block scale"])["SQNR (dB)"]
    # E4M3 at 16 is NVFP4 itself, bit for bit the library's quantizer
    assert ab[(16, "E4M3 + FP32 per tensor")] == scaling.error_metrics(x, nvfp4.nvfp4_quantize(x))["SQNR (dB)"]
    from_scale = ab[(32, "E4M3 + FP32 per tensor")] - max(ab[(32, "E8M0, FLOOR")], ab[(32, "E8M0, RCEIL")])
    from_block = max(ab[(16, "E8M0, FLOOR")], ab[(16, "E8M0, RCEIL")]) - max(
        ab[(32, "E8M0, FLOOR")], ab[(32, "E8M0, RCEIL")]
    )
    assert from_scale > 0.5 > from_block  # the false variant, "the smaller block does most", fails
    with pytest.raises(ValueError, match="block size"):
        scaling.mx_quantize(x, "FP4 E2M1", 16)  # MX proper stays k = 32


def test_stochastic_rounding_is_unbiased_and_a_biased_variant_is_caught(monkeypatch):
    from amp_docs_lib.fp8 import nvfp4

    st = nvfp4.rounding_bias_study(2.4, draws=4096).set_index("rounding")
    se = st.loc["stochastic", "standard error of the mean"]
    assert abs(st.loc["stochastic", "mean error"]) <= 3 * se
    assert st.loc["to nearest", "mean of the rounded values"] == 2.0
    # every value is on the grid and one of the two neighbours
    y = nvfp4.stochastic_round_fp4(torch.full((1000,), 2.4), torch.Generator().manual_seed(1))
    assert set(y.tolist()) == {2.0, 3.0}
    # a false variant: rounding up with a probability that is not (x - lo) / (hi - lo) is biased, and caught
    real = torch.rand
    monkeypatch.setattr(torch, "rand", lambda *a, **k: real(*a, **k) * 0.8)
    bad = nvfp4.rounding_bias_study(2.4, draws=4096).set_index("rounding")
    assert abs(bad.loc["stochastic", "mean error"]) > 3 * bad.loc["stochastic", "standard error of the mean"]
    with pytest.raises(ValueError, match="largest value"):
        nvfp4.stochastic_round_fp4(torch.tensor([7.0]))


def test_fnuz_casts_of_torch_and_ml_dtypes_agree():
    t = fp8f.fnuz_cast_table()
    assert t["same code"].all() and set(t["format"]) == set(fp8f.FNUZ_FORMATS)
    assert fp8f.fnuz_casts_agree(2000) == {"FP8 E4M3FNUZ": 0, "FP8 E5M2FNUZ": 0}
    z = t.set_index(["format", "input"])
    assert z.loc[("FP8 E4M3FNUZ", -0.0), "torch code"] == "0x00"  # no negative zero
    assert z.loc[("FP8 E4M3FNUZ", 240.0), "torch"] == 240.0
