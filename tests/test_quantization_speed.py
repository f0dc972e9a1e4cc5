"""Issue 21: what torchao really runs, the batch sweep, outliers and SmoothQuant, static activation
quantization, save/reload, several seeds, and decisions drawn only from resolved differences."""

import copy

import pandas as pd
import pytest
import torch
from torch import nn

from functools import partial

from amp_docs_lib.core.timing import Comparison, Timing, interleaved
from amp_docs_lib.quantization import kernels, outliers, ptq, results, seeds, serialization, speed, static, task


FAST_TIMER = partial(interleaved, rounds=5, min_block_s=0.002, num_threads=1)


@pytest.fixture(scope="module")
def small_task():
    with task.single_thread():
        return task._trained(64, 10, 0)


def _mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 16)).eval()


def test_dispatch_trace_names_the_matmuls_each_config_runs():
    m, x = _mlp(), torch.randn(4, 64)
    models = {"FP32": m, **{n: ptq.quantize_variant(m, n) for n in ("int8_wo", "int8_dyn", "int8_dyn_int4", "fp8_wo")}}
    k = kernels.kernel_table(models, x).set_index("variant")
    assert k.loc["int8_dyn", "integer matmul (aten._int_mm)"]  # the one config with an integer matmul
    for n in ("FP32", "int8_wo", "int8_dyn_int4", "fp8_wo"):
        assert not k.loc[n, "integer matmul (aten._int_mm)"] and k.loc[n, "float matmul"], n
    assert k.loc["int8_dyn_int4", "activations quantized at run time"]  # quantized, then dequantized again
    assert "float8" not in k.loc["fp8_wo", "matmuls that ran (input dtypes)"]  # memory-only format
    assert "quantize_affine" in k.loc["int8_dyn", "torchao quantize/dequantize ops"]


def test_trace_ops_counts_and_rejects_non_callables():
    t = kernels.trace_ops(lambda: torch.ones(2, 2) @ torch.ones(2, 2))
    assert t.counts["aten.mm"] == 1 and t.matmuls == [("aten.mm", ("float32", "float32"))]
    with pytest.raises(TypeError, match="callable"):
        kernels.trace_ops(3)


def test_int8_probe_takes_the_path_torchao_chooses():
    from torchao.utils import _cpu_is_amx_tile_supported, _cpu_is_vnni_supported, torch_version_at_least

    p = kernels.int8_path_probe()
    # torchao.kernel.intmm's own condition: VNNI without AMX, and torch 2.12 or newer.
    u8s8 = _cpu_is_vnni_supported() and not _cpu_is_amx_tile_supported() and torch_version_at_least("2.12.0.dev")
    assert p["torchao path (aten._int_mm inputs)"] == ("uint8 x int8" if u8s8 else "int8 x int8")
    assert p["returned"] in (p["exact"], p["saturated prediction (u8s8, 16-bit pair sums)"])
    assert p["saturates"] == (p["returned"] != p["exact"])
    with pytest.raises(ValueError, match="multiple of 8"):
        kernels.int8_path_probe(12)


def test_metadata_bits_are_read_from_torchaos_tensor():
    m = nn.Sequential(nn.Linear(128, 64))
    meta = ptq.metadata_bits_per_weight(ptq.quantize_variant(m, "int4_wo"))
    # FP32 scale + int8 zero point per group of 32 (not the 1 bit of a scale alone)
    assert meta["scale + zero-point bits per weight"].tolist() == [(32 + 8) / 32]


def test_weight_bytes_count_a_subclass_inner_tensors():
    m = nn.Sequential(nn.Linear(128, 64))
    assert speed.weight_bytes(m) == 4 * (128 * 64 + 64)
    q = ptq.quantize_variant(m, "int8_wo")
    # int8 codes, FP32 per-row scales, int8 per-row zero points, FP32 bias
    assert speed.weight_bytes(q) == 128 * 64 + 4 * 64 + 64 + 4 * 64
    assert speed.weight_code_bytes(q) == 128 * 64  # the codes alone: the FP32 bias is not the weight format


def _sweep_row(b, v, s, lo, hi):
    verdict = "faster" if lo > 1 else "slower" if hi < 1 else "no difference resolved"
    return {"batch": b, "variant": v, "speedup vs FP32 (x)": s, "interval low": lo, "interval high": hi,
            "verdict": verdict}


