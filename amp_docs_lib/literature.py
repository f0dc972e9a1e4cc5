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
the hardware-dependent verdicts through :func:`amp_docs_lib.claims.on_this_machine`.
``bibliography()`` reads the BibTeX file with pybtex and formats its entries.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pandas as pd
import torch

from amp_docs_lib import gating

REPO_ROOT = Path(__file__).resolve().parent.parent
# Library data, so that editing a reference re-executes the chapter (the cache key hashes the library).
BIB_PATH = Path(__file__).resolve().parent / "data" / "references.bib"
CHAPTERS_DIR = REPO_ROOT / "docs" / "chapters"

HOLDS = "holds"
DOES_NOT_HOLD = "does not hold"
HOLDS_HERE = "holds on this machine"
NOT_HERE = "does not hold on this machine"
NOT_TESTABLE = "not testable here"
VERDICTS = (HOLDS, DOES_NOT_HOLD, HOLDS_HERE, NOT_HERE, NOT_TESTABLE)


@dataclass(frozen=True)
class Verdict:
    """This build's verdict on a claim: one of ``VERDICTS``, what was measured, and why."""

    status: str
    measured: str
    reason: str = ""

    def __post_init__(self):
        if self.status not in VERDICTS:
            raise ValueError(f"unknown verdict {self.status!r}; valid: {list(VERDICTS)}")


def judged(holds: bool, measured: str, *, hardware_dependent: bool = False) -> Verdict:
    """A verdict from a computed boolean: holds / does not hold (on this machine, if hardware-dependent)."""
    if hardware_dependent:
        return Verdict(HOLDS_HERE if holds else NOT_HERE, measured)
    return Verdict(HOLDS if holds else DOES_NOT_HOLD, measured)


def needs(requirement: str, why: str) -> Verdict | None:
    """``None`` when this machine meets ``requirement`` (a gating name), else a "not testable here" verdict."""
    if gating.requirement_met(requirement):
        return None
    return Verdict(NOT_TESTABLE, "n/a", f"needs {gating.describe(requirement)}: {why}")


def _machine_memory_bytes() -> int:
    if torch.cuda.is_available():
        return int(torch.cuda.get_device_properties(0).total_memory)
    import os
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return 0


def needs_scale(n_params: float, what: str) -> Verdict:
    """"not testable here" because a model of ``n_params`` does not fit: the reason gives both sizes.

    Model states of mixed-precision Adam are 16 bytes per parameter (ZeRO's accounting,
    computed by ``distributed.memory.per_rank_bytes``); the machine's memory is the GPU's
    (or the host's without one).
    """
    from amp_docs_lib.distributed.memory import per_rank_bytes

    need = per_rank_bytes(int(n_params), 1, "DDP", "amp_fp32_master")["total"]
    have = _machine_memory_bytes()
    if have >= need:
        return Verdict(NOT_TESTABLE, "n/a", f"needs scale: {what}, far beyond a build's time budget")
    return Verdict(NOT_TESTABLE, "n/a",
                   f"needs scale: {what}; its model states alone need {need / 1e9:,.0f} GB, "
                   f"this machine has {have / 1e9:,.0f} GB")


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


# --------------------------------------------------------------------------- verdict functions
def _fp16_update_lost_at_2048() -> Verdict:
    # The paper: an update is lost when the weight is at least 2048x larger. At w = 1
    # (a power of two), 1 + 2**-11 rounds back to 1 in FP16 while 1 + 2**-10 moves; FP32 keeps both.
    from amp_docs_lib.numerics import update_stagnation

    df = update_stagnation(w=1.0, updates=(2.0**-11, 2.0**-10), formats=("FP16", "FP32"))
    lost = not df.loc[0, "FP16: w + u moves"]
    kept_above = bool(df.loc[1, "FP16: w + u moves"])
    fp32_keeps = bool(df.loc[0, "FP32: w + u moves"])
    return judged(lost and kept_above and fp32_keeps,
                  f"FP16: 1 + 2^-11 moves: {not lost}; 1 + 2^-10 moves: {kept_above}; FP32 keeps 2^-11: {fp32_keeps}")


def _fp16_flushes_below_2_24() -> Verdict:
    from amp_docs_lib.underflow import format_limits

    tiny = format_limits("fp16")["min subnormal"]
    survives = float(torch.tensor(2.0**-24).half()) == 2.0**-24
    flushed = float(torch.tensor(2.0**-26).half()) == 0.0
    return judged(tiny == 2.0**-24 and survives and flushed,
                  f"smallest FP16 subnormal {tiny:.3g} (= 2^{math.log2(tiny):.0f}); 2^-26 casts to "
                  f"{float(torch.tensor(2.0**-26).half()):g}")


def _loss_scaling_recovers() -> Verdict:
    # Scaling by 2**16 before the cast moves the flush-to-zero threshold down 16 binades:
    # the measured fractions must match the log-uniform analytic prediction.
    from amp_docs_lib.underflow import cast_report, predicted_fraction_below, synthetic_gradients

    g = synthetic_gradients(20_000, seed=1)
    rows = {}
    for scale in (1.0, 2.0**16):
        measured = cast_report(g, "fp16", scale)["to zero"]
        predicted = predicted_fraction_below(2.0**-25 / scale)
        rows[scale] = (measured, predicted)
    ok = all(abs(m - p) < 0.01 for m, p in rows.values()) and rows[2.0**16][0] < rows[1.0][0]
    return judged(ok, f"to zero in FP16: {rows[1.0][0]:.1%} unscaled, {rows[2.0**16][0]:.1%} with scale 2^16 "
                      f"(predicted {rows[1.0][1]:.1%}, {rows[2.0**16][1]:.1%})")


def _fp32_accumulation() -> Verdict:
    from amp_docs_lib.numerics import accumulation_error

    df = accumulation_error(n_terms=4096, dtypes=("FP16", "FP32"))
    err = df.set_index(["dtype", "method"])["relative error"]
    e16, e32 = float(err[("FP16", "sequential")]), float(err[("FP32", "sequential")])
    return judged(e32 < e16 / 100, f"4096 terms, sequential sum: relative error FP16 {e16:.2g}, FP32 {e32:.2g}")


