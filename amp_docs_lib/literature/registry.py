"""The literature's claims, each tested by a small experiment of this build, and the bibliography.

A :class:`LiteratureClaim` is one checkable sentence from a source: the claim, the
source (a key of ``amp_docs_lib/data/references.bib``) and where in it, the site's experiment that
tests it (``chapters/<name>.md#<anchor>``) and a *verdict function*. The verdict
function runs a small, fast library call (format limits, a few casts, a one-step
optimizer, the documented op lists) and returns a :class:`Verdict`; a claim that needs
hardware or scale this machine lacks gets the verdict "not testable here", with the
reason computed (``gating.requirement_met``, the memory the claim's model needs). No
verdict is written down: each one is computed when the chapter runs.

``reading_map()`` evaluates every claim into one table row; ``machine_facts()`` renders
the hardware-dependent verdicts through :func:`amp_docs_lib.page.claims.on_this_machine`.
``bibliography()`` reads the BibTeX file with pybtex and formats its entries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

import pandas as pd


from amp_docs_lib.core.chapters import heading_for_anchor
from amp_docs_lib.literature import verdicts as V
from amp_docs_lib.literature.verdicts import HOLDS_HERE, NOT_TESTABLE, VERDICTS, Verdict

@dataclass(frozen=True)
class LiteratureClaim:
    """One claim of the literature and how this build tests it."""

    key: str
    claim: str
    source: str  # a key of amp_docs_lib/data/references.bib
    location: str  # section, table or figure in the source
    test: str  # chapters/<name>.md#<anchor>
    verdict_fn: Callable[[], Verdict]
    hardware_dependent: bool = False
    note: str = ""

    def verdict(self) -> Verdict:
        """Run the verdict function (a small library call) and return its verdict."""
        v = self.verdict_fn()
        if not isinstance(v, Verdict):
            raise TypeError(f"verdict function of {self.key!r} returned {type(v).__name__}, not Verdict")
        return v


# --------------------------------------------------------------------------- the registry
CLAIMS: tuple[LiteratureClaim, ...] = (
    LiteratureClaim(
        "mpt-master-weights",
        "An FP16 weight update is lost when the weight is at least 2048 times larger than the update; "
        "an FP32 master copy of the weights keeps it.",
        "micikevicius2018mixed", "§3.1 (FP32 master copy of weights)",
        "chapters/formats.md#lost-updates-and-fp32-master-weights", V._fp16_update_lost_at_2048),
    LiteratureClaim(
        "mpt-underflow",
        "Values smaller than 2^-24 become zero in FP16.",
        "micikevicius2018mixed", "§3.1",
        "chapters/gradscaler.md#why-fp16-needs-loss-scaling", V._fp16_flushes_below_2_24),
    LiteratureClaim(
        "mpt-loss-scaling",
        "Scaling the loss shifts gradient values into FP16's representable range, preserving values that would "
        "otherwise become zero.",
        "micikevicius2018mixed", "§3.2 (loss scaling)",
        "chapters/gradscaler.md#why-fp16-needs-loss-scaling", V._loss_scaling_recovers,
        note="the paper's histogram was recorded in FP32 training; this test uses synthetic gradients"),
    LiteratureClaim(
        "mpt-fp32-accumulation",
        "Reductions of FP16 values should accumulate in FP32 (then be stored in FP16) to keep accuracy.",
        "micikevicius2018mixed", "§3.3 (arithmetic precision)",
        "chapters/formats.md#accumulation-summing-many-small-numbers", V._fp32_accumulation),
    LiteratureClaim(
        "pytorch-gradscaler-defaults",
        "torch.amp.GradScaler starts at a scale of 2^16, doubles it after 2000 overflow-free steps and halves it "
        "on overflow (PyTorch's defaults; the 2018 paper does not give these constants).",
        "pytorch_amp_docs", "torch.amp.GradScaler",
        "chapters/gradscaler.md#torchs-defaults-read-from-the-installed-code", V._gradscaler_defaults),
    LiteratureClaim(
        "pytorch-autocast-default-dtype",
        "autocast's default lower-precision dtype is float16 on CUDA and bfloat16 on CPU.",
        "pytorch_amp_docs", "torch.autocast (device_type, dtype)",
        "chapters/autocast.md#the-default-dtype-depends-on-the-device", V._autocast_default_dtypes),
    LiteratureClaim(
        "pytorch-cpu-op-lists",
        "Under CPU autocast, mm is on the list of ops that run in the lower precision, while layer_norm is on no "
        "list and runs in its input's dtype.",
        "pytorch_amp_docs", "Autocast Op Reference, CPU lists",
        "chapters/autocast.md#agreement-with-the-documented-lists", V._cpu_lists_match_probe),
    LiteratureClaim(
        "bf16-range",
        "BF16 represents the same range of values as FP32.",
        "kalamkar2019bfloat16", "Abstract",
        "chapters/formats.md#the-format-table", V._bf16_range_of_fp32),
    LiteratureClaim(
        "bf16-conversion",
        "Conversion between FP32 and BF16 is simple.",
        "kalamkar2019bfloat16", "Abstract",
        "chapters/formats.md#decoding-values-into-their-fields", V._bf16_conversion_is_truncation_with_rounding,
        note="tested as: torch's FP32 -> BF16 cast is the upper 16 bits of the FP32 pattern, rounded to nearest even"),
    LiteratureClaim(
        "bf16-no-scaling",
        "Because BF16 keeps FP32's range, it needs no hyper-parameter tuning (such as loss scaling) for "
        "convergence, unlike FP16.",
        "kalamkar2019bfloat16", "Abstract",
        "chapters/gradscaler.md#why-fp16-needs-loss-scaling", V._bf16_needs_no_scaling,
        note="tested on the range half of the claim: gradients that FP16 flushes survive in BF16"),
    LiteratureClaim(
        "fp8-maxima",
        "E4M3's largest finite value is 448 and E5M2's is 57344.",
        "micikevicius2022fp8", "§3, Table 1",
        "chapters/fp8.md#what-the-formats-can-represent", V._fp8_maxima),
    LiteratureClaim(
        "fp8-specials",
        "E5M2 follows IEEE 754 for special values; E4M3 represents no infinities and has a single NaN "
        "mantissa pattern.",
        "micikevicius2022fp8", "Abstract; §3",
        "chapters/fp8.md#what-the-formats-can-represent", V._fp8_special_values),
    LiteratureClaim(
        "fp8-e4m3-forward",
        "E4M3 is recommended for weights and activations and E5M2, with its wider range, for gradients.",
        "micikevicius2022fp8", "§3",
        "chapters/fp8.md#real-tensors-why-e4m3-forward-and-e5m2-backward", V._e5m2_wider_e4m3_finer),
    LiteratureClaim(
        "fp8-training-quality",
        "FP8 training matches 16-bit result quality, with hyper-parameters unchanged, in models up to 175B parameters.",
        "micikevicius2022fp8", "Abstract",
        "chapters/fp8.md#fp8-training-with-torchao", V._fp8_training_at_scale, hardware_dependent=True),
    LiteratureClaim(
        "mx-block",
        "An MX block is 32 elements sharing one E8M0 (power-of-two) scale.",
        "ocp2023mx", "MX format definition (k = 32, scale type E8M0)",
        "chapters/fp8.md#mx-block-scaling-bit-for-bit-against-torchao", V._mx_block_scale),
    LiteratureClaim(
        "mx-training",
        "MX formats train generative language models at sub-8-bit weights, activations and gradients with "
        "minimal accuracy loss.",
        "rouhani2023microscaling", "Abstract",
        "chapters/fp8.md#mx-block-scaling-bit-for-bit-against-torchao", V._mx_sub8bit_training,
        hardware_dependent=True),
    LiteratureClaim(
        "zero-16-bytes",
        "Mixed-precision Adam needs 16 bytes of model state per parameter: 2 + 2 for 16-bit weights and gradients, "
        "12 for the FP32 master copy, momentum and variance.",
        "rajbhandari2020zero", "§3.1",
        "chapters/distributed.md#memory-and-communication-for-n-parameters-on-k-devices", V._mixed_adam_16_bytes),
    LiteratureClaim(
        "zero-7.5b",
        "A 7.5B-parameter model on 64 devices needs 120 GB per device under data parallelism, and 31.4, 16.6 and "
        "1.9 GB with ZeRO's stages 1, 2 and 3.",
        "rajbhandari2020zero", "Figure 1",
        "chapters/distributed.md#memory-and-communication-for-n-parameters-on-k-devices", V._zero_7_5b_example),
    LiteratureClaim(
        "fsdp-scaling",
        "FSDP achieves performance comparable to DDP while supporting significantly larger models, with "
        "near-linear scalability in TFLOPS.",
        "zhao2023fsdp", "Abstract",
        "chapters/distributed.md#running-it-two-processes-one-step", V._fsdp_scaling, hardware_dependent=True),
    LiteratureClaim(
        "fp8lm-speed",
        "FP8 mixed-precision training of GPT-175B on H100 used 39% less memory and ran 75% faster than BF16 "
        "(Megatron-LM).",
        "peng2023fp8lm", "Abstract (latest arXiv version; v1 reported 42% less memory and 64% faster)",
        "chapters/fp8.md#memory", V._fp8_lm_speed, hardware_dependent=True),
    LiteratureClaim(
        "fishman-long-runs",
        "FP8 training instabilities appear only in long runs (up to 2 trillion tokens), caused by SwiGLU "
        "amplifying outliers.",
        "fishman2025scaling", "Abstract",
        "chapters/fp8.md#one-outlier", V._fishman_long_runs, hardware_dependent=True),
    LiteratureClaim(
        "seed-fp16-bf16-fields",
        "FP16's range is ±65,504 with a 10-bit mantissa; BF16's range is FP32's (±3.4×10^38) with a 7-bit mantissa.",
        "seed_log_003", "§2 (Precision Format Trade-offs)",
        "chapters/formats.md#the-format-table", V._seed_format_fields),
    LiteratureClaim(
        "seed-autocast-storage",
        "autocast does not change the parameters' storage dtype (FP32); it changes the dtype of the operations' results.",
        "seed_log_003", "§1 (Autocast Fundamentals)",
        "chapters/autocast.md#one-layer-watched-closely", V._autocast_keeps_parameters_fp32),
    LiteratureClaim(
        "seed-layernorm-lists",
        "CPU and CUDA keep separate autocast lists: LayerNorm is on the CUDA FP32 list but not on the CPU's.",
        "seed_log_003", "§1 (Autocast Fundamentals)",
        "chapters/autocast.md#cpu-and-cuda-follow-different-policies", V._layer_norm_lists_differ),
    LiteratureClaim(
        "seed-speedup-by-size",
        "BF16's speedup over FP32 grows with GPT model size, from 0.96x (small) to 2.18x (2.7B), at context 128.",
        "seed_log_003", "§4 (Benchmarking Insights)",
        "chapters/performance.md#a-gpt-training-step-per-model-size-and-precision", V._seed_speedup_by_size,
        hardware_dependent=True),
    LiteratureClaim(
        "nvidia-fp16-multiples-of-8",
        "For FP16 Tensor Core GEMMs, all three dimensions (M, N, K) should be multiples of 8.",
        "nvidia_mpt_guide", "Tensor Core shape constraints (#tensor-core-shape; see the reference's note)",
        "chapters/performance.md#alignment-multiples-of-8-and-16", V._fp16_multiples_of_8, hardware_dependent=True,
        note="tested as: on a CUDA GPU, FP16 sizes that are not multiples of 8 run below 90% of their aligned neighbour"),
    LiteratureClaim(
        "nvidia-constant-scale",
        "A constant loss scale S is safe from overflow when the largest gradient magnitude times S stays below "
        "65,504, FP16's largest value.",
        "nvidia_mpt_guide", "Choosing a scaling factor: constant loss scaling (#scalefactor)",
        "chapters/gradscaler.md#why-fp16-needs-loss-scaling", V._nvidia_constant_scale_bound),
    LiteratureClaim(
        "nvidia-dynamic-scaling",
        "Dynamic loss scaling: halve the scale (and skip the update) on an overflow, double it after N = 2000 "
        "iterations without one; these are the example parameters that torch.amp.GradScaler uses as defaults.",
        "nvidia_mpt_guide", "Choosing a scaling factor: dynamic loss scaling (#scalefactor)",
        "chapters/gradscaler.md#torchs-defaults-read-from-the-installed-code", V._nvidia_dynamic_scaling_example),
    LiteratureClaim(
        "deepseek-fine-grained",
        "Scaling per 1x128 activation tile and per 128x128 weight block (E4M3 for all tensors) confines an outlier's "
        "effect to its own group, where per-tensor scaling degrades the whole tensor.",
        "deepseek2024v3", "§3.3.2 (fine-grained quantization), Figure 7(a)",
        "chapters/fp8.md#deepseek-v3s-recipe-tiles-blocks-and-promoted-accumulation", V._deepseek_tiles_contain_outliers),
    LiteratureClaim(
        "deepseek-accumulator",
        "FP8 GEMM accumulation on H800 tensor cores retains only about 14 bits, far fewer than FP32.",
        "deepseek2024v3", "§3.3.2 (increasing accumulation precision)",
        "chapters/fp8.md#deepseek-v3s-recipe-tiles-blocks-and-promoted-accumulation", V._deepseek_h800_accumulator,
        hardware_dependent=True),
    LiteratureClaim(
        "deepseek-promotion",
        "Copying partial sums to FP32 registers on the CUDA cores every N_C = 128 elements of K improves the "
        "precision of a limited-precision accumulator.",
        "deepseek2024v3", "§3.3.2 (increasing accumulation precision), Figure 7(b)",
        "chapters/fp8.md#deepseek-v3s-recipe-tiles-blocks-and-promoted-accumulation", V._deepseek_promotion,
        note="tested with an emulated 14-bit accumulator on the CPU"),
    LiteratureClaim(
        "nvfp4-vs-mxfp4",
        "NVFP4 (16-element blocks, E4M3 block scales, an FP32 tensor scale) represents values more accurately "
        "than MXFP4 (32-element blocks, power-of-two E8M0 scales).",
        "nvidia2025nvfp4", "§2 (NVFP4 format)",
        "chapters/fp8.md#nvfp4-against-mxfp4", V._nvfp4_vs_mxfp4,
        note="tested on Gaussian data: quantization SQNR"),
    LiteratureClaim(
        "nvfp4-amax",
        "With E4M3 block scales, each block's largest value (at least 6.25% of the values) is represented "
        "at near-FP8 precision.",
        "nvidia2025nvfp4", "§2 (NVFP4 format)",
        "chapters/fp8.md#nvfp4-against-mxfp4", V._nvfp4_amax_fp8_precision),
    LiteratureClaim(
        "nvfp4-training",
        "A 12B-parameter model pretrained with NVFP4 on 10 trillion tokens reaches training loss and downstream "
        "accuracies comparable to an FP8 baseline.",
        "nvidia2025nvfp4", "Abstract",
        "chapters/fp8.md#nvfp4-against-mxfp4", V._nvfp4_training, hardware_dependent=True),
    LiteratureClaim(
        "mx-concrete-formats",
        "MX's floating-point element formats are E4M3, E5M2, E2M3, E3M2 and E2M1, with largest values 448, 57344, "
        "7.5, 28 and 6, in blocks of 32.",
        "ocp2023mx", "Concrete MX-compliant formats (see the reference's note)",
        "chapters/fp8.md#mx-block-scaling-bit-for-bit-against-torchao", V._mx_concrete_formats,
        note="the specification also defines MXINT8, which torchao 0.18 does not implement"),
    LiteratureClaim(
        "seed-a100-bf16",
        "A100's BF16 Tensor Core peak is 156 TFLOPS (half its FP16 peak of 312).",
        "seed_notes_001", "Hardware Support Comparison; Performance Comparison",
        "chapters/performance.md#peaks-what-fast-is-measured-against", V._seed_a100_bf16),
    LiteratureClaim(
        "seed-a100-tf32",
        "A100's TF32 Tensor Core peak is 156 TFLOPS, 8x its FP32 peak of 19.5.",
        "seed_notes_001", "TF32; Hardware Support Comparison",
        "chapters/performance.md#peaks-what-fast-is-measured-against", V._seed_a100_tf32),
    LiteratureClaim(
        "seed-h100-fp8",
        "H100's FP8 peak (2,000 TFLOPS) is 33x its FP32 peak (60 TFLOPS).",
        "seed_notes_001", "Hardware Support Comparison",
        "chapters/performance.md#peaks-what-fast-is-measured-against", V._seed_h100_fp8_vs_fp32),

    LiteratureClaim(
        "seed-a100-no-fp8",
        "A100 (Ampere) has no FP8 Tensor Cores; H100 has.",
        "seed_notes_001", "FP8 Hardware Requirements",
        "chapters/performance.md#peaks-what-fast-is-measured-against", V._seed_a100_no_fp8),
    LiteratureClaim(
        "seed-mxfp8-overhead",
        "MXFP8's one E8M0 scale per 32 elements costs about 3% extra memory.",
        "seed_notes_001", "MXFP8 (Microscaling FP8 on Blackwell)",
        "chapters/fp8.md#memory", V._seed_mxfp8_overhead),
)


def get_claim(key: str) -> LiteratureClaim:
    """The registry entry named ``key``."""
    for c in CLAIMS:
        if c.key == key:
            return c
    raise ValueError(f"unknown claim {key!r}; valid keys: {[c.key for c in CLAIMS]}")


# --------------------------------------------------------------------------- rendering
def split_test(test: str) -> tuple[str, str]:
    """``chapters/<name>.md#<anchor>`` -> (``<name>``, ``<anchor>``); ValueError for anything else."""
    m = re.fullmatch(r"chapters/([a-z0-9_]+)\.md#([a-z0-9_-]+)", test) if isinstance(test, str) else None
    if m is None:
        raise ValueError(f"test must look like 'chapters/<name>.md#<anchor>', got {test!r}")
    return m.group(1), m.group(2)


