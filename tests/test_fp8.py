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

TORCH = tuple(int(v) for v in torch.__version__.split("+")[0].split(".")[:2])  # (major, minor)


# ---- formats and casts ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", F.MX_ELEMENT_FORMATS)
def test_cast_matches_torch_and_ml_dtypes_bit_for_bit(name):
    r = F.casts_agree_in_range(name, n=20_000)
    assert r["library vs ml_dtypes mismatches"] == 0
    assert r["library vs torch mismatches"] in (0, None)
    assert (r["library vs torch mismatches"] is None) == (name not in F.FP8_FORMATS)
    # the independent column is the peer the library does not cast with
    assert r["library casts with"] == ("torch" if name in F.FP8_FORMATS else "ml_dtypes")
    assert r["independent mismatches"] == (0 if name in F.FP8_FORMATS else None)


def test_e5m2_overflows_to_inf_in_torch_and_the_library_saturates():
    t = F.cast_comparison("FP8 E5M2", F.E5M2_PROBES).set_index("input")
    assert t.loc[57344.0, "torch"] == 57344.0 and t.loc[61439.0, "torch"] == 57344.0  # rounds down below the midpoint
    assert math.isinf(t.loc[61440.0, "torch"]) and math.isinf(t.loc[1e6, "torch"])
    assert t.loc[1e6, "amp_docs_lib"] == 57344.0 and t.loc[-1e5, "amp_docs_lib"] == -57344.0


def test_binades_from_the_codes():
    assert F.binades("FP8 E4M3FN")["normal"] == pytest.approx(math.log2(448 / 2 ** -6))
    assert F.binades("FP8 E4M3FN")["with subnormals"] == pytest.approx(math.log2(448 / 2 ** -9))
    assert F.binades("FP8 E5M2")["normal"] == pytest.approx(math.log2(57344 / 2 ** -14))


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
    # torch 2.12+ saturates like the library (pytorch/pytorch#178817); older torch casts to NaN
    torch_cast = torch.tensor([1000.0]).to(torch.float8_e4m3fn).float().item()
    if TORCH >= (2, 12):
        assert torch_cast == 448.0
    else:
        assert math.isnan(torch_cast)
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


def test_mx_floor_saturates_and_ceil_and_rceil_do_not():
    x = _mx_inputs()
    assert scaling.mx_quantize(x, "FP8 E4M3FN", mode="floor").saturated[3].any()
    assert not scaling.mx_quantize(x, "FP8 E4M3FN", mode="ceil").saturated.any()
    assert not scaling.mx_quantize(x, "FP8 E4M3FN", mode="rceil").saturated.any()


def test_rceil_is_the_smallest_power_of_two_that_fits_the_block():
    x = _mx_inputs()
    q = scaling.mx_quantize(x, "FP8 E4M3FN", mode="rceil")
    X = q.scale_e8m0.to(torch.float64)
    amax = x.reshape(16, 4, 32).abs().amax(-1).double()
    nz = amax > 0
    assert bool((amax[nz] / X[nz] <= 448).all())           # fits
    assert bool((amax[nz] / (X[nz] / 2) > 448).all())      # half the scale would not


def test_mx_mode_table_has_every_mode_and_floor_saturates_on_real_tensors():
    g = torch.Generator().manual_seed(0)
    t = {"activation:a": torch.randn(32, 64, generator=g) * 1.9}
    m = scaling.mx_mode_table(t, fmts=("FP8 E4M3FN",)).set_index("mode")
    assert list(m.index) == list(scaling.MX_MODES)
    assert m.loc["floor", "mean saturated"] > 0 and m.loc["rceil", "mean saturated"] == 0
    assert scaling.MX_STRATEGY == "MX block 32, rceil"


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
    with pytest.raises(ValueError, match="valid: .*floor.*ceil.*even.*rceil"):
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
    assert t.loc["per-tensor", "flushed to zero"] > t.loc[scaling.MX_STRATEGY, "flushed to zero"]
    assert t.loc["per-tensor", "SQNR (dB)"] < t.loc["per-row", "SQNR (dB)"]


