"""The number-format experiments return sensible values (small sizes, CPU)."""

import math

import pytest
import torch

from amp_docs_lib.numbers import numerics as N


def test_spacing_measured_equals_definition():
    df = N.spacing_vs_magnitude(("FP16", "BF16", "FP8 E4M3FN"), points=40)
    assert (df["measured spacing"] == df["definition spacing"]).all()
    fp16 = df[df["format"] == "FP16"]
    assert fp16["measured spacing"].min() == 2.0 ** -24  # subnormal spacing


def test_exp_overflow_threshold_near_log_max():
    df = N.exp_overflow().set_index("dtype")
    x16 = df.loc["FP16", "largest x with finite exp(x)"]
    assert x16 <= math.log(65504) < df.loc["FP16", "next x (overflows)"] + 0.01
    assert abs(x16 - math.log(65504)) < 0.01
    assert abs(df.loc["FP32", "largest x with finite exp(x)"] - math.log(torch.finfo(torch.float32).max)) < 1e-4
    assert math.isfinite(df.loc["BF16", "exp(x) there"])


def test_subnormal_survival_restores_setting():
    before = N._cpu_ftz_active()
    df = N.subnormal_survival("cpu")
    assert N._cpu_ftz_active() == before
    off = df[df["setting"] == "set_flush_denormal(False)"].set_index("dtype")
    assert off["survives arithmetic"].all()
    assert off.loc["FP16", "x + x"] == 2 * 2.0 ** -24


def test_softplus_naive_overflows_stable_does_not():
    s = N.summarize_softplus(N.softplus_errors(("FP16", "FP32"), points=201)).set_index(["dtype", "method"])
    assert s.loc[("FP16", "naive"), "non-finite outputs"] > 0
    assert 11 < s.loc[("FP16", "naive"), "first x giving non-finite"] <= 12
    assert s.loc[("FP16", "stable"), "non-finite outputs"] == 0
    assert s.loc[("FP32", "stable"), "max relative error"] < 1e-6


def test_softmax_naive_fails_for_large_logits_stable_does_not():
    df = N.softmax_errors(("FP16",), scales=(100.0,), rows=4).set_index("method")
    assert df.loc["naive", "rows with inf/NaN"] == "4 of 4"
    assert df.loc["stable (subtract max)", "max abs error (finite rows)"] < 1e-2


def test_accumulation_fp16_stagnates_fp32_and_kahan_do_not():
    df = N.accumulation_error(n_terms=10000, value=1e-4).set_index(["dtype", "method"])
    assert df.loc[("FP16", "sequential"), "relative error"] > 0.2
    assert df.loc[("FP16", "Kahan"), "relative error"] < 1e-3
    assert df.loc[("FP16", "torch.sum"), "relative error"] < 1e-3
    assert df.loc[("FP32", "sequential"), "relative error"] < 1e-4
    assert df.loc[("BF16", "sequential"), "relative error"] > df.loc[("BF16", "pairwise"), "relative error"]


def test_cancellation_small_delta_lost_in_fp16_not_fp32():
    df = N.cancellation([1e-4, 1e-2])
    fp16 = df[(df["dtype"] == "FP16")]
    assert fp16["relative error"].iloc[0] == 1.0  # 1 + 1e-4 == 1 in FP16
    fp32 = df[(df["dtype"] == "FP32")]
    assert fp32["relative error"].max() < 1e-2


def test_variance_two_pass_beats_one_pass():
    df = N.variance_cancellation(n=512).set_index(["dtype", "method"])
    assert df.loc[("BF16", "E[x²] − E[x]²"), "relative error"] > 0.1
    assert df.loc[("BF16", "two-pass E[(x − μ)²]"), "relative error"] < 0.05


def test_update_stagnation_both_directions():
    df = N.update_stagnation(updates=(1e-3, 3e-4, 1e-4)).set_index("update u")
    assert df.loc[1e-4, "FP32: w + u moves"] and df.loc[1e-4, "FP32: w − u moves"]
    # FP16 at 1.0: 3e-4 lies between the two thresholds (2^-12 below, 2^-11 above).
    assert not df.loc[3e-4, "FP16: w + u moves"] and df.loc[3e-4, "FP16: w − u moves"]
    assert df.loc[1e-3, "FP16: w + u moves"] and not df.loc[1e-4, "FP16: w − u moves"]
    assert not df.loc[1e-3, "BF16: w + u moves"] and not df.loc[1e-3, "BF16: w − u moves"]


def test_stagnation_thresholds_match_half_spacing_each_side():
    th = N.stagnation_thresholds(1.0).set_index("format")
    assert th.loc["FP16", "largest lost u, w + u"] == 2.0**-11
    assert th.loc["FP16", "largest lost u, w − u"] == 2.0**-12
    assert th.loc["BF16", "largest lost u, w + u"] == 2.0**-8
    assert th.loc["BF16", "largest lost u, w − u"] == 2.0**-9
    assert (th["spacing below w"] * 2 == th["spacing above w"]).all()
    with pytest.raises(ValueError, match="power of two"):
        N.stagnation_thresholds(1.5)


