"""The benchmark library: harness, mistakes, matmul, peaks, roofline, model sweep, memory, CLI."""

import json
import os
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from amp_docs_lib.bench import matmul, memory, model_sweep, roofline
from amp_docs_lib.core import timing
from amp_docs_lib.bench.suites import DEFAULT_SUITES, SUITES, parse_suites as _parse_suites
from amp_docs_lib.bench.compiled import top_ops
from amp_docs_lib.gpt import GPT, GPTConfig, random_batch

from conftest import REPO_ROOT


def test_quartiles_match_numpy():
    vals = [5.0, 1.0, 9.0, 3.0, 7.0, 2.0]
    q1, med, q3 = timing.quartiles(vals)
    assert (q1, med, q3) == pytest.approx(tuple(np.percentile(vals, [25, 50, 75])))


@pytest.mark.slow
def test_measure_times_a_known_duration_and_warms_up():
    calls = []

    def fn():
        calls.append(1)
        time.sleep(0.004)
    t = timing.measure(fn, warmup=2, min_run_time=0.05)
    assert 0.004 <= t.median_s < 0.04
    assert t.runs >= timing.MIN_RUNS and t.iqr_s >= 0
    assert len(calls) >= 2 + t.runs * t.calls_per_run


def test_measure_uses_the_requested_threads_and_restores_them():
    seen = set()
    before = torch.get_num_threads()
    timing.measure(lambda: seen.add(torch.get_num_threads()), num_threads=1, warmup=0, min_run_time=0.01)
    assert seen == {1}
    assert torch.get_num_threads() == before


@pytest.mark.parametrize("kw, err", [({"warmup": -1}, ValueError), ({"min_run_time": 0}, ValueError),
                                     ({"method": "stopwatch"}, ValueError), ({"num_threads": 0}, ValueError),
                                     ({"method": "cuda_events"}, ValueError)])
def test_measure_rejects_bad_arguments(kw, err):
    with pytest.raises(err):
        timing.measure(lambda: None, **kw)
    with pytest.raises(TypeError):
        timing.measure(42)


@pytest.mark.slow
def test_matmul_flops_match_torch_flop_counter():
    with FlopCounterMode(display=False) as fc:
        torch.randn(8, 5) @ torch.randn(5, 3)
    assert fc.get_total_flops() == matmul.matmul_flops(8, 3, 5)


def test_throughput_sweep_and_alignment():
    df = matmul.throughput_sweep([32, 64], ["fp32", "tf32"], "cpu", min_run_time=0.01)
    assert set(df["dtype"]) == {"fp32"}  # tf32 is CUDA-only: left out on CPU
    assert (df["tflops"] > 0).all()
    assert df["intensity"].tolist() == pytest.approx([roofline.matmul_intensity(n, 4) for n in (32, 64)])
    al = matmul.alignment_sweep(32, ["fp32"], (-1, 0, 8), "cpu", min_run_time=0.01)
    assert al["n"].tolist() == [31, 32, 40]
    assert al["multiple of 8"].tolist() == [False, True, True]
    assert al.loc[al["n"] == 32, "relative to aligned"].item() == 1.0
    with pytest.raises(ValueError, match="multiple of 16"):
        matmul.alignment_sweep(30)
    with pytest.raises(ValueError, match="unknown matmul dtype"):
        matmul.dtype_supported("fp4")


def test_best_per_dtype_keeps_each_dtypes_best_size():
    sweep = pd.DataFrame({"dtype": ["fp32", "fp32", "bf16", "bf16"], "n": [64, 128, 64, 128],
                          "tflops": [1.0, 2.0, 3.0, 2.5], "fraction of peak": [0.1, 0.2, float("nan"), float("nan")],
                          "fraction of FP32 peak": [0.1, 0.2, 0.3, 0.25]})
    best = matmul.best_per_dtype(sweep)
    assert best.columns.tolist() == ["dtype", "best at n", "TFLOP/s", "fraction of dtype peak", "fraction of FP32 peak"]
    assert best.values.tolist() == [["fp32", 128, 2.0, 0.2, 0.2], ["bf16", 64, 3.0, None, 0.3]]  # no peak: None
    assert matmul.best_per_dtype(sweep[["dtype", "n", "tflops"]]).shape == (2, 3)
    timed = sweep.assign(median_s=[1e-3, 2e-3, 3e-3, 4e-3], iqr_s=[1e-4, 2e-4, 3e-4, 4e-4])
    t = matmul.best_per_dtype(timed).set_index("dtype")
    assert t.loc["fp32", "time IQR (ms)"] == pytest.approx(0.2) and t.loc["bf16", "time median (ms)"] == pytest.approx(3.0)
    with pytest.raises(ValueError, match="missing columns"):
        matmul.best_per_dtype(sweep.drop(columns=["tflops"]))


