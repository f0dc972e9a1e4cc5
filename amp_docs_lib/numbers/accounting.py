"""Counting work and bytes: the one home of a matmul's FLOP count and of the bytes each model state
takes per training regime.

Every concept package may import ``numbers``, so the benchmarks (``bench``), the FP8 and quantization
timings, the memory calculators (``bench.memory``, ``distributed.memory``) and the literature's checks
take these facts from here instead of writing them again.
"""

from __future__ import annotations

from amp_docs_lib.core.checks import positive_int
from amp_docs_lib.numbers.formats import bytes_per_element


def matmul_flops(m: int, n: int, k: int) -> int:
    """Floating-point operations of an (m × k) @ (k × n) product: 2·m·n·k (one multiply and one add per term)."""
    return 2 * positive_int("m", m) * positive_int("n", n) * positive_int("k", k)


_FP32, _BF16 = bytes_per_element("FP32"), bytes_per_element("BF16")
# Bytes per parameter of each model state, by training regime (names from amp.precision.REGIMES, the one
# regime vocabulary, plus "fp8": torchao float8 training, the FP8 chapter). Adam keeps two moments per
# parameter; "master" is an FP32 copy of 16-bit weights held for the optimizer's update.
STATE_BYTES: dict[str, dict[str, int]] = {
    "fp32": {"weights": _FP32, "grads": _FP32, "master": 0, "moments": 2 * _FP32},
    "amp_bf16": {"weights": _FP32, "grads": _FP32, "master": 0, "moments": 2 * _FP32},
    "bf16": {"weights": _BF16, "grads": _BF16, "master": 0, "moments": 2 * _BF16},
    "bf16_master": {"weights": _BF16, "grads": _BF16, "master": _FP32, "moments": 2 * _FP32},
    "fp8": {"weights": _FP32, "grads": _FP32, "master": 0, "moments": 2 * _FP32},
}


def state_bytes(regime: str) -> dict[str, int]:
    """Bytes per parameter of weights, grads, master copy and Adam moments under ``regime``."""
    if regime not in STATE_BYTES:
        raise ValueError(f"unknown regime {regime!r}; valid regimes: {list(STATE_BYTES)}")
    return dict(STATE_BYTES[regime])
