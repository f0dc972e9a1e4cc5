"""The literature's claims, each tested by a small experiment of this build.

A :class:`LiteratureClaim` is one checkable sentence from a public source: the sentence (a
template filled with the claim's ``params``), the source (a key of
``amp_docs_lib/data/references.bib``) and where in it, the site section that discusses it
(``chapters/<name>.md#<anchor>``), a verdict function from :mod:`amp_docs_lib.literature.verdicts`
called with ``params``, and ``false_params``: a deliberately false variant of the same claim, which
the verdict function must reject (a verdict that cannot fail is caught by the tests). No verdict is
written down: each one is computed when the chapter runs.

``reading_map()`` evaluates every claim into one table row; ``machine_facts()`` renders
the hardware-dependent verdicts through :func:`amp_docs_lib.page.claims.on_this_machine`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

import pandas as pd

from amp_docs_lib.core.chapters import heading_for_anchor
from amp_docs_lib.literature import verdicts as V
from amp_docs_lib.literature.verdicts import HOLDS, HOLDS_HERE, NOT_TESTABLE, VERDICTS, Verdict

@dataclass(frozen=True)
class LiteratureClaim:
    """One claim of the literature and how this build tests it."""

    key: str
    claim: str  # the sentence; ``{name}`` fields are filled from ``params``
    source: str  # a key of amp_docs_lib/data/references.bib
    location: str  # section, table or figure in the source
    test: str  # chapters/<name>.md#<anchor>: where the site discusses it
    verdict_fn: Callable[..., Verdict]
    params: dict = field(default_factory=dict)
    false_params: dict | None = None  # a deliberately false variant of the claim
    hardware_dependent: bool = False
    note: str = ""
    kind: str = "experiment"  # or "definition": the installed code or the arithmetic against what the source states

    @property
    def text(self) -> str:
        """The claim's sentence with its parameters filled in."""
        return self.claim.format(**self.params)

    @property
    def false_text(self) -> str:
        """The sentence of the deliberately false variant (``""`` if the claim has none)."""
        return "" if self.false_params is None else self.claim.format(**{**self.params, **self.false_params})

    def verdict(self) -> Verdict:
        """Run the verdict function on the claim's parameters and return its verdict."""
        v = self.verdict_fn(**self.params)
        if not isinstance(v, Verdict):
            raise TypeError(f"verdict function of {self.key!r} returned {type(v).__name__}, not Verdict")
        return v

    def false_verdict(self) -> Verdict:
        """Run the verdict function on the false variant (``ValueError`` if the claim has none)."""
        if self.false_params is None:
            raise ValueError(f"claim {self.key!r} has no false variant")
        return self.verdict_fn(**{**self.params, **self.false_params})


E4, E5 = "FP8 E4M3FN", "FP8 E5M2"