def _gradscaler_defaults() -> Verdict:
    from amp_docs_lib.grad_scaler import torch_gradscaler_defaults

    d = torch_gradscaler_defaults()
    documented = {"init_scale": 2.0**16, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 2000}
    got = {k: d.get(k) for k in documented}
    return judged(got == documented, ", ".join(f"{k}={v:g}" for k, v in got.items()))


def _bf16_range_of_fp32() -> Verdict:
    b, f = torch.finfo(torch.bfloat16), torch.finfo(torch.float32)
    same_min = b.smallest_normal == f.smallest_normal
    close_max = abs(b.max / f.max - 1) < 0.01
    return judged(same_min and close_max, f"max BF16 {b.max:.4g} vs FP32 {f.max:.4g}; smallest normal "
                                          f"{b.smallest_normal:.4g} vs {f.smallest_normal:.4g}")


def _bf16_conversion_is_truncation_with_rounding() -> Verdict:
    # FP32 -> BF16 keeps the upper 16 bits of the FP32 pattern, rounded to nearest even:
    # recompute that with integer arithmetic and compare with torch's cast.
    g = torch.Generator().manual_seed(0)
    x = torch.randn(100_000, generator=g) * 10.0 ** torch.randint(-30, 30, (100_000,), generator=g)
    bits = x.view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    torch_bits = x.to(torch.bfloat16).view(torch.int16).to(torch.int64) & 0xFFFF
    agree = float((rounded == torch_bits).double().mean())
    return judged(agree == 1.0, f"bit-level upper-half rounding agrees with torch's cast on {agree:.2%} of 100,000 values")


def _bf16_needs_no_scaling() -> Verdict:
    from amp_docs_lib.underflow import cast_report, synthetic_gradients

    g = synthetic_gradients(20_000, seed=2)
    z16, zb = cast_report(g, "fp16")["to zero"], cast_report(g, "bf16")["to zero"]
    return judged(zb == 0.0 and z16 > 0.0, f"gradients 1e-12..1e-2 flushed to zero: FP16 {z16:.1%}, BF16 {zb:.1%}")


def _fp8_maxima() -> Verdict:
    e4, e5 = torch.finfo(torch.float8_e4m3fn).max, torch.finfo(torch.float8_e5m2).max
    return judged(e4 == 448.0 and e5 == 57344.0, f"torch.finfo max: E4M3FN {e4:g}, E5M2 {e5:g}")


def _fp8_special_values() -> Verdict:
    codes = torch.arange(256, dtype=torch.int32).to(torch.uint8)
    e4 = codes.view(torch.float8_e4m3fn).float()
    e5 = codes.view(torch.float8_e5m2).float()
    e4_inf, e4_nan = int(torch.isinf(e4).sum()), int(torch.isnan(e4).sum())
    e5_inf = int(torch.isinf(e5).sum())
    return judged(e4_inf == 0 and e4_nan == 2 and e5_inf == 2,
                  f"of 256 codes: E4M3FN {e4_inf} inf, {e4_nan} NaN (one per sign); E5M2 {e5_inf} inf")


def _e5m2_wider_e4m3_finer() -> Verdict:
    f4, f5 = torch.finfo(torch.float8_e4m3fn), torch.finfo(torch.float8_e5m2)
    range4 = math.log2(f4.max / (f4.smallest_normal * f4.eps))
    range5 = math.log2(f5.max / (f5.smallest_normal * f5.eps))
    return judged(range5 > range4 and f4.eps < f5.eps,
                  f"range (binades incl. subnormals): E5M2 {range5:.0f}, E4M3FN {range4:.0f}; "
                  f"eps: E4M3FN {f4.eps:g}, E5M2 {f5.eps:g}")


def _fp8_training_at_scale() -> Verdict:
    return needs("sm89", "FP8 tensor cores") or needs_scale(175e9, "training runs of up to 175B parameters")


def _mx_block_scale() -> Verdict:
    from amp_docs_lib.fp8.scaling import torchao_to_mx

    x = torch.randn(4, 128, generator=torch.Generator().manual_seed(0))
    scale, _codes = torchao_to_mx(x, "FP8 E4M3FN", block_size=32)
    per_block = x.numel() // scale.numel()
    v = scale.float()
    powers_of_two = bool(torch.all(torch.log2(v) == torch.round(torch.log2(v))))
    return judged(per_block == 32 and scale.dtype == torch.float8_e8m0fnu and powers_of_two,
                  f"torchao MXFP8 of a 4x128 tensor: {scale.numel()} scales ({per_block} elements each), "
                  f"dtype {str(scale.dtype).replace('torch.', '')}, all powers of two: {powers_of_two}")


def _mx_sub8bit_training() -> Verdict:
    return needs("sm100", "native MX GEMMs") or needs_scale(1.5e9, "training generative language models")


def _mixed_adam_16_bytes() -> Verdict:
    # Measured on a real optimizer: BF16 working weights and gradients, an FP32 master copy,
    # torch.optim.Adam's two moments on the master copy after one step.
    n = 4096
    master = torch.nn.Parameter(torch.randn(n))
    opt = torch.optim.Adam([master], lr=1e-3)
    work = master.detach().to(torch.bfloat16).requires_grad_()
    (work.float() ** 2).sum().backward()
    master.grad = work.grad.float()
    opt.step()
    state = sum(t.numel() * t.element_size() for t in opt.state[master].values() if t.dim() > 0)
    total = (work.numel() * work.element_size() + work.grad.numel() * work.grad.element_size()
             + master.numel() * master.element_size() + state)
    master.grad = None  # the FP32 gradient is transient
    return judged(total / n == 16, f"{total / n:g} bytes per parameter (BF16 weight 2 + BF16 grad 2 + FP32 master 4 "
                                   f"+ Adam moments {state / n:g})")