def test_crossover_only_between_resolved_verdicts():
    rows = [{"batch": b, "variant": "FP32", "speedup vs FP32 (x)": None, "interval low": None,
             "interval high": None, "verdict": None} for b in (1, 8, 64, 512)]
    rows += [_sweep_row(1, "A", 0.5, 0.4, 0.6), _sweep_row(8, "A", 1.0, 0.8, 1.2),
             _sweep_row(64, "A", 1.5, 1.3, 1.7), _sweep_row(512, "A", 2.0, 1.8, 2.2)]
    rows += [_sweep_row(b, "B", 0.5, 0.4, 0.6) for b in (1, 8, 64, 512)]
    rows += [_sweep_row(b, "C", 1.0, 0.8, 1.2) for b in (1, 8, 64, 512)]
    rows += [_sweep_row(1, "D", 0.5, 0.4, 0.6), _sweep_row(8, "D", 0.5, 0.4, 0.6),
             _sweep_row(64, "D", 1.5, 1.3, 1.7), _sweep_row(512, "D", 2.0, 1.8, 2.2)]
    x = speed.crossovers(pd.DataFrame(rows)).set_index("variant")
    # A: one slower batch, then faster ones: a change resting on one batch is not a crossover (review 2026-11-24, 25)
    assert x.loc["A", "crossover"] == "none resolved at two consecutive batches on each side"
    assert x.loc["A", "change on a single batch (not counted)"] == "slower at 1, faster at 64"
    assert x.loc["A", "not resolved at batch"] == "8"
    assert x.loc["D", "crossover"] == "slower at 1, 8; faster at 64, 512"
    assert x.loc["B", "crossover"] == "none: slower wherever resolved"
    assert x.loc["C", "crossover"] == "none resolved"


def test_batch_sweep_columns_and_intervals():
    df = speed.batch_sweep(64, 64, (1, 16), FAST_TIMER, ("int8_dyn",))
    assert set(df["variant"]) == {"FP32", "FP32" + speed.AA_SUFFIX, ptq.VARIANTS["int8_dyn"].label,
                                  speed.TORCH_AO_LABEL}
    q = df[df["variant"] != "FP32"]
    assert (q["interval low"].astype(float) <= q["speedup vs FP32 (x)"].astype(float)).all()
    assert (q["speedup vs FP32 (x)"].astype(float) <= q["interval high"].astype(float)).all()
    assert (df["IQR (us)"].astype(float) >= 0).all()
    ran = df.set_index(["variant", "batch"])["matmul that ran"]
    assert all("aten._int_mm" in ran[(ptq.VARIANTS["int8_dyn"].label, b)] for b in (1, 16)), ran.to_dict()
    assert all("float32" in ran[("FP32", b)] and "_int_mm" not in ran[("FP32", b)] for b in (1, 16))
    with pytest.raises(ValueError, match="batches"):
        speed.batch_sweep(64, 64, (0,), FAST_TIMER)


def test_planted_outlier_keeps_the_function_and_smoothquant_recovers(small_task):
    m = small_task.model
    planted = outliers.with_activation_outlier(m, 0, 300.0)
    x = small_task.data.x_test
    assert torch.allclose(planted(x), m(x), atol=1e-4)
    amax = outliers.channel_absmax(planted, small_task.data.x_calib)
    assert amax[0] > 50 * amax[1:].median()
    if kernels.int8_path_probe()["saturates"]:
        pytest.skip("this CPU's integer matmul saturates: SQNR is limited by the kernel, not by rounding")
    ot = outliers.outlier_table(small_task, factors=(1.0, 300.0)).set_index("outlier factor")
    d, s = "layer-2 SQNR, INT8 dynamic (dB)", "layer-2 SQNR, SmoothQuant + INT8 dynamic (dB)"
    assert ot.loc[300.0, d] < ot.loc[1.0, d] - 12  # the outlier costs per-token INT8
    assert ot.loc[300.0, s] > ot.loc[300.0, d] + 5  # SmoothQuant gives much of it back (all of it at the chapter's size)
    with pytest.raises(ValueError, match="positive"):
        outliers.with_activation_outlier(m, 0, -1.0)
    with pytest.raises(ValueError, match="channel"):
        outliers.with_activation_outlier(m, 10_000, 2.0)


def test_static_quantization_runs_integer_matmuls_and_deploys_a_bad_range(small_task):
    from amp_docs_lib.quantization import calibration

    d = small_task.data
    q = static.static_quantize(small_task.model, d.x_calib, "minmax")
    assert kernels.describe(kernels.forward_trace(q, d.x_test[:8]))["integer matmul (aten._int_mm)"]
    assert task.accuracy(q, d.x_test, d.y_test) >= small_task.fp32_accuracy - 0.02
    bad = static.static_quantize(small_task.model, calibration.corrupt_calibration(d.x_calib), "minmax")
    ref = small_task.model(d.x_test).detach()
    from amp_docs_lib.quantization.affine import sqnr_db
    if not kernels.int8_path_probe()["saturates"]:  # a saturating integer matmul hurts the clean range more
        assert sqnr_db(ref, bad(d.x_test).detach()) < sqnr_db(ref, q(d.x_test).detach()) - 6
    with pytest.raises(ValueError, match="calibration method"):
        static.static_quantize(small_task.model, d.x_calib, "magic")


@pytest.mark.parametrize("name", ["int8_wo", "int8_dyn", "int4_wo", "fp8_wo"])
def test_save_reload_gives_identical_outputs(small_task, name):
    q = ptq.quantize_variant(small_task.model, name)
    r = serialization.save_reload_check(q, small_task.model, small_task.data.x_test)
    assert r["bitwise equal"] and r["max |difference| of outputs"] == 0.0
    assert r["weight classes before"] == r["weight classes after"] != "Parameter"


