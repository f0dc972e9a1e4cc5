"""Tile and wave quantization of a GPU matmul: the model, and the measurement that tests it.

A GPU GEMM kernel splits the m×n output into tiles, one thread block each, and runs them in
*waves* of as many tiles as the GPU has SMs (one block per SM for large tiles). A dimension
one past a tile boundary adds a row of mostly empty tiles (tile quantization); a tile count
one past a multiple of the SM count adds a wave in which most SMs idle (wave quantization).
NVIDIA, *Matrix Multiplication Background User's Guide*, "Dimension Quantization Effects",
explains both with an A100 (108 SMs) and 256×128 tiles.

:func:`wave_table` is the model: tiles, waves and the fraction of the SM-time the kernel can
use. :func:`wave_sweep` measures matmuls across a wave boundary on this GPU (SM count read from
the device) and puts the model's prediction beside each rate. cuBLAS chooses its own tile
per shape, so the model's tile is an assumption the measurement tests, not a fact about the
kernel that ran.
"""

from __future__ import annotations

import math
from typing import Iterable

import pandas as pd
import torch

from amp_docs_lib.bench.matmul import matmul_flops
from amp_docs_lib.core.devices import check_device
from amp_docs_lib.core.timing import interleaved

#: The guide's example: an A100's SM count and the 256×128 tile it uses.
GUIDE_EXAMPLE_SMS = 108
GUIDE_TILE = (256, 128)
GUIDE_SOURCE = ("NVIDIA, Matrix Multiplication Background User's Guide, 'Dimension Quantization Effects' "
                "(A100: 108 SMs; 256×128 tiles)")


def _positive_int(name: str, v) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise ValueError(f"{name} must be a positive int, got {v!r}")
    return v


def tiles(m: int, n: int, tile: tuple[int, int] = GUIDE_TILE) -> int:
    """Output tiles of an m×n product: ceil(m / tile_m) · ceil(n / tile_n)."""
    return (math.ceil(_positive_int("m", m) / _positive_int("tile[0]", tile[0]))
            * math.ceil(_positive_int("n", n) / _positive_int("tile[1]", tile[1])))


def wave_model(m: int, n: int, sms: int, tile: tuple[int, int] = GUIDE_TILE) -> dict:
    """Tiles, waves and the usable fraction of SM-time for one m×n output (one tile per SM per wave).

    ``useful work`` is m·n over the area of all waves (waves · SMs · tile area): the fraction
    of the kernel's SM-time that computes real outputs, with tile and wave quantization both in it.
    """
    _positive_int("sms", sms)
    t = tiles(m, n, tile)
    waves = math.ceil(t / sms)
    return {"tiles": t, "waves": waves, "last wave: SMs busy": t - (waves - 1) * sms,
            "useful work": m * n / (waves * sms * tile[0] * tile[1])}


def wave_table(m: int, ns: Iterable[int], sms: int = GUIDE_EXAMPLE_SMS,
               tile: tuple[int, int] = GUIDE_TILE) -> pd.DataFrame:
    """:func:`wave_model` for an m×n output at each n (one row per n)."""
    return pd.DataFrame([{"m": m, "n": n, **wave_model(m, n, sms, tile)} for n in ns])


def boundary_ns(m: int, sms: int, tile: tuple[int, int] = GUIDE_TILE, *, steps: int = 2) -> list[int]:
    """Values of n around the first wave boundary for m rows: the last n that fills one wave, the next
    tile column (one more wave), and ``steps`` tile columns on either side."""
    rows_of_tiles = math.ceil(_positive_int("m", m) / tile[0])
    cols_one_wave = max(1, _positive_int("sms", sms) // rows_of_tiles)
    cols = range(max(1, cols_one_wave - steps), cols_one_wave + steps + 1)
    return [c * tile[1] for c in cols]


def wave_comparison(m: int, k: int, ns: Iterable[int], sms: int, *, device: str | torch.device = "cpu",
                    dtype: torch.dtype = torch.bfloat16, tile: tuple[int, int] = GUIDE_TILE, rounds: int = 9,
                    min_block_s: float = 0.02) -> pd.DataFrame:
    """An m×k @ k×n matmul at each n, all timed in the same interleaved rounds, beside the wave model for ``sms``.

    The baseline is the last n the model fills in one wave (the first n if none): each other n's rate
    relative to it is the median over rounds of the per-round rate ratio, with its interval and verdict,
    so a drop at the wave boundary is a resolved difference, not two medians taken at different times.
    Runs on any device (:func:`wave_sweep` is the GPU entry point that reads ``sms`` from the device).
    Columns: n, SMs, the model's columns, median (ms), IQR (ms), TFLOP/s, rate relative to the baseline
    and its interval, verdict.
    """
    ns = [_positive_int("n", n) for n in ns]
    if len(ns) < 2:
        raise ValueError(f"need at least two values of n to compare, got {ns!r}")
    dev = check_device(device)
    model = {n: wave_model(m, n, sms, tile) for n in ns}
    one_wave = [n for n in ns if model[n]["waves"] == 1]
    base = max(one_wave) if one_wave else ns[0]
    a = torch.randn(_positive_int("m", m), _positive_int("k", k), device=dev, dtype=dtype)
    fns = {}
    for n in ns:
        b = torch.randn(k, n, device=dev, dtype=dtype)
        fns[str(n)] = lambda b=b: a @ b
    res = interleaved(fns, baseline=str(base), device=dev, rounds=rounds, min_block_s=min_block_s)
    rows = []
    for n in ns:
        t = res.timings[str(n)]
        row = {"n": n, "SMs": sms, **model[n], "median (ms)": t.median_s * 1e3, "IQR (ms)": t.iqr_s * 1e3,
               "TFLOP/s": matmul_flops(m, n, k) / t.median_s / 1e12}
        row.update(res.rate_columns(str(n), n / base, "rate relative to the last one-wave n", "the baseline"))
        rows.append(row)
    return pd.DataFrame(rows)


def wave_sweep(m: int, k: int, ns: Iterable[int], *, device: str | torch.device = "cuda",
               dtype: torch.dtype = torch.bfloat16, tile: tuple[int, int] = GUIDE_TILE, rounds: int = 9,
               min_block_s: float = 0.02) -> pd.DataFrame:
    """:func:`wave_comparison` on a GPU, with the SM count read from the device.

    Raises:
        ValueError: not a CUDA device (waves are a GPU notion), or non-positive sizes.
    """
    dev = check_device(device)
    if dev.type != "cuda":
        raise ValueError(f"wave_sweep measures a GPU's SMs: device must be 'cuda', got {str(dev)!r}")
    sms = torch.cuda.get_device_properties(dev).multi_processor_count
    return wave_comparison(m, k, ns, sms, device=dev, dtype=dtype, tile=tile, rounds=rounds, min_block_s=min_block_s)
