"""NVIDIA Transformer Engine's FP8/FP4 recipes: names and defaults as its source defines them.

Transformer Engine (TE) is not installable with pip on a machine without the CUDA toolkit (its
PyTorch extension is compiled from source), so the recipe table here is *data read from TE's
source* (:data:`TE_SOURCE`), shown with a source stamp. Where TE is installed,
:func:`installed_recipe_defaults` reads the same defaults from the installed package (by
instantiating each recipe class) and :func:`te_linear_check` runs a ``te.Linear`` under
``te.autocast`` with each recipe; chapters gate those on ``requires:pkg:transformer_engine``
and a GPU of compute capability 8.9 or newer.
"""

from __future__ import annotations


import pandas as pd

TE_SOURCE = ("NVIDIA TransformerEngine source, transformer_engine/common/recipe/__init__.py "
             "(commit 000b637e) and transformer_engine/pytorch/quantization.py (commit f2b6810c), 2026")

# Read from the recipe dataclasses' field defaults in TE_SOURCE (environment variables unset).
RECIPES = [
    {"recipe": "DelayedScaling", "scaling": "per-tensor, delayed (scale from an amax history)",
     "element format(s)": "Format.HYBRID: E4M3 forward, E5M2 backward (default)",
     "scale": "FP32 per tensor", "key defaults": "margin=0, amax_history_len=1024, amax_compute_algo='max'",
     "TE support check": "sm89+ (on sm89: cuBLASLt >= 12.1.3, CUDA >= 12.1)"},
    {"recipe": "Float8CurrentScaling", "scaling": "per-tensor, current (amax of this tensor)",
     "element format(s)": "Format.HYBRID (default)",
     "scale": "FP32 per tensor (power-of-two only if NVTE_FP8_CURRENT_SCALING_POWER_2_SCALES=1)",
     "key defaults": "fprop GEMM use_split_accumulator=False; dgrad, wgrad True",
     "TE support check": "sm89+ (as DelayedScaling)"},
    {"recipe": "MXFP8BlockScaling", "scaling": "MX blocks of 32 consecutive values",
     "element format(s)": "Format.E4M3 (default)", "scale": "E8M0 per 32 elements",
     "key defaults": "margin=0; rowwise and columnwise copies both quantized from high precision",
     "TE support check": "sm100 up to, not including, sm120"},
    {"recipe": "Float8BlockScaling", "scaling": "blocks: 1x128 for inputs and gradients, 128x128 for weights",
     "element format(s)": "Format.E4M3 (default)",
     "scale": "FP32 per block, constrained to powers of two by default",
     "key defaults": "x_block_scaling_dim=1, w_block_scaling_dim=2, grad_block_scaling_dim=1; split accumulator required",
     "TE support check": "sm90+ and CUDA >= 12.9"},
    {"recipe": "NVFP4BlockScaling", "scaling": "two-level: blocks of 16 plus one FP32 per-tensor scale",
     "element format(s)": "Format.E2M1 elements (fp4_format), E4M3 block scales (fp8_format)",
     "scale": "E4M3 per 16 elements + FP32 per tensor",
     "key defaults": "16x16 2-D blocks for weights, random Hadamard transform on the weight-gradient GEMM's inputs only "
                     "('RHT is currently only applied to column-wise usage'), "
                     "stochastic rounding of gradients",
     "TE support check": "sm100+"},
]

DEFAULT_RECIPE = ("te.autocast(recipe=None) uses get_default_fp8_recipe(): MXFP8BlockScaling where MXFP8 is "
                  "supported, Float8CurrentScaling on sm120+, otherwise DelayedScaling")

FORMAT_MAXIMA = {"E4M3": 448, "E5M2": 57344, "E2M1": 6}  # TE's Format enum (max_fwd / max_bwd)

AUTOCAST = [
    {"API": "transformer_engine.pytorch.autocast(enabled=True, calibrating=False, recipe=None, "
            "amax_reduction_group=None)", "status": "current",
     "note": "context manager for FP8/FP4 quantization; recipe=None uses the default recipe"},
    {"API": "transformer_engine.pytorch.fp8_autocast(enabled=True, calibrating=False, fp8_recipe=None, "
            "fp8_group=None)", "status": "deprecated",
     "note": "emits DeprecationWarning and calls autocast(recipe=fp8_recipe, amax_reduction_group=fp8_group)"},
]


