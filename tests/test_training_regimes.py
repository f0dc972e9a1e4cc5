"""Training regimes: corpus entropies, regime registry, optimizer recipes, the loop, the example."""

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import torch

from amp_docs_lib.regimes.corpus import MarkovSource, make_corpus
from amp_docs_lib.gpt import GPTConfig
from amp_docs_lib.regimes.optimizers import MasterWeights, RoundedStateAdamW, kahan_adamw, optimizer_state_bytes
from amp_docs_lib.amp.precision import REGIMES, get_regime, regimes_for
from amp_docs_lib.regimes.optimizers import make_optimizer
from amp_docs_lib.regimes.loop import (TrainConfig, allocator_check, naive_fp16_first_step, replay_scale,
                                     summary_table, train_regime)

TINY_MODEL = GPTConfig(vocab_size=16, block_size=16, n_layer=1, n_head=2, n_embd=32, init_std=0.1)
CPU_REGIMES = regimes_for("cpu")


@pytest.fixture(scope="module")
def corpus():
    return make_corpus(16, 20_000, 4_000, branching=2, seed=3)


def tiny_config(steps=6, **kw):
    return TrainConfig(steps=steps, batch_size=8, lr=3e-3, warmup=2, eval_every=3, eval_windows=16, **kw)


# ---- corpus -------------------------------------------------------------------------------------

def test_source_entropies_are_ordered_and_stationary():
    src = MarkovSource(vocab_size=8, branching=2, seed=1)
    pi = src.stationary()
    assert math.isclose(pi.sum(), 1.0, rel_tol=1e-12)
    np.testing.assert_allclose(np.einsum("ab,abc->bc", pi, src.probs), pi, atol=1e-12)
    assert 0 < src.entropy_rate < src.bigram_entropy < math.log(8)
    T = 16
    assert math.isclose(src.window_floor(T), (src.bigram_entropy + (T - 1) * src.entropy_rate) / T)


def test_oracle_loss_matches_the_computed_floor(corpus):
    x, y = corpus.val_windows(32, 100)
    # the source's own loss on an independent sample estimates the exact floor
    assert corpus.oracle_loss(x, y) == pytest.approx(corpus.source.window_floor(32), rel=0.05)


def test_sampler_follows_the_source(corpus):
    toks = corpus.train.numpy()
    src = corpus.source
    # mean -log p of the sampled stream estimates the exact entropy rate (law of large numbers)
    nll = -np.log(src.probs[toks[:-2], toks[1:-1], toks[2:]]).mean()
    assert nll == pytest.approx(src.entropy_rate, rel=0.05)
    # the most frequent context's empirical next-token frequencies match its row of probs
    ctx = np.bincount(toks[:-2] * src.vocab_size + toks[1:-1]).argmax()
    a, b = divmod(int(ctx), src.vocab_size)
    nxt = toks[2:][(toks[:-2] == a) & (toks[1:-1] == b)]
    freq = np.bincount(nxt, minlength=src.vocab_size) / len(nxt)
    assert np.abs(freq - src.probs[a, b]).max() < 0.1


def test_corpus_is_seeded_and_splits_differ():
    a, b = make_corpus(16, 3000, 1000, seed=5), make_corpus(16, 3000, 1000, seed=5)
    assert torch.equal(a.train, b.train) and torch.equal(a.val, b.val)
    assert not torch.equal(a.train[:1000], a.val)


def test_corpus_bad_input():
    with pytest.raises(ValueError, match="branching"):
        MarkovSource(vocab_size=4, branching=5)
    with pytest.raises(ValueError, match="noise"):
        MarkovSource(noise=0)
    with pytest.raises(ValueError, match="valid splits"):
        make_corpus(8, 1000, 500).batch("test", 2, 4, torch.Generator())


# ---- the regime registry --------------------------------------------------------------------------

def test_unknown_regime_lists_valid_names():
    with pytest.raises(ValueError) as e:
        get_regime("fp8")
    assert "fp8" in str(e.value) and all(n in str(e.value) for n in REGIMES)
    with pytest.raises(TypeError):
        get_regime(torch.float16)


def test_tf32_is_cuda_only():
    assert "tf32" not in CPU_REGIMES and "tf32" in regimes_for("cuda")
    with pytest.raises(ValueError, match="tf32"):
        REGIMES["tf32"].setup("cpu")


@pytest.mark.parametrize("name", CPU_REGIMES)
def test_regime_setup_and_optimizer(name):
    r = get_regime(name)
    s = r.setup("cpu")
    assert s.param_dtype == r.param_dtype and s.autocast_dtype == r.autocast_dtype
    assert s.uses_scaler == r.scaler
    p = [torch.nn.Parameter(torch.ones(4, dtype=r.param_dtype))]
    opt = make_optimizer(r, p, 1e-3)
    assert opt.param_groups[0]["lr"] == pytest.approx(1e-3 * r.lr_scale)


