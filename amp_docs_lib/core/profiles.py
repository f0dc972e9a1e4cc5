"""Profiles: the same chapters run small on a CPU and full-size on a CUDA GPU.

The profile is chosen from the hardware, can be overridden with the
``AMP_DOCS_PROFILE`` environment variable, and is part of every provenance
stamp and of the build cache key.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from amp_docs_lib.core.checks import lookup

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
            raise KeyError(f"profile {self.name!r} has no size {key!r}; valid sizes: {sorted(self.sizes)}") from None


def _sizes(**kw: Any) -> Mapping[str, Any]:
    return MappingProxyType(kw)


# Problem sizes per profile, (cpu-small, gpu-full): one line a size, so what the profiles change shows.
_SIZES: dict[str, tuple[Any, Any]] = {
    "accumulation_terms": (20_000, 100_000),
    "ulp_points": (200, 1_000),
    "stagnation_steps": (2_000, 20_000),
    "matmul_size": (256, 4096),
    "gpt_batch": (4, 16),
    "gpt_seq": (32, 256),
    "gpt_layers": (2, 6),
    "gpt_width": (64, 384),
    "gpt_heads": (4, 6),
    "gpt_vocab": (128, 512),
    "train_steps": (60, 400),
    "underflow_samples": (200_000, 2_000_000),
    "scale_sim_steps": (1_000, 3_000),
    "pattern_steps": (30, 200),
    "quant_hidden": (128, 1024),
    "quant_epochs": (20, 40),
    "quant_qat_epochs": (3, 10),
    "quant_calib_sizes": ((4, 16, 64, 256), (4, 16, 64, 256, 1024)),
    "quant_rounds": (9, 15),  # interleaved timing rounds (the 90% interval on a median ratio needs >= 5)
    "quant_seeds": (5, 5),
    "quant_sweep_features": (1024, 8192),
    "quant_sweep_batches": ((1, 8, 64, 256, 1024), (1, 16, 128, 1024, 4096)),
    # gpu-full: packed INT4 (tinygemm, sm80+), INT8 weight-only and FP8 (sm89+) against BF16, as torchao deploys them
    "quant_compile_variants": (("fp32", "int8_dyn"), ("fp32", "int8_wo", "int8_dyn", "int4_wo_tile", "fp8_dyn")),
    "fp8_capture_steps": (5, 50),
    "fp8_delayed_steps": (60, 120),
    "fp8_history_len": (16, 16),
    "fp8_gemm_size": (256, 4096),
    "fp8_bench_size": (512, 8192),
    "fp8_train_steps": (30, 300),
    "fp8_train_width": (64, 768),
    "fp8_train_seq": (32, 256),
    "fp8_train_batch": (8, 16),
    "fp8_accum_outputs": (32, 32),  # fewer outputs leave the promotion gain noisier than its check allows
    # performance chapter and `amp-docs bench` (amp_docs_lib/bench)
    "perf_matmul_sizes": ((64, 128, 256, 512), (256, 512, 1024, 2048, 4096, 8192)),
    "perf_alignment_base": (256, 4096),
    "perf_gpt_ladder": (
        {"tiny-32": (2, 32, 4), "tiny-64": (2, 64, 4), "tiny-96": (2, 96, 4)},
        {
            "small": (12, 768, 12),
            "medium": (24, 1024, 16),
            "large": (36, 1280, 20),
            "xl": (48, 1600, 25),
            "2.7B": (32, 2560, 32),
        },
    ),
    "perf_gpt_batch": (4, 4),
    "perf_gpt_seq": (16, 128),
    "perf_gpt_vocab": (128, 10_000),
    "perf_memory_sizes": (("tiny-64", "tiny-96"), ("small", "large", "xl")),
    "perf_min_run_time": (0.1, 0.2),
    "perf_rounds": (9, 15),
    "dist_features": (16, 256),
    "dist_hidden": (32, 1024),
    "dist_batch": (8, 64),
    "dist_model_params": (7_500_000_000, 7_500_000_000),
    "dist_devices": (64, 64),
    "debug_width": (32, 256),
    "debug_batch": (32, 256),
    "debug_depth": (6, 8),
    "exercise_steps": (40, 300),
    "exercise_batch_max": (4096, 65536),
    "exercise_memory_budget_mb": (16, 4096),
    "exercise_stress_steps": (60, 500),
    # training_regimes chapter (cpu-small sized for an AVX2 CPU, where BF16/FP16 matmuls are slow)
    "regimes_vocab": (16, 32),
    "regimes_branching": (2, 2),
    "regimes_seq": (32, 64),
    "regimes_layers": (2, 4),
    "regimes_heads": (4, 4),
    "regimes_width": (64, 128),
    "regimes_init_std": (0.1, 0.1),
    "regimes_batch": (16, 32),
    "regimes_steps": (120, 300),
    "regimes_lr": (3e-3, 3e-3),
    "regimes_warmup": (10, 20),
    "regimes_eval_every": (30, 25),
    "regimes_eval_windows": (128, 256),
    "regimes_train_tokens": (100_000, 1_000_000),
    "regimes_val_tokens": (10_000, 50_000),
    "regimes_noise_seeds": (2, 3),
}


def _column(i: int) -> Mapping[str, Any]:
    """Column ``i`` of :data:`_SIZES`: one profile's sizes."""
    return _sizes(**{name: values[i] for name, values in _SIZES.items()})


PROFILES: dict[str, Profile] = {
    "cpu-small": Profile(
        name="cpu-small",
        device="cpu",
        description="small sizes that keep every chapter fast on a 2-core CPU",
        sizes=_column(0),
    ),
    "gpu-full": Profile(
        name="gpu-full",
        device="cuda",
        description="full sizes for a CUDA GPU",
        sizes=_column(1),
    ),
}


def profile_names() -> list[str]:
    return sorted(PROFILES)


def get_profile(name: str) -> Profile:
    """Return the profile called ``name``; raise a clear error for anything else."""
    return lookup(PROFILES, name, "profile", profile_names())


def default_profile_name() -> str:
    """The profile the hardware calls for: ``gpu-full`` with CUDA, else ``cpu-small``."""
    import torch  # here, not at import: the build's up-to-date path stays torch-free

    return "gpu-full" if torch.cuda.is_available() else "cpu-small"


def profile_override(environ: Mapping[str, str] | None = None) -> str | None:
    """The profile ``$AMP_DOCS_PROFILE`` names (any case, e.g. ``CPU-SMALL``), or None if unset or blank.

    Raises ``ValueError`` naming the variable, its value and the valid profiles.
    """
    raw = (os.environ if environ is None else environ).get(PROFILE_ENV_VAR, "").strip()
    if not raw:
        return None
    if raw.lower() not in PROFILES:
        raise ValueError(
            f"{PROFILE_ENV_VAR}={raw!r} is not a profile; valid: {', '.join(profile_names())} "
            f"(or unset: chosen from the hardware)"
        )
    return raw.lower()


def active_profile() -> Profile:
    """The profile of this build: ``$AMP_DOCS_PROFILE`` if set, else the hardware default."""
    return get_profile(profile_override() or default_profile_name())