def recipe_table() -> pd.DataFrame:
    """TE's recipes and their defaults, as read from :data:`TE_SOURCE` (show with ``source=TE_SOURCE``)."""
    return pd.DataFrame(RECIPES)


def autocast_table() -> pd.DataFrame:
    """TE's autocast context managers, current and deprecated (from :data:`TE_SOURCE`)."""
    return pd.DataFrame(AUTOCAST)


def installed_recipe_defaults() -> pd.DataFrame:
    """Defaults read from the *installed* TE by instantiating each recipe (needs transformer_engine)."""
    from transformer_engine.common import recipe as R

    rows = []
    for name in ("DelayedScaling", "Float8CurrentScaling", "MXFP8BlockScaling", "Float8BlockScaling",
                 "NVFP4BlockScaling"):
        cls = getattr(R, name, None)
        if cls is None:
            rows.append({"recipe": name, "installed": False, "defaults": None})
            continue
        r = cls()
        keys = [k for k in ("fp8_format", "fp4_format", "margin", "amax_history_len", "amax_compute_algo",
                            "x_block_scaling_dim", "w_block_scaling_dim", "grad_block_scaling_dim") if hasattr(r, k)]
        rows.append({"recipe": name, "installed": True,
                     "defaults": ", ".join(f"{k}={getattr(r, k)!s}" for k in keys)})
    return pd.DataFrame(rows)


def te_linear_check(features: int = 256, tokens: int = 256, steps: int = 20) -> pd.DataFrame:
    """Run a ``te.Linear`` forward and backward under ``te.autocast`` for ``steps`` steps with each recipe
    this GPU supports, on a fresh input each step.

    Reports the relative error of the output against the same layer without quantization at the
    first step and at the last. The first step is not representative for ``DelayedScaling``: its
    scale comes from an amax history that is still empty (initial scale 1); by the last step the
    history holds the previous steps' amaxes, so the last column is the steady-state error.
    Needs transformer_engine and a CUDA GPU of compute capability 8.9+ (MX/NVFP4 need 10.0).
    """
    import torch
    import transformer_engine.pytorch as te
    from transformer_engine.common import recipe as R

    if not isinstance(steps, int) or steps < 2:
        raise ValueError(f"steps must be an int >= 2 (first and last step are reported), got {steps!r}")
    avail = {"DelayedScaling": te.is_fp8_available, "Float8CurrentScaling": te.is_fp8_available,
             "Float8BlockScaling": te.is_fp8_block_scaling_available, "MXFP8BlockScaling": te.is_mxfp8_available,
             "NVFP4BlockScaling": te.is_nvfp4_available}
    g = torch.Generator(device="cuda").manual_seed(0)
    inputs = [torch.randn(tokens, features, device="cuda", dtype=torch.bfloat16, generator=g) for _ in range(steps)]
    rows = []
    for name, check in avail.items():
        ok, reason = check(return_reason=True)
        if not ok or not hasattr(R, name):
            rows.append({"recipe": name, "ran": False, "rel. error, step 1": None,
                         f"rel. error, step {steps}": None, "why not": reason or "not in this TE"})
            continue
        torch.manual_seed(0)
        layer = te.Linear(features, features, params_dtype=torch.bfloat16).cuda()
        recipe = getattr(R, name)()
        errs = []
        try:
            for x in inputs:
                x = x.clone().requires_grad_()
                with torch.no_grad():
                    ref = layer(x).float()
                with te.autocast(enabled=True, recipe=recipe):
                    y = layer(x)
                y.float().sum().backward()
                errs.append(float((y.float() - ref).norm() / ref.norm()))
            rows.append({"recipe": name, "ran": True, "rel. error, step 1": errs[0],
                         f"rel. error, step {steps}": errs[-1], "why not": None})
        except Exception as e:  # a recipe this TE build does not support on this GPU
            rows.append({"recipe": name, "ran": False, "rel. error, step 1": None,
                         f"rel. error, step {steps}": None, "why not": type(e).__name__})
    return pd.DataFrame(rows)
