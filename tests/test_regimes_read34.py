"""Read 34 of the training-regimes chapter: the logged train loss and the FP16 second-moment threshold."""

import math

import torch

from amp_docs_lib.amp.precision import get_regime
from amp_docs_lib.gpt import GPT, GPTConfig
from amp_docs_lib.regimes.corpus import make_corpus
from amp_docs_lib.regimes.loop import TrainConfig, fp32_cross_entropy, train_regime

TINY_MODEL = GPTConfig(vocab_size=16, block_size=16, n_layer=1, n_head=2, n_embd=32, init_std=0.1)


def test_bf16_train_loss_is_logged_in_fp32():
    """A BF16 model's own loss is a BF16 cross-entropy; the log holds the FP32 one of the same logits."""
    corpus = make_corpus(16, 20_000, 4_000, branching=2, seed=3)
    cfg = TrainConfig(steps=1, batch_size=8, lr=3e-3, warmup=0, eval_every=1, eval_windows=16, seed=5)
    res = train_regime("bf16", corpus=corpus, config=cfg, model_cfg=TINY_MODEL, device="cpu")
    # the first step's forward, replayed as the loop sets it up: seeded init cast to BF16, seeded batch order
    torch.manual_seed(cfg.seed)
    model = GPT(TINY_MODEL).to(get_regime("bf16").param_dtype)
    x, y = corpus.batch(
        "train", cfg.batch_size, TINY_MODEL.block_size, torch.Generator().manual_seed(cfg.seed + 1), torch.device("cpu")
    )
    with torch.no_grad():
        logits, own = model(x, y)
    assert own.dtype == torch.bfloat16
    fp32 = fp32_cross_entropy(logits, y)
    assert float(own) != fp32  # BF16's 8 bits cannot hold this loss: the two arithmetics differ
    assert res.log["train_loss"].iloc[0] == fp32


def test_fp32_cross_entropy_is_the_fp32_loss():
    logits = torch.randn(4, 5, 7).to(torch.bfloat16)
    y = torch.randint(0, 7, (4, 5))
    expected = torch.nn.functional.cross_entropy(logits.double().reshape(-1, 7), y.reshape(-1))
    assert math.isclose(fp32_cross_entropy(logits, y), float(expected), rel_tol=1e-6)


def test_fp16_threshold_is_torch_adamw_not_a_double_fp16_rounding():
    """torch's AdamW keeps 0.001 g^2 nonzero from the first FP16 value above sqrt(2^-25 / 0.001) (one rounding);
    computing it as fp16(0.001) * g * g in FP16 (two roundings) gives a lower threshold."""
    from amp_docs_lib.regimes import rounding

    g = rounding.fp16_second_moment_threshold()
    analytic = math.sqrt(2.0**-25 / 1e-3)
    step_down = float(torch.tensor(g, dtype=torch.float16).view(torch.int16).sub(1).view(torch.float16))
    assert step_down < analytic < g
    every = torch.arange(1, 0x7C00, dtype=torch.int16).view(torch.float16)
    double_rounded = float(every[(torch.tensor(1e-3, dtype=torch.float16) * every * every) != 0].min())
    assert double_rounded < g  # the false variant the page used to compute


def test_master_weights_keep_weight_decay_that_bf16_loses():
    from amp_docs_lib.regimes import rounding

    wd = rounding.weight_decay_drift(steps=200, n=512)
    w = wd.set_index("weights")["norm change"]
    exact = float(wd["exact (1 - lr wd)^steps - 1"].iloc[0])
    assert w.loc["BF16, torch AdamW"] == 0.0  # the update rounds away on the BF16 weight itself
    assert math.isclose(w.loc["BF16, FP32 master weights"], exact, rel_tol=0.05)


def test_saved_for_backward_counts_the_fp32_part():
    """Under CPU autocast not every saved tensor is BF16: the FP32 part is counted (the rest of FP32 training's
    saved bytes are integer tensors: positions, targets)."""
    from amp_docs_lib.regimes import loop as tl

    cfg = tl.TrainConfig(steps=2, batch_size=2, eval_windows=2)
    saved = tl.saved_for_backward(["fp32", "amp_bf16"], config=cfg, device="cpu").set_index("regime")
    fp32, amp = saved.loc["fp32"], saved.loc["amp_bf16"]
    assert (
        0.99 * fp32["saved for backward (bytes)"] < fp32["of which FP32 (bytes)"] <= fp32["saved for backward (bytes)"]
    )
    assert (
        0 < amp["of which FP32 (bytes)"] < amp["saved for backward (bytes)"] - amp["of which parameter copies (bytes)"]
    )
