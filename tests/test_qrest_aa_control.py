"""Issue 34 finding 25 (part): the quantization sweep carries an A/A control in its interleaved rounds, reported
with its interval, left out of the crossovers, and read by the page's verdict on the sweep's noise."""

from functools import partial

import pandas as pd
import pytest

from amp_docs_lib.core.timing import interleaved
from amp_docs_lib.quantization import ptq, speed

TIMER = partial(interleaved, rounds=5, min_block_s=0.001, warmup=1)
AA = "FP32" + speed.AA_SUFFIX


def test_the_sweep_times_the_float_layer_against_itself():
    bs = speed.batch_sweep(32, 32, [1, 4], TIMER, names=("int8_wo",), reference=False)
    aa = bs[bs["variant"] == AA]
    assert list(aa["batch"]) == [1, 4]
    assert (aa["interval low"].astype(float) <= aa["speedup vs FP32 (x)"].astype(float)).all()
    assert (aa["speedup vs FP32 (x)"].astype(float) <= aa["interval high"].astype(float)).all()
    assert AA not in set(speed.crossovers(bs)["variant"])  # a control, not a variant
    summary = speed.aa_summary(bs)
    assert summary["intervals"].startswith("batch 1: [") and "batch 4: [" in summary["intervals"]
    assert summary["resolved at batch"] == [
        b for b, v in zip(aa["batch"], aa["verdict"], strict=True) if v in ("faster", "slower")
    ]
    no_control = speed.batch_sweep(32, 32, [1], TIMER, names=("int8_wo",), reference=False, aa_control=False)
    assert AA not in set(no_control["variant"])


def _row(b, v, verdict, lo, hi):
    return {
        "batch": b,
        "variant": v,
        "speedup vs FP32 (x)": (lo + hi) / 2,
        "interval low": lo,
        "interval high": hi,
        "verdict": verdict,
    }


def test_an_aa_control_that_resolves_a_difference_is_reported():
    label = ptq.VARIANTS["int8_wo"].label
    df = pd.DataFrame(
        [
            _row(1, AA, "no difference resolved", 0.97, 1.04),
            _row(8, AA, "slower", 0.80, 0.95),
            _row(1, label, "faster", 1.2, 1.4),
            _row(8, label, "faster", 1.1, 1.3),
        ]
    )
    assert speed.aa_summary(df) == {
        "intervals": "batch 1: [0.97, 1.04], batch 8: [0.80, 0.95]",
        "resolved at batch": [8],
    }
    with pytest.raises(ValueError, match="no A/A control"):
        speed.aa_summary(df[df["variant"] == label])
