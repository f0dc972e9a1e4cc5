"""The per-operator tracer finds faults written inside a module's forward, which module hooks miss, and
anomaly mode's forward frame is read, not suppressed (review 2026-11-24, findings 19, 22)."""

import inspect
from pathlib import Path

import torch

from amp_docs_lib.debugging import locate, models


def _mul_line():
    src, start = inspect.getsourcelines(models.ScaledResidual.forward)
    return next(start + i for i, text in enumerate(src) if "* self.scale" in text)


def test_hooks_miss_a_functional_overflow_that_the_operator_tracer_names():
    model = models.FunctionalFaultMLP(16, 3, hot_layer=1)
    x, y = models.make_inputs(8, 16)
    assert locate.locate_nonfinite(model, x, y, autocast_dtype=torch.float16).first_forward is None
    ops = locate.first_nonfinite_ops(model, x, y, autocast_dtype=torch.float16)
    first = ops.iloc[0]
    assert first["pass"] == "forward" and first["op"].startswith("aten.mul")
    assert Path(first["file"]).name == "models.py" and first["line"] == _mul_line()
    assert len(locate.first_nonfinite_ops(model, x, y)) == 0  # FP32 has the range


def test_operator_tracer_counts_only_ops_with_finite_inputs():
    """The NaNs after the first inf (LayerNorm of an inf input) are consequences, not new events."""
    model = models.FunctionalFaultMLP(16, 3, hot_layer=1)
    x, y = models.make_inputs(8, 16)
    ops = locate.first_nonfinite_ops(model, x, y, autocast_dtype=torch.float16, backward=False)
    assert list(ops["op"]) == [ops.iloc[0]["op"]]


def test_anomaly_report_returns_the_forward_frame_of_the_failing_function():
    model = models.UnstableMLP(16, 3, hot_layer=1, hot_scale=1.0, magnitude=True)
    x, y = models.make_inputs(8, 16, zero_row=True)
    frame = locate.anomaly_report(model, x, y)["forward_frame"]
    src, start = inspect.getsourcelines(models.Magnitude.forward)
    line_of = {key: start + i for i, text in enumerate(src) for key in ("x * x", "torch.sqrt") if key in text}
    assert Path(frame[0]).name == "models.py" and frame[1] == line_of["x * x"] != line_of["torch.sqrt"]


def test_bisection_finds_a_finite_fault_by_its_tolerance():
    """The old demo bisected an overflow, every verdict an inf; a cancellation fault stays finite in FP16."""
    import math

    from amp_docs_lib.debugging import bisect

    model = models.CancellationMLP(16, 4, hot_layer=2)
    x, y = models.make_inputs(32, 16)
    assert locate.locate_nonfinite(model, x, y, autocast_dtype=torch.float16).first_forward is None
    found, trail = bisect.bisect_precision(model, x, dtype=torch.float16, tolerance=1e-2)
    assert found == [model.hot_name]
    assert all(math.isfinite(e) for e in trail["relative error"])
    assert (~trail["exceeds tolerance"]).any()  # some lowered halves stayed within the tolerance