def test_speedup_summary_one_row_per_size():
    steps = pd.DataFrame({"size": ["a"] * 3 + ["b"] * 2, "parameters": [10] * 3 + [20] * 2,
                          "precision": ["fp32", "amp_bf16", "amp_fp16", "fp32", "amp_bf16"],
                          "median_ms": [1.0, 2.0, 4.0, 8.0, 2.0], "iqr_ms": [0.1] * 5,
                          "speedup vs fp32": [None, 0.5, 0.25, None, 4.0],
                          "interval low": [None, 0.4, 0.2, None, 3.0], "interval high": [None, 0.6, 0.3, None, 5.0]})
    s = model_sweep.speedup_summary(steps)
    assert s.columns.tolist() == ["size", "parameters", "FP32 step (ms)", "FP32 step IQR (ms)", "amp_bf16 speedup (x)",
                                  "amp_bf16 interval", "amp_fp16 speedup (x)", "amp_fp16 interval"]
    assert s.values.tolist() == [["a", 10, 1.0, 0.1, 0.5, "[0.40, 0.60]", 0.25, "[0.20, 0.30]"],
                                 ["b", 20, 8.0, 0.1, 4.0, "[3.00, 5.00]", None, None]]  # fp16 not run for b
    with pytest.raises(ValueError, match="missing columns"):
        model_sweep.speedup_summary(steps.drop(columns=["precision"]))


def test_roofline():
    assert roofline.attainable_tflops(1.0, 100.0, 2.0) == 2.0
    assert roofline.attainable_tflops(1000.0, 100.0, 2.0) == 100.0
    assert roofline.copy_bandwidth("cpu", mib=4, min_run_time=0.01) > 0


def test_copy_bandwidth_counts_a_read_and_a_write_of_the_buffer(monkeypatch):
    # With the copy timed at 1 ms, 4 MiB read and 4 MiB written are 8 MiB per ms: 0.008389 TB/s.
    # A count of one direction (half) or of elements instead of bytes (a quarter) fails.
    from types import SimpleNamespace

    monkeypatch.setattr(roofline, "measure", lambda fn, **kw: (fn(), SimpleNamespace(median_s=1e-3))[1])
    assert roofline.copy_bandwidth("cpu", mib=4) == pytest.approx(8 * 2**20 / 1e-3 / 1e12, rel=1e-12)


@pytest.mark.parametrize("shape", [(1, 16, 2), (3, 48, 6), (2, 64, 4)])
def test_parameter_count_matches_the_model(shape):
    cfg = GPTConfig(vocab_size=50, block_size=12, n_layer=shape[0], n_embd=shape[1], n_head=shape[2])
    assert memory.count_parameters(cfg) == sum(p.numel() for p in GPT(cfg).parameters())


def test_memory_calculator_against_a_real_step():
    cfg = GPTConfig(vocab_size=64, block_size=16, n_layer=2, n_embd=64, n_head=4)
    n = memory.count_parameters(cfg)
    m = memory.measure_step(cfg, 4, "fp32")
    assert m["weights"] == 4 * n and m["grads"] == 4 * n and m["optimizer"] == 8 * n
    e = memory.estimate(n, memory.activation_elements(cfg, 4), "fp32")
    assert e["total"] == 16 * n + e["activations"]
    assert m["saved for backward"] == pytest.approx(e["activations"], rel=0.25)  # the activation model
    b = memory.measure_step(cfg, 4, "bf16")
    assert b["weights"] == 2 * n and b["optimizer"] == 4 * n
    with pytest.raises(ValueError, match="unknown regime"):
        memory.estimate(n, 0, "fp4")


def test_profiler_table_shows_matmul_dtypes():
    cfg = GPTConfig(vocab_size=32, block_size=8, n_layer=1, n_embd=32, n_head=2)
    model = GPT(cfg)
    ops = top_ops(model_sweep.step_fn(model, random_batch(cfg, 2), "amp_bf16", torch.device("cpu")), k=40)
    mm = ops[ops["operator"].isin(["aten::mm", "aten::addmm"])]
    assert not mm.empty and set(mm["input dtypes"]) == {"bf16"}


