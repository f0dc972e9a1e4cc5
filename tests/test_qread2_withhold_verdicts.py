"""A busy load check withholds every speed verdict from the quantization page's tables (issue 34, read 2, finding 4)."""

import pandas as pd

from amp_docs_lib.quantization import results


def _table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "variant": ["INT8", "INT4"],
            "latency median (us)": [10.0, 20.0],
            "interval vs PyTorch FP32": ["[1.1, 1.3]", "[0.2, 0.3]"],
            "verdict vs PyTorch FP32": ["faster", "slower"],
            "crossover": ["slower at 1, 8; faster at 64, 256", "none resolved"],
            "faster than FP32 at batch": ["64, 256", "none"],
            "vs the same dtype's float layer": ["0.04x [0.03, 0.05] (slower)", None],
        }
    )


def test_busy_table_says_no_verdict_anywhere():
    out = results.withhold_verdicts(_table(), quiet=False)
    text = " ".join(str(v) for v in out.to_numpy().ravel())
    for word in ("faster", "slower", "no difference resolved"):
        assert word not in text.replace(results.WITHHELD, "")
    # what was measured stays: latencies and intervals
    assert out["latency median (us)"].tolist() == [10.0, 20.0]
    assert out["interval vs PyTorch FP32"].tolist() == ["[1.1, 1.3]", "[0.2, 0.3]"]
    assert out.loc[0, "vs the same dtype's float layer"] == f"0.04x [0.03, 0.05] ({results.WITHHELD})"
    assert pd.isna(out.loc[1, "vs the same dtype's float layer"])


def test_quiet_table_is_unchanged():
    df = _table()
    assert results.withhold_verdicts(df, quiet=True).equals(df)