def _zero_7_5b_example() -> Verdict:
    from amp_docs_lib.distributed.memory import per_rank_bytes

    paper = {"DDP": 120.0, "ZeRO-1": 31.4, "ZeRO-2": 16.6, "ZeRO-3": 1.9}
    got = {s: per_rank_bytes(7_500_000_000, 64, s, "amp_fp32_master")["total"] / 1e9 for s in paper}
    ok = all(abs(got[s] - paper[s]) <= 0.05 for s in paper)
    return judged(ok, ", ".join(f"{s} {got[s]:.2f} GB" for s in paper))


def _fsdp_scaling() -> Verdict:
    return needs("multi-gpu", "throughput against DDP across GPUs") or \
        needs_scale(175e9, "models of up to a trillion parameters on hundreds of GPUs")


def _fp8_lm_speed() -> Verdict:
    return needs("sm89", "FP8 tensor cores (H100 in the paper)") or needs_scale(175e9, "GPT-175B training")


def _fishman_long_runs() -> Verdict:
    return needs("cuda", "FP8 training") or needs_scale(7e9, "2 trillion tokens on a 7B model")


def _autocast_default_dtypes() -> Verdict:
    from amp_docs_lib.autocast_policy import default_autocast_dtypes

    d = default_autocast_dtypes()
    return judged(d.get("cpu") == "bfloat16" and d.get("cuda") == "float16",
                  ", ".join(f"{k}: {v}" for k, v in d.items()))


def _cpu_lists_match_probe() -> Verdict:
    from amp_docs_lib.autocast_policy import documented_category, probe_op

    mm, ln = probe_op("mm", "cpu")["category"], probe_op("layer_norm", "cpu")["category"]
    doc_mm, doc_ln = documented_category("mm", "cpu"), documented_category("layer_norm", "cpu")
    return judged(doc_mm == "lower" and mm == "lower" and doc_ln == "unlisted" and ln == "unchanged",
                  f"CPU autocast (bfloat16), probed: mm {mm}, layer_norm {ln}; documented: mm {doc_mm}, "
                  f"layer_norm {doc_ln}")


def _autocast_keeps_parameters_fp32() -> Verdict:
    lin = torch.nn.Linear(8, 8)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = lin(torch.randn(2, 8))
    ok = lin.weight.dtype == torch.float32 and y.dtype == torch.bfloat16
    return judged(ok, f"inside autocast(cpu, bfloat16): weight {str(lin.weight.dtype)[6:]}, output {str(y.dtype)[6:]}")


def _layer_norm_lists_differ() -> Verdict:
    from amp_docs_lib.autocast_policy import documented_category

    cpu, cuda = documented_category("layer_norm", "cpu"), documented_category("layer_norm", "cuda")
    return judged(cuda != cpu, f"documented list of layer_norm: CUDA '{cuda}', CPU '{cpu}'")


def _fp16_fields() -> Verdict:
    f = torch.finfo(torch.float16)
    return judged(f.max == 65504.0 and f.eps == 2.0**-10, f"FP16 max {f.max:g}, eps {f.eps:g} (= 2^{math.log2(f.eps):.0f})")


def _bf16_fields() -> Verdict:
    f = torch.finfo(torch.bfloat16)
    return judged(abs(f.max - 3.4e38) / 3.4e38 < 0.01 and f.eps == 2.0**-7,
                  f"BF16 max {f.max:.4g}, eps {f.eps:g} (= 2^{math.log2(f.eps):.0f})")


def _seed_format_fields() -> Verdict:
    f16, b16 = _fp16_fields(), _bf16_fields()
    return judged(f16.status == HOLDS and b16.status == HOLDS, f"{f16.measured}; {b16.measured}")


def bf16_matmul_native() -> bool:
    """Whether BF16 matmul runs natively here: a GPU with BF16 support, or a CPU flag oneDNN may use."""
    if torch.cuda.is_available():
        return bool(torch.cuda.is_bf16_supported())
    from amp_docs_lib.docsite.fingerprint import cpu_native_matmul

    return not cpu_native_matmul()["bf16"].startswith("none")


def _seed_speedup_by_size() -> Verdict:
    cuda = needs("cuda", "the log's GPT sizes (up to 2.7B) were timed on an unnamed GPU")
    if cuda is not None:
        native = bf16_matmul_native()
        return Verdict(NOT_TESTABLE, f"BF16 matmul native on this CPU: {native}", cuda.reason)
    return needs_scale(2.7e9, "the log's 2.7B-parameter model")


# NVIDIA's guide: tensor-core shape rule, tested where a CUDA device exists.
def _fp16_multiples_of_8() -> Verdict:
    cuda = needs("cuda", "the rule is about GPU Tensor Core kernels; a CPU matmul has other tile sizes")
    if cuda is not None:
        return cuda
    from amp_docs_lib.bench.matmul import alignment_sweep

    al = alignment_sweep(1024, ("fp16",), (-1, 0, 1, 8), "cuda", min_run_time=0.05)
    odd = al[~al["multiple of 8"]]
    rel = float(odd["relative to aligned"].mean())
    return judged(rel < 0.9, f"FP16 n = 1023 and 1025 ran at {rel:.0%} of n = 1024's rate on "
                             f"{torch.cuda.get_device_name(0)}", hardware_dependent=True)



def _nvidia_constant_scale_bound() -> Verdict:
    # The guide's bound: max|g| * S < 65,504 (FP16's largest value) keeps the scaled gradients finite.
    # S_ok is the largest power of two meeting it; 4 * S_ok puts the product past FP16's overflow threshold.
    from amp_docs_lib.underflow import synthetic_gradients

    g = synthetic_gradients(20_000, -12.0, -2.0, seed=3)
    gmax, fmax = float(g.abs().max()), torch.finfo(torch.float16).max
    s_ok = 2.0 ** math.floor(math.log2(fmax / gmax))
    inf_ok = int(torch.isinf((g * s_ok).half()).sum())
    inf_over = int(torch.isinf((g * 4 * s_ok).half()).sum())
    return judged(gmax * s_ok < fmax and inf_ok == 0 and inf_over > 0,
                  f"max|g| = {gmax:.3g}: S = 2^{math.log2(s_ok):.0f} (product {gmax * s_ok:,.0f}) gives {inf_ok} "
                  f"infinities in FP16; S = 2^{math.log2(4 * s_ok):.0f} (product {gmax * 4 * s_ok:,.0f}) gives {inf_over}")