# ---- optimizer recipes -------------------------------------------------------------------------------

def _steps(opt, params, grads):
    for g in grads:
        for p in params:
            p.grad = g.to(p.dtype).clone()
        opt.step()


def test_master_weights_fp32_equals_adamw():
    torch.manual_seed(0)
    grads = [torch.randn(10) for _ in range(5)]
    a = [torch.nn.Parameter(torch.ones(10))]
    b = [torch.nn.Parameter(torch.ones(10))]
    _steps(torch.optim.AdamW(a, lr=1e-2, foreach=False), a, grads)
    mw = MasterWeights(b, lambda m: torch.optim.AdamW(m, lr=1e-2, foreach=False))
    _steps(mw, b, grads)
    assert torch.equal(a[0], b[0])
    assert optimizer_state_bytes(mw) == 10 * 4 * 3  # master + two moments, FP32


def test_bf16_loses_small_updates_master_and_kahan_keep_them():
    grads = [torch.ones(8)] * 50  # Adam's normalised update is lr each step
    lr = 1e-4  # far below half the spacing of BF16 at 1.0 (2**-8)
    plain = [torch.nn.Parameter(torch.ones(8, dtype=torch.bfloat16))]
    _steps(torch.optim.AdamW(plain, lr=lr, weight_decay=0.0, foreach=False), plain, grads)
    master = [torch.nn.Parameter(torch.ones(8, dtype=torch.bfloat16))]
    mw = MasterWeights(master, lambda m: torch.optim.AdamW(m, lr=lr, weight_decay=0.0, foreach=False))
    _steps(mw, master, grads)
    kahan = [torch.nn.Parameter(torch.ones(8, dtype=torch.bfloat16))]
    _steps(kahan_adamw(kahan, lr=lr), kahan, grads)
    assert (plain[0] == 1).all()  # every update rounded away
    expected = 1 - 50 * lr
    assert mw.masters[0].float().mean().item() == pytest.approx(expected, rel=1e-6)
    # the model's BF16 weights are the masters rounded; Kahan's weights + compensation track the sum
    assert master[0].float().mean().item() == pytest.approx(expected, abs=2**-8)
    assert master[0].float().mean().item() < 1 and kahan[0].float().mean().item() < 1


def test_rounded_state_adamw():
    torch.manual_seed(0)
    grads = [torch.randn(32) for _ in range(5)]
    a = [torch.nn.Parameter(torch.zeros(32))]
    b = [torch.nn.Parameter(torch.zeros(32))]
    _steps(torch.optim.AdamW(a, lr=1e-2, foreach=False), a, grads)
    _steps(RoundedStateAdamW(b, lr=1e-2, state_dtype=torch.float32), b, grads)
    assert torch.equal(a[0], b[0])
    c = [torch.nn.Parameter(torch.zeros(32))]
    opt = RoundedStateAdamW(c, lr=1e-2)
    _steps(opt, c, grads)
    v = opt.state[c[0]]["exp_avg_sq"]
    assert torch.equal(v, v.to(torch.bfloat16).float())  # every moment is a BF16 value
    with pytest.raises(TypeError, match="state_dtype"):
        RoundedStateAdamW(c, lr=1e-2, state_dtype="bf16")


# ---- the loop ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["fp32", "bf16_master", "bf16_kahan", "bf16_optimi", "bf16_sr"])
def test_the_allocator_holds_what_the_tensors_count(name, corpus):
    a = allocator_check(name, corpus=corpus, config=tiny_config(), model_cfg=TINY_MODEL, device="cpu")
    assert a["allocated"] - a["buffers"] == a["counted"] > 0
    fp32_state = 16 * a["parameters"]  # weight, gradient, two moments
    if name in ("fp32", "bf16_master"):  # plus step counters: a few bytes per tensor
        assert fp32_state < a["counted"] < fp32_state + 64 * 8


def test_the_allocator_check_sees_what_the_count_misses(corpus, monkeypatch):
    """False variant: masters' FP32 gradients kept after the step (a leak no tensor count names)."""
    kept = []
    real_step = MasterWeights.step

    def leaky_step(self):
        real_step(self)
        kept.append([m.detach().clone() for m in self.masters])  # held by nobody the count sees

    monkeypatch.setattr(MasterWeights, "step", leaky_step)
    a = allocator_check("bf16_master", corpus=corpus, config=tiny_config(), model_cfg=TINY_MODEL, device="cpu")
    assert a["allocated"] - a["buffers"] - a["counted"] == 4 * a["parameters"]