def test_outlier_channels_are_whole_columns_and_every_row_holds_them():
    x = torch.randn(32, 64, generator=torch.Generator().manual_seed(0))
    y, mask = scaling.outlier_channels(x, channels=3, factor=100.0)
    cols = (~mask).all(dim=0)
    assert int(cols.sum()) == 3 and bool((~mask).any(dim=0).eq(cols).all())
    assert torch.allclose(y[:, cols], 100.0 * x[:, cols]) and torch.equal(y[mask], x[mask])
    t = scaling.outlier_channel_table(x, fmts=("FP8 E4M3FN",), factors=(1e4,)).set_index("strategy")
    # per-row scaling cannot isolate a channel outlier: each row's amax is set by it
    assert t.loc["per-row", "flushed to zero"] > 0
    with pytest.raises(ValueError, match="channels"):
        scaling.outlier_channels(x, channels=64)


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
    try:
        right = gemm.scaled_mm(a8, b8, da, db, api=api, out_dtype=torch.float32)
    except RuntimeError as e:  # torch 2.11 on the CPU: rowwise scales refused; F.scaled_mm has no CPU kernel
        assert TORCH < (2, 12), f"torch {torch.__version__} refused {api} {gran} on the CPU: {e}"
        pytest.skip(f"torch {torch.__version__}'s CPU kernel does not run {api} with {gran} scales")
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


@pytest.mark.parametrize("cap, native", [((7, 5), False), ((8, 0), False), ((8, 6), False), ((8, 7), False),
                                         ((8, 9), True), ((9, 0), True), ((10, 0), True), ((12, 1), True)])
def test_fp8_gemm_plan_falls_back_explicitly_on_gpus_without_fp8(cap, native):
    plan = gemm.fp8_gemm_plan(cap)
    assert plan["device"] == "cuda" and plan["emulate"] is (not native)
    if not native:
        assert "raises" in plan["reason"] and "emulate=True" in plan["reason"]
    assert gemm.fp8_gemm_plan(None) == {"device": "cpu", "emulate": False,
                                        "reason": "no CUDA GPU: torch._scaled_mm runs on the CPU"}
    # MI300 (gfx942) computes FP8 in the FNUZ variants only: the OCP experiments fall back there
    mi300 = gemm.fp8_gemm_plan((9, 4), hip_arch="gfx942:sramecc+:xnack-")
    assert mi300["emulate"] is True and "FNUZ" in mi300["reason"]
    for arch in ("gfx950", "gfx1201", "gfx1200"):  # MI350, Navi 4: OCP FP8
        assert gemm.fp8_gemm_plan((9, 5), hip_arch=arch)["emulate"] is False, arch
    assert gemm.fp8_gemm_plan((9, 0), hip_arch="gfx90a")["emulate"] is True
    with pytest.raises(ValueError, match="capability"):
        gemm.fp8_gemm_plan("sm80")


