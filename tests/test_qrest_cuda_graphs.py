"""Issue 34 finding 22: the CUDA-graph replay is timed against the default and the fused eager AdamW step,
not only against the eager step with the graph's settings, all in the same interleaved rounds.

GPU-only code, run on the CPU as far as it goes: the eager steps, and the comparison with the capture and
the device stood in for (``-m gpu_readiness``)."""

import pytest
import torch

from amp_docs_lib.bench import cuda_graphs
from amp_docs_lib.core import timing
from amp_docs_lib.gpt import GPT, GPTConfig, random_batch

pytestmark = pytest.mark.gpu_readiness

CFG = GPTConfig(vocab_size=16, block_size=8, n_layer=1, n_head=1, n_embd=8)
AS_CAPTURED = "eager, as captured (capturable AdamW, no cast cache)"


def test_the_eager_baselines_are_what_an_eager_loop_runs():
    steps = cuda_graphs.EAGER_STEPS
    assert cuda_graphs.BASELINE == "eager, default AdamW"
    assert steps[cuda_graphs.BASELINE] == {"optimizer": {}, "cast_cache": True}  # torch's defaults
    assert steps["eager, fused AdamW"] == {"optimizer": {"fused": True}, "cast_cache": True}
    assert steps[AS_CAPTURED] == {"optimizer": {"capturable": True}, "cast_cache": False}  # what the graph runs


@pytest.mark.parametrize("precision", ["fp32", "amp_bf16"])
def test_each_eager_step_trains_its_own_copy(precision):
    torch.manual_seed(0)
    model = GPT(CFG)
    before = [p.detach().clone() for p in model.parameters()]
    steps = cuda_graphs.eager_steps(model, random_batch(CFG, 2, torch.device("cpu")), precision, lr=1e-2)
    assert list(steps) == list(cuda_graphs.EAGER_STEPS)
    for name in (cuda_graphs.BASELINE, "eager, fused AdamW"):  # a capturable AdamW steps only on a GPU
        steps[name]()
    assert all(
        torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True)
    )  # the model passed in is untouched
    with pytest.raises(ValueError, match="cannot be captured whole"):
        cuda_graphs.eager_steps(model, random_batch(CFG, 2, torch.device("cpu")), "amp_fp16")


def test_graph_and_eager_steps_are_timed_in_the_same_rounds(monkeypatch):
    calls = []

    def on_the_cpu(fns, *, baseline, device, rounds):
        calls.append((list(fns), baseline, rounds))
        return timing.interleaved(fns, baseline=baseline, device="cpu", rounds=rounds, min_block_s=0.001, warmup=1)

    class OnTheCpu:  # GPT(cfg).to("cuda") without a GPU: the model stays on the CPU
        def __init__(self, cfg):
            self.model = GPT(cfg)

        def to(self, dev):
            return self.model

    monkeypatch.setattr(cuda_graphs, "check_device", lambda d: torch.device("cuda"))
    monkeypatch.setattr(cuda_graphs, "GPT", OnTheCpu)
    monkeypatch.setattr(cuda_graphs, "random_batch", lambda cfg, b, dev: random_batch(cfg, b, torch.device("cpu")))
    monkeypatch.setitem(cuda_graphs.EAGER_STEPS, AS_CAPTURED, {"optimizer": {}, "cast_cache": False})
    monkeypatch.setattr(
        cuda_graphs, "graphed_step", lambda m, b, p: cuda_graphs.eager_steps(m, b, p)[cuda_graphs.BASELINE]
    )  # stands in for replay
    monkeypatch.setattr(cuda_graphs, "interleaved", on_the_cpu)
    t = cuda_graphs.graph_comparison(CFG, 2, ("fp32", "amp_bf16"), rounds=5)
    names = [*cuda_graphs.EAGER_STEPS, cuda_graphs.GRAPH]
    assert calls == [(names, cuda_graphs.BASELINE, 5)] * 2  # one interleaved call per precision, all four in it
    assert list(t["precision"]) == ["fp32"] * 4 + ["amp_bf16"] * 4
    assert list(t["step"]) == names * 2
    base = t[t["step"] == cuda_graphs.BASELINE]
    assert (base["speedup over the default eager step"] == "1 (baseline)").all() and base["verdict"].isna().all()
    others = t[t["step"] != cuda_graphs.BASELINE]
    assert others["speedup over the default eager step"].str.contains(r"\[").all()  # an interval each
    assert others["verdict"].notna().all() and (t["median (ms)"] > 0).all()