@pytest.mark.parametrize("name", CPU_REGIMES)
def test_each_cpu_regime_runs_and_reports(name, corpus):
    r = get_regime(name)
    res = train_regime(name, corpus=corpus, config=tiny_config(), model_cfg=TINY_MODEL, device="cpu")
    assert set(res.log.columns) >= {"step", "train_loss", "grad_norm", "step_time_s", "tokens_per_s",
                                    "peak_mem_mb", "scale", "skipped"}
    assert res.log["peak_mem_mb"].isna().all()  # no CUDA memory on a CPU
    if name == "fp16":  # naive FP16 + AdamW: eps and (1-beta2)*g^2 flush to zero, the update divides by 0
        assert "non-finite" in res.status and res.diverged_at is not None
        assert not math.isfinite(res.log["train_loss"].iloc[-1])
        assert not math.isfinite(res.final_val_loss)  # evaluated at the step it stopped
    elif r.expect_finite:
        assert res.status.startswith("ok"), res.status
        assert np.isfinite(res.log["train_loss"]).all() and np.isfinite(res.val["val_loss"]).all()
        assert len(res.log) == 6 and list(res.val["step"]) == [2, 5]
    if r.scaler:
        assert res.log["scale"].notna().all()
    else:
        assert res.log["scale"].isna().all() and res.log["skipped"].isna().all()


def test_overflow_regime_skips_steps_and_backs_off(corpus):
    res = train_regime("amp_fp16_overflow", corpus=corpus, config=tiny_config(steps=80, nonfinite_patience=10),
                       model_cfg=TINY_MODEL, device="cpu")
    assert res.log["skipped"].sum() >= 1
    assert res.log["scale"].iloc[-1] < 2.0**16
    assert res.log["scale"].tolist() == replay_scale(res.log)
    assert "non-finite" in res.status or "skipped" in res.status


def test_runs_are_seeded(corpus):
    a = train_regime("amp_bf16", corpus=corpus, config=tiny_config(), model_cfg=TINY_MODEL, device="cpu")
    b = train_regime("amp_bf16", corpus=corpus, config=tiny_config(), model_cfg=TINY_MODEL, device="cpu")
    assert a.log["train_loss"].tolist() == b.log["train_loss"].tolist()
    assert a.val["val_loss"].tolist() == b.val["val_loss"].tolist()


def test_summary_table(corpus):
    res = {n: train_regime(n, corpus=corpus, config=tiny_config(steps=3), model_cfg=TINY_MODEL, device="cpu")
           for n in ("fp32", "fp16", "amp_fp16")}
    t = summary_table(res).set_index("regime")
    assert t.loc["fp32", "speed vs fp32"] == 1.0
    assert t.loc["fp32", "peak CUDA mem (MiB)"] is None and t.loc["fp32", "mem vs fp32"] is None
    assert t.loc["fp16", "diverged at step"] == 1 and math.isnan(t.loc["fp16", "final val loss"])
    assert t.loc["amp_fp16", "skipped steps"] == 0 and pd.isna(t.loc["fp32", "skipped steps"])
    with pytest.raises(ValueError):
        summary_table({})


def test_naive_fp16_diagnosis(corpus):
    d = naive_fp16_first_step(corpus, tiny_config(), TINY_MODEL)
    assert d["eps in fp16"] == 0.0
    assert d["parameters non-finite"] > 0 and d["non-finite exactly where second moment is zero"]


def test_train_config_validation():
    with pytest.raises(ValueError, match="steps"):
        TrainConfig(steps=0)
    with pytest.raises(ValueError, match="lr"):
        TrainConfig(lr=-1.0)
    c = TrainConfig(steps=100, lr=1.0, warmup=10, min_lr_ratio=0.0)
    assert c.lr_at(9) == 1.0 and c.lr_at(99) == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match="init_std"):
        GPTConfig(init_std=0)
    assert GPTConfig().init_std == 0.02


# ---- the example ----------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("name", CPU_REGIMES)
def test_example_each_cpu_regime(name):
    from amp_docs_lib.page.snippets import run_snippet

    out = run_snippet("train_gpt_precision.py", ["--precision", name, "--steps", "3"]).output
    assert f"{name} on cpu: status:" in out
    if name == "fp16":
        assert "non-finite loss" in out and "final val loss nan" in out
    elif REGIMES[name].expect_finite:
        assert "status: ok" in out and "nan" not in out.lower()


@pytest.mark.parametrize("argv", [["--precision", "fp8"], ["--precision", "tf32", "--device", "cpu"],
                                  ["--steps", "0"]])
def test_example_rejects_bad_values(argv, capsys):
    from amp_docs_lib.page.snippets import run_snippet

    with pytest.raises(SystemExit):
        run_snippet("train_gpt_precision.py", argv)
    err = capsys.readouterr().err
    assert "amp_bf16" in err or "--steps" in err


# ---- rounding experiments, stochastic rounding, memory with gradients ---------------------------------------

