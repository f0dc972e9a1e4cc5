"""Performance reader (reads5) findings 3 and 6: the CPU MFU is against the one FP32 peak the page uses, and
autocast's saved-for-backward excess over pure BF16 is the byte count the prose accounts for."""

import pandas as pd
import pytest
import torch

from amp_docs_lib.bench import memory, model_sweep
from amp_docs_lib.gpt import GPTConfig


def test_cpu_mfu_is_against_the_pages_fp32_peak_for_every_precision():
    df = pd.DataFrame({"size": ["tiny-96"] * 2, "precision": ["fp32", "amp_bf16"], "achieved TFLOP/s": [0.0383, 0.02]})
    mfu = model_sweep.mfu_table(df, {"fp32": 0.2536}, 0.2536, "cpu")
    col = "MFU (of the page's FP32 peak)"
    assert list(mfu[col]) == pytest.approx([0.0383 / 0.2536, 0.02 / 0.2536])  # the old table left this n/a
    assert not any("estimate" in c or "range" in c for c in mfu.columns)  # no second peak divided by


@pytest.mark.parametrize("tie", [True, False])
def test_autocast_excess_over_bf16_is_the_predicted_bytes(tie):
    cfg = GPTConfig(vocab_size=64, block_size=8, n_layer=2, n_head=2, n_embd=32, tie_weights=tie)
    t = memory.comparison_table(cfg, 2, ("amp_bf16", "bf16"), device="cpu").set_index("precision")
    excess = {
        p: (t.loc[p, "saved for backward, measured (MiB)"] - t.loc[p, "saved for backward, calculated (MiB)"]) * 2**20
        for p in ("amp_bf16", "bf16")
    }
    predicted = memory.autocast_excess_over_bf16_bytes(cfg, 2)
    assert round(excess["amp_bf16"] - excess["bf16"]) == predicted
    # plausible false accounts: LayerNorm inputs alone, or without the uncopied parameters, do not match
    s, b, d, L, V = 8, 2, 32, 2, 64
    assert round(excess["amp_bf16"] - excess["bf16"]) != 2 * (2 * L + 1) * b * s * d
    assert round(excess["amp_bf16"] - excess["bf16"]) != 2 * ((2 * L + 1) * (b * s * d + b * s) + b * s * V + 1)
    assert torch.get_default_dtype() == torch.float32
