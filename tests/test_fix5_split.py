"""The binary_cross_entropy back-off table names each p as asked and as FP16 holds it (issue 36, reread 2)."""

import torch


def test_bce_backoff_lists_p_as_asked_and_as_held_in_fp16():
    from amp_docs_lib.amp.grad_scaler import bce_scaled_backoff

    df = bce_scaled_backoff(probabilities=(0.5, 0.1), batch=4, init_scale=2.0**16)
    # the sentence under the table lists "p"; the loss sees its FP16 value (0.1 is not exact in FP16)
    assert df["p"].tolist() == [0.5, 0.1]
    assert df["p in FP16"].tolist() == [float(torch.tensor(p, dtype=torch.float16)) for p in (0.5, 0.1)]
    assert df["p in FP16"].iloc[1] != 0.1
