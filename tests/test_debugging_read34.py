"""Debugging page, independent read 34."""

import torch

from amp_docs_lib.debugging import models


def test_offset_layer_rounds_negative_outputs_to_1_and_non_negative_ones_to_2():
    """Read 34, debugging finding 1: "every output is rounded to a multiple of 2" is false for negative outputs,
    whose sum with 2048 lies in [1024, 2048), where FP16's spacing is 1."""
    model = models.CancellationMLP(32, 6, hot_layer=3)
    x, _ = models.make_inputs(32, 32)
    out = models.hot_layer_outputs(model, x, torch.float16)
    fp16 = out[torch.float16]
    assert (fp16[fp16 >= 0] % 2 == 0).all()
    assert (fp16[fp16 < 0] % 1 == 0).all()
    assert not (fp16 % 2 == 0).all()  # the old sentence ("every output a multiple of 2") is false here
    assert (out[torch.float32] % 1 != 0).any()  # FP32 keeps the fraction


def test_fp16_overflow_threshold_is_where_a_cast_turns_inf():
    """Read 34, debugging finding 10: 65504 is FP16's largest finite value; values round to inf from 65520."""
    import math

    from amp_docs_lib.debugging import stats

    t = stats.overflow_threshold(torch.float16)
    assert t == 65520
    assert math.isinf(torch.tensor(t).half().item())
    below = torch.nextafter(torch.tensor(t), torch.tensor(0.0))  # float32: a float64 goes to FP16 via FP32
    assert torch.isfinite(below.half()).item()  # just below it still rounds to 65504
    assert math.isinf(torch.tensor(stats.overflow_threshold(torch.bfloat16)).bfloat16().item())