def site_url(test: str) -> str:
    """The built site's URL of ``test`` relative to a chapter page (``use_directory_urls``): ``../<name>/#<anchor>``."""
    name, anchor = split_test(test)
    return f"../{name}/#{anchor}"


def heading_text(test: str) -> str:
    """The heading of the chapter source that ``test``'s anchor points to (the anchor itself if not found)."""
    return heading_for_anchor(*split_test(test))


def reading_map(claims=CLAIMS) -> pd.DataFrame:
    """Every claim evaluated: claim, source and location, the site's test (a link), this build's verdict,
    what was measured, why a claim is not testable here, and the claim's note (how it is tested)."""
    from amp_docs_lib.core.tables import table_from_rows

    rows = []
    for c in claims:
        v = c.verdict()
        name, _anchor = split_test(c.test)
        rows.append({
            "claim": c.claim,
            "source": f"[{c.source}] {c.location}",
            "tested in": f"{name} › {heading_text(c.test)}",
            "verdict": v.status,
            "measured here": v.measured if v.measured != "n/a" else None,
            "why not testable": v.reason or None,
            "note": c.note or None,
        })
    return table_from_rows(rows)


def tests_html(claims=CLAIMS) -> str:
    """An HTML list linking each claim to the section of the site that tests it (links of the built site)."""
    import html

    items = []
    for c in claims:
        name, _ = split_test(c.test)
        items.append(f'<li><a href="{html.escape(site_url(c.test))}">{html.escape(name)} › '
                     f'{html.escape(heading_text(c.test))}</a>: {html.escape(c.claim)} '
                     f'<em>[{html.escape(c.source)}]</em></li>')
    return '<ul class="amp-reading-map">' + "".join(items) + "</ul>"


def verdict_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Count of claims per verdict (from a :func:`reading_map` table)."""
    if "verdict" not in table.columns:
        raise ValueError(f"need a reading_map table with a 'verdict' column, got columns {list(table.columns)}")
    counts = table["verdict"].value_counts()
    return pd.DataFrame({"verdict": [v for v in VERDICTS if v in counts],
                         "claims": [int(counts[v]) for v in VERDICTS if v in counts]})


def machine_facts(claims=CLAIMS) -> list:
    """``on_this_machine`` facts for the hardware-dependent claims that this machine could test."""
    from amp_docs_lib.page.claims import on_this_machine

    facts = []
    for c in claims:
        if not c.hardware_dependent:
            continue
        v = c.verdict()
        tested = v.status != NOT_TESTABLE
        verdict = "holds" if v.status == HOLDS_HERE else "does not hold"
        facts.append(on_this_machine(
            f"[{c.source}] \"{c.claim}\" was tested and {verdict} ({v.measured}).",
            f"[{c.source}] \"{c.claim}\" is not testable here: {v.reason}.",
            holds=tested, measured=v.measured))
    return facts




