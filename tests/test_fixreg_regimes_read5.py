"""Read 5 of the training-regimes chapter: the checks behind its corrected sentences.

Each test fails when the page's sentence is false, and checks a plausible false variant fails it.
"""

import math
from dataclasses import replace

import pytest
import torch

from amp_docs_lib.amp.precision import REGIMES
from amp_docs_lib.regimes import loop as tl
from amp_docs_lib.regimes import rounding
from amp_docs_lib.regimes.optimizers import optimizer_state_bytes

TORCH, OPTIMI = "torch.optim.AdamW", "optimi.AdamW (kahan_sum=False)"


def _kept(table, optimizer, dtype):
    return float(table.set_index(["optimizer", "parameters"]).loc[(optimizer, dtype), "v after / v before"])


@pytest.fixture(scope="module")
def hot_runs():
    """The page's 100x learning rate in FP32, AMP BF16 and AMP FP16, activations watched."""
    corpus, cfg = tl.corpus_from_profile(), tl.TrainConfig.from_profile()
    hot = REGIMES["amp_fp16_overflow"].lr_scale
    runs = {
        base: tl.train_regime(
            replace(REGIMES[base], lr_scale=hot), corpus=corpus, config=cfg, device="cpu", watch_activations=True
        )
        for base in ("fp32", "amp_bf16", "amp_fp16")
    }
    return runs, cfg


FP16_MAX = torch.finfo(torch.float16).max


def _first_above(res, limit=FP16_MAX):
    per_step = res.extra["activation_max"].groupby("step")["max abs"].max()
    return int(per_step[per_step > limit].index.min()) if (per_step > limit).any() else None


@pytest.mark.slow  # the module's training runs (hot_runs, ~6 s)
def test_finding1_the_learning_rate_fails_everywhere_fp16_turns_it_into_inf(hot_runs):
    """FP32 and AMP BF16 at the overflow run's learning rate stay finite, learn nothing, pass 65504."""
    runs, cfg = hot_runs
    bigram = tl.corpus_from_profile().describe()["bigram floor H(X|prev)"]
    for base in ("fp32", "amp_bf16"):
        r = runs[base]
        assert r.status == "ok" and len(r.log) == cfg.steps
        assert r.log["train_loss"].map(math.isfinite).all() and math.isfinite(r.final_val_loss)
        assert r.final_val_loss > bigram  # not even the previous token learned: the rate fails the run
        assert _first_above(r) is not None  # a range FP16 cannot hold, reached without diverging
    fp16 = runs["amp_fp16"]
    assert fp16.diverged_at is not None and "stopped" in fp16.status
    assert abs(fp16.diverged_at - _first_above(runs["fp32"])) <= 1


@pytest.mark.slow  # the module's training runs (hot_runs, ~6 s)
def test_finding9_overflow_run_stops_after_patience_nonfinite_steps(hot_runs):
    runs, cfg = hot_runs
    fp16 = runs["amp_fp16"]
    after = fp16.log.iloc[fp16.diverged_at :]
    assert len(after) == cfg.nonfinite_patience  # stopped after that many non-finite steps, counted from the first
    assert not after["train_loss"].map(math.isfinite).any()


def test_finding4_torch_adamw_bf16_v_decays_with_short_beta2():
    """Through torch's AdamW (two roundings per step), not a cast: decays at 0.95, ratchets at 0.999."""
    fast = rounding.optimizer_second_moment_decay(beta2=0.95)
    ema = float(fast["EMA prediction"].iloc[0])
    assert math.isclose(_kept(fast, TORCH, "bfloat16"), ema, rel_tol=0.05)
    slow = rounding.optimizer_second_moment_decay(beta2=0.999)
    assert _kept(slow, TORCH, "bfloat16") == 1.0  # the false variant: the same check fails at 0.999
    assert not math.isclose(1.0, float(slow["EMA prediction"].iloc[0]), rel_tol=0.05)


def test_finding2_torch_and_optimi_take_the_same_fp32_steps():
    """torch's stored v over 1 - beta2^t decays as optimi's stored v: the same denominator."""
    t = rounding.optimizer_second_moment_decay(warm=100, quiet=100)
    b2 = 0.999
    torch_divided = _kept(t, TORCH, "float32") * (1 - b2**100) / (1 - b2**200)
    assert math.isclose(torch_divided, _kept(t, OPTIMI, "float32"), rel_tol=1e-4)
    # the stored values differ (the page's other claim): comparing stored tensors would not find this
    assert not math.isclose(_kept(t, TORCH, "float32"), _kept(t, OPTIMI, "float32"), rel_tol=0.1)


def test_finding3_optimi_bf16_v_decays_early_only():
    early = rounding.optimizer_second_moment_decay(warm=100, quiet=100, n=1024)
    late = rounding.optimizer_second_moment_decay(warm=1000, quiet=100, n=1024)
    debiased_early = float(early["bias-corrected prediction"].iloc[0])
    debiased_late = float(late["bias-corrected prediction"].iloc[0])
    assert math.isclose(_kept(early, OPTIMI, "bfloat16"), debiased_early, rel_tol=0.10)
    assert _kept(late, OPTIMI, "bfloat16") > 0.99 > debiased_late  # ratchets, like torch's
    assert math.isclose(_kept(late, OPTIMI, "float32"), debiased_late, rel_tol=1e-4)


def test_finding5_adamw_keeps_two_fp32_moments_per_parameter():
    """8 bytes of state per FP32 parameter; AMSGrad's third buffer (a plausible false variant) makes 12."""
    p = torch.nn.Parameter(torch.randn(1000))
    for amsgrad, expected in ((False, 8.0), (True, 12.0)):
        opt = torch.optim.AdamW([p], lr=1e-3, amsgrad=amsgrad, foreach=False)
        p.grad = torch.randn(1000)
        opt.step()
        assert optimizer_state_bytes(opt) / p.numel() == expected


def test_finding7_stochastic_rounding_favours_the_nearer_neighbour():
    """torchao rounds up with probability (x - down) / (up - down): a quarter of the way up, a quarter up."""
    from torchao.optim.quant_utils import _fp32_to_bf16_sr

    down = torch.tensor(1.0)
    up = torch.nextafter(down.to(torch.bfloat16), torch.tensor(2.0, dtype=torch.bfloat16)).float()
    x = torch.full((200_000,), float(down + 0.25 * (up - down)))
    torch.manual_seed(0)
    share_up = float((_fp32_to_bf16_sr(x).float() == up).float().mean())
    assert abs(share_up - 0.25) < 0.01
    assert abs(share_up - 0.75) > 0.4  # "proportional to its distance" from the target neighbour would give 0.75