def _nvidia_dynamic_scaling_example() -> Verdict:
    from amp_docs_lib.grad_scaler import torch_gradscaler_defaults

    d = torch_gradscaler_defaults()
    guide = {"growth_interval": 2000, "growth_factor": 2.0, "backoff_factor": 0.5}
    return judged(all(d.get(k) == v for k, v in guide.items()),
                  "torch.amp.GradScaler defaults: " + ", ".join(f"{k}={d.get(k):g}" for k in guide)
                  + f" (and init_scale={d.get('init_scale'):g}, which the guide leaves as 'a large value')")

# DeepSeek-V3's FP8 recipe, emulated on the CPU (amp_docs_lib.fp8.fine_grained).
def _deepseek_tiles_contain_outliers() -> Verdict:
    from amp_docs_lib.fp8.fine_grained import outlier_tensor, tile_vs_tensor

    x, mask = outlier_tensor(128, 512, n_outliers=4, factor=1e4)
    t = tile_vs_tensor(x, mask).set_index("scaling")
    sq, fl = t["SQNR (dB)"], t["flushed to zero"]
    ok = all(sq[g] > sq["per-tensor"] and fl[g] < fl["per-tensor"] for g in ("1x128 tiles", "128x128 blocks"))
    return judged(bool(ok), "E4M3, 128x512 Gaussian with 4 elements at 10^4 x amax, non-outliers: SQNR per-tensor "
                            f"{sq['per-tensor']:.1f} dB, 1x128 tiles {sq['1x128 tiles']:.1f} dB, 128x128 blocks "
                            f"{sq['128x128 blocks']:.1f} dB; flushed to zero {fl['per-tensor']:.1%}, "
                            f"{fl['1x128 tiles']:.2%}, {fl['128x128 blocks']:.1%}")


def _deepseek_promotion() -> Verdict:
    from amp_docs_lib.fp8.fine_grained import accumulation_study, promotion_gain

    st = accumulation_study(m=4, n=4, k=4096, bits=14, promote_every=128, rounding="nearest")
    e = st["relative error"].tolist()
    return judged(e[1] < e[0], f"K = 4096, E4M3 inputs, emulated 14-bit accumulator (round to nearest): relative "
                               f"error {e[0]:.2e} without promotion, {e[1]:.2e} with promotion every 128 "
                               f"({promotion_gain(st):.1f}x smaller); FP32 accumulator {e[2]:.1e}")


def _deepseek_h800_accumulator() -> Verdict:
    hw = needs("sm90", "the accumulator width is a property of Hopper (H800) tensor cores")
    if hw is not None:
        return hw
    return Verdict(NOT_TESTABLE, "n/a", "the tensor cores' accumulator width is not observable from torch "
                                        "(use_fast_accum of torch._scaled_mm switches the accumulation path, it does "
                                        "not report a width); the FP8 chapter emulates a 14-bit accumulator on the CPU")


# NVFP4 against MXFP4 (amp_docs_lib.fp8.nvfp4).
def _nvfp4_vs_mxfp4() -> Verdict:
    from amp_docs_lib.fp8.nvfp4 import fp4_block_comparison, gaussian_blocks

    t = fp4_block_comparison({"gaussian": gaussian_blocks(64, 512, seed=0)}).set_index("scheme")["SQNR (dB)"]
    return judged(t["NVFP4"] > t["MXFP4"], f"64x512 standard normal: SQNR NVFP4 {t['NVFP4']:.1f} dB, "
                                           f"MXFP4 {t['MXFP4']:.1f} dB")


def _nvfp4_amax_fp8_precision() -> Verdict:
    # Each block's amax maps to FP4's 6 through an E4M3 scale: its relative error is E4M3's rounding,
    # at most 2^-4 (3 mantissa bits); MXFP4's power-of-two scale gives no such bound.
    from amp_docs_lib.fp8.nvfp4 import block_amax_error, gaussian_blocks, nvfp4_quantize
    from amp_docs_lib.fp8.scaling import mx_quantize

    x = gaussian_blocks(64, 512, seed=1)
    nv = float(block_amax_error(x, nvfp4_quantize(x), 16).max())
    mx = float(block_amax_error(x, mx_quantize(x, "FP4 E2M1"), 32).max())
    bound = torch.finfo(torch.float8_e4m3fn).eps / 2
    return judged(nv <= bound, f"largest relative error of a block's amax: NVFP4 {nv:.4f} (E4M3 rounding bound "
                               f"{bound:g}), MXFP4 {mx:.3f}")


def _nvfp4_training() -> Verdict:
    return needs("sm100", "NVFP4 tensor cores (Blackwell)") or needs_scale(12e9, "a 12B model on 10 trillion tokens")


# OCP MX: the concrete formats, checked against torchao's constants and the library's registry.
def _mx_concrete_formats() -> Verdict:
    from torchao.prototype.mx_formats import constants as C

    from amp_docs_lib.fp8.formats import max_finite

    # The sentence's numbers against two independent implementations: the library's format registry
    # (torch / ml_dtypes limits) and torchao's MX constants.
    stated = {"FP8 E4M3FN": 448.0, "FP8 E5M2": 57344.0, "FP6 E2M3": 7.5, "FP6 E3M2": 28.0, "FP4 E2M1": 6.0}
    torchao_max = {"FP8 E4M3FN": C.F8E4M3_MAX, "FP8 E5M2": C.F8E5M2_MAX, "FP6 E2M3": C.F6_E2M3_MAX,
                   "FP6 E3M2": C.F6_E3M2_MAX, "FP4 E2M1": C.F4_E2M1_MAX}
    agree = all(max_finite(k) == v == torchao_max[k] for k, v in stated.items())
    n_elem = len(C.SUPPORTED_ELEM_DTYPES)
    ok = agree and C.BLOCK_SIZE_DEFAULT == 32 and n_elem == len(stated)
    return judged(ok, f"torchao 0.18: {n_elem} MX element dtypes, default block size {C.BLOCK_SIZE_DEFAULT}; largest "
                      "values, library registry / torchao: "
                      + ", ".join(f"{k.split()[-1]} {max_finite(k):g} / {torchao_max[k]:g}" for k in stated))


