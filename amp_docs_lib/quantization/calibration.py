"""Calibration: choosing the range of an activation from data the model actually sees.

Weights are known ahead of time; activations are not, so static quantization
runs a calibration set through the model and picks a range ``[lo, hi]`` for
each quantized input. Three rules:

- ``"minmax"``: the smallest and largest value seen. Nothing is clipped, but one
  outlier stretches the step for every other value.
- ``"percentile"``: the ``p``-th percentile (and ``100 - p``-th); the rare values beyond are clipped.
- ``"mse"``: the clipping threshold that minimises the mean squared error of
  quantize-dequantize on the calibration data (a grid search over fractions of the max).

A range becomes an asymmetric scale and zero point (``range_qparams``), the same
arithmetic as ``torch.fake_quantize_per_tensor_affine`` (tested against it).
"""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import torch
from torch import nn

from amp_docs_lib.quantization.affine import check_bits, quant_range, sqnr_db

METHODS = ("minmax", "percentile", "mse")


def check_method(method: str) -> str:
    """Validate a calibration method name."""
    if method not in METHODS:
        raise ValueError(f"invalid calibration method {method!r}; valid methods: {list(METHODS)}")
    return method


def range_qparams(lo: float, hi: float, bits: int = 8) -> tuple[float, int]:
    """Asymmetric ``(scale, zero_point)`` of a range (stretched to include 0), signed codes."""
    qmin, qmax = quant_range(check_bits(bits))
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    scale = max((hi - lo) / (qmax - qmin), torch.finfo(torch.float32).smallest_normal)
    zp = int(np.clip(qmin - round(lo / scale), qmin, qmax))
    return float(scale), zp


def fake_quantize_range(x: torch.Tensor, lo: float, hi: float, bits: int = 8) -> torch.Tensor:
    """Quantize-dequantize ``x`` with the range ``[lo, hi]``; values outside are clipped."""
    scale, zp = range_qparams(lo, hi, bits)
    qmin, qmax = quant_range(bits)
    q = torch.clamp(torch.round(x / scale) + zp, qmin, qmax)
    return (q - zp) * scale


def calibrate(acts: torch.Tensor, method: str = "minmax", bits: int = 8, *, percentile: float = 99.99,
              n_candidates: int = 100) -> tuple[float, float]:
    """The range ``(lo, hi)`` chosen by ``method`` from calibration activations ``acts``.

    Args:
        acts: activations observed on the calibration set (any shape).
        method: one of ``METHODS``.
        bits: bit width the range will be used at (``"mse"`` depends on it).
        percentile: for ``"percentile"``, in (50, 100].
        n_candidates: for ``"mse"``, how many clipping fractions of the max to try.
    """
    check_method(method)
    check_bits(bits)
    a = acts.detach().float().flatten()
    lo, hi = min(float(a.min()), 0.0), max(float(a.max()), 0.0)
    if method == "minmax":
        return lo, hi
    if method == "percentile":
        if not 50.0 < percentile <= 100.0:
            raise ValueError(f"percentile must be in (50, 100], got {percentile!r}")
        qs = np.percentile(a.numpy(), [100.0 - percentile, percentile])
        return min(float(qs[0]), 0.0), max(float(qs[1]), 0.0)
    best, best_err = (lo, hi), float("inf")
    for frac in np.linspace(1.0 / n_candidates, 1.0, n_candidates):
        c_lo, c_hi = lo * frac, hi * frac
        err = float(((fake_quantize_range(a, c_lo, c_hi, bits) - a) ** 2).mean())
        if err < best_err:
            best, best_err = (c_lo, c_hi), err
    return best


def mse_curve(acts: torch.Tensor, bits: int = 8, n_candidates: int = 100) -> pd.DataFrame:
    """Quantization MSE of ``acts`` against the clipping threshold (a fraction of the max)."""
    a = acts.detach().float().flatten()
    lo, hi = min(float(a.min()), 0.0), max(float(a.max()), 0.0)
    rows = [{"clip": hi * f, "mse": float(((fake_quantize_range(a, lo * f, hi * f, bits) - a) ** 2).mean())}
            for f in np.linspace(1.0 / n_candidates, 1.0, n_candidates)]
    return pd.DataFrame(rows)


@torch.inference_mode()
def capture_linears(model: nn.Module, x: torch.Tensor, what: str = "input") -> dict[str, torch.Tensor]:
    """The input (``what="input"``) or output (as FP32) of every ``nn.Linear`` of ``model`` on ``x``, by name."""
    if what not in ("input", "output"):
        raise ValueError(f"what must be 'input' or 'output', got {what!r}")
    seen: dict[str, torch.Tensor] = {}

    def record(name: str):
        def hook(mod: nn.Module, inp: tuple, out: torch.Tensor) -> None:
            seen[name] = inp[0].detach() if what == "input" else out.detach().float()
        return hook

    hooks = [m.register_forward_hook(record(name)) for name, m in model.named_modules() if isinstance(m, nn.Linear)]
    try:
        model(x)
    finally:
        for h in hooks:
            h.remove()
    return seen


def linear_inputs(model: nn.Module, x: torch.Tensor) -> dict[str, torch.Tensor]:
    """The input of every ``nn.Linear`` in ``model`` on the batch ``x``, by module name."""
    return capture_linears(model, x, "input")


