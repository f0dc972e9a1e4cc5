"""Devices: which ones exist here, the default one, and validation of a device argument.

The one place that decides what ``device=`` may be for every module of the library.
"""

from __future__ import annotations

import torch

DEVICE_TYPES = ("cpu", "cuda")


def available_devices() -> list[str]:
    """Device types usable in this process: ``cpu`` always, ``cuda`` when a GPU is visible."""
    return ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def default_device() -> str:
    """``"cuda"`` when a GPU is visible, else ``"cpu"``."""
    return "cuda" if torch.cuda.is_available() else "cpu"


def check_device(device: str | torch.device) -> torch.device:
    """Validate ``device`` ('cpu', 'cuda' or 'cuda:N') and that it exists on this machine.

    Raises ``TypeError`` for a non-device and ``ValueError`` naming the valid devices.
    """
    if isinstance(device, torch.device):
        device = str(device)
    if not isinstance(device, str):
        raise TypeError(
            f"device must be a str or torch.device, got {type(device).__name__}; valid devices: {list(DEVICE_TYPES)}"
        )
    kind = device.split(":")[0]
    if kind not in DEVICE_TYPES:
        raise ValueError(
            f"unknown device {device!r}; valid devices: {list(DEVICE_TYPES)} (available here: {available_devices()})"
        )
    if kind not in available_devices():
        raise ValueError(f"device {device!r} is not available on this machine; available: {available_devices()}")
    return torch.device(device)


# How a full GPU shows besides torch.OutOfMemoryError: cuBLAS failing to allocate its workspace, or
# an allocation inside a library that reports the allocator's message as a plain RuntimeError.
_OOM_MESSAGES = ("CUBLAS_STATUS_ALLOC_FAILED", "out of memory")


def is_out_of_memory(error: BaseException) -> bool:
    """Whether ``error`` means the device ran out of memory (``torch.OutOfMemoryError``, or a
    RuntimeError carrying an allocation failure's message), so a caller sizing a workload stops there."""
    if isinstance(error, torch.OutOfMemoryError):
        return True
    return isinstance(error, RuntimeError) and any(m in str(error) for m in _OOM_MESSAGES)
