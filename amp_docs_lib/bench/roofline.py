"""The roofline model: attainable throughput = min(peak, intensity × memory bandwidth).

A kernel with arithmetic intensity ``I`` (FLOP per byte moved to and from
memory) can run no faster than ``I × bandwidth`` (memory-bound) nor faster than
the compute peak (compute-bound); the ridge point ``peak / bandwidth`` separates
the two. For an n×n matmul reading two inputs and writing one output of
``e`` bytes per element, ``I = 2n³ / (3n²e) = 2n / (3e)``.
"""

from __future__ import annotations

import pandas as pd
import torch

from amp_docs_lib.core.timing import measure
from amp_docs_lib.core.devices import check_device


OFF_PLOT_FACTOR = 1000  # points this far below the roof are named, not drawn


def matmul_intensity(n: int, element_bytes: int) -> float:
    """Arithmetic intensity (FLOP/byte) of an n×n matmul with ``element_bytes`` per element."""
    if n < 1 or element_bytes < 1:
        raise ValueError(f"n and element_bytes must be positive, got n={n!r}, element_bytes={element_bytes!r}")
    return 2 * n / (3 * element_bytes)


def attainable_tflops(intensity: float, peak_tflops: float, bandwidth_tbs: float) -> float:
    """The roofline: min(peak, intensity × bandwidth), in TFLOP/s (bandwidth in TB/s)."""
    return min(peak_tflops, intensity * bandwidth_tbs)


def measured_intensity(n: int, dtype: torch.dtype = torch.bfloat16) -> float:
    """FLOP/byte of an n×n @ n×n matmul from torch's FLOP counter and the operands' and result's ``nbytes``."""
    from torch.utils.flop_counter import FlopCounterMode

    a, b = torch.ones(n, n, dtype=dtype), torch.ones(n, n, dtype=dtype)
    with FlopCounterMode(display=False) as fc:
        c = a @ b
    return fc.get_total_flops() / (a.nbytes + b.nbytes + c.nbytes)


def copy_bandwidth(device: str | torch.device = "cpu", mib: int = 64, *, min_run_time: float = 0.1) -> float:
    """Copy rate in TB/s of a ``mib`` MiB buffer with the harness's threads (one read and one write counted per
    element; a write-allocate read of the destination is not): the roofline's memory roof, not a peak bandwidth."""
    dev = check_device(device)
    n = mib * 2**20 // 4
    src, dst = torch.ones(n, device=dev), torch.empty(n, device=dev)
    t = measure(lambda: dst.copy_(src), device=dev, min_run_time=min_run_time, label="copy")
    return 2 * n * 4 / t.median_s / 1e12


def plot_roofline(points: pd.DataFrame, peak_tflops: float, bandwidth_tbs: float, *, peak_label: str = "peak",
         extra_roofs: dict[str, float] | None = None):
    """Roofline with measured points (columns dtype, intensity, tflops), one marker series per dtype.

    Points more than :data:`OFF_PLOT_FACTOR` times below the roof (emulated 16-bit matmuls on a CPU
    without native support) would squash the plot; they are left off and named in a note on the figure.
    """
    import matplotlib.pyplot as plt
    import numpy as np

    roof = np.minimum(peak_tflops, points["intensity"].astype(float) * bandwidth_tbs)
    far = points["tflops"].astype(float) < roof / OFF_PLOT_FACTOR
    off, points = points[far], points[~far]

    lo = min(points["intensity"].min() / 4, peak_tflops / bandwidth_tbs / 8)
    hi = max(points["intensity"].max() * 4, peak_tflops / bandwidth_tbs * 8)
    x = np.logspace(np.log10(lo), np.log10(hi), 200)
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    ax.plot(x, np.minimum(peak_tflops, x * bandwidth_tbs), color="0.2", lw=1.5,
            label=f"roof: {peak_label}, {bandwidth_tbs * 1e3:.3g} GB/s")
    for name, pk in (extra_roofs or {}).items():
        ax.plot(x, np.minimum(pk, x * bandwidth_tbs), lw=0.8, ls=":", color="0.4")
        ax.text(x[-1], pk, f" {name}", va="center", fontsize=7)
    from amp_docs_lib.core.palette import color_or_default

    for i, (dt, g) in enumerate(points.groupby("dtype", sort=False)):
        ax.plot(g["intensity"], g["tflops"], "o", label=f"{dt} matmul (measured)", color=color_or_default(dt, f"C{i}"))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("TFLOP/s")
    ax.legend(fontsize=7)
    if len(off):
        ax.text(0.01, 0.01, f"off the plot (>{OFF_PLOT_FACTOR}x below the roof): "
                + ", ".join(sorted(set(off["dtype"]))), transform=ax.transAxes, fontsize=7, va="bottom")
    return fig
