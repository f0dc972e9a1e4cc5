"""What the optimizers on the training-regimes page store (review 2026-11-24, findings 1-2), and the
harness-timed step speed (no timing is asserted, only what the verdict is drawn from)."""

import math

import pytest
import torch

from amp_docs_lib.regimes import rounding


@pytest.fixture(scope="module")
def decay():
    return rounding.optimizer_second_moment_decay(warm=50, quiet=50, n=512).set_index(["optimizer", "parameters"])


def test_torchao_stochastic_rounding_leaves_bf16_moments_round_to_nearest(decay):
    """The page credited torchao's bf16_stochastic_round with decaying BF16 moments; its v ratchets."""
    row = decay.loc[("torchao _AdamW(bf16_stochastic_round=True)", "bfloat16")]
    assert row["moments stored as"] == "bfloat16"
    assert row["v after / v before"] == 1.0  # stochastic rounding of v would give about beta2**50 = 0.95


def test_optimi_stores_bias_corrected_moments(decay):
    """The docstring said optimi's AdamW is torch's with other defaults; its v follows the debiased average."""
    beta2, warm, quiet = 0.999, 50, 50
    debiased = beta2**quiet * (1 - beta2**warm) / (1 - beta2 ** (warm + quiet))
    assert decay.loc[("optimi.AdamW (kahan_sum=False)", "float32"), "v after / v before"] == pytest.approx(
        debiased, rel=1e-4
    )
    assert decay.loc[("torch.optim.AdamW", "float32"), "v after / v before"] == pytest.approx(beta2**quiet, rel=1e-4)
    # stored in BF16, optimi's v still decays; torch's ratchets
    assert decay.loc[("optimi.AdamW (kahan_sum=False)", "bfloat16"), "v after / v before"] == pytest.approx(
        debiased, rel=0.1
    )
    assert decay.loc[("torch.optim.AdamW", "bfloat16"), "v after / v before"] == 1.0


def test_optimizer_decay_rejects_bad_sizes():
    with pytest.raises(ValueError, match="quiet"):
        rounding.optimizer_second_moment_decay(quiet=0)


def test_step_speed_verdicts_come_from_the_harness():
    from amp_docs_lib.core import timing
    from amp_docs_lib.core.timing import Comparison
    from amp_docs_lib.regimes import loop as tl

    cfg = tl.TrainConfig(steps=2, batch_size=2, eval_windows=2)
    speed = tl.step_speed(["fp32", "amp_bf16"], config=cfg, device="cpu", rounds=5).set_index("regime")
    assert speed.loc["fp32", "verdict"] is None and speed.loc["fp32", "speed vs fp32 (x)"] is None
    verdicts = {
        Comparison(None, None, r, lo, hi, 5, 0.9).verdict for r, lo, hi in ((1, 1.1, 1.2), (1, 0.8, 0.9), (1, 0.9, 1.1))
    }
    # the harness's own verdict on a noisy machine is drawn from it too (its A/A control resolved a difference)
    assert speed.loc["amp_bf16", "verdict"] in verdicts | {timing.NOISE_FLOOR_TOO_HIGH}
    lo, hi = (float(v) for v in speed.loc["amp_bf16", "interval"].strip("[]").split(","))
    # the interval is printed to two decimals, so the estimate is compared at that precision
    assert lo <= round(speed.loc["amp_bf16", "speed vs fp32 (x)"], 2) <= hi and math.isfinite(hi)
    with pytest.raises(ValueError, match="baseline"):
        tl.step_speed(["amp_bf16"], config=cfg, device="cpu")


def test_torch_adamw_rounds_bf16_second_moments_twice():
    """The page modelled torch's AdamW with one rounding; its in-place mul_ then addcmul_ rounds twice."""
    ch = rounding.second_moment_changes(ratios=(0.0, 1.0, 2.0, 3.0)).set_index("g^2 / v")
    torch_col = ch["entries changed, torch.optim.AdamW"]
    assert torch_col.loc[0.0] == torch_col.loc[1.0] == 0.0  # cannot move down either
    assert torch_col.loc[2.0] > ch.loc[2.0, "entries changed"] == 0.0
    assert torch_col.loc[3.0] > ch.loc[3.0, "entries changed"]


def test_autocast_saves_a_bf16_copy_of_every_linear_weight():
    from amp_docs_lib.gpt import GPT
    from amp_docs_lib.regimes import loop as tl

    cfg = tl.TrainConfig(steps=2, batch_size=2, eval_windows=2)
    saved = tl.saved_for_backward(["fp32", "amp_bf16"], config=cfg, device="cpu").set_index("regime")
    linear = sum(
        {
            id(m.weight): m.weight.numel() for m in GPT(tl.model_config()).modules() if isinstance(m, torch.nn.Linear)
        }.values()
    )
    assert saved.loc["amp_bf16", "of which parameter copies (bytes)"] == 2 * linear
    assert saved.loc["fp32", "of which parameter copies (bytes)"] == 0
    assert saved.loc["amp_bf16", "saved for backward (bytes)"] < saved.loc["fp32", "saved for backward (bytes)"]
