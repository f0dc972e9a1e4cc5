"""Issue 21: interleaved A/B comparisons with intervals, the cast cache, cache flushing, the CPU peak
estimate's inputs, datasheet rows, full training step with optimizer and GradScaler, MFU."""

import time

import pandas as pd
import pytest
import torch

from amp_docs_lib.bench import mistakes, model_sweep, peaks, roofline
from amp_docs_lib.core import timing
from amp_docs_lib.gpt import GPT, GPTConfig, random_batch


def test_median_ci_is_the_sign_test_interval():
    xs = list(range(1, 10))  # n = 9: P(B <= 1) = 10/512 <= 0.05 < P(B <= 2): the 2nd and 8th values
    assert timing.median_ci(xs) == (5, 2, 8)
    assert timing.median_ci(list(range(5))) == (2, 0, 4)  # n = 5: min and max (coverage 1 - 2/32)
    with pytest.raises(ValueError, match="too few"):
        timing.median_ci([1.0, 2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match="level"):
        timing.median_ci(xs, level=1.5)


def test_median_ci_covers_at_its_level():
    g = torch.Generator().manual_seed(0)
    hits = sum(
        lo <= 0.0 <= hi for lo, hi in (timing.median_ci(torch.randn(9, generator=g).tolist())[1:] for _ in range(2000))
    )
    assert hits / 2000 >= 0.9 - 0.02  # nominal 96% for n = 9 at level 0.9


def test_interleaved_resolves_a_twice_slower_function():
    res = timing.interleaved(
        # 10 ms against 20 ms: a sleep overshoots by up to a few ms on a loaded machine, which moved a
        # 2 ms/4 ms pair's ratio out of its band; at these lengths the overshoot is a small share
        {"short": lambda: time.sleep(0.01), "long": lambda: time.sleep(0.02)},
        rounds=7,
        min_block_s=0.02,
        warmup=1,
    )
    c = res.compare("long")
    assert c.ratio_hi < 1 and 0.3 < c.ratio < 0.8
    # Where the A/A control is tight (within 20% either way) a 2x difference must be resolved; on a machine
    # busy enough to widen it past that, the harness may instead say it could not resolve one (never the
    # wrong direction).
    quiet = c.aa.ratio_hi - c.aa.ratio_lo < 0.4
    allowed = {"slower"} if quiet else {"slower", timing.UNRESOLVED, timing.NOISE_FLOOR_TOO_HIGH}
    assert c.verdict in allowed, (c.verdict, c.aa.interval_text())
    back = res.compare("short", "long")
    assert back.verdict in ({"faster"} if quiet else {"faster", timing.UNRESOLVED, timing.NOISE_FLOOR_TOO_HIGH})
    assert all(t.runs == 7 and t.iqr_s >= 0 for t in res.timings.values())


def test_comparison_verdict_needs_the_interval_to_exclude_one():
    t = timing.Timing("x", 1.0, 0.1, 9, 1, 1, "cpu", "interleaved blocks")
    assert timing.Comparison(t, t, 1.5, 1.1, 1.9, 9, 0.9).verdict == "faster"
    assert timing.Comparison(t, t, 1.5, 0.9, 1.9, 9, 0.9).verdict == "no difference resolved"
    assert timing.Comparison(t, t, 0.5, 0.4, 0.9, 9, 0.9).verdict == "slower"


@pytest.mark.parametrize(
    "kw, match", [({"rounds": 4}, "rounds"), ({"baseline": "nope"}, "baseline"), ({"min_block_s": 0}, "min_run_time")]
)
def test_interleaved_rejects_bad_arguments(kw, match):
    with pytest.raises(ValueError, match=match):
        timing.interleaved({"a": lambda: None, "b": lambda: None}, **kw)
    with pytest.raises(ValueError, match="two"):
        timing.interleaved({"a": lambda: None})


def test_compare_text_lays_out_rows_and_columns():
    res = timing.interleaved({"fp32": lambda: None, "bf16": lambda: None}, rounds=5, min_block_s=0.001)
    text = timing.compare_text(timing.measurements(res, "demo", "row-1"))
    assert "demo" in text and "row-1" in text and "fp32" in text and "bf16" in text


def test_autocast_casts_parameters_once_per_region():
    c = mistakes.autocast_cast_counts("cpu", calls=3)
    assert c["one region"] == 3 + 2  # input every call, weight and bias once
    assert c["one region per call"] == 3 * (1 + 2)  # the cache is cleared when the region exits


@pytest.mark.slow
def test_tiny_op_autocast_separates_kernel_and_overhead():
    rows = mistakes.tiny_op_autocast((8,), "cpu", rounds=5, min_block_s=0.002)
    r = rows[0]
    assert {"fp32 (µs)", "bfloat16, pre-cast (µs)", "autocast (µs)"} <= set(r)
    assert r["_overhead"].baseline.label == "bfloat16 pre-cast" and r["_kernel"].baseline.label == "fp32"


@pytest.mark.slow
def test_cache_flush_measures_both_and_sizes_the_buffer():
    a = torch.randn(64, 64)
    r = mistakes.cache_flush(lambda: a @ a, "cpu", rounds=5, calls=3, flush_bytes=8 * 2**20)
    assert r["flush bytes"] == 8 * 2**20 and r["warm median (us)"] > 0 and r["flushed median (us)"] > 0
    lo, hi = r["interval"]
    assert lo <= r["flushed / warm (x)"] <= hi
    assert mistakes.last_level_cache_bytes() >= 2**20


def test_datasheet_rows_and_name_matching():
    assert peaks.match_gpu("NVIDIA H100 80GB HBM3") == "H100 SXM"
    assert peaks.match_gpu("NVIDIA H100 PCIe") == "H100 PCIe"
    assert peaks.match_gpu("NVIDIA H200") == "H200 SXM"
    assert peaks.match_gpu("NVIDIA A100-SXM4-80GB") == "A100 SXM 80GB"
    assert peaks.match_gpu("NVIDIA A100-SXM4-40GB") == "A100 SXM 40GB"
    assert peaks.match_gpu("NVIDIA A100 80GB PCIe") == "A100 PCIe 80GB"
    for other in ("NVIDIA H100 NVL", "NVIDIA H200 NVL", "NVIDIA A10", "NVIDIA GeForce GTX 1080"):
        assert peaks.match_gpu(other) is None, other
    assert peaks.GPU_PEAKS["A100 SXM 40GB"]["bandwidth_tbs"] == 1.555
    assert peaks.GPU_PEAKS["A100 PCIe 80GB"]["bandwidth_tbs"] == 1.935
    # dense = the datasheet's 'with sparsity' figure / 2
    assert peaks.GPU_PEAKS["H100 PCIe"]["bf16"] == 756.5 and peaks.GPU_PEAKS["H100 SXM"]["tf32"] == 494.5
    assert peaks.GPU_PEAKS["A100 SXM 80GB"]["int8"] == 624.0
    assert all(row["source"] for row in peaks.GPU_PEAKS.values())


def test_cpu_peak_names_its_inputs_and_is_a_range(monkeypatch):
    monkeypatch.setattr(peaks, "cpu_clock_ghz", lambda: 2.0)
    monkeypatch.setattr(peaks, "physical_cores_reported", lambda: 4)
    monkeypatch.setattr(peaks, "cpu_lanes_fp32", lambda capability=None: 16)
    p = peaks.cpu_peak(threads=8)  # 8 threads on 4 physical cores: 4 cores compute
    assert p.low_tflops == pytest.approx(4 * 2.0e9 * 16 * 2 / 1e12) and p.high_tflops == 2 * p.low_tflops
    how = {name: h for name, _, h in p.inputs}
    assert how["clock"].startswith("assumed") and how["FMA units per core"].startswith("assumed")
    t = peaks.cpu_peak_table(0.1)
    assert "best FP32 matmul measured in this build" in set(t["quantity"])
    monkeypatch.setattr(peaks, "cpu_clock_ghz", lambda: None)
    with pytest.raises(ValueError, match="clock"):
        peaks.cpu_peak()


def test_measured_intensity_matches_the_formula():
    assert roofline.measured_intensity(64, torch.bfloat16) == pytest.approx(roofline.matmul_intensity(64, 2))
    assert roofline.measured_intensity(64, torch.float32) == pytest.approx(roofline.matmul_intensity(64, 4))


def test_training_step_runs_the_optimizer():
    cfg = GPTConfig(vocab_size=32, block_size=8, n_layer=1, n_embd=16, n_head=2)
    torch.manual_seed(0)
    m = GPT(cfg)
    before = [p.detach().clone() for p in m.parameters()]
    model_sweep.step_fn(m, random_batch(cfg, 2), "amp_bf16", torch.device("cpu"), lr=1e-2)()
    assert any(not torch.equal(a, p) for a, p in zip(before, m.parameters(), strict=True))  # the step updated weights
    assert all(p.grad is None for p in m.parameters())  # and zeroed the gradients


@pytest.mark.slow
def test_sweep_intervals_trend_and_mfu():
    cfgs = model_sweep.ladder_configs({"a": (1, 16, 2), "b": (1, 32, 2)}, vocab=32, seq=8)
    df = model_sweep.sweep(cfgs, 2, ("fp32", "amp_bf16"), "cpu", rounds=5, min_block_s=0.002, warmup=1)
    assert set(df["precision"]) == {"fp32", "amp_bf16"} and (df["step GFLOP"].astype(float) > 0).all()
    bf = df[df["precision"] == "amp_bf16"]
    assert (bf["interval low"].astype(float) <= bf["speedup vs fp32"].astype(float)).all()
    assert len(df.attrs["measurements"]) == 4
    s = model_sweep.speedup_summary(df)
    assert list(s["size"]) == ["a", "b"] and "amp_bf16 interval" in s.columns
    fake = pd.DataFrame(
        {
            "precision": ["amp_bf16"] * 3,
            "parameters": [1, 2, 3],
            "interval low": [1.0, 1.3, 1.6],
            "interval high": [1.2, 1.5, 1.8],
        }
    )
    assert model_sweep.speedup_trend(fake) == "rises"
    fake["interval low"] = [1.0, 1.1, 1.6]
    assert model_sweep.speedup_trend(fake) == "not resolved"
    # read of 2026-11-25: a resolved rise then a resolved fall is not "intervals overlap"
    fake["interval low"], fake["interval high"] = [0.70, 0.78, 0.57], [0.74, 0.81, 0.63]
    assert model_sweep.speedup_trend(fake) == model_sweep.TREND_NOT_MONOTONE
    mfu = model_sweep.mfu_table(df, {"fp32": 1.0}, 0.05, "cpu")
    assert len(mfu) == len(df) and "MFU (of the page's FP32 peak)" in mfu.columns


def test_library_matmul_ops_are_recognised_by_name():
    from amp_docs_lib.core.dispatch import is_matmul

    assert is_matmul("aten._int_mm") and is_matmul("somelib.int4_gemm") and is_matmul("otherlib.scaled_mm")
    assert not is_matmul("aten.add") and not is_matmul("torchao.quantize_affine")
    assert not is_matmul("aten.mm_like_but_unlisted")  # aten ops must be listed explicitly