class _InputFakeQuant(nn.Module):
    def __init__(self, inner: nn.Module, lo: float, hi: float, bits: int):
        super().__init__()
        self.inner, self.lo, self.hi, self.bits = inner, lo, hi, bits

    def forward(self, x):
        return self.inner(fake_quantize_range(x, self.lo, self.hi, self.bits))


def _with_quantized_inputs(model: nn.Sequential, ranges: dict[str, tuple[float, float]], bits: int) -> nn.Module:
    """A copy of ``model`` whose ``nn.Linear`` inputs are quantize-dequantized with the given ranges."""
    q = copy.deepcopy(model)
    for name, (lo, hi) in ranges.items():
        q[int(name)] = _InputFakeQuant(q[int(name)], lo, hi, bits)
    return q


def corrupt_calibration(x_calib: torch.Tensor, n_bad: int = 1, factor: float = 16.0) -> torch.Tensor:
    """The calibration set with ``n_bad`` images not normalised (pixels times ``factor``): a preprocessing bug."""
    bad = x_calib[:n_bad] * factor
    return torch.cat([bad, x_calib[n_bad:]])


def calibration_table(task, bits_list: tuple[int, ...] = (8, 4), percentile: float = 99.99) -> pd.DataFrame:
    """Each method's ranges on a clean and on a corrupted calibration set, and what they do.

    For every Linear input the range is calibrated; the model then runs with
    those inputs quantized (weights kept in FP32, to isolate the activations).
    Columns: the range chosen for the second layer's input, the SQNR of that
    input on the test set, and the test accuracy.
    """
    from amp_docs_lib.quantization.task import accuracy

    model, data = task.model, task.data
    test_acts = linear_inputs(model, data.x_test)
    rows = []
    for calib_name, xc in (("clean", data.x_calib), ("1 image unnormalised", corrupt_calibration(data.x_calib))):
        acts = linear_inputs(model, xc)
        for bits in bits_list:
            for method in METHODS:
                ranges = {n: calibrate(a, method, bits, percentile=percentile) for n, a in acts.items()}
                lo, hi = ranges["2"]
                t = test_acts["2"]
                rows.append({"calibration set": calib_name, "bits": bits, "method": method,
                             "layer-2 input range": f"[{lo:.3g}, {hi:.3g}]",
                             "clipped on test (%)": 100.0 * float((t > hi).float().mean()),
                             "layer-2 input SQNR on test (dB)": sqnr_db(t, fake_quantize_range(t, lo, hi, bits)),
                             "test accuracy": accuracy(_with_quantized_inputs(model, ranges, bits),
                                                       data.x_test, data.y_test)})
    return pd.DataFrame(rows)


def calibration_size_table(task, sizes: tuple[int, ...], bits: int = 4, seeds: int = 3,
                           percentile: float = 99.99) -> pd.DataFrame:
    """How the chosen range and the held-out SQNR depend on the calibration set's size (random subsets)."""
    model, data = task.model, task.data
    t = linear_inputs(model, data.x_test)["2"]
    rows = []
    for n in sizes:
        if not 0 < n <= len(data.x_train):
            raise ValueError(f"calibration size {n!r} must be in [1, {len(data.x_train)}]")
        for method in METHODS:
            his, sq = [], []
            for s in range(seeds):
                idx = torch.randperm(len(data.x_train), generator=torch.Generator().manual_seed(100 + s))[:n]
                lo, hi = calibrate(linear_inputs(model, data.x_train[idx])["2"], method, bits, percentile=percentile)
                his.append(hi)
                sq.append(sqnr_db(t, fake_quantize_range(t, lo, hi, bits)))
            rows.append({"calibration images": n, "method": method, "hi (mean)": float(np.mean(his)),
                         "hi (min..max over seeds)": f"{min(his):.3g}..{max(his):.3g}",
                         f"INT{bits} SQNR on test (dB, mean)": float(np.mean(sq))})
    return pd.DataFrame(rows)


def plot_calibration(task, bits: int = 4, percentile: float = 99.99):
    """Layer-2 input activations with each method's range, and the MSE-vs-clip curve."""
    import matplotlib.pyplot as plt

    a = linear_inputs(task.model, task.data.x_calib)["2"].flatten()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.4))
    ax1.hist(a.numpy(), bins=100, color="C0", alpha=0.8)
    ax1.set_yscale("log")
    for i, method in enumerate(METHODS):
        _, hi = calibrate(a, method, bits, percentile=percentile)
        ax1.axvline(hi, color=f"C{i + 1}", lw=1.5, ls="--", label=f"{method}: {hi:.3g}")
    ax1.set_xlabel("layer-2 input value (after ReLU)")
    ax1.set_ylabel("count (log)")
    ax1.legend(fontsize=8)
    curve = mse_curve(a, bits)
    ax2.plot(curve["clip"], curve["mse"], color="C0")
    ax2.set_yscale("log")
    for i, method in enumerate(METHODS):
        _, hi = calibrate(a, method, bits, percentile=percentile)
        mse = float(((fake_quantize_range(a, 0.0, hi, bits) - a) ** 2).mean())
        ax2.plot([hi], [mse], "o", color=f"C{i + 1}", label=method)
    ax2.set_xlabel("clipping threshold hi")
    ax2.set_ylabel(f"INT{bits} quantization MSE")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    return fig
