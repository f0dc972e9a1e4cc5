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
    with pytest.raises(TypeError, match="floating-point"):
        locate.locate_nonfinite(m, x.long(), y)
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