def test_bf16_second_moment_ratchets_and_the_test_can_fail():
    from amp_docs_lib.regimes import rounding

    ch = rounding.second_moment_changes(ratios=(0.0, 1.0, 2.0, 5.0)).set_index("g^2 / v")["entries changed"]
    assert ch.loc[0.0] == ch.loc[1.0] == ch.loc[2.0] == 0.0 and ch.loc[5.0] == 1.0
    # a false variant: with beta2 = 0.95 the same updates do move the stored value
    fast = rounding.second_moment_changes(ratios=(0.0,), beta2=0.95).set_index("g^2 / v")["entries changed"]
    assert fast.loc[0.0] > 0.9
    d = rounding.second_moment_decay(steps=200, n=16).set_index("storage")["v after / v before"]
    assert d.loc["BF16, round to nearest"] == 1.0
    assert d.loc["FP32"] == pytest.approx(0.999**200, rel=1e-4)
    assert d.loc["BF16, stochastic rounding of v (written here)"] == pytest.approx(0.999**200, rel=0.05)
    with pytest.raises(ValueError, match="beta2"):
        rounding.second_moment_changes(beta2=1.0)


def test_weight_decay_vanishes_in_bf16_but_not_with_stochastic_rounding():
    from amp_docs_lib.regimes import rounding

    w = rounding.weight_decay_drift(steps=100, n=256).set_index("weights")["norm change"]
    exact = (1 - 3e-4 * 0.1) ** 100 - 1
    assert w.loc["FP32, torch AdamW"] == pytest.approx(exact, rel=0.01)
    assert w.loc["BF16, torch AdamW"] == 0.0 and w.loc["BF16, Kahan summation (optimi)"] == 0.0
    assert w.loc["BF16, stochastic rounding (torchao)"] == pytest.approx(exact, rel=0.25)


def test_fp16_second_moment_threshold_is_the_first_nonzero_value():
    from amp_docs_lib.regimes import rounding

    def v(x: float) -> float:  # torch's AdamW, one step on a one-element FP16 parameter
        p = torch.nn.Parameter(torch.zeros(1, dtype=torch.float16))
        opt = torch.optim.AdamW([p], lr=1e-3, weight_decay=0.0, foreach=False)
        p.grad = torch.tensor([x], dtype=torch.float16)
        opt.step()
        return float(opt.state[p]["exp_avg_sq"][0])

    g = rounding.fp16_second_moment_threshold()
    below = float(torch.tensor(g, dtype=torch.float16).view(torch.int16).sub(1).view(torch.float16))
    assert v(g) != 0 and v(below) == 0 and 5e-3 < g < 6e-3


def test_stochastic_round_adamw_keeps_small_updates_on_average():
    from amp_docs_lib.regimes.optimizers import stochastic_round_adamw

    torch.manual_seed(0)
    lr = 1e-4
    p = [torch.nn.Parameter(torch.ones(4096, dtype=torch.bfloat16))]
    _steps(stochastic_round_adamw(p, lr=lr), p, [torch.ones(4096)] * 50)
    assert p[0].float().mean().item() == pytest.approx(1 - 50 * lr, abs=2e-4)  # plain BF16 stays at 1.0


def test_master_weights_free_their_gradients_and_memory_counts_gradients():
    from amp_docs_lib.regimes.optimizers import gradient_bytes

    b = [torch.nn.Parameter(torch.ones(10, dtype=torch.bfloat16))]
    mw = MasterWeights(b, lambda m: torch.optim.AdamW(m, lr=1e-2, foreach=False))
    _steps(mw, b, [torch.ones(10)])
    assert all(m.grad is None for m in mw.masters)
    assert gradient_bytes(b, mw) == 10 * 2  # the BF16 gradient only


def test_loop_keeps_the_first_nonfinite_step_and_activation_maxima(corpus):
    res = train_regime("amp_fp16_overflow", corpus=corpus, config=replace(tiny_config(steps=60, nonfinite_patience=3), lr=0.05),
                       model_cfg=TINY_MODEL, device="cpu", watch_activations=True)
    snap = res.extra["first_nonfinite"]
    assert snap["step"] == res.diverged_at and snap["x"].dtype == torch.int64
    acts = res.extra["activation_max"]
    assert set(acts["step"]) == set(res.log["step"])  # training forwards only, not evaluation
    assert (acts[acts["step"] == snap["step"]]["max abs"] == float("inf")).any()


def test_smoothing_stops_at_the_first_nonfinite_value():
    import pandas as pd

    from amp_docs_lib.regimes.plots import _smooth

    s = _smooth(pd.Series([1.0, 2.0, float("nan"), 1.0, 1.0]), 3)
    assert s.iloc[:2].notna().all() and s.iloc[2:].isna().all()