def test_output_comparison_detects_a_different_model(small_task):
    q = ptq.quantize_variant(small_task.model, "int8_dyn")
    r = serialization.compare_outputs(q, small_task.model, small_task.data.x_test)
    assert not r["bitwise equal"] and r["max |difference| of outputs"] > 0


def test_seed_summary_resolves_only_consistent_differences():
    long = pd.DataFrame([{"seed": s, "variant": v, "accuracy": a}
                         for s in range(5) for v, a in (("FP32", 0.95 + 0.01 * s), ("same", 0.95 + 0.01 * s),
                                                        ("worse", 0.93 + 0.01 * s),
                                                        ("mixed", 0.95 + 0.01 * s + (0.01 if s % 2 else -0.01)))])
    s = seeds.seed_summary(long).set_index("variant")
    assert s.loc["worse", "verdict"] == "lower than FP32"
    assert s.loc["same", "verdict"] == s.loc["mixed", "verdict"] == "no difference resolved"
    assert s.loc["worse", "difference from FP32 (points, median)"] == pytest.approx(-2.0)


def _cmp(ratio, lo, hi):
    t = Timing("x", 1e-3, 1e-4, 9, 1, 1, "cpu", "interleaved blocks")
    return Comparison(t, t, ratio, lo, hi, 9, 0.9)


class _FakeTiming:
    def __init__(self, comps):
        self.comps = comps

    def compare(self, a, b):
        return self.comps[(a, b)]


def _results_frame(rows):
    cols = ["variant", "runtime", "accuracy", "weight payload (KiB)", "weight codes (KiB)", "speedup vs same runtime's FP32 (x)",
            "interval vs same runtime's FP32", "verdict vs same runtime's FP32"]
    return pd.DataFrame(rows, columns=cols)


def test_decision_table_decides_only_on_resolved_differences():
    df = _results_frame([
        ("FP32", "PyTorch eager", 0.97, 100.0, 100.0, None, None, None),
        ("A", "torchao", 0.97, 30.0, 25.0, 0.8, "[0.70, 0.90]", "slower"),
        ("B", "torchao", 0.971, 30.5, 25.0, 1.05, "[0.90, 1.20]", "no difference resolved"),
        ("C", "torchao", 0.90, 10.0, 8.0, 3.0, "[2.50, 3.50]", "faster"),  # resolved lower accuracy: ineligible
        ("D (deprecated)", "PyTorch eager", 0.97, 5.0, 4.0, 9.0, "[8.0, 10.0]", "faster"),
    ])
    ss = pd.DataFrame({"variant": ["A", "B", "C"], "verdict": ["no difference resolved"] * 2 + ["lower than FP32"]})
    row = results.decision_table(df, ss).iloc[0]
    assert row["memory"].startswith("A (30.0 KiB of weight payload")  # equal codes, B's payload is larger
    assert row["latency"].startswith("stay with FP32")  # B's interval contains 1, C is ineligible, D deprecated
    assert row["accuracy"].startswith("any eligible variant")  # 0.971 vs 0.97 is not resolved


def test_decision_table_names_the_fastest_only_when_resolved_from_the_runner_up():
    df = _results_frame([
        ("FP32", "PyTorch eager", 0.97, 100.0, 100.0, None, None, None),
        ("A", "torchao", 0.97, 30.0, 25.0, 2.0, "[1.80, 2.20]", "faster"),
        ("B", "torchao", 0.97, 30.0, 25.0, 1.9, "[1.70, 2.10]", "faster"),
    ])
    ss = pd.DataFrame({"variant": ["A", "B"], "verdict": ["no difference resolved"] * 2})
    df.attrs["timing"] = _FakeTiming({("A", "B"): _cmp(1.05, 0.95, 1.15)})
    assert "not resolved from B" in results.decision_table(df, ss).iloc[0]["latency"]
    df.attrs["timing"] = _FakeTiming({("A", "B"): _cmp(1.3, 1.2, 1.4)})
    assert "resolved faster than B" in results.decision_table(df, ss).iloc[0]["latency"]


@pytest.mark.slow
def test_results_table_spreads_and_intervals(small_task, monkeypatch):
    monkeypatch.setenv("AMP_DOCS_HIDE_PACKAGES", "onnxruntime")
    df = results.results_table(small_task, FAST_TIMER).set_index("variant")
    ran = df[df["latency median (us)"].notna()]
    assert (ran["latency IQR (us)"].astype(float) > 0).all() and (ran["blocks"] >= 5).all()
    assert ran.loc[ptq.VARIANTS["int8_dyn"].label, "computes with (dispatch trace)"].startswith("aten._int_mm")
    onnx = [v for v in df.index if v.startswith("ONNX Runtime")]
    assert onnx == [label for label, _, _ in results.ONNX_VARIANTS]
    assert df.loc[onnx, "accuracy"].isna().all() and df.loc[onnx, "speedup vs same runtime's FP32 (x)"].isna().all()
    assert (df.loc[onnx, "note"] == "not run: the Python package onnxruntime is not installed in this build").all()
    s = results.summary(df.reset_index())
    assert "latency IQR (us)" in s.columns and "interval vs same runtime's FP32" in s.columns