# Seed note 001's GPU figures, against the datasheet table of amp_docs_lib.bench.peaks.
def _seed_a100_bf16() -> Verdict:
    from amp_docs_lib.bench.peaks import GPU_PEAKS

    a = GPU_PEAKS["A100 SXM 80GB"]
    return judged(abs(a["bf16"] - 156.0) / a["bf16"] < 0.05,
                  f"A100 datasheet, dense: BF16 {a['bf16']:g}, FP16 {a['fp16']:g}, TF32 {a['tf32']:g} TFLOP/s")


def _seed_a100_tf32() -> Verdict:
    from amp_docs_lib.bench.peaks import GPU_PEAKS

    a = GPU_PEAKS["A100 SXM 80GB"]
    ok = abs(a["tf32"] - 156.0) / a["tf32"] < 0.05 and abs(a["fp32"] - 19.5) / a["fp32"] < 0.05 \
        and abs(a["tf32"] / a["fp32"] - 8) < 0.4
    return judged(ok, f"A100 datasheet, dense: TF32 {a['tf32']:g}, FP32 {a['fp32']:g} TFLOP/s "
                      f"(ratio {a['tf32'] / a['fp32']:.1f}x)")


def _seed_h100_fp8_vs_fp32() -> Verdict:
    from amp_docs_lib.bench.peaks import GPU_PEAKS

    parts, ok = [], True
    for row in ("H100 SXM", "H100 PCIe"):
        h = GPU_PEAKS[row]
        ratio = h["fp8"] / h["fp32"]
        ok = ok and abs(h["fp32"] - 60.0) / h["fp32"] < 0.05 and abs(ratio - 33) / 33 < 0.05
        parts.append(f"{row}: FP8 {h['fp8']:g}, FP32 {h['fp32']:g} TFLOP/s, ratio {ratio:.1f}x")
    return judged(ok, "; ".join(parts))


def _seed_a100_no_fp8() -> Verdict:
    from amp_docs_lib.bench.peaks import GPU_PEAKS

    a, h = GPU_PEAKS["A100 SXM 80GB"], GPU_PEAKS["H100 SXM"]
    return judged(a["fp8"] is None and h["fp8"] is not None,
                  f"datasheet FP8 Tensor Core peak: A100 {a['fp8'] if a['fp8'] is not None else 'none'}, "
                  f"H100 SXM {h['fp8']:g} TFLOP/s")


def _seed_mxfp8_overhead() -> Verdict:
    # Measured on torchao's MXTensor (data + E8M0 scales); the definition gives 1 byte per 32 = 3.125%.
    from amp_docs_lib.fp8.memory import memory_table

    t = memory_table(32, 256).set_index("storage")
    over = float(t.loc["MXFP8 (E4M3)", "measured bytes/element"]) - 1.0
    return judged(abs(over - 0.03) <= 0.005, f"torchao MXTensor, 32x256 MXFP8: {over:.2%} more bytes than the FP8 "
                                             "elements alone")

