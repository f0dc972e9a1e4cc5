"""The performance chapter's reader findings (issue 34, independent read): each test failed on the code before."""

from __future__ import annotations

import pandas as pd
import torch

from amp_docs_lib.bench import compiled, memory, mistakes, peaks
from amp_docs_lib.gpt import GPT, GPTConfig
from amp_docs_lib.page.publish import METADATA_KEY, publish


def test_thread_count_labels_the_calls_each_block_averages():
    """Finding 4: a 32³ matmul is far below 10 ms, so ``blocked_autorange`` averages blocks of many calls."""
    one_thread = mistakes.thread_count(n=32, min_run_time=0.02)["Timer default (num_threads=1)"]
    assert one_thread.calls_per_run > 1  # (two threads on a busy machine can take a block of 1 call)


def _row(table: pd.DataFrame, quantity: str) -> pd.Series:
    return table.set_index("quantity").loc[quantity]


def test_fma_units_are_not_inferred_without_a_bound_on_the_clock(monkeypatch):
    """Finding 1: a rate above the 1-unit estimate fits 1 unit at a turbo clock just as well as 2 units."""
    monkeypatch.setattr(peaks, "cpu_clock_ghz", lambda: 2.0)
    monkeypatch.setattr(peaks, "cpu_max_clock_ghz", lambda: None)
    low = peaks.cpu_peak().low_tflops
    t = peaks.cpu_peak_table(1.5 * low)  # one unit would need 3 GHz
    assert _row(t, "FMA units per core, from the measurement")["value"] == "not resolved"
    assert _row(t, "clock the best rate needs")["value"].startswith("3.00 GHz with 1 FMA unit, 1.50 GHz with 2")
    monkeypatch.setattr(peaks, "cpu_max_clock_ghz", lambda: 2.5)  # 3 GHz is above what the machine can do
    assert _row(peaks.cpu_peak_table(1.5 * low), "FMA units per core, from the measurement")["value"] == "2"
    monkeypatch.setattr(peaks, "cpu_max_clock_ghz", lambda: 3.5)
    assert _row(peaks.cpu_peak_table(1.5 * low), "FMA units per core, from the measurement")["value"] == "not resolved"


def test_top_ops_takes_the_median_over_steps_so_one_slow_step_does_not_lead():
    """Finding 5: one call that did something slow (here a large cumsum) tops a single-step profile only."""
    a = torch.randn(128, 128)
    big = torch.randn(4_000_000)
    calls = {"n": 0}

    def step():
        calls["n"] += 1
        if calls["n"] == 4:  # the second profiled call (1 warm-up, 1 dtype recording, then the profiled ones)
            big.cumsum(0)
        return a @ a

    ops = compiled.top_ops(step, k=3, steps=5)
    assert ops["operator"].iloc[0] == "aten::mm"
    assert "aten::cumsum" not in set(ops["operator"]) or ops.iloc[:, 2][ops["operator"] == "aten::cumsum"].iloc[0] == 0


def test_fp32_warmup_has_a_control_timed_the_same_way():
    """Finding 13: the FP32-warmed 3-call figure is compared with the same 3-call timing after BF16 calls."""
    wrong, right, control = mistakes.fp32_warmup(width=16, batch=4, controls=3)
    assert wrong > 0 and right.median_s > 0 and len(control) == 3 and all(c > 0 for c in control)


def test_publish_marks_a_measurement_taken_on_a_busy_machine():
    """Finding 6: the load check's verdict travels with the published data into "Yours vs reference"."""
    df = pd.DataFrame({"x": [1.0]})
    busy = publish("performance_x", df, "Rate", quiet=False)
    _, meta = busy._repr_mimebundle_()
    assert "busy" in meta[METADATA_KEY]["caption"]
    _, meta = publish("performance_x", df, "Rate", quiet=True)._repr_mimebundle_()
    assert meta[METADATA_KEY]["caption"] == "Rate"


def test_measure_step_reports_adams_step_counters_apart():
    """Finding 10: the 0-dim step tensors the moments leave out are measured, one per parameter tensor."""
    cfg = GPTConfig(vocab_size=32, block_size=8, n_layer=1, n_embd=16, n_head=2)
    m = memory.measure_step(cfg, 2, "fp32")
    tensors = len(list(GPT(cfg).parameters()))
    assert m["optimizer scalars"] == tensors * torch.tensor(0.0).element_size()
    assert m["optimizer"] == 8 * memory.count_parameters(cfg)