def _example_module(name):
    import importlib.util

    from conftest import REPO_ROOT

    spec = importlib.util.spec_from_file_location(name, REPO_ROOT / "examples" / "fp8" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # main() is guarded: importing runs nothing
    return mod


def test_training_example_decides_like_the_library_for_every_capability():
    ex = _example_module("fp8_training")
    for cap in [None] + [(major, minor) for major in range(5, 13) for minor in range(10)]:
        device, emulate, reason = ex.fp8_setup(cap)
        plan = gemm.fp8_gemm_plan(cap)
        assert (device, emulate) == (plan["device"], plan["emulate"]), cap
        assert reason == plan["reason"], cap


def test_emulated_fallback_never_calls_scaled_mm(monkeypatch):
    """What a GPU without FP8 does: _scaled_mm raises there; emulate=True must not reach it."""
    def raises(*args, **kwargs):
        raise RuntimeError("torch._scaled_mm is only supported on CUDA devices with compute capability >= 9.0 or 8.9")

    layer = torch.nn.Sequential(torch.nn.Linear(32, 32))
    float8_training.convert(layer, "tensorwise", emulate=True)
    monkeypatch.setattr(torch, "_scaled_mm", raises)
    x = torch.randn(16, 32, requires_grad=True)
    layer(x).sum().backward()
    assert torch.isfinite(x.grad).all()
    native = float8_training.convert(torch.nn.Sequential(torch.nn.Linear(32, 32)), "tensorwise")
    with pytest.raises(RuntimeError, match="compute capability"):
        native(torch.randn(16, 32))


def test_accumulation_knobs_read_torchao_and_torch_defaults():
    k = gemm.accumulation_knobs()
    ao = k[k["stack"] == "torchao Float8LinearConfig"].set_index("GEMM")["default"]
    assert ao["output (forward)"] == "True" and ao["grad_input"] == "False" and ao["grad_weight"] == "False"
    assert k.loc[k["stack"].str.startswith("torch._scaled_mm"), "default"].item() == "False"


def test_scale_conventions_classified_from_data():
    from amp_docs_lib.fp8 import conventions as C

    x = torch.randn(8, 8) * 5
    s = torch.tensor(448.0) / x.abs().max()
    q = (x * s).to(torch.float8_e4m3fn).float()
    assert C.classify(x, q, s) == "quantization" and C.classify(x, q, 1 / s) == "dequantization"
    t = C.scale_convention_table().set_index("implementation")
    assert t.loc["torchao float8 training tensor", "convention"] == "quantization"
    assert t.loc["torch._scaled_mm / F.scaled_mm", "convention"] == "dequantization"
    assert t.loc["torchao MXTensor (MXFP8)", "convention"] == "dequantization"


# ---- memory, capture, training, TE ------------------------------------------------------------------
def test_float8_linear_saves_its_input_in_high_precision():
    t = memory.saved_for_backward(("bf16", "float8 tensorwise")).set_index("recipe")
    assert t.loc["bf16", "saved activations"] == "bfloat16(384, 256)"
    assert t.loc["float8 tensorwise", "saved activations"] == "bfloat16(384, 256)"   # not FP8
    assert t.loc["float8 tensorwise", "vs bf16"] == 1.0
    with pytest.raises(ValueError, match="differ"):
        memory.saved_for_backward(tokens=256, features=256)


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
    c = float8_training.train_curves(("bf16", "float8 tensorwise", "float8 rowwise_with_gw_hp"), steps=2, cfg=cfg)
    assert len(c) == 6 and c["loss"].notna().all()
    gemms = c.groupby("recipe")["fp8 gemms"].first()
    assert gemms["float8 tensorwise"] == "torch._scaled_mm on cpu"
    # rowwise scales run on this torch's CPU _scaled_mm, or the recipe is emulated and says why (torch 2.11)
    assert gemms["float8 rowwise_with_gw_hp"] == (
        "torch._scaled_mm on cpu" if gemm.rowwise_scaled_mm_supported("cpu")
        else f"emulated (emulate=True): torch {torch.__version__}'s cpu _scaled_mm takes per-tensor scales only")
    with pytest.raises(ValueError, match="valid"):
        float8_training.build_model("float8 blockwise", cfg)
    rc = float8_training.recipe_config_table().set_index("recipe")
    assert "dynamic tensorwise, float8_e5m2" in rc.loc["tensorwise", "grad_input = grad_output @ weight"]
    assert "float8_e5m2" not in "".join(rc.loc["rowwise"].astype(str))
    assert rc.loc["rowwise_with_gw_hp", "grad_weight = grad_output^T @ input"] == "high precision | high precision"


def test_transformer_engine_table_names_the_five_recipes():
    names = set(te_info.recipe_table()["recipe"])
    assert names == {"DelayedScaling", "Float8CurrentScaling", "MXFP8BlockScaling", "Float8BlockScaling",
                     "NVFP4BlockScaling"}
    assert te_info.FORMAT_MAXIMA["E4M3"] == F.max_finite("FP8 E4M3FN")
    assert te_info.FORMAT_MAXIMA["E5M2"] == F.max_finite("FP8 E5M2")
    assert te_info.FORMAT_MAXIMA["E2M1"] == F.max_finite("FP4 E2M1")
    assert set(te_info.autocast_table()["status"]) == {"current", "deprecated"}


def test_fsdp_float8_all_gather_is_tensorwise_only_in_this_torchao():
    t = float8_training.fsdp_float8_all_gather_support().set_index("recipe")
    assert t.loc["tensorwise", "FP8 all-gather accepted"] is True
    assert t.loc["rowwise", "FP8 all-gather accepted"] is False and "tensorwise" in t.loc["rowwise", "torchao says"]


def test_relative_error_envelope_is_flat_in_the_normal_range():
    env = F.relative_error_envelope()
    e4 = env[(env["format"] == "FP8 E4M3FN") & (env["binade"] >= -6) & (env["binade"] <= 7)]["relative error"]
    assert e4.max() <= 2.0 ** -4 and e4.min() > 2.0 ** -6          # half an ulp of 3 mantissa bits, not far below
    sub = env[(env["format"] == "FP8 E4M3FN") & (env["binade"] == -9)]["relative error"]
    assert float(sub.max()) > 2.0 ** -4                             # subnormals: coarser


def test_gemm_error_table_says_which_calls_this_torch_refuses(monkeypatch):
    """An older torch's CPU _scaled_mm (2.11) refuses rowwise scales: the row says so, with n/a errors."""
    real = gemm.scaled_mm

    def per_tensor_only(a8, b8, sa, sb, **kw):
        if sa.numel() > 1:
            raise RuntimeError("Now _scaled_mm only supports per-tensor scaling for CPU backend.")
        return real(a8, b8, sa, sb, **kw)

    monkeypatch.setattr(gemm, "scaled_mm", per_tensor_only)
    t = gemm.gemm_error_table(32, device="cpu")
    rowwise = t[t["method"].str.contains("rowwise")]
    assert len(rowwise) and all(r.startswith("no: ") for r in rowwise["runs here"])
    assert any("only supports per-tensor" in r for r in rowwise["runs here"])
    refused = t[t["runs here"] != "yes"]
    assert refused["rel. error vs float64"].isna().all() and refused["checker"].isna().all()
    ran = t[t["runs here"] == "yes"]
    assert len(ran) >= 2 and ran["rel. error vs float64"].notna().all()  # BF16 and _scaled_mm tensorwise


def test_throughput_table_times_through_the_harness_and_reports_refused_calls(monkeypatch):
    from amp_docs_lib.core import timing

    timed = []
    real = timing.interleaved

    def spy(fns, **kw):
        timed.append(list(fns))
        return real(fns, **kw)

    monkeypatch.setattr(timing, "interleaved", spy)
    real_scaled_mm = torch._scaled_mm

    def refuse_rowwise(a, b, scale_a, scale_b, **kw):
        if scale_a.numel() > 1:
            raise RuntimeError("Now _scaled_mm only supports per-tensor scaling for CPU backend.")
        return real_scaled_mm(a, b, scale_a=scale_a, scale_b=scale_b, **kw)

    monkeypatch.setattr(torch, "_scaled_mm", refuse_rowwise)
    t = gemm.throughput_table(32, device="cpu", rounds=timing.MIN_ROUNDS, min_block_s=0.001)
    assert timed == [["BF16 torch.mm", "FP8 _scaled_mm tensorwise"]]  # one interleaved run, refused calls left out
    ok = t[t["runs here"] == "yes"]
    assert len(ok) == 2 and (ok["IQR (ms)"] >= 0).all() and ok.iloc[0]["speed vs BF16"] == "1 (baseline)"
    assert ok.iloc[1]["verdict"] in ("faster", "slower", "no difference resolved", timing.NOISE_FLOOR_TOO_HIGH)
    assert t.iloc[2]["TFLOP/s"] is None and t.iloc[2]["runs here"].startswith("no: Now _scaled_mm")


@pytest.mark.slow
def test_rowwise_recipes_fall_back_to_emulation_where_this_torch_refuses_rowwise_scales(monkeypatch):
    """torch 2.11's CPU _scaled_mm takes per-tensor scales only: rowwise recipes then run emulated and say so."""
    from amp_docs_lib.gpt import GPTConfig

    assert gemm.rowwise_scaled_mm_supported("cpu") in (True, False)
    monkeypatch.setattr(float8_training, "rowwise_scaled_mm_supported", lambda device: False)
    cfg = GPTConfig.from_profile(n_embd=32, block_size=16)
    c = float8_training.train_curves(("float8 tensorwise", "float8 rowwise"), steps=1, cfg=cfg)
    gemms = c.groupby("recipe")["fp8 gemms"].first()
    assert gemms["float8 tensorwise"] == "torch._scaled_mm on cpu"
    assert gemms["float8 rowwise"].startswith("emulated (emulate=True)") and "per-tensor scales only" in gemms["float8 rowwise"]
    assert c["loss"].notna().all()
