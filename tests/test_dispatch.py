"""The one dispatch recorder (core.dispatch.trace_ops) and the traces built on it."""

import re

import pytest
import torch

from amp_docs_lib.core.dispatch import trace_ops
from amp_docs_lib.core.paths import LIBRARY_ROOT


def test_every_dispatch_mode_of_the_library_is_core_dispatch():
    homes = [
        p.relative_to(LIBRARY_ROOT).as_posix()
        for p in sorted(LIBRARY_ROOT.rglob("*.py"))
        if re.search(r"^\s*class \w+\(TorchDispatchMode\)", p.read_text(encoding="utf-8"), re.M)
    ]
    assert homes == ["core/dispatch.py"]


def test_calls_in_order_with_positional_keyword_and_listed_tensor_dtypes():
    a, b = torch.ones(2, 2), torch.ones(2, 2, dtype=torch.float64)
    trace = trace_ops(lambda: (a @ a, torch.cat([a, a.half()]), torch.add(a, 1.0, alpha=2), b.sum()))
    names = [c.name for c in trace.calls]
    assert names[0] == "aten.mm" and trace.calls[0].dtypes == (torch.float32, torch.float32)
    cat = trace.calls[names.index("aten.cat")]
    assert cat.dtypes == () and set(cat.all_dtypes) == {torch.float32, torch.float16}  # a list of tensors
    assert trace.calls[-1].op == "sum" and trace.calls[-1].dtypes == (torch.float64,)
    assert trace.counts["aten.mm"] == 1 and trace.matmuls == [("aten.mm", ("float32", "float32"))]
    assert all(c.args == () for c in trace.calls)
    kept = trace_ops(lambda: a @ a, keep_args=True).calls[0]
    assert kept.args[0] is a and kept.args[1] is a


def test_an_op_that_raised_is_not_recorded():
    def falls_back():
        try:
            torch.mm(torch.ones(2, 3), torch.ones(2, 3))  # shapes do not chain: raises
        except RuntimeError:
            torch.ones(2, 3).sum()

    trace = trace_ops(falls_back)
    assert "aten.mm" not in trace.counts and "aten.sum" in trace.counts


def test_autocast_trace_and_profiled_dtypes_read_the_core_recorder(monkeypatch):
    from amp_docs_lib.amp import autocast_policy
    from amp_docs_lib.bench import compiled
    from amp_docs_lib.core import dispatch

    seen = []
    real = dispatch.trace_ops
    monkeypatch.setattr(dispatch, "trace_ops", lambda fn, **kw: seen.append(fn) or real(fn, **kw))
    monkeypatch.setattr(compiled, "trace_ops", dispatch.trace_ops)
    x = torch.ones(4, 4)

    def step():
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return x @ x

    assert ("mm", ("bfloat16", "bfloat16")) in autocast_policy.dispatch_trace(step) and len(seen) == 1
    ops = compiled.top_ops(step, k=3)
    assert len(seen) == 2
    assert ops.set_index("operator").loc["aten::mm", "input dtypes"] == "bf16"


def test_trace_ops_refuses_what_it_cannot_call():
    with pytest.raises(TypeError, match="fn must be callable"):
        trace_ops(3)