def test_suite_parsing():
    assert _parse_suites(None) == list(DEFAULT_SUITES)
    assert _parse_suites(["matmul,model", "matmul"]) == ["matmul", "model"]
    assert _parse_suites(["all"]) == list(SUITES)
    with pytest.raises(ValueError, match="unknown suite 'nope'"):
        _parse_suites(["nope"])


@pytest.mark.slow
def test_bench_cli_writes_stamped_results(tmp_path):
    env = {"AMP_DOCS_PROFILE": "cpu-small", "PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin"}
    r = subprocess.run([sys.executable, "-m", "amp_docs_lib", "bench", "--suite", "alignment",
                        "--out", str(tmp_path / "out"), "--no-progress"], cwd=REPO_ROOT, env=env,
                       capture_output=True, text=True, timeout=900)  # a guard against a hang: a loaded machine took > 300 s
    assert r.returncode == 0, r.stderr
    assert "alignment" in r.stdout and "unaligned sizes" in r.stdout
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert data["hardware_fingerprint"] and data["suites"]["alignment"]["rows"]
    csv = pd.read_csv(tmp_path / "out" / "alignment.csv")
    assert (csv["hardware_fingerprint"] == data["hardware_fingerprint"]).all()
    bad = subprocess.run([sys.executable, "-m", "amp_docs_lib", "bench", "--suite", "nope"], cwd=REPO_ROOT,
                         env=env, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "valid suites" in bad.stderr


@pytest.mark.parametrize("argv, message", [
    (["--device", "cpu:1"], "device 'cpu:1' does not exist here; valid: cpu"),
    (["--out", "/proc/amp-docs-bench"], "cannot create '/proc/amp-docs-bench'"),
])
def test_bench_refuses_bad_options_before_any_suite(argv, message, monkeypatch, tmp_path, capsys):
    from amp_docs_lib.cli import main

    if "/proc" in message and not os.path.isdir("/proc/self"):
        pytest.skip("needs Linux's /proc")
    ran = []
    monkeypatch.setattr("amp_docs_lib.bench.suites.run_suite", lambda *a: ran.append(a))
    monkeypatch.chdir(tmp_path)
    assert main(["bench", "--suite", "matmul", "--no-progress", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and not ran
    assert not (tmp_path / "bench-results").exists()  # nothing made for a command that did not run


def test_bench_help_keeps_the_suite_table(capsys):
    from amp_docs_lib.cli import main

    assert main(["bench", "--help"]) == 0
    lines = capsys.readouterr().out.splitlines()
    for name in SUITES:  # one line per suite, as written, not rewrapped into one paragraph
        assert any(line.split()[:1] == [name] for line in lines), name


def test_fidelity_help_is_whole_and_needs_no_torch():
    code = ("import sys\nfrom amp_docs_lib.bench import fidelity\ntry:\n    fidelity.main(['--help'])\n"
            "except SystemExit:\n    pass\nprint('torch imported:', 'torch' in sys.modules)\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    text = " ".join(r.stdout.split())
    assert "against a direct ``torch.utils.benchmark.Timer.blocked_autorange`` of the same op, in the same process." in text
    assert "torch imported: False" in text


def test_cuda_bf16_means_native(monkeypatch):
    """torch's is_bf16_supported() counts emulation (sm70/sm75); native BF16 is what gating and the
    matmul sweep mean."""
    from amp_docs_lib.core import gating

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda including_emulation=True: including_emulation)
    assert not gating.requirement_met("cuda-bf16")
    assert not matmul.dtype_supported("bf16", "cuda")
    from amp_docs_lib.amp.precision import precision_setup
    with pytest.raises(ValueError, match="needs bfloat16, which this GPU lacks"):
        precision_setup("amp_bf16", "cuda")


def test_matmul_suite_summary_points_to_no_table_below(monkeypatch):
    from amp_docs_lib.bench.suites import run_suite

    fake = pd.DataFrame([{"dtype": "fp32", "n": 64, "tflops": 1e-6}])
    monkeypatch.setattr(matmul, "throughput_sweep", lambda *a, **k: fake.copy())
    _, summary = run_suite("matmul", "cpu")  # peaks' real note, written for the chapter's page
    assert "table below" not in summary
