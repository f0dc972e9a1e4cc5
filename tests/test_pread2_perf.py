"""Findings 1 and 3 of the second read of the performance chapter."""

import torch

from amp_docs_lib.bench import matmul, model_sweep
from amp_docs_lib.gpt import GPT, GPTConfig, random_batch


def test_onednn_fp32_matmul_is_timed_and_computes_the_product():
    # the CPU peak is checked against oneDNN's FP32 kernel, not only MKL's (finding 1)
    t = matmul.time_onednn_fp32_matmul(64, min_run_time=0.01)
    assert t.median_s > 0
    a, b = torch.randn(8, 8), torch.randn(8, 8)
    out = torch.ops.aten.mkldnn_linear(a.to_mkldnn(), b.to_mkldnn()).to_dense()
    torch.testing.assert_close(out, a @ b.T)


def test_step_flops_counts_cpu_attention():
    # finding 3: on CPU, FlopCounterMode alone has no formula for the CPU SDPA kernel
    from torch.utils.flop_counter import FlopCounterMode

    torch.manual_seed(0)
    cfg = GPTConfig(vocab_size=64, block_size=16, n_layer=1, n_embd=32, n_head=2)
    model = GPT(cfg)
    x, y = random_batch(cfg, 2, "cpu")
    with FlopCounterMode(display=False) as fc:
        model(x, y)[1].backward()
    model.zero_grad(set_to_none=True)
    matmul_only = int(fc.get_total_flops())
    counted = model_sweep.step_flops(model, (x, y))
    # attention by torch's own SDPA formulas (the backward one counts 5 batched matmuls, the scores recomputed)
    from torch.utils.flop_counter import sdpa_backward_flop_count, sdpa_flop_count

    qkv = (2, 2, 16, 16)  # (batch, heads, tokens, head dim)
    attention = sdpa_flop_count(qkv, qkv, qkv) + sdpa_backward_flop_count(qkv, qkv, qkv, qkv)
    assert attention == 2 * 16 * 16 * 32 * 2 * (2 + 5)
    # torch 2.15's FlopCounterMode counts the CPU kernel itself; older torch does not, and step_flops adds it
    from torch.utils.flop_counter import flop_registry

    stock_counts_it = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu in flop_registry
    assert counted == matmul_only + (0 if stock_counts_it else attention)
    if stock_counts_it:
        with FlopCounterMode(display=False) as fc:  # the stock count is then the attention-inclusive one
            model(x, y)[1].backward()
        model.zero_grad(set_to_none=True)
        assert int(fc.get_total_flops()) == counted


def _example():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "examples" / "measure_amp_speedup.py"
    spec = importlib.util.spec_from_file_location("measure_amp_speedup", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_example_withholds_its_verdict_when_the_machine_was_busy(monkeypatch, capsys):
    # finding 8: the example's verdict sits behind a load check
    from amp_docs_lib.bench import load

    monkeypatch.setattr(load.LoadCheck, "quiet", property(lambda self: False))
    _example().main(["--width", "8", "--batch", "4", "--rounds", "5", "--threads", "1"])
    out = capsys.readouterr().out
    assert "no verdict: the machine was busy" in out
    assert not any(v in out.splitlines()[-1] for v in ("faster", "slower", "no difference resolved"))


def test_above_peak_is_not_the_no_peak_mark():
    # finding 9: "n/a" meant both "no peak known" and "above the peak"
    from amp_docs_lib.bench import peaks

    assert peaks.peak_fraction(8.0, 1.0) == peaks.ABOVE_PEAK != "n/a"
    assert peaks.peak_fraction(8.0, None) is None
