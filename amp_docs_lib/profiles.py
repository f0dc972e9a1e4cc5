"""Profiles: the same chapters run small on a CPU and full-size on a CUDA GPU.

The profile is chosen from the hardware, can be overridden with the
``AMP_DOCS_PROFILE`` environment variable, and is part of every provenance
stamp and of the build cache key.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

import torch

PROFILE_ENV_VAR = "AMP_DOCS_PROFILE"


@dataclass(frozen=True)
class Profile:
    """A named set of problem sizes for the chapters' experiments.

    ``sizes`` maps a size name (``"accumulation_terms"``) to its value; look
    sizes up with ``profile["accumulation_terms"]``.
    """

    name: str
    device: str
    description: str
    sizes: Mapping[str, Any] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        if not isinstance(key, str):
            raise TypeError(f"profile size names are str, got {type(key).__name__}")
        try:
            return self.sizes[key]
        except KeyError:
            raise KeyError(
                f"profile {self.name!r} has no size {key!r}; valid sizes: {sorted(self.sizes)}"
            ) from None


def _sizes(**kw: Any) -> Mapping[str, Any]:
    return MappingProxyType(kw)


PROFILES: dict[str, Profile] = {
    "cpu-small": Profile(
        name="cpu-small",
        device="cpu",
        description="small sizes that keep every chapter fast on a 2-core CPU",
        sizes=_sizes(
            accumulation_terms=20_000,
            ulp_points=200,
            stagnation_steps=2_000,
            matmul_size=256,
            gpt_batch=4,
            gpt_seq=32,
            gpt_layers=2,
            gpt_width=64,
            gpt_heads=4,
            gpt_vocab=128,
            train_steps=60,
            underflow_samples=200_000,
            scale_sim_steps=1_000,
            pattern_steps=30,
            # training_regimes chapter (sized for an AVX2 CPU, where BF16/FP16 matmuls are slow)
            regimes_vocab=16,
            regimes_branching=2,
            regimes_seq=32,
            regimes_layers=2,
            regimes_heads=4,
            regimes_width=64,
            regimes_init_std=0.1,
            regimes_batch=16,
            regimes_steps=120,
            regimes_lr=3e-3,
            regimes_warmup=10,
            regimes_eval_every=30,
            regimes_eval_windows=128,
            regimes_train_tokens=100_000,
            regimes_val_tokens=10_000,
        ),
    ),
    "gpu-full": Profile(
        name="gpu-full",
        device="cuda",
        description="full sizes for a CUDA GPU",
        sizes=_sizes(
            accumulation_terms=100_000,
            ulp_points=1_000,
            stagnation_steps=20_000,
            matmul_size=4096,
            gpt_batch=16,
            gpt_seq=256,
            gpt_layers=6,
            gpt_width=384,
            gpt_heads=6,
            gpt_vocab=512,
            train_steps=400,
            underflow_samples=2_000_000,
            scale_sim_steps=3_000,
            pattern_steps=200,
            # training_regimes chapter
            regimes_vocab=32,
            regimes_branching=2,
            regimes_seq=64,
            regimes_layers=4,
            regimes_heads=4,
            regimes_width=128,
            regimes_init_std=0.1,
            regimes_batch=32,
            regimes_steps=300,
            regimes_lr=3e-3,
            regimes_warmup=20,
            regimes_eval_every=25,
            regimes_eval_windows=256,
            regimes_train_tokens=1_000_000,
            regimes_val_tokens=50_000,
        ),
    ),
}


def profile_names() -> list[str]:
    return sorted(PROFILES)


def get_profile(name: str) -> Profile:
    """Return the profile called ``name``; raise a clear error for anything else."""
    if not isinstance(name, str):
        raise TypeError(f"profile name must be a str, got {type(name).__name__}; valid: {profile_names()}")
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown profile {name!r}; valid profiles: {profile_names()}") from None


def default_profile_name() -> str:
    """The profile the hardware calls for: ``gpu-full`` with CUDA, else ``cpu-small``."""
    return "gpu-full" if torch.cuda.is_available() else "cpu-small"


def active_profile() -> Profile:
    """The profile of this build: ``$AMP_DOCS_PROFILE`` if set, else the hardware default."""
    override = os.environ.get(PROFILE_ENV_VAR, "").strip()
    return get_profile(override or default_profile_name())
