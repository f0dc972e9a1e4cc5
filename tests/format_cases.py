"""Test values for the format explorer: normals, subnormals, ties, overflow, saturation, NaN.

For every float format of ``amp_docs_lib.numbers.formats``: every representable value of the 8-bit and
smaller formats, the midpoints between neighbours (ties), values just beside them (one FP32 step,
and float64 values closer than FP32's spacing, which a cast from float64 rounds twice), values
beyond the largest finite value, infinities, NaN and signed zeros; FP32, TF32, FP16 and BF16
get hand-picked edge values and a fixed pseudo-random sample.
"""

from __future__ import annotations

import math
import random
import warnings

import numpy as np

from amp_docs_lib.numbers.formats import bits_to_value, decode, float_format_names, get_format, next_up


def _representable(name: str) -> list[float]:
    f = get_format(name)
    out = []
    for b in range(2 ** f.total_bits):
        v = bits_to_value(b, f)
        if math.isfinite(v):
            out.append(v)
    return sorted(set(out))


def values_for(name: str) -> list[float]:
    f = get_format(name)
    vals = [0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0, 0.1, -0.1, 1e30, -1e30, 1e-30, 3.3, 1e6]
    if f.total_bits <= 8:
        reps = _representable(name)
        vals += reps
        for a, b in zip(reps, reps[1:]):
            mid = (a + b) / 2
            vals += [mid, np.nextafter(np.float32(mid), np.float32(np.inf)).item(),
                     np.nextafter(np.float32(mid), np.float32(-np.inf)).item()]
            # float64 inputs beside a tie, closer than FP32's spacing: the cast rounds to FP32 first
            # (onto the tie), then to the format, so these land where the tie does
            tiny = abs(mid) * 2.0 ** -40
            vals += [mid + tiny, mid - tiny]
        top = max(reps)
        vals += [top * 1.01, top * 1.5, top * 2, top * 1000, -top * 1.01, -top * 3]
    else:
        fi = np.finfo(np.float32)
        m = f.mantissa_bits
        vals += [float(fi.max), -float(fi.max), float(fi.tiny), float(fi.smallest_subnormal),
                 2.0 ** -149 * 3, 65504.0, 65520.0, 65519.0, 6.1e-5, 5.960464477539063e-08, 2.0 ** -25,
                 3 * 2.0 ** -25, 1 + 2.0 ** -(m + 1), 1 + 3 * 2.0 ** -(m + 1), 1 + 2.0 ** -(m + 1) + 2.0 ** -20,
                 -(1 + 2.0 ** -(m + 1)), 2.0 ** 127 * (2 - 2.0 ** -m), 3.0e38, 1e-40, 1e-45]
        rng = random.Random(13)
        vals += [rng.choice((-1, 1)) * 2.0 ** rng.uniform(-40, 40) for _ in range(60)]
        vals = [float(np.float32(v)) if math.isfinite(v) else v for v in vals]  # FP32-exact inputs
    return vals


def explorer_cases() -> list[dict]:
    """One dict per (format, value): the library's bits, class and value."""
    cases = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for name in float_format_names():
            for v in values_for(name):
                d = decode(v, name)
                case = {"format": name, "input": repr(v), "bits": int(d.hex, 16), "cls": d.cls,
                        "value": repr(d.value), "above": None}
                if d.value > 0 and math.isfinite(d.value):  # the library's bit neighbour above
                    up = next_up(v, name)
                    case["above"] = repr(up) if math.isfinite(up) and up > d.value else None
                cases.append(case)
    return cases
