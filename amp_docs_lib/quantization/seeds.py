"""Accuracy over several seeds, with an interval: one split of N test images moves by 100/N points per image.

Each seed draws its own train/test split, initialisation and batch order, trains the FP32 MLP and
quantizes it with each torchao variant. Per variant the table gives the mean accuracy and, for its
difference from FP32 (paired: same seed, same test images), the median over seeds with a
distribution-free interval (:func:`amp_docs_lib.core.stats.median_ci`): a variant differs from FP32
only when that interval excludes 0.
"""

from __future__ import annotations

from typing import Iterable

import pandas as pd


def seed_accuracies(variants: Iterable[str], seeds: Iterable[int]) -> pd.DataFrame:
    """Long table: seed, variant label, test accuracy (FP32 included, label "FP32")."""
    from amp_docs_lib.quantization.ptq import VARIANTS, try_variant
    from amp_docs_lib.quantization.task import accuracy, trained_task

    rows = []
    for s in seeds:
        t = trained_task(seed=s)
        d = t.data
        rows.append({"seed": s, "variant": "FP32", "accuracy": t.fp32_accuracy, "test images": len(d.x_test)})
        for name in variants:
            q, err = try_variant(t.model, name, d.x_test[:8])
            if q is not None:
                rows.append({"seed": s, "variant": VARIANTS[name].label,
                             "accuracy": accuracy(q, d.x_test, d.y_test), "test images": len(d.x_test)})
    return pd.DataFrame(rows)


def seed_summary(long: pd.DataFrame, level: float = 0.9) -> pd.DataFrame:
    """Per variant: mean accuracy over seeds, median difference from FP32 (points) with its interval, verdict."""
    from amp_docs_lib.core.stats import median_ci

    fp32 = long[long["variant"] == "FP32"].set_index("seed")["accuracy"]
    rows = []
    for v, g in long.groupby("variant", sort=False):
        g = g.set_index("seed")["accuracy"]
        row = {"variant": v, "seeds": len(g), "mean accuracy": float(g.mean()),
               "min accuracy": float(g.min()), "max accuracy": float(g.max())}
        if v != "FP32":
            diff = [100 * float(g[s] - fp32[s]) for s in g.index]
            med, lo, hi = median_ci(diff, level)
            row.update({"difference from FP32 (points, median)": med, "interval low": lo, "interval high": hi,
                        "verdict": "lower than FP32" if hi < 0 else "higher than FP32" if lo > 0
                        else "no difference resolved"})
        rows.append(row)
    df = pd.DataFrame(rows).astype(object)
    return df.where(df.notna(), None)