def test_softmax_summary_and_one_hot_explanation():
    df = N.softmax_errors(("FP16",), scales=(1.0, 1000.0), rows=4)
    summary = N.summarize_softmax(df).set_index(["method", "dtype"])
    assert summary.loc[("naive", "FP16"), "scale 1000"].startswith("inf/NaN in 4 of 4")
    assert float(summary.loc[("stable (subtract max)", "FP16"), "scale 1"]) < 1e-2
    oh = N.softmax_one_hot_rows(1000.0, "FP16")
    assert oh["one-hot rows"] == oh["rows"]
    assert oh["max error"] == pytest.approx(oh["largest off-argmax mass in float64"], rel=1e-9)
    assert 0 < oh["max error"] < 1e-15


def test_sgd_low_precision_weights_stall_master_copy_learns():
    df = N.sgd_stagnation(steps=300, n_weights=16)
    last = df.groupby("variant")["loss"].last()
    first = df.groupby("variant")["loss"].first()
    assert last["BF16 weights"] == first["BF16 weights"]
    assert last["FP16 weights"] == first["FP16 weights"]
    assert last["BF16 compute + FP32 master"] < 0.99 * first["BF16 compute + FP32 master"]
    assert last["FP32 weights"] < 0.99 * first["FP32 weights"]


def test_overflow_casts_never_give_inf_in_a_format_without_inf():
    df = N.overflow_casts(values=(1e6, math.inf), formats=("FP16", "FP8 E4M3FN"))
    fp16, e4 = df[df["format"] == "FP16"], df[df["format"] == "FP8 E4M3FN"]
    assert fp16["torch cast"].map(math.isinf).all()
    assert not e4["torch cast"].map(math.isinf).any() and not e4["ml_dtypes cast"].map(math.isinf).any()


def test_bad_device_and_dtype():
    with pytest.raises(ValueError, match="valid devices"):
        N.exp_overflow(device="tpu")
    with pytest.raises(ValueError, match="valid"):
        N.exp_overflow(dtypes=("FP64",))
    with pytest.raises(TypeError):
        N.check_device(3)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-CUDA error path")
def test_tf32_needs_cuda():
    with pytest.raises(RuntimeError, match="CUDA"):
        N.tf32_matmul_error()


@pytest.mark.slow
def test_plots_return_figures():
    import matplotlib.figure
    import matplotlib.pyplot as plt
    figs = [N.plot_spacing(N.spacing_vs_magnitude(("FP16",), points=10)),
            N.plot_softplus(N.softplus_errors(("FP16",), points=21)),
            N.plot_accumulation(N.accumulation_error(n_terms=50, return_traces=True)[1]),
            N.plot_sgd_stagnation(N.sgd_stagnation(steps=20, n_weights=4))]
    assert all(isinstance(f, matplotlib.figure.Figure) for f in figs)
    for f in figs:
        plt.close(f)


# ---- issue 20: sum rounding, split-K reductions, FP32 precision switches -------------------------
def test_torch_sum_rounds_once_and_fp16_pairwise_does_not():
    df = N.sum_rounding("FP16")
    assert N.rounds_once(df, "torch.sum")
    # the false variant of the page's claim: FP16 tree summation does not round once on these inputs
    assert not N.rounds_once(df, "FP16 pairwise")


def test_split_k_error_grows_with_16_bit_partial_sums():
    df = N.split_k_reduction_error(m=16, n=16, k=1024, splits=(1, 4, 32))
    for _, g in df.groupby("dtype"):
        errs = g.sort_values("partial sums rounded to the dtype")["relative error"].tolist()
        assert errs == sorted(errs) and errs[-1] > 2 * errs[0]
    one = df[df["partial sums rounded to the dtype"] == 1].set_index("dtype")["relative error"]
    assert one["FP16"] < 2.0 ** -11 and one["BF16"] < 2.0 ** -8
    with pytest.raises(ValueError, match="splits"):
        N.split_k_reduction_error(splits=(0,))


def test_fp32_precision_settings_show_both_apis():
    t = N.fp32_precision_settings().set_index("setting")
    assert t.loc["torch.backends.cudnn.allow_tf32", "value"] == str(torch.backends.cudnn.allow_tf32)
    assert t.loc["torch.get_float32_matmul_precision()", "value"] == torch.get_float32_matmul_precision()
    assert set(t["API"]) == {"new", "old"}
    if hasattr(torch.backends.cudnn, "conv"):
        assert t.loc["torch.backends.cudnn.conv.fp32_precision", "value"] == torch.backends.cudnn.conv.fp32_precision


def test_gpu_subnormal_matmul_on_cpu_keeps_subnormals():
    df = N.gpu_subnormal_matmul("cpu")  # the function runs anywhere; the page runs it on CUDA
    assert len(df) == 4 and df["subnormal kept"].all()
