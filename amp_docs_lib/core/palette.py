"""One colour per number format and per precision regime, for every figure of the book and for
the format explorer (the site build writes these as CSS variables that
``docs/assets/js/format-explorer.js`` and the page CSS use).

Plain data and a lookup, no plotting import: concept packages (their plots), the page kit and the
site machinery all take colours from here. The hues are the colour-blind-safe Tableau/Okabe-Ito
families, each readable on the light page and on the dark (slate) one; FP32, the reference of
most comparisons, is near-black (the dark rendering of a figure turns it light grey). Formats of
one family share a hue family: FP8 reds/purples, MX and 6/4-bit floats browns/pinks, integers greens.
"""

from __future__ import annotations

from typing import Any

# Sign, exponent and mantissa fields of a bit layout: the bit-layout figure and the format explorer.
BIT_FIELD_COLORS: dict[str, str] = {"sign": "#e07a5f", "exponent": "#3d85c6", "mantissa": "#81b29a"}

# Number formats, keyed by the display names of amp_docs_lib.numbers.formats.
FORMAT_COLORS: dict[str, str] = {
    "FP64": "#7f7f7f",
    "FP32": "#262626",
    "TF32": "#17a2b8",
    "BF16": "#1f77b4",
    "FP16": "#ff7f0e",
    "FP8 E4M3FN": "#d62728",
    "FP8 E5M2": "#9467bd",
    "E8M0": "#8c8c00",
    "FP6 E2M3": "#e377c2",
    "FP6 E3M2": "#bc5090",
    "FP4 E2M1": "#8c564b",
    "MXFP8": "#f28e8c",
    "NVFP4": "#c49c94",
    "INT8": "#2ca02c",
    "INT4": "#98bf3a",
}

# Precision regimes (amp_docs_lib.regimes: Regime.name). A regime takes the hue of the dtype its
# arithmetic runs in; variants of one dtype differ in shade, and the plots add line styles.
REGIME_COLORS: dict[str, str] = {
    "fp32": FORMAT_COLORS["FP32"],
    "tf32": FORMAT_COLORS["TF32"],
    "fp16": "#ffbb78",              # naive FP16: the FP16 hue, light
    "amp_fp16": FORMAT_COLORS["FP16"],
    "amp_fp16_overflow": "#a65300",  # the FP16 hue, dark
    "amp_bf16": FORMAT_COLORS["BF16"],
    "bf16": "#9ecae1",              # pure BF16: the BF16 hue, light
    "bf16_master": "#08519c",       # the BF16 hue, dark
    "bf16_kahan": "#6a3d9a",
    "bf16_optimi": "#cab2d6",       # optimi without Kahan: the Kahan run's control, its hue light
    "bf16_sr": "#b15928",
    "amp_bf16_moments": "#4eb3d3",
}

# Other spellings readers and code use for the same formats.
_ALIASES: dict[str, str] = {
    "float64": "FP64", "float32": "FP32", "float16": "FP16", "half": "FP16", "bfloat16": "BF16",
    "float8_e4m3fn": "FP8 E4M3FN", "e4m3": "FP8 E4M3FN", "e4m3fn": "FP8 E4M3FN", "fp8 e4m3": "FP8 E4M3FN",
    "fp8_e4m3": "FP8 E4M3FN", "float8_e5m2": "FP8 E5M2", "e5m2": "FP8 E5M2", "fp8_e5m2": "FP8 E5M2",
    "float8_e8m0fnu": "E8M0", "int8": "INT8", "int4": "INT4", "mxfp4": "FP4 E2M1",
    "fp6_e2m3": "FP6 E2M3", "fp6_e3m2": "FP6 E3M2", "fp4_e2m1": "FP4 E2M1",
    "fp8": "FP8 E4M3FN",  # bench.matmul's name for its E4M3 torch._scaled_mm
}


def _key(name: Any) -> str:
    text = str(name)
    return text[len("torch."):] if text.startswith("torch.") else text


def color_of(name: Any) -> str:
    """The book's colour for a format (display name, torch dtype or alias) or a regime name.

    Raises ValueError naming the valid names for anything else.
    """
    key = _key(name)
    if key in FORMAT_COLORS:
        return FORMAT_COLORS[key]
    if key in REGIME_COLORS:
        return REGIME_COLORS[key]
    for table in (FORMAT_COLORS, REGIME_COLORS):
        folded = {k.lower(): v for k, v in table.items()}
        if key.lower() in folded:
            return folded[key.lower()]
    if key.lower() in _ALIASES:
        return FORMAT_COLORS[_ALIASES[key.lower()]]
    raise ValueError(f"no colour for {name!r}; formats: {sorted(FORMAT_COLORS)}, "
                     f"regimes: {sorted(REGIME_COLORS)}, aliases: {sorted(_ALIASES)}")


def color_or_default(name: Any, default: str) -> str:
    """``color_of(name)`` for a format or regime of the palette, ``default`` for any other series
    (a method, a module, a recipe): plots colour what the book names the same everywhere."""
    try:
        return color_of(name)
    except ValueError:
        return default


def css_variables() -> str:
    """The palette as CSS custom properties (the site build writes them into every page's CSS)."""
    def slug(s: str) -> str:
        return "".join(c if c.isalnum() else "-" for c in s.lower())

    lines = [f"  --amp-bit-{k}: {v};" for k, v in BIT_FIELD_COLORS.items()]
    lines += [f"  --amp-format-{slug(k)}: {v};" for k, v in FORMAT_COLORS.items()]
    lines += [f"  --amp-regime-{slug(k)}: {v};" for k, v in REGIME_COLORS.items()]
    return ":root {\n" + "\n".join(lines) + "\n}\n"
