"""The debugging tools find planted faults and reject bad input."""

import pytest
import torch
from torch import nn

from amp_docs_lib.debugging import bisect, locate, models, stats


@pytest.fixture(scope="module")
def overflow():
    m = models.UnstableMLP(16, 4, hot_layer=2)
    x, y = models.make_inputs(16, 16)
    return m, x, y


def test_locator_names_overflowing_layer_in_forward(overflow):
    m, x, y = overflow
    rep = locate.locate_nonfinite(m, x, y, autocast_dtype=torch.float16)
    assert rep.first_forward == "blocks.2.0" == m.hot_name
    clean = locate.locate_nonfinite(m, x, y)  # FP32: nothing to report
    assert clean.first_forward is None and clean.first_backward is None and clean.events.empty


def test_locator_names_backward_only_fault():
    m = models.UnstableMLP(16, 3, hot_layer=1, hot_scale=1.0, magnitude=True)
    x, y = models.make_inputs(8, 16, zero_row=True)
    rep = locate.locate_nonfinite(m, x, y)
    assert rep.first_forward is None
    assert rep.first_backward == "magnitude"
    an = locate.anomaly_report(m, x, y)
    assert an["raised"] and "returned nan" in an["message"]
    x_ok, y_ok = models.make_inputs(8, 16)
    assert locate.locate_nonfinite(m, x_ok, y_ok).first_backward is None


def test_stats_and_first_divergence(overflow):
    m, x, _ = overflow
    cmp = stats.compare_precisions(m, x, torch.float16)
    assert stats.first_divergence(cmp) == m.hot_name
    s = stats.tensor_stats(torch.tensor([0.0, 1e-45, float("inf"), float("nan"), 2.0]))
    assert s["zeros"] == 0.2 and s["subnormals"] == 0.2 and s["infs"] == 0.2 and s["nans"] == 0.2
    assert s["max abs"] == 2.0
    assert stats.tensor_stats(torch.tensor([1e-5], dtype=torch.float16))["subnormals"] == 1.0


@pytest.mark.slow
def test_bisection_finds_planted_layer():
    for hot in (0, 3, 5):
        m = models.UnstableMLP(16, 6, hot_layer=hot)
        x, _ = models.make_inputs(16, 16)
        found, trail = bisect.bisect_precision(m, x)
        assert found == [f"blocks.{hot}.0"]
        assert len(trail) < 2 * 14  # fewer passes than testing modules one by one twice
    healthy = models.UnstableMLP(16, 4, hot_layer=1, hot_scale=1.0)
    assert bisect.bisect_precision(healthy, x)[0] == []


def test_bad_input_errors(overflow):
    m, x, y = overflow
    with pytest.raises(TypeError, match="torch.Tensor or a tuple"):
        locate.locate_nonfinite(m, x.tolist(), y)
    with pytest.raises(ValueError, match="loss_scale"):
        locate.locate_nonfinite(m, x, y, loss_scale=0)
    with pytest.raises(TypeError, match="floating-point"):
        stats.tensor_stats(torch.tensor([1, 2]))
    with pytest.raises(ValueError, match="not in the model; valid names"):
        locate.locate_nonfinite(m, x, y, modules=["blocks.9.0"])
    with pytest.raises(ValueError, match="not part of the model"):
        stats.layer_stats(m, x, modules=[nn.Linear(2, 2)])
    with pytest.raises(TypeError, match="nn.Module"):
        locate.locate_nonfinite("model", x, y)
    with pytest.raises(ValueError, match="dtype must be one of"):
        bisect.lowered(m, ["head"], torch.float64)
    with pytest.raises(ValueError, match="tolerance"):
        bisect.bisect_precision(m, x, tolerance=-1)
    with pytest.raises(ValueError, match="hot_layer"):
        models.UnstableMLP(16, 4, hot_layer=7)


def _gpt_with_hot_projection():
    from amp_docs_lib.gpt import GPT, GPTConfig

    torch.manual_seed(0)
    gpt = GPT(GPTConfig(vocab_size=16, block_size=8, n_layer=2, n_head=2, n_embd=16, init_std=0.1))
    with torch.no_grad():
        gpt.h[1].mlp.c_proj.weight.mul_(1e7)  # planted: this projection's outputs pass 65504
    idx = torch.randint(0, 16, (4, 8), generator=torch.Generator().manual_seed(1))
    return gpt, idx


def test_tools_run_on_token_input_gpt_and_find_the_planted_layer():
    gpt, idx = _gpt_with_hot_projection()
    rep = locate.locate_nonfinite(gpt, idx, idx, autocast_dtype=torch.float16)
    assert rep.first_forward == "h.1.mlp.c_proj"
    fp32 = locate.locate_nonfinite(gpt, idx, idx)  # FP32 has the range: nothing to find
    assert fp32.first_forward is None
    st = stats.layer_stats(gpt, idx).set_index("module")
    assert st.loc["h.1.mlp.c_proj", "max abs"] > torch.finfo(torch.float16).max
    cmp = stats.compare_precisions(gpt, idx, torch.float16)
    assert stats.first_divergence(cmp) == "h.1.mlp.c_proj"


def test_loss_scale_makes_backward_overflow_with_a_finite_forward():
    from amp_docs_lib.gpt import GPT, GPTConfig

    torch.manual_seed(0)
    gpt = GPT(GPTConfig(vocab_size=16, block_size=8, n_layer=2, n_head=2, n_embd=16))
    idx = torch.randint(0, 16, (4, 8), generator=torch.Generator().manual_seed(1))
    small = locate.locate_nonfinite(gpt, idx, idx, autocast_dtype=torch.float16, loss_scale=1.0)
    big = locate.locate_nonfinite(gpt, idx, idx, autocast_dtype=torch.float16, loss_scale=2.0**40)
    assert small.first_forward is None and small.first_backward is None
    assert big.first_forward is None and big.first_backward is not None


def test_growth_before_overflow_orders_the_overflowing_module_first():
    import pandas as pd

    log = pd.DataFrame([{"step": s, "module": m, "max abs": v} for s in range(3)
                        for m, v in (("a", 10.0 * (s + 1)), ("b", [100.0, 1e4, float("inf")][s]), ("c", 1.0))])
    g = stats.growth_before_overflow(log, top=2)
    assert list(g.columns) == ["b", "a"] and g.loc[2, "b"] == float("inf")
    with pytest.raises(TypeError, match="step, module, max abs"):
        stats.growth_before_overflow(pd.DataFrame({"x": [1]}))
