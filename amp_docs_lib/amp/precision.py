"""The ``precision`` switch: one name gives a training loop everything it needs.

=============  ===================  ===============  ===================
name           autocast dtype       parameter dtype  GradScaler enabled
=============  ===================  ===============  ===================
``fp32``       (autocast disabled)  float32          no
``amp_fp16``   float16              float32          yes
``amp_bf16``   bfloat16             float32          no
``bf16``       (autocast disabled)  bfloat16         no
=============  ===================  ===============  ===================

``amp_*`` keep FP32 master weights and let autocast run eligible ops in
16 bits; ``bf16`` stores the weights themselves in bfloat16.

``REGIMES`` extends the switch to whole training regimes (``get_regime(name)``):
a precision setup plus the optimizer recipe (plain AdamW in the parameters' dtype,
FP32 master weights, Kahan-compensated AdamW from ``torch-optimi``, moments rounded
to BF16), TF32 matmuls, and a learning-rate multiplier.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from amp_docs_lib.core.checks import lookup
from amp_docs_lib.core.devices import DEVICE_TYPES

PRECISIONS = ("fp32", "amp_fp16", "amp_bf16", "bf16")

PRECISION_DTYPES = {  # name -> (autocast dtype or None, parameter dtype)
    "fp32": (None, torch.float32),
    "amp_fp16": (torch.float16, torch.float32),
    "amp_bf16": (torch.bfloat16, torch.float32),
    "bf16": (None, torch.bfloat16),
}


@dataclass(frozen=True)
class PrecisionSetup:
    """What a training loop needs for one precision on one device type."""

    name: str
    device_type: str
    autocast_dtype: torch.dtype | None
    param_dtype: torch.dtype
    scaler: torch.amp.GradScaler

    def autocast(self) -> torch.amp.autocast:
        """A fresh autocast context (disabled for ``fp32`` and pure ``bf16``)."""
        return torch.amp.autocast(self.device_type, dtype=self.autocast_dtype,
                                  enabled=self.autocast_dtype is not None)

    @property
    def uses_scaler(self) -> bool:
        return self.scaler.is_enabled()


def _device_type(device: str | torch.device) -> str:
    if isinstance(device, torch.device):
        dt = device.type
    elif isinstance(device, str):
        # The type before any ':index', checked against ours before torch.device parses it: torch
        # would answer 'tpu' with its own list of some 20 device types, most of them not ours.
        dt = device.split(":")[0]
        if dt in DEVICE_TYPES:
            try:
                dt = torch.device(device).type
            except RuntimeError:
                raise ValueError(f"invalid device {device!r}; valid: a device type of {list(DEVICE_TYPES)}, "
                                 f"optionally with an index ('cuda:0')") from None
    else:
        raise TypeError(f"device must be a str or torch.device, got {type(device).__name__}; "
                        f"valid device types: {list(DEVICE_TYPES)}")
    if dt not in DEVICE_TYPES:
        raise ValueError(f"unsupported device {device!r}; valid device types: {list(DEVICE_TYPES)}")
    return dt


def precision_setup(precision: str, device: str | torch.device = "cpu") -> PrecisionSetup:
    """Autocast factory, GradScaler (enabled only for ``amp_fp16``) and parameter dtype for ``precision``.

    Raises ``TypeError`` for a non-str name and ``ValueError`` (listing the
    valid names) for an unknown one, or when a CUDA device lacks bfloat16.
    """
    if not isinstance(precision, str):
        raise TypeError(f"precision must be a str, got {type(precision).__name__}; "
                        f"valid precisions: {list(PRECISIONS)}")
    if precision not in PRECISION_DTYPES:
        raise ValueError(f"unknown precision {precision!r}; valid precisions: {list(PRECISIONS)}")
    dt = _device_type(device)
    autocast_dtype, param_dtype = PRECISION_DTYPES[precision]
    if dt == "cuda" and torch.bfloat16 in (autocast_dtype, param_dtype) \
            and torch.cuda.is_available() and not torch.cuda.is_bf16_supported(including_emulation=False):
        raise ValueError(f"precision {precision!r} needs bfloat16, which this GPU lacks; "
                         f"use one of {['fp32', 'amp_fp16']}")
    scaler = torch.amp.GradScaler(dt, enabled=precision == "amp_fp16")
    return PrecisionSetup(precision, dt, autocast_dtype, param_dtype, scaler)


# ---- training regimes ------------------------------------------------------------------------
# A regime is a precision setup plus where the update happens: which optimizer, in which dtype,
# with or without FP32 master weights. The training-regimes chapter trains one GPT per regime.

OPTIMIZERS = ("adamw", "master_adamw", "kahan_adamw", "optimi_adamw", "sr_adamw", "adamw_bf16_moments")


@dataclass(frozen=True)
class Regime:
    """A training regime: compute precision, parameter dtype, scaler, optimizer recipe.

    Attributes:
        name: registry name (``REGIMES``).
        label: short human description.
        autocast_dtype: dtype autocast runs eligible ops in, or None (autocast off).
        param_dtype: dtype the model's parameters are stored in.
        scaler: whether a ``torch.amp.GradScaler`` scales the loss.
        optimizer: ``adamw`` (``torch.optim.AdamW`` on the parameters, state in their dtype),
            ``master_adamw`` (FP32 master weights, ``amp_docs_lib.regimes.optimizers.MasterWeights``),
            ``kahan_adamw`` (``optimi.AdamW(kahan_sum=True)``), ``optimi_adamw`` (the same
            without Kahan summation: its control), ``sr_adamw`` (torchao's
            ``_AdamW(bf16_stochastic_round=True)``) or ``adamw_bf16_moments``
            (``RoundedStateAdamW``: moments rounded to BF16 after each step).
        tf32: allow TF32 for FP32 matmuls (``torch.set_float32_matmul_precision("high")``).
        lr_scale: multiplier on the base learning rate (the overflow regime uses a large one).
        devices: device types the regime is meaningful on.
        expect_finite: whether the regime is expected to keep a finite loss.
    """

    name: str
    label: str
    autocast_dtype: torch.dtype | None
    param_dtype: torch.dtype
    scaler: bool = False
    optimizer: str = "adamw"
    tf32: bool = False
    lr_scale: float = 1.0
    devices: tuple[str, ...] = DEVICE_TYPES
    expect_finite: bool = True

    def setup(self, device: str | torch.device = "cpu") -> PrecisionSetup:
        """The :class:`PrecisionSetup` (autocast factory, GradScaler, parameter dtype) on ``device``.

        Raises ``ValueError`` when the regime is not available on that device type.
        """
        dt = _device_type(device)
        if dt not in self.devices:
            raise ValueError(f"regime {self.name!r} needs a device of type {list(self.devices)}, got {dt!r}; "
                             f"regimes available on {dt}: {regimes_for(dt)}")
        if dt == "cuda" and torch.bfloat16 in (self.autocast_dtype, self.param_dtype) \
                and torch.cuda.is_available() and not torch.cuda.is_bf16_supported(including_emulation=False):
            raise ValueError(f"regime {self.name!r} needs bfloat16, which this GPU lacks")
        scaler = torch.amp.GradScaler(dt, enabled=self.scaler)
        return PrecisionSetup(self.name, dt, self.autocast_dtype, self.param_dtype, scaler)


REGIMES: dict[str, Regime] = {r.name: r for r in (
    Regime("fp32", "FP32", None, torch.float32),
    Regime("tf32", "FP32 params, TF32 matmuls", None, torch.float32, tf32=True, devices=("cuda",)),
    Regime("fp16", "naive FP16 params, no scaler", None, torch.float16, expect_finite=False),
    Regime("amp_fp16", "AMP FP16 + GradScaler", torch.float16, torch.float32, scaler=True),
    Regime("amp_bf16", "AMP BF16", torch.bfloat16, torch.float32),
    Regime("bf16", "pure BF16 + plain AdamW", None, torch.bfloat16),
    Regime("bf16_master", "BF16 params + FP32 master weights", None, torch.bfloat16,
           optimizer="master_adamw"),
    Regime("bf16_kahan", "BF16 params + Kahan AdamW (optimi)", None, torch.bfloat16,
           optimizer="kahan_adamw"),
    Regime("bf16_optimi", "BF16 params + optimi AdamW without Kahan (control)", None, torch.bfloat16,
           optimizer="optimi_adamw"),
    Regime("bf16_sr", "BF16 params + AdamW with stochastic rounding (torchao)", None, torch.bfloat16,
           optimizer="sr_adamw"),
    Regime("amp_bf16_moments", "AMP BF16, AdamW moments in BF16", torch.bfloat16, torch.float32,
           optimizer="adamw_bf16_moments"),
    Regime("amp_fp16_overflow", "AMP FP16 + GradScaler at an overflowing lr", torch.float16,
           torch.float32, scaler=True, lr_scale=100.0, expect_finite=False),
)}


def regimes_for(device_type: str) -> list[str]:
    """Names of the regimes available on ``device_type`` ('cpu' or 'cuda')."""
    if device_type not in DEVICE_TYPES:
        raise ValueError(f"unknown device type {device_type!r}; valid device types: {list(DEVICE_TYPES)}")
    return [n for n, r in REGIMES.items() if device_type in r.devices]


def get_regime(name: str) -> Regime:
    """The :class:`Regime` called ``name``; ``ValueError`` listing the valid names otherwise."""
    return lookup(REGIMES, name, "regime")
