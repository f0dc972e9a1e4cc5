"""Second expert read of the training-regimes chapter: the checks behind its corrected sentences.

Each test fails when the page's sentence is false, and checks that a plausible false variant fails it.
"""

import math

import numpy as np
import pytest

from amp_docs_lib.gpt import GPT, GPTConfig
from amp_docs_lib.regimes import loop as tl
from amp_docs_lib.regimes import optimizers, rounding
from amp_docs_lib.regimes.corpus import make_corpus

SINGLE = "entries changed, torch.optim.AdamW"
FUSED = "entries changed, torch.optim.AdamW(fused=True)"


@pytest.fixture(scope="module")
def changes():
    return rounding.second_moment_changes().set_index("g^2 / v")


def test_fused_adamw_rounds_once_single_tensor_twice(changes):
    # finding 1: the fused path moves v no sooner than one rounding; the single-tensor path does
    one = changes["entries changed"]
    assert changes.loc[[0.0, 0.5, 1.0, 2.0], FUSED].max() == 0
    assert abs(changes.loc[3.0, FUSED] - one.loc[3.0]) < 0.02
    assert changes.loc[2.0, SINGLE] > 0.01 and changes.loc[3.0, SINGLE] > 10 * changes.loc[3.0, FUSED]


def test_fused_column_is_not_the_single_tensor_path():
    # the false variant: measuring the fused column with foreach=False gives the two-rounding numbers
    v = rounding._v_grid()
    fused = rounding._torch_adamw_changes(v, 3.0, 0.999, fused=True)
    single = rounding._torch_adamw_changes(v, 3.0, 0.999)
    assert single > 0.5 and fused < 0.05


def test_fp32_torch_and_optimi_take_the_same_steps():
    # finding 2: the parameters themselves are compared
    assert rounding.fp32_step_agreement() < 1e-4


def test_fp32_step_agreement_sees_a_different_step(monkeypatch):
    # false variant: optimi stepping with a 1% larger learning rate must be seen
    real = optimizers.plain_optimi_adamw
    monkeypatch.setattr(optimizers, "plain_optimi_adamw", lambda ps, lr, **kw: real(ps, lr * 1.01, **kw))
    assert rounding.fp32_step_agreement() > 1e-3


def test_fp32_step_agreement_rejects_bad_sizes():
    with pytest.raises(ValueError):
        rounding.fp32_step_agreement(warm=0)


def test_unigram_entropy_matches_the_generated_tokens():
    # finding 3: the reference the 100x-lr runs are compared with. A source with more noise mixes fast
    # enough for 300k tokens to pin its unigram entropy (the page's noise-0.02 source mixes slowly)
    c = make_corpus(16, 300_000, 1_000, branching=2, noise=0.1, seed=3)
    counts = np.bincount(c.train.numpy(), minlength=16) / len(c.train)
    empirical = float(-(counts * np.log(counts)).sum())
    assert abs(c.source.unigram_entropy - empirical) < 0.01
    # false variants: the uniform guess and the bigram floor are both far from it
    assert math.log(16) - empirical > 0.05 and empirical - c.source.bigram_entropy > 0.05


def test_profile_unigram_entropy_is_the_reported_reference():
    assert abs(tl.corpus_from_profile().source.unigram_entropy - 2.7347) < 1e-3


def test_optimizer_state_column_is_mebibytes():
    # finding 9: the column is bytes / 2**20 and says MiB; bf16_master's state counts its FP32 masters
    c = make_corpus(16, 20_000, 4_000, branching=2, seed=3)
    model = GPTConfig(vocab_size=16, block_size=16, n_layer=1, n_head=2, n_embd=32, init_std=0.1)
    cfg = tl.TrainConfig(steps=2, batch_size=8, lr=3e-3, warmup=1, eval_every=2, eval_windows=8)
    res = {n: tl.train_regime(n, corpus=c, config=cfg, model_cfg=model, device="cpu") for n in ("fp32", "bf16_master")}
    t = tl.summary_table(res).set_index("regime")
    assert "optimizer state (MB)" not in t.columns
    assert t.loc["fp32", "optimizer state (MiB)"] == res["fp32"].state_bytes / 2**20
    n_params = sum(p.numel() for p in GPT(model).parameters())
    assert res["fp32"].state_bytes == 8 * n_params
    assert res["bf16_master"].state_bytes == 12 * n_params