# --------------------------------------------------------------------------- the registry
CLAIMS: tuple[LiteratureClaim, ...] = (
    LiteratureClaim(
        "mpt-master-weights",
        "An FP16 weight update is lost when the weight is at least 2048 times larger than the update; "
        "an FP32 master copy of the weights keeps it.",
        "micikevicius2018mixed", "§3.1 (FP32 master copy of weights)",
        "chapters/formats.md#lost-updates-and-fp32-master-weights", _fp16_update_lost_at_2048),
    LiteratureClaim(
        "mpt-underflow",
        "Values smaller than 2^-24 become zero in FP16.",
        "micikevicius2018mixed", "§3.1",
        "chapters/gradscaler.md#why-fp16-needs-loss-scaling", _fp16_flushes_below_2_24),
    LiteratureClaim(
        "mpt-loss-scaling",
        "Scaling the loss shifts gradient values into FP16's representable range, preserving values that would "
        "otherwise become zero.",
        "micikevicius2018mixed", "§3.2 (loss scaling)",
        "chapters/gradscaler.md#why-fp16-needs-loss-scaling", _loss_scaling_recovers,
        note="the paper's histogram was recorded in FP32 training; this test uses synthetic gradients"),
    LiteratureClaim(
        "mpt-fp32-accumulation",
        "Reductions of FP16 values should accumulate in FP32 (then be stored in FP16) to keep accuracy.",
        "micikevicius2018mixed", "§3.3 (arithmetic precision)",
        "chapters/formats.md#accumulation-summing-many-small-numbers", _fp32_accumulation),
    LiteratureClaim(
        "pytorch-gradscaler-defaults",
        "torch.amp.GradScaler starts at a scale of 2^16, doubles it after 2000 overflow-free steps and halves it "
        "on overflow (PyTorch's defaults; the 2018 paper does not give these constants).",
        "pytorch_amp_docs", "torch.amp.GradScaler",
        "chapters/gradscaler.md#torchs-defaults-read-from-the-installed-code", _gradscaler_defaults),
    LiteratureClaim(
        "pytorch-autocast-default-dtype",
        "autocast's default lower-precision dtype is float16 on CUDA and bfloat16 on CPU.",
        "pytorch_amp_docs", "torch.autocast (device_type, dtype)",
        "chapters/autocast.md#the-default-dtype-depends-on-the-device", _autocast_default_dtypes),
    LiteratureClaim(
        "pytorch-cpu-op-lists",
        "Under CPU autocast, mm is on the list of ops that run in the lower precision, while layer_norm is on no "
        "list and runs in its input's dtype.",
        "pytorch_amp_docs", "Autocast Op Reference, CPU lists",
        "chapters/autocast.md#agreement-with-the-documented-lists", _cpu_lists_match_probe),
    LiteratureClaim(
        "bf16-range",
        "BF16 represents the same range of values as FP32.",
        "kalamkar2019bfloat16", "Abstract",
        "chapters/formats.md#the-format-table", _bf16_range_of_fp32),
    LiteratureClaim(
        "bf16-conversion",
        "Conversion between FP32 and BF16 is simple.",
        "kalamkar2019bfloat16", "Abstract",
        "chapters/formats.md#decoding-values-into-their-fields", _bf16_conversion_is_truncation_with_rounding,
        note="tested as: torch's FP32 -> BF16 cast is the upper 16 bits of the FP32 pattern, rounded to nearest even"),
    LiteratureClaim(
        "bf16-no-scaling",
        "Because BF16 keeps FP32's range, it needs no hyper-parameter tuning (such as loss scaling) for "
        "convergence, unlike FP16.",
        "kalamkar2019bfloat16", "Abstract",
        "chapters/gradscaler.md#why-fp16-needs-loss-scaling", _bf16_needs_no_scaling,
        note="tested on the range half of the claim: gradients that FP16 flushes survive in BF16"),
    LiteratureClaim(
        "fp8-maxima",
        "E4M3's largest finite value is 448 and E5M2's is 57344.",
        "micikevicius2022fp8", "§3, Table 1",
        "chapters/fp8.md#what-the-formats-can-represent", _fp8_maxima),
    LiteratureClaim(
        "fp8-specials",
        "E5M2 follows IEEE 754 for special values; E4M3 represents no infinities and has a single NaN "
        "mantissa pattern.",
        "micikevicius2022fp8", "Abstract; §3",
        "chapters/fp8.md#what-the-formats-can-represent", _fp8_special_values),
    LiteratureClaim(
        "fp8-e4m3-forward",
        "E4M3 is recommended for weights and activations and E5M2, with its wider range, for gradients.",
        "micikevicius2022fp8", "§3",
        "chapters/fp8.md#real-tensors-why-e4m3-forward-and-e5m2-backward", _e5m2_wider_e4m3_finer),
    LiteratureClaim(
        "fp8-training-quality",
        "FP8 training matches 16-bit result quality, with hyper-parameters unchanged, in models up to 175B parameters.",
        "micikevicius2022fp8", "Abstract",
        "chapters/fp8.md#fp8-training-with-torchao", _fp8_training_at_scale, hardware_dependent=True),
    LiteratureClaim(
        "mx-block",
        "An MX block is 32 elements sharing one E8M0 (power-of-two) scale.",
        "ocp2023mx", "MX format definition (k = 32, scale type E8M0)",
        "chapters/fp8.md#mx-block-scaling-bit-for-bit-against-torchao", _mx_block_scale),
    LiteratureClaim(
        "mx-training",
        "MX formats train generative language models at sub-8-bit weights, activations and gradients with "
        "minimal accuracy loss.",
        "rouhani2023microscaling", "Abstract",
        "chapters/fp8.md#mx-block-scaling-bit-for-bit-against-torchao", _mx_sub8bit_training,
        hardware_dependent=True),
    LiteratureClaim(
        "zero-16-bytes",
        "Mixed-precision Adam needs 16 bytes of model state per parameter: 2 + 2 for 16-bit weights and gradients, "
        "12 for the FP32 master copy, momentum and variance.",
        "rajbhandari2020zero", "§3.1",
        "chapters/distributed.md#memory-and-communication-for-n-parameters-on-k-devices", _mixed_adam_16_bytes),
    LiteratureClaim(
        "zero-7.5b",
        "A 7.5B-parameter model on 64 devices needs 120 GB per device under data parallelism, and 31.4, 16.6 and "
        "1.9 GB with ZeRO's stages 1, 2 and 3.",
        "rajbhandari2020zero", "Figure 1",
        "chapters/distributed.md#memory-and-communication-for-n-parameters-on-k-devices", _zero_7_5b_example),
    LiteratureClaim(
        "fsdp-scaling",
        "FSDP achieves performance comparable to DDP while supporting significantly larger models, with "
        "near-linear scalability in TFLOPS.",
        "zhao2023fsdp", "Abstract",
        "chapters/distributed.md#running-it-two-processes-one-step", _fsdp_scaling, hardware_dependent=True),
    LiteratureClaim(
        "fp8lm-speed",
        "FP8 mixed-precision training of GPT-175B on H100 used 39% less memory and ran 75% faster than BF16 "
        "(Megatron-LM).",
        "peng2023fp8lm", "Abstract (latest arXiv version; v1 reported 42% less memory and 64% faster)",
        "chapters/fp8.md#memory", _fp8_lm_speed, hardware_dependent=True),
    LiteratureClaim(
        "fishman-long-runs",
        "FP8 training instabilities appear only in long runs (up to 2 trillion tokens), caused by SwiGLU "
        "amplifying outliers.",
        "fishman2025scaling", "Abstract",
        "chapters/fp8.md#one-outlier", _fishman_long_runs, hardware_dependent=True),
    LiteratureClaim(
        "seed-fp16-bf16-fields",
        "FP16's range is ±65,504 with a 10-bit mantissa; BF16's range is FP32's (±3.4×10^38) with a 7-bit mantissa.",
        "seed_log_003", "§2 (Precision Format Trade-offs)",
        "chapters/formats.md#the-format-table", _seed_format_fields),
    LiteratureClaim(
        "seed-autocast-storage",
        "autocast does not change the parameters' storage dtype (FP32); it changes the dtype of the operations' results.",
        "seed_log_003", "§1 (Autocast Fundamentals)",
        "chapters/autocast.md#one-layer-watched-closely", _autocast_keeps_parameters_fp32),
    LiteratureClaim(
        "seed-layernorm-lists",
        "CPU and CUDA keep separate autocast lists: LayerNorm is on the CUDA FP32 list but not on the CPU's.",
        "seed_log_003", "§1 (Autocast Fundamentals)",
        "chapters/autocast.md#cpu-and-cuda-follow-different-policies", _layer_norm_lists_differ),
    LiteratureClaim(
        "seed-speedup-by-size",
        "BF16's speedup over FP32 grows with GPT model size, from 0.96x (small) to 2.18x (2.7B), at context 128.",
        "seed_log_003", "§4 (Benchmarking Insights)",
        "chapters/performance.md#a-gpt-training-step-per-model-size-and-precision", _seed_speedup_by_size,
        hardware_dependent=True),
    LiteratureClaim(
        "nvidia-fp16-multiples-of-8",
        "For FP16 Tensor Core GEMMs, all three dimensions (M, N, K) should be multiples of 8.",
        "nvidia_mpt_guide", "Tensor Core shape constraints (#tensor-core-shape; see the reference's note)",
        "chapters/performance.md#alignment-multiples-of-8-and-16", _fp16_multiples_of_8, hardware_dependent=True,
        note="tested as: on a CUDA GPU, FP16 sizes that are not multiples of 8 run below 90% of their aligned neighbour"),
    LiteratureClaim(
        "nvidia-constant-scale",
        "A constant loss scale S is safe from overflow when the largest gradient magnitude times S stays below "
        "65,504, FP16's largest value.",
        "nvidia_mpt_guide", "Choosing a scaling factor: constant loss scaling (#scalefactor)",
        "chapters/gradscaler.md#why-fp16-needs-loss-scaling", _nvidia_constant_scale_bound),
    LiteratureClaim(
        "nvidia-dynamic-scaling",
        "Dynamic loss scaling: halve the scale (and skip the update) on an overflow, double it after N = 2000 "
        "iterations without one; these are the example parameters that torch.amp.GradScaler uses as defaults.",
        "nvidia_mpt_guide", "Choosing a scaling factor: dynamic loss scaling (#scalefactor)",
        "chapters/gradscaler.md#torchs-defaults-read-from-the-installed-code", _nvidia_dynamic_scaling_example),
    LiteratureClaim(
        "deepseek-fine-grained",
        "Scaling per 1x128 activation tile and per 128x128 weight block (E4M3 for all tensors) confines an outlier's "
        "effect to its own group, where per-tensor scaling degrades the whole tensor.",
        "deepseek2024v3", "§3.3.2 (fine-grained quantization), Figure 7(a)",
        "chapters/fp8.md#deepseek-v3s-recipe-tiles-blocks-and-promoted-accumulation", _deepseek_tiles_contain_outliers),
    LiteratureClaim(
        "deepseek-accumulator",
        "FP8 GEMM accumulation on H800 tensor cores retains only about 14 bits, far fewer than FP32.",
        "deepseek2024v3", "§3.3.2 (increasing accumulation precision)",
        "chapters/fp8.md#deepseek-v3s-recipe-tiles-blocks-and-promoted-accumulation", _deepseek_h800_accumulator,
        hardware_dependent=True),
    LiteratureClaim(
        "deepseek-promotion",
        "Copying partial sums to FP32 registers on the CUDA cores every N_C = 128 elements of K improves the "
        "precision of a limited-precision accumulator.",
        "deepseek2024v3", "§3.3.2 (increasing accumulation precision), Figure 7(b)",
        "chapters/fp8.md#deepseek-v3s-recipe-tiles-blocks-and-promoted-accumulation", _deepseek_promotion,
        note="tested with an emulated 14-bit accumulator on the CPU"),
    LiteratureClaim(
        "nvfp4-vs-mxfp4",
        "NVFP4 (16-element blocks, E4M3 block scales, an FP32 tensor scale) represents values more accurately "
        "than MXFP4 (32-element blocks, power-of-two E8M0 scales).",
        "nvidia2025nvfp4", "§2 (NVFP4 format)",
        "chapters/fp8.md#nvfp4-against-mxfp4", _nvfp4_vs_mxfp4,
        note="tested on Gaussian data: quantization SQNR"),
    LiteratureClaim(
        "nvfp4-amax",
        "With E4M3 block scales, each block's largest value (at least 6.25% of the values) is represented "
        "at near-FP8 precision.",
        "nvidia2025nvfp4", "§2 (NVFP4 format)",
        "chapters/fp8.md#nvfp4-against-mxfp4", _nvfp4_amax_fp8_precision),
    LiteratureClaim(
        "nvfp4-training",
        "A 12B-parameter model pretrained with NVFP4 on 10 trillion tokens reaches training loss and downstream "
        "accuracies comparable to an FP8 baseline.",
        "nvidia2025nvfp4", "Abstract",
        "chapters/fp8.md#nvfp4-against-mxfp4", _nvfp4_training, hardware_dependent=True),
    LiteratureClaim(
        "mx-concrete-formats",
        "MX's floating-point element formats are E4M3, E5M2, E2M3, E3M2 and E2M1, with largest values 448, 57344, "
        "7.5, 28 and 6, in blocks of 32.",
        "ocp2023mx", "Concrete MX-compliant formats (see the reference's note)",
        "chapters/fp8.md#mx-block-scaling-bit-for-bit-against-torchao", _mx_concrete_formats,
        note="the specification also defines MXINT8, which torchao 0.18 does not implement"),
    LiteratureClaim(
        "seed-a100-bf16",
        "A100's BF16 Tensor Core peak is 156 TFLOPS (half its FP16 peak of 312).",
        "seed_notes_001", "Hardware Support Comparison; Performance Comparison",
        "chapters/performance.md#peaks-what-fast-is-measured-against", _seed_a100_bf16),
    LiteratureClaim(
        "seed-a100-tf32",
        "A100's TF32 Tensor Core peak is 156 TFLOPS, 8x its FP32 peak of 19.5.",
        "seed_notes_001", "TF32; Hardware Support Comparison",
        "chapters/performance.md#peaks-what-fast-is-measured-against", _seed_a100_tf32),
    LiteratureClaim(
        "seed-h100-fp8",
        "H100's FP8 peak (2,000 TFLOPS) is 33x its FP32 peak (60 TFLOPS).",
        "seed_notes_001", "Hardware Support Comparison",
        "chapters/performance.md#peaks-what-fast-is-measured-against", _seed_h100_fp8_vs_fp32),

    LiteratureClaim(
        "seed-a100-no-fp8",
        "A100 (Ampere) has no FP8 Tensor Cores; H100 has.",
        "seed_notes_001", "FP8 Hardware Requirements",
        "chapters/performance.md#peaks-what-fast-is-measured-against", _seed_a100_no_fp8),
    LiteratureClaim(
        "seed-mxfp8-overhead",
        "MXFP8's one E8M0 scale per 32 elements costs about 3% extra memory.",
        "seed_notes_001", "MXFP8 (Microscaling FP8 on Blackwell)",
        "chapters/fp8.md#memory", _seed_mxfp8_overhead),
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
    name, anchor = split_test(test)
    path = CHAPTERS_DIR / f"{name}.md"
    for line in path.read_text().splitlines():
        m = re.match(r"^#{1,6}\s+(.*?)\s*$", line)
        if m and heading_anchor(m.group(1)) == anchor:
            return m.group(1).replace("`", "")
    return anchor


def reading_map(claims=CLAIMS) -> pd.DataFrame:
    """Every claim evaluated: claim, source and location, the site's test (a link), this build's verdict,
    what was measured, why a claim is not testable here, and the claim's note (how it is tested)."""
    from amp_docs_lib.stamp import table_from_rows

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
    from amp_docs_lib.claims import on_this_machine

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


# --------------------------------------------------------------------------- anchors
def heading_anchor(heading: str) -> str:
    """The anchor mkdocs' toc extension gives a Markdown heading (its own ``slugify``)."""
    from markdown.extensions.toc import slugify

    text = re.sub(r"`([^`]*)`", r"\1", heading)  # code spans render as their text
    return slugify(text, "-")


def chapter_anchors(chapter: str | Path) -> set[str]:
    """Anchors of every Markdown heading of a chapter source (outside code fences)."""
    path = Path(chapter)
    if not path.is_absolute():
        path = REPO_ROOT / "docs" / path
    if not path.exists():
        raise ValueError(f"no chapter at {path}")
    anchors, fence = set(), False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            fence = not fence
            continue
        m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if m and not fence:
            anchors.add(heading_anchor(m.group(2)))
    return anchors


# --------------------------------------------------------------------------- bibliography
ARXIV_ID = re.compile(r"^(\d{2})(\d{2})\.(\d{4,5})(v\d+)?$")
DOI = re.compile(r"^10\.\d{4,9}/\S+$")


def arxiv_id_ok(identifier: str) -> bool:
    """Whether ``identifier`` is a well-formed new-style arXiv id (``YYMM.NNNNN``, optional ``vN``).

    The month must be 01-12; ids from 2015 on have five digits after the dot, earlier ones four.
    """
    m = ARXIV_ID.match(identifier) if isinstance(identifier, str) else None
    if m is None:
        return False
    yy, mm, number = int(m.group(1)), int(m.group(2)), m.group(3)
    return 1 <= mm <= 12 and len(number) == (5 if yy >= 15 else 4)


def load_bibliography(path: str | Path = BIB_PATH):
    """The BibTeX file parsed by pybtex (``pybtex.database.BibliographyData``)."""
    from pybtex.database import parse_file

    path = Path(path)
    if not path.exists():
        raise ValueError(f"no bibliography at {path}")
    return parse_file(str(path), bib_format="bibtex")


def _plain(text: str) -> str:
    from pybtex.richtext import Text  # noqa: F401  (pybtex installed)
    from latexcodec import codec  # noqa: F401  registers the 'latex' codec

    text = text.encode("utf-8").decode("latex") if "\\" in text else text
    return text.replace("{", "").replace("}", "")


def format_entry(key: str, entry) -> str:
    """One entry in Markdown: authors, *title*, venue and year, arXiv id or URL."""
    persons = entry.persons.get("author", [])
    names = []
    for p in persons:
        first = " ".join(p.first_names + p.middle_names)
        last = " ".join(p.prelast_names + p.last_names)
        names.append(_plain(f"{first} {last}".strip()))
    if len(names) > 6:
        authors = ", ".join(names[:6]) + ", et al"
    else:
        authors = ", ".join(names)
    f = entry.fields
    venue = f.get("booktitle") or f.get("journal") or f.get("institution") or f.get("organization") \
        or f.get("howpublished") or ""
    if f.get("volume"):
        venue += f" {f['volume']}" + (f"({f['number']})" if f.get("number") else "")
    parts = [f"**[{key}]** {authors}.", f"*{_plain(f.get('title', ''))}*."]
    if venue:
        parts.append(_plain(venue) + ",")
    parts.append(f"{f.get('year', 'n.d.')}.")
    if f.get("eprint"):
        parts.append(f"arXiv:[{f['eprint']}](https://arxiv.org/abs/{f['eprint']}).")
    elif f.get("url"):
        parts.append(f"<{f['url']}>")
    if f.get("doi"):
        parts.append(f"doi:[{f['doi']}](https://doi.org/{f['doi']}).")
    if f.get("note"):
        parts.append(_plain(f["note"]) + ".")
    return " ".join(parts)


def bibliography(path: str | Path = BIB_PATH, keys=None) -> str:
    """The references as a Markdown list, sorted by key (all entries, or those in ``keys``)."""
    data = load_bibliography(path)
    wanted = sorted(data.entries) if keys is None else list(keys)
    missing = [k for k in wanted if k not in data.entries]
    if missing:
        raise ValueError(f"keys not in the bibliography: {missing}; valid: {sorted(data.entries)}")
    return "\n".join(f"- {format_entry(k, data.entries[k])}" for k in wanted)


def identifiers(path: str | Path = BIB_PATH) -> dict[str, list[tuple[str, str]]]:
    """Every arXiv id and DOI in the bibliography: ``{'arxiv': [(key, id)], 'doi': [(key, doi)]}``."""
    data = load_bibliography(path)
    out: dict[str, list[tuple[str, str]]] = {"arxiv": [], "doi": []}
    for key, e in data.entries.items():
        if e.fields.get("eprint"):
            out["arxiv"].append((key, e.fields["eprint"]))
        if e.fields.get("doi"):
            out["doi"].append((key, e.fields["doi"]))
    return out
