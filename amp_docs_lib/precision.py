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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

from amp_docs_lib.devices import DEVICE_TYPES

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
        dt = torch.device(device).type if device else device
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
            and torch.cuda.is_available() and not torch.cuda.is_bf16_supported():
        raise ValueError(f"precision {precision!r} needs bfloat16, which this GPU lacks; "
                         f"use one of {['fp32', 'amp_fp16']}")
    scaler = torch.amp.GradScaler(dt, enabled=precision == "amp_fp16")
    return PrecisionSetup(precision, dt, autocast_dtype, param_dtype, scaler)


def autocast_factory(precision: str, device: str | torch.device = "cpu") -> Callable[[], torch.amp.autocast]:
    """Just the autocast factory of :func:`precision_setup`."""
    return precision_setup(precision, device).autocast
