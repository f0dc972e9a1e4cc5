"""Verdicts: what this build measured about each claim of the literature.

Each verdict function runs a small, fast library call (format limits, a few casts, a one-step
optimizer, the documented op lists) and returns a :class:`Verdict`; a claim that needs hardware
or scale this machine lacks gets "not testable here", with the reason computed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from amp_docs_lib.core import gating

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


def _fp16_update_lost_at_2048() -> Verdict:
    # The paper: an update is lost when the weight is at least 2048x larger. At w = 1
    # (a power of two), 1 + 2**-11 rounds back to 1 in FP16 while 1 + 2**-10 moves; FP32 keeps both.
    from amp_docs_lib.numbers.numerics import update_stagnation

    df = update_stagnation(w=1.0, updates=(2.0**-11, 2.0**-10), formats=("FP16", "FP32"))
    lost = not df.loc[0, "FP16: w + u moves"]
    kept_above = bool(df.loc[1, "FP16: w + u moves"])
    fp32_keeps = bool(df.loc[0, "FP32: w + u moves"])
    return judged(lost and kept_above and fp32_keeps,
                  f"FP16: 1 + 2^-11 moves: {not lost}; 1 + 2^-10 moves: {kept_above}; FP32 keeps 2^-11: {fp32_keeps}")


def _fp16_flushes_below_2_24() -> Verdict:
    from amp_docs_lib.amp.underflow import format_limits

    tiny = format_limits("fp16")["min subnormal"]
    survives = float(torch.tensor(2.0**-24).half()) == 2.0**-24
    flushed = float(torch.tensor(2.0**-26).half()) == 0.0
    return judged(tiny == 2.0**-24 and survives and flushed,
                  f"smallest FP16 subnormal {tiny:.3g} (= 2^{math.log2(tiny):.0f}); 2^-26 casts to "
                  f"{float(torch.tensor(2.0**-26).half()):g}")


def _loss_scaling_recovers() -> Verdict:
    # Scaling by 2**16 before the cast moves the flush-to-zero threshold down 16 binades:
    # the measured fractions must match the log-uniform analytic prediction.
    from amp_docs_lib.amp.underflow import cast_report, predicted_fraction_below, synthetic_gradients

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
    from amp_docs_lib.numbers.numerics import accumulation_error

    df = accumulation_error(n_terms=4096, dtypes=("FP16", "FP32"))
    err = df.set_index(["dtype", "method"])["relative error"]
    e16, e32 = float(err[("FP16", "sequential")]), float(err[("FP32", "sequential")])
    return judged(e32 < e16 / 100, f"4096 terms, sequential sum: relative error FP16 {e16:.2g}, FP32 {e32:.2g}")


def _gradscaler_defaults() -> Verdict:
    from amp_docs_lib.amp.grad_scaler import torch_gradscaler_defaults

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
    from amp_docs_lib.amp.underflow import cast_report, synthetic_gradients

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
    from amp_docs_lib.amp.autocast_policy import default_autocast_dtypes

    d = default_autocast_dtypes()
    return judged(d.get("cpu") == "bfloat16" and d.get("cuda") == "float16",
                  ", ".join(f"{k}: {v}" for k, v in d.items()))


def _cpu_lists_match_probe() -> Verdict:
    from amp_docs_lib.amp.autocast_policy import documented_category, probe_op

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
    from amp_docs_lib.amp.autocast_policy import documented_category

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
    from amp_docs_lib.core.machine import cpu_native_matmul

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
    from amp_docs_lib.amp.underflow import synthetic_gradients

    g = synthetic_gradients(20_000, -12.0, -2.0, seed=3)
    gmax, fmax = float(g.abs().max()), torch.finfo(torch.float16).max
    s_ok = 2.0 ** math.floor(math.log2(fmax / gmax))
    inf_ok = int(torch.isinf((g * s_ok).half()).sum())
    inf_over = int(torch.isinf((g * 4 * s_ok).half()).sum())
    return judged(gmax * s_ok < fmax and inf_ok == 0 and inf_over > 0,
                  f"max|g| = {gmax:.3g}: S = 2^{math.log2(s_ok):.0f} (product {gmax * s_ok:,.0f}) gives {inf_ok} "
                  f"infinities in FP16; S = 2^{math.log2(4 * s_ok):.0f} (product {gmax * 4 * s_ok:,.0f}) gives {inf_over}")


def _nvidia_dynamic_scaling_example() -> Verdict:
    from amp_docs_lib.amp.grad_scaler import torch_gradscaler_defaults

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