CLAIMS: tuple[LiteratureClaim, ...] = (
    LiteratureClaim(
        "mpt-master-weights",
        "In FP16 a weight update can be lost once the weight is {ratio:g} times larger than the update as FP16 holds "
        "it, and never while it is less; an FP32 master copy of the weights keeps it.",
        "micikevicius2018mixed", "§3.1 (FP32 master copy of weights)",
        "chapters/formats.md#lost-updates-and-fp32-master-weights", V.fp16_update_lost,
        params={"ratio": 2048}, false_params={"ratio": 1024}, kind="definition",
        note="2048 = 2^11 follows from FP16's 10 mantissa bits and FP32's 23 keep the update: what is tested is "
             "torch's FP16 and FP32 addition. Tested on FP16 weights over FP16's whole range (subnormals included), updates of both signs, the "
             "ratio taken between the FP16 weight and the FP16 update; the paper says such an update 'can' be "
             "lost: whether it is depends on where the weight falls in its binade. An update computed in higher "
             "precision and rounded to FP16 can be lost at a smaller nominal ratio, when it rounds to a subnormal "
             "(measured)"),
    LiteratureClaim(
        "mpt-underflow",
        "Values at or below 2^{log2_threshold} become zero in FP16; larger ones round to at least its smallest "
        "subnormal, 2^-24.",
        "micikevicius2018mixed", "§3.1 (FP32 master copy of weights: 'any value whose magnitude is smaller than "
        "2^-24 becomes zero in FP16')",
        "chapters/gradscaler.md#why-fp16-needs-loss-scaling", V.fp16_flush_threshold,
        params={"log2_threshold": -25}, false_params={"log2_threshold": -24}, kind="definition",
        note="the paper's shorthand, 'values smaller than 2^-24 become zero', is the false variant: torch's "
             "round-to-nearest cast keeps values between 2^-25 and 2^-24 as 2^-24"),
    LiteratureClaim(
        "mpt-loss-scaling",
        "Scaling the loss by {scale:,.0f} keeps the gradients between 2^-25/{scale:,.0f} and 2^-25, which FP16 would "
        "otherwise flush to zero, and overflows none of the gradients up to 1e-2.",
        "micikevicius2018mixed", "§3.2 (loss scaling; its SSD example scales by 8)",
        "chapters/gradscaler.md#why-fp16-needs-loss-scaling", V.loss_scaling_recovers,
        params={"scale": 8.0}, false_params={"scale": 2.0**24}, kind="definition",
        note="a check of torch's FP16 cast under a scale, not of the paper's observation: which values a scale "
             "keeps and which it overflows follow from FP16's range (2^-25 and 65,504), and whether a scale of 8 "
             "suffices for SSD's gradients is the paper's measurement on its histogram, not re-run here. The paper's "
             "histogram was recorded in FP32 training; this test casts synthetic log-uniform gradients from 1e-12 "
             "to 1e-2 and counts what is flushed to zero (against the fraction of that distribution below "
             "2^-25/scale) and what overflows to inf. Gradients below 2^-25/8 are still flushed: a scale of 8 keeps three binades, not everything. The "
             "false variant, 2^24 (a scale GradScaler's growth reaches), overflows the largest gradients; 65536 is "
             "torch.amp.GradScaler's initial scale, not the paper's"),
    LiteratureClaim(
        "mpt-fp32-accumulation",
        "Reductions of FP16 values should accumulate in {accumulator} to keep accuracy.",
        "micikevicius2018mixed", "§3.3 (arithmetic precision)",
        "chapters/formats.md#accumulation-summing-many-small-numbers", V.accumulate_in,
        params={"accumulator": "FP32"}, false_params={"accumulator": "BF16"},
        note="tested as: 4096 FP16 terms summed sequentially in FP16 and in the claimed accumulator, the error of "
             "the accumulator's result (the paper then stores it in FP16, which adds one FP16 rounding, 2^-11 "
             "relative at most; not part of the test)"),
    LiteratureClaim(
        "pytorch-gradscaler-defaults",
        "torch.amp.GradScaler starts at a scale of {init_scale:g}, multiplies it by {growth_factor:g} after "
        "{growth_interval} overflow-free steps and by {backoff_factor:g} on overflow (PyTorch's defaults; the 2018 "
        "paper does not give these constants).",
        "pytorch_amp_docs", "torch.amp.GradScaler",
        "chapters/gradscaler.md#torchs-defaults-read-from-the-installed-code", V.gradscaler_defaults,
        params={"init_scale": 2.0**16, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 2000},
        false_params={"growth_interval": 1000}, kind="definition"),
    LiteratureClaim(
        "pytorch-autocast-default-dtype",
        "autocast's default lower-precision dtype is {cuda} on CUDA and {cpu} on CPU.",
        "pytorch_amp_docs", "torch.autocast (device_type, dtype)",
        "chapters/autocast.md#the-default-dtype-depends-on-the-device", V.autocast_default_dtypes,
        params={"cuda": "float16", "cpu": "bfloat16"}, false_params={"cpu": "float16"}, kind="definition"),
    LiteratureClaim(
        "pytorch-cpu-op-lists",
        "Under CPU autocast, {lower_op} is on the list of ops that run in the lower precision, while {unlisted_op} is "
        "on no list and runs in its input's dtype.",
        "pytorch_amp_docs", "Autocast Op Reference, CPU lists",
        "chapters/autocast.md#agreement-with-the-documented-lists", V.cpu_op_lists,
        params={"lower_op": "mm", "unlisted_op": "layer_norm"},
        false_params={"lower_op": "layer_norm", "unlisted_op": "mm"}, kind="definition"),
    LiteratureClaim(
        "bf16-range",
        "{fmt} covers FP32's range from 2^{log2_smallest} to FP32's largest: none becomes zero and only values within "
        "0.2% of the largest overflow.",
        "kalamkar2019bfloat16", "Abstract",
        "chapters/formats.md#the-format-table", V.range_of_fp32,
        params={"fmt": "BF16", "log2_smallest": -126}, false_params={"log2_smallest": -149}, kind="definition",
        note="2^-126 is FP32's smallest normal value. Tested as: FP32 values log-uniform over [2^-126, 2^128) and "
             "densely over the top binade, cast; the false variant claims FP32's subnormals too (from 2^-149, "
             "FP32's smallest subnormal); "
             "FP32's largest values round past BF16's largest to infinity, and BF16's subnormals stop at 2^-133 "
             "where FP32's reach 2^-149 (both measured)"),
    LiteratureClaim(
        "bf16-conversion",
        "Conversion between FP32 and BF16 is simple: torch's FP32 -> BF16 cast keeps the upper 16 bits of the "
        "FP32 pattern, rounded ({rounding}), and BF16 -> FP32 appends 16 zero bits.",
        "kalamkar2019bfloat16", "Abstract ('conversion to and from FP32 is simple'; the bit rules are this site's)",
        "chapters/formats.md#decoding-values-into-their-fields", V.bf16_conversion,
        params={"rounding": "nearest_even"}, false_params={"rounding": "truncate"}, kind="definition",
        note="that conversion is 'simple' is not testable; what is tested is how torch converts, bit for bit on "
             "100,000 values both ways: round to nearest even on the way down (the false variant, truncation, is "
             "what some hardware does) and exact on the way up"),
    LiteratureClaim(
        "bf16-no-scaling",
        "Because BF16 keeps FP32's range, training in BF16 needs no hyper-parameter tuning (such as loss scaling) "
        "for convergence.",
        "kalamkar2019bfloat16", "Abstract",
        "chapters/training_regimes.md#the-model-the-optimizer-and-the-regimes", V.bf16_training_without_scaling, hardware_dependent=True),
    LiteratureClaim(
        "fp8-maxima",
        "E4M3's largest finite value is {e4m3:g} and E5M2's is {e5m2:g}.",
        "micikevicius2022fp8", "§3, Table 1",
        "chapters/fp8.md#what-the-formats-can-represent", V.fp8_maxima,
        params={"e4m3": 448.0, "e5m2": 57344.0}, false_params={"e4m3": 480.0}, kind="definition",
        note="decoded from all 256 codes of torch's FP8 dtypes; 480 (the false variant) = 1.875 x 2^8 is what "
             "E4M3 would reach if its all-ones mantissa at the top exponent were not NaN; with IEEE-style special "
             "values (the whole top exponent reserved) E4M3's maximum would be 240"),
    LiteratureClaim(
        "fp8-specials",
        "E5M2 follows IEEE 754 for special values ({e5m2_inf} infinities); E4M3 represents {e4m3_inf} infinities "
        "and has a single NaN mantissa pattern ({e4m3_nan} NaN codes, one per sign).",
        "micikevicius2022fp8", "Abstract; §3",
        "chapters/fp8.md#what-the-formats-can-represent", V.fp8_specials,
        params={"e4m3_inf": 0, "e4m3_nan": 2, "e5m2_inf": 2}, false_params={"e4m3_inf": 2}, kind="definition"),
    LiteratureClaim(
        "fp8-e4m3-forward",
        "{forward}, with one more mantissa bit, rounds activations and gradients more finely, and {backward}, with "
        "its wider range, flushes fewer small gradient elements to zero: the trade behind recommending {forward} for "
        "weights and activations and {backward} for gradients.",
        "micikevicius2022fp8", "§3",
        "chapters/fp8.md#real-tensors-why-e4m3-forward-and-e5m2-backward", V.e4m3_forward_e5m2_backward,
        params={"forward": E4, "backward": E5}, false_params={"forward": E5, "backward": E4}, kind="definition",
        note="tested on the FP8 chapter's captured GPT tensors, scaled per tensor; after such scaling both orderings "
             "follow from the formats, and the data sets their size. Which choice trains better is not tested "
             "here: E4M3 has the higher SQNR on gradients too, and torchao's rowwise recipes and DeepSeek-V3 use "
             "E4M3 for gradients"),
    LiteratureClaim(
        "fp8-training-quality",
        "FP8 training matches 16-bit result quality, with hyper-parameters unchanged, in models up to 175B parameters.",
        "micikevicius2022fp8", "Abstract",
        "chapters/fp8.md#what-a-short-run-cannot-show", V.fp8_training_at_scale, hardware_dependent=True),
    LiteratureClaim(
        "mx-block",
        "An MX block is {block} consecutive elements sharing one power-of-two scale, "
        "X = 2^({rule}(log2(amax)) - emax).",
        "ocp2023mx", "MX format definition (k = 32, scale type E8M0)",
        "chapters/fp8.md#mx-block-scaling-bit-for-bit-against-torchao", V.mx_block,
        params={"block": 32, "rule": "floor"}, false_params={"rule": "ceil"}, kind="definition",
        note="tested as: torchao's MX quantizer at its default block size and FLOOR mode produces exactly the "
             "scales the rule predicts from each block's amax over blocks of the claimed size (another block size "
             "is rejected too); the false variant rounds log2(amax) up, torchao's CEIL mode. Mishra et al.'s rule is "
             "another one, 2^ceil(log2(amax / max)) (torchao's RCEIL, cuBLAS's): it rounds the ratio of amax to "
             "the element format's largest value up to a power of two, and differs from the specification's rule "
             "only in blocks whose amax has a significand above max's (1.75 for E4M3), where it doubles the scale; "
             "the measured counts show it is neither this claim nor its false variant"),
    LiteratureClaim(
        "mx-training",
        "MX formats train generative language models at sub-8-bit weights, activations and gradients with "
        "minimal accuracy loss.",
        "rouhani2023microscaling", "Abstract",
        "chapters/fp8.md#mx-scale-rules-floor-ceil-even-rceil", V.mx_sub8bit_training,
        hardware_dependent=True),
    LiteratureClaim(
        "mxfp8-scale-rounding",
        "Computing MXFP8 scales with the OCP specification's rounding can make LLM pre-training diverge; rounding "
        "the scale up (toward infinity), with E4M3 for all tensors, matches BF16 up to 8B parameters on 15T tokens.",
        "mishra2025mxfp8", "Abstract",
        "chapters/fp8.md#mx-scale-rules-floor-ceil-even-rceil", V.mxfp8_pretraining_at_scale,
        hardware_dependent=True),
    LiteratureClaim(
        "mx-concrete-formats",
        "MX's floating-point element formats are E4M3, E5M2, E2M3, E3M2 and E2M1, with largest values {e4m3:g}, "
        "{e5m2:g}, {e2m3:g}, {e3m2:g} and {e2m1:g}.",
        "ocp2023mx", "Concrete MX-compliant formats",
        "chapters/fp8.md#mx-block-scaling-bit-for-bit-against-torchao", V.mx_element_maxima,
        params={"e4m3": 448.0, "e5m2": 57344.0, "e2m3": 7.5, "e3m2": 28.0, "e2m1": 6.0},
        false_params={"e2m3": 8.0}, kind="definition",
        note="tested as: the largest element torchao's MX quantizer stores for a saturating block; the "
             "specification also defines MXINT8, which torchao 0.18 does not implement"),
    LiteratureClaim(
        "zero-16-bytes",
        "Mixed-precision Adam needs {bytes_per_parameter:g} bytes of model state per parameter: 2 + 2 for 16-bit "
        "weights and gradients, 4 for the FP32 master copy and {moments:g} for Adam's momentum and variance.",
        "rajbhandari2020zero", "§3.1",
        "chapters/distributed.md#memory-and-communication-for-n-parameters-on-k-devices", V.mixed_adam_bytes,
        params={"bytes_per_parameter": 16, "moments": 8}, false_params={"bytes_per_parameter": 12, "moments": 4},
        kind="definition",
        note="measured: the state torch.optim.Adam allocates in one step; the 2 + 2 + 4 bytes of the BF16 weights "
             "and gradients and FP32 master are the dtype sizes of tensors the check allocates. The false variant "
             "keeps the moments in 16 bits"),
    LiteratureClaim(
        "zero-7.5b",
        "A 7.5B-parameter model on 64 devices needs {ddp:g} GB per device under data parallelism, and {zero1:g}, "
        "{zero2:g} and {zero3:g} GB with ZeRO's stages 1, 2 and 3.",
        "rajbhandari2020zero", "Figure 1",
        "chapters/distributed.md#memory-and-communication-for-n-parameters-on-k-devices", V.zero_7_5b,
        params={"ddp": 120.0, "zero1": 31.4, "zero2": 16.6, "zero3": 1.9}, false_params={"zero1": 60.0}, kind="definition"),
    LiteratureClaim(
        "fsdp-scaling",
        "FSDP achieves performance comparable to DDP while supporting significantly larger models, with "
        "near-linear scalability in TFLOPS.",
        "zhao2023fsdp", "Abstract",
        "chapters/distributed.md#running-it-two-processes-one-step", V.fsdp_scaling, hardware_dependent=True),
    LiteratureClaim(
        "fp8lm-speed",
        "FP8 mixed-precision training of GPT-175B on H100 used 39% less memory and ran 75% faster than BF16 "
        "(Megatron-LM).",
        "peng2023fp8lm", "Abstract (latest arXiv version; v1 reported 42% less memory and 64% faster)",
        "chapters/fp8.md#memory", V.fp8_lm_speed, hardware_dependent=True),
    LiteratureClaim(
        "fishman-long-runs",
        "FP8 training instabilities appear only in long runs (up to 2 trillion tokens), caused by SwiGLU "
        "amplifying outliers.",
        "fishman2025scaling", "Abstract",
        "chapters/fp8.md#what-a-short-run-cannot-show", V.fishman_long_runs, hardware_dependent=True),
    LiteratureClaim(
        "nvidia-fp16-multiples-of-8",
        "For FP16 Tensor Core GEMMs, all three dimensions (M, N, K) should be multiples of 8: other sizes run "
        "{unaligned}.",
        "nvidia_mpt_guide", "Tensor Core shape constraints",
        "chapters/performance.md#alignment-multiples-of-8-and-16", V.fp16_multiples_of_8,
        params={"unaligned": "slower"}, false_params={"unaligned": "as fast"}, hardware_dependent=True,
        note="tested as: on a CUDA GPU, FP16 n = 1023 and 1025 run below 90% of the rate of n = 1024 and 1032 "
             "('slower') or at 90% of it or more ('as fast', the false variant)"),
    LiteratureClaim(
        "nvidia-constant-scale",
        "A constant loss scale S is safe from overflow when the largest gradient magnitude times S stays below "
        "{bound:,.0f}, FP16's largest value.",
        "nvidia_mpt_guide", "Choosing a scaling factor: constant loss scaling",
        "chapters/gradscaler.md#why-fp16-needs-loss-scaling", V.constant_scale_bound,
        params={"bound": 65504.0}, false_params={"bound": 1.25 * 65504.0}, kind="definition",
        note="a definition check: FP16 rounds values from 65,520 up to infinity, so the bound follows from FP16's "
             "definition and what is tested is torch's FP16 cast. Tested as: with S set so that max|g|·S is 1% below "
             "the bound no gradient overflows and 1% above it some do, so the bound is resolved to 1% only (any "
             "bound from about 64,870 to 66,180 passes); the false variant, 25% above, is far outside that"),
    LiteratureClaim(
        "nvidia-dynamic-scaling",
        "Dynamic loss scaling: multiply the scale by {backoff_factor:g} (and skip the update) on an overflow, by "
        "{growth_factor:g} after N = {growth_interval} iterations without one; these are the example parameters that "
        "torch.amp.GradScaler uses as defaults.",
        "nvidia_mpt_guide", "Choosing a scaling factor: dynamic loss scaling",
        "chapters/gradscaler.md#torchs-defaults-read-from-the-installed-code", V.dynamic_scaling_example,
        params={"growth_interval": 2000, "growth_factor": 2.0, "backoff_factor": 0.5},
        false_params={"backoff_factor": 0.25}, kind="definition",
        note="tested by running a default torch.amp.GradScaler('cpu'): one step with an inf gradient (is it "
             "skipped, how does the scale change), then overflow-free steps until the scale grows; the GradScaler "
             "defaults card reads the same constants from the installed code's signature"),
    LiteratureClaim(
        "deepseek-fine-grained",
        "Scaling per 1x128 activation tile (E4M3 for all tensors) confines an outlier's effect to its own "
        "{group_elements}-element group (it changes most of the others there and none outside), where per-tensor "
        "scaling changes most of the tensor.",
        "deepseek2024v3", "§3.3.2 (fine-grained quantization), Figure 7(a)",
        "chapters/fp8.md#deepseek-v3s-recipe-tiles-blocks-and-promoted-accumulation", V.tiles_contain_outliers,
        params={"group_elements": 128}, false_params={"group_elements": 32}, kind="definition",
        note="not a test of the report: its evidence for fine-grained scaling (Figure 7(a)) is training "
             "accuracy, which a build does not re-run. The 1x128 tiles are the library's emulation of the "
             "report's scaling, built with 128-element groups, so a group of 128 passes by construction: this "
             "checks the emulation (where the elements whose quantized value changes when outliers are "
             "planted lie), a definition check; the false variant states the extent of an MX block (32); a "
             "group of 256 fails too (half of it is unchanged)"),
    LiteratureClaim(
        "deepseek-accumulator",
        "FP8 GEMM accumulation on H800 tensor cores retains only about 14 bits, far fewer than FP32.",
        "deepseek2024v3", "§3.3.2 (increasing accumulation precision)",
        "chapters/fp8.md#accumulation-knobs", V.deepseek_h800_accumulator, hardware_dependent=True),
    LiteratureClaim(
        "deepseek-promotion",
        "Copying partial sums to FP32 registers on the CUDA cores every N_C = {promote_every} elements of K makes a "
        "limited-precision accumulator more accurate. By how much depends on how the accumulator rounds (this "
        "site's prediction, not the report's): on zero-mean products (Gaussian FP8 inputs, K = 4096), by a factor "
        "{nearest} K/N_C when it rounds to nearest and {toward_zero} K/N_C when it truncates; the report's "
        "'maximum relative error of nearly 2%' without promotion lies between the two modes' errors.",
        "deepseek2024v3", "§3.3.2 (increasing accumulation precision; the factors are this site's prediction)",
        "chapters/fp8.md#deepseek-v3s-recipe-tiles-blocks-and-promoted-accumulation", V.promotion_helps,
        params={"promote_every": 128, "nearest": "below", "toward_zero": "above"},
        false_params={"toward_zero": "below"},
        note="the report states that promotion helps and gives one figure, a maximum relative error of nearly 2% "
             "for random matrices with K = 4096 on H800, without saying how the tensor cores round. Rounding to "
             "nearest makes the rounding errors a random walk (a gain near sqrt(K/N_C)); truncation moves "
             "every partial sum toward zero, so its errors do not cancel, and the gain exceeds K/N_C. Tested "
             "with an emulated 14-bit accumulator on the CPU, 32 x 32 outputs; 'error' is the largest error "
             "against the largest output, which the report's 'maximum relative error' may not be. The false "
             "variant says the rounding mode does not matter (truncation's gain below K/N_C too)"),
    LiteratureClaim(
        "nvfp4-vs-mxfp4",
        "NVFP4 (16-element blocks, E4M3 block scales, an FP32 tensor scale) represents values {nvfp4_is} accurately "
        "than MXFP4 (32-element blocks, power-of-two E8M0 scales).",
        "nvidia2025nvfp4", "§2 (NVFP4 format)",
        "chapters/fp8.md#nvfp4-against-mxfp4", V.nvfp4_beats_mxfp4,
        params={"nvfp4_is": "more"}, false_params={"nvfp4_is": "less"},
        note="tested on Gaussian data: quantization SQNR"),
    LiteratureClaim(
        "nvfp4-amax",
        "With E4M3 block scales, each block whose scale stays in E4M3's normal range (amax at least 2^-6/448 of the "
        "tensor's) keeps its largest value at near-FP8 precision: relative error at most {bound:.4g}, and within 5% "
        "of it (the bound is this site's, from E4M3's 3 mantissa bits).",
        "nvidia2025nvfp4", "§2 (NVFP4 format; the bound is this site's)",
        "chapters/fp8.md#nvfp4-against-mxfp4", V.nvfp4_amax_precision,
        params={"bound": 2.0**-4 / (1 + 2.0**-4)}, false_params={"bound": 2.0**-4}, kind="definition",
        note="the report describes the format. The block's amax is stored as 6 times its E4M3 scale, so its error "
             "is the scale's rounding error: at most half a step of 2^-3 relative, largest just above a power of two, "
             "2^-4/(1 + 2^-4) = 1/17. 'Within 5%' rejects a looser bound, such as 2^-4 (the false variant, E4M3's "
             "half step without the 1 + 2^-4), or 2^-6. Tested on Gaussian blocks and on the same with one block "
             "×10^6, whose other blocks' scales fall below E4M3's range and lose far more (measured, outside the "
             "claim)"),
    LiteratureClaim(
        "nvfp4-training",
        "A 12B-parameter model pretrained with NVFP4 on 10 trillion tokens reaches training loss and downstream "
        "accuracies comparable to an FP8 baseline.",
        "nvidia2025nvfp4", "Abstract",
        "chapters/fp8.md#nvfp4-against-mxfp4", V.nvfp4_training, hardware_dependent=True),
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
    """Every claim evaluated: claim, source and location, the site's test, this build's verdict,
    what was measured, why a claim is not testable here, and the claim's note (how it is tested).

    Three columns hold the links of others (``show_cards(..., links=READING_MAP_LINKS)``): ``source link``
    (the source's entry in the literature page's References), ``read at link`` (its arXiv, DOI or URL
    address, whose text is ``read at``) and ``tested in link`` (the section, as a chapter page's URL)."""
    from amp_docs_lib.core.tables import table_from_rows
    from amp_docs_lib.literature.bibliography import address, ref_anchor

    rows = []
    for c in claims:
        v = c.verdict()
        name, _anchor = split_test(c.test)
        paper = address(c.source)
        rows.append({
            "claim": c.text,
            "source": f"[{c.source}] {c.location}",
            "source link": f"#{ref_anchor(c.source)}",  # its entry in the References of the literature page
            "read at": paper[0] if paper else None,
            "read at link": paper[1] if paper else None,
            "checks": KINDS[c.kind],
            "tested in": f"{name} › {heading_text(c.test)}",
            "tested in link": site_url(c.test),
            "verdict": v.status,
            "measured here": v.measured if v.measured != "n/a" else None,
            "false variant": _false_variant_text(c) if v.status != NOT_TESTABLE else None,
            "why not testable": v.reason or None,
            "note": c.note or None,
        })
    return table_from_rows(rows)


# Which column of reading_map() links which: shown column -> column holding its URL.
READING_MAP_LINKS = {"source": "source link", "read at": "read at link", "tested in": "tested in link"}

KINDS = {"experiment": "an experiment: a measurement of what the claim predicts",
         "definition": "a definition check: the installed code, or the arithmetic, agrees with what the source states"}


def _false_variant_text(c: LiteratureClaim) -> str | None:
    """The deliberately false variant of ``c`` and this build's verdict on it, as a card shows it."""
    if c.false_params is None:
        return None
    f = c.false_verdict()
    changed = ", ".join(f"{k} = {v:g}" if isinstance(v, float) else f"{k} = {v}" for k, v in c.false_params.items())
    said = c.false_text if c.false_text != c.text else f"the same test with {changed}"
    return f"{said} → {f.status} ({f.measured})"


def verdict_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Count of claims per verdict (from a :func:`reading_map` table), split by kind of check when the
    table has its ``checks`` column: experiments test the literature's claims, definition checks test
    the installed code against a definition, so a definition check that holds is not a literature claim
    confirmed."""
    if "verdict" not in table.columns:
        raise ValueError(f"need a reading_map table with a 'verdict' column, got columns {list(table.columns)}")
    counts = table["verdict"].value_counts()
    present = [v for v in VERDICTS if v in counts]
    out = {"verdict": present}
    if "checks" in table.columns:
        for kind, label in (("experiment", "experiments"), ("definition", "definition checks")):
            per = table.loc[table["checks"] == KINDS[kind], "verdict"].value_counts()
            out[label] = [int(per.get(v, 0)) for v in present]
    out["claims"] = [int(counts[v]) for v in present]
    return pd.DataFrame(out)


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
            f"[{c.source}] \"{c.text}\" was tested and {verdict} ({v.measured}).",
            f"[{c.source}] \"{c.text}\" is not testable here: {v.reason}.",
            holds=tested, measured=v.measured))
    return facts


def unfalsifiable(claims=CLAIMS) -> list[str]:
    """Keys of the claims whose verdict cannot be trusted to fail: a claim that holds here but has no
    false variant, or whose false variant the verdict function accepts too (it would accept anything).

    Claims not testable here are skipped (their verdict function is not exercised on this machine).
    """
    bad = []
    for c in claims:
        v = c.verdict()
        if v.status not in (HOLDS, HOLDS_HERE):
            continue
        if c.false_params is None:
            bad.append(c.key)
            continue
        if c.false_verdict().status in (HOLDS, HOLDS_HERE):
            bad.append(c.key)
    return bad


def section_links(source: str, claims=CLAIMS) -> str:
    """Markdown: the site sections that discuss ``source``'s claims, each linked once (chapter links,
    as a chapter page writes them; the site rewrites them to page URLs)."""
    targets = list(dict.fromkeys(c.test for c in claims if c.source == source))
    if not targets:
        raise ValueError(f"no claim cites {source!r}; cited sources: {sorted({c.source for c in claims})}")
    links = []
    for t in targets:
        name, anchor = split_test(t)
        links.append(f"[{name} › {heading_text(t)}]({name}.md#{anchor})")
    return "Discussed on this site: " + "; ".join(links) + "."
