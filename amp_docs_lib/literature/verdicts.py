"""Verdict functions: each runs a small experiment that decides whether a claim of the literature holds.

A verdict function takes the claim's *parameters* (the numbers or names its sentence states) and
returns a :class:`Verdict`. Its outcome must depend on what it measures, never only on format
definitions or on the arguments it is given: the registry passes each function a deliberately
false variant of its claim too, and the tests require that variant to be rejected
(``tests/test_literature.py``). A claim that needs hardware or scale this machine lacks gets
"not testable here", with the reason computed (``gating.requirement_met``, the memory the claim's
model needs).
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

    need = per_rank_bytes(int(n_params), 1, "DDP", "bf16_master")["total"]
    have = _machine_memory_bytes()
    if have >= need:
        return Verdict(NOT_TESTABLE, "n/a", f"needs scale: {what}, far beyond a build's time budget")
    return Verdict(NOT_TESTABLE, "n/a",
                   f"needs scale: {what}; its model states alone need {need / 1e9:,.0f} GB, "
                   f"this machine has {have / 1e9:,.0f} GB")


# --------------------------------------------------------------------------- experiments
_DT = {"FP16": torch.float16, "BF16": torch.bfloat16, "FP32": torch.float32}


def fp16_weight_update_pairs(ratios, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """FP16 weights over FP16's whole range and the FP16 updates ``w / r`` of each ratio, both signs.

    Returns ``(w, u, lost)``: the FP16 weights, the updates as FP16 holds them (rounded, possibly
    subnormal) and whether ``w + u`` in FP16 equals ``w``. The ratio an FP16 step sees is ``w / u``
    of these FP16 values, which can be far from ``r`` where ``u`` is subnormal.
    """
    g = torch.Generator().manual_seed(seed)
    # weights log-uniform from FP16's smallest subnormal (2^-24) to 2^15, powers of two included
    w = torch.exp2(torch.rand(8192, generator=g, dtype=torch.float64) * 39 - 24)
    w[:40] = torch.exp2(torch.arange(-24, 16, dtype=torch.float64))
    w = w.half()
    ws, us = [], []
    for r in ratios:
        for sign in (1.0, -1.0):
            ws.append(w)
            us.append((sign * w.double() / r).half())
    w, u = torch.cat(ws), torch.cat(us)
    return w, u, (w + u) == w


def fp16_update_lost(ratio: float) -> Verdict:
    """Claim: an FP16 update ``u`` to an FP16 weight ``w`` is never lost while ``|w / u|`` is below
    ``ratio``, and can be lost once it reaches it; an FP32 master copy keeps it.

    Measured on 8192 FP16 weights from 2^-24 to 2^15 (powers of two included), updates of both
    signs at nominal ratios from ``ratio / 8`` to 1.01 x ``ratio``; the ratio judged is the one of
    the FP16 values. Also reported: how often an update computed as ``w / 2000`` is lost once
    rounded to FP16 (a subnormal update rounds coarsely, so the nominal ratio understates it).
    """
    w, u, lost = fp16_weight_update_pairs((ratio / 8, ratio / 2, ratio / 1.01, ratio, ratio * 1.01))
    nz = u != 0
    actual = (w.double() / u.double()).abs()
    below = nz & (actual < ratio)
    at = nz & (actual >= ratio) & (actual <= ratio * 1.01)
    lost_below = int((lost & below).sum())
    frac_at = float(lost[at].double().mean()) if bool(at.any()) else 0.0
    w32 = w.float()
    fp32_lost = int(((w32 + u.float()) == w32)[nz].sum())
    w2, _, lost2000 = fp16_weight_update_pairs((2000.0,))
    normal = w2.abs() >= torch.finfo(torch.float16).smallest_normal
    ok = lost_below == 0 and frac_at > 0.0 and fp32_lost == 0
    return judged(ok, f"8192 FP16 weights 2^-24..2^15, updates of both signs: lost with |w/u| below {ratio:g}: "
                      f"{lost_below} of {int(below.sum()):,}; with |w/u| from {ratio:g} to {1.01 * ratio:g}: "
                      f"{frac_at:.1%}; FP32 weights: {fp32_lost} lost. An update computed as w/2000 and rounded to "
                      f"FP16 is lost for {float(lost2000[normal].double().mean()):.1%} of the normal weights "
                      f"(a subnormal update rounds coarsely, past the ratio)")


def fp16_flush_threshold(log2_threshold: int) -> Verdict:
    # Claim: values below 2^t become zero in FP16 and values above it do not (t = -25: half the
    # smallest subnormal; the tie itself rounds to even, i.e. to zero).
    t = log2_threshold
    x = torch.exp2(torch.linspace(-28, -22, 6001, dtype=torch.float64))
    y = x.to(torch.float16).double()
    zero = x[y == 0]
    largest_zero = float(zero.max()) if zero.numel() else 0.0
    smallest_kept = float(x[y > 0].min())
    ok = largest_zero <= 2.0 ** t < smallest_kept and largest_zero >= 2.0 ** t * (1 - 1e-3)
    return judged(ok, f"torch's FP16 cast on 6001 values from 2^-28 to 2^-22: largest flushed "
                      f"2^{math.log2(largest_zero):.3f}, smallest kept 2^{math.log2(smallest_kept):.3f}; "
                      f"2^-25 casts to {float(torch.tensor(2.0**-25).half()):g}, 0.75*2^-24 to "
                      f"{float(torch.tensor(0.75 * 2.0**-24).half()):.4g}")


def loss_scaling_recovers(scale: float) -> Verdict:
    # Claim: scaling by `scale` preserves gradients FP16 would flush to zero, and overflows none.
    # Both halves are measured: the flushed fraction against its log-uniform prediction, and the
    # fraction that overflows to inf (a scale that moves gradients past 65,504 is not a fix).
    from amp_docs_lib.amp.underflow import cast_report, predicted_fraction_below, synthetic_gradients

    g = synthetic_gradients(20_000, seed=1)
    rep = {s: cast_report(g, "fp16", s) for s in (1.0, scale)}
    pred = {s: predicted_fraction_below(2.0**-25 / s) for s in rep}
    ok = (all(abs(rep[s]["to zero"] - pred[s]) < 0.01 for s in rep)
          and rep[scale]["to zero"] < rep[1.0]["to zero"] and rep[scale]["to inf"] == 0.0)
    return judged(ok, f"FP16, gradients 1e-12..1e-2: to zero {rep[1.0]['to zero']:.1%} unscaled, "
                      f"{rep[scale]['to zero']:.1%} with scale {scale:,.0f} (predicted {pred[1.0]:.1%}, "
                      f"{pred[scale]:.1%}); to inf with scale {scale:,.0f}: {rep[scale]['to inf']:.1%}")


def accumulate_in(accumulator: str) -> Verdict:
    # Claim: FP16 values summed in `accumulator` keep the accuracy an FP16 sum loses (100x smaller error).
    from amp_docs_lib.numbers.numerics import accumulation_error

    df = accumulation_error(n_terms=4096, dtypes=("FP16", accumulator) if accumulator != "FP16" else ("FP16",))
    err = df.set_index(["dtype", "method"])["relative error"]
    e16, ea = float(err[("FP16", "sequential")]), float(err[(accumulator, "sequential")])
    return judged(ea < e16 / 100, f"4096 terms, sequential sum: relative error FP16 {e16:.2g}, {accumulator} {ea:.2g}")


def range_of_fp32(fmt: str, log2_smallest: int = -126) -> Verdict:
    # Claim: `fmt` covers FP32's range from 2^log2_smallest: every FP32 value from there up to FP32's largest stays
    # finite and non-zero when cast, except those within 0.2% of FP32's largest (a BF16 value 2^-9
    # below 2^128 is where round-to-nearest passes BF16's largest, 2^128 (1 - 2^-8), to infinity).
    # Measured on FP32 values log-uniform over [2^log2_smallest, 2^128) and 10,001 values spaced evenly
    # from 2^127 to FP32's largest, so that the top binade is sampled where it matters. The false
    # variant, -149, claims FP32's subnormals too: BF16's stop at 2^-133.
    g = torch.Generator().manual_seed(0)
    f32max = torch.finfo(torch.float32).max
    e = torch.rand(100_000, generator=g, dtype=torch.float64) * (128 - log2_smallest) + log2_smallest
    x = torch.cat([torch.exp2(e), torch.linspace(2.0**127, f32max, 10_001, dtype=torch.float64)]).to(torch.float32)
    x = x[torch.isfinite(x)]
    y = x.to(_DT[fmt])
    lost = ~torch.isfinite(y) | (y == 0)
    zero, inf = x[y == 0], x[torch.isinf(y)]
    smallest_inf = float(inf.min()) if inf.numel() else math.inf
    ok = zero.numel() == 0 and smallest_inf > f32max * (1 - 0.002)
    sub = float(torch.tensor(1, dtype=torch.int16).view(_DT[fmt]).float())
    return judged(ok, f"{fmt}: of {x.numel():,} FP32 values from 2^{log2_smallest} to FP32's largest, {int(lost.sum()):,} become "
                      f"zero or infinite ({zero.numel():,} zero; the smallest that overflows is "
                      f"{smallest_inf:.5g}, FP32's largest {f32max:.5g}); {fmt}'s smallest subnormal 2^"
                      f"{math.log2(sub):g}, FP32's 2^-149")


def bf16_conversion(rounding: str) -> Verdict:
    # Claim: FP32 -> BF16 keeps the upper 16 bits of the FP32 pattern, rounded (nearest-even or truncated).
    g = torch.Generator().manual_seed(0)
    x = torch.randn(100_000, generator=g) * 10.0 ** torch.randint(-30, 30, (100_000,), generator=g)
    bits = x.view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    if rounding == "nearest_even":
        predicted = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    elif rounding == "truncate":
        predicted = bits >> 16
    else:
        raise ValueError(f"unknown rounding {rounding!r}; valid: ['nearest_even', 'truncate']")
    bf16 = x.to(torch.bfloat16)
    torch_bits = bf16.view(torch.int16).to(torch.int64) & 0xFFFF
    agree = float((predicted == torch_bits).double().mean())
    # BF16 -> FP32: the 16 BF16 bits followed by 16 zero bits
    up = float(((bf16.float().view(torch.int32).to(torch.int64) & 0xFFFFFFFF) == torch_bits << 16).double().mean())
    return judged(agree == 1.0 and up == 1.0,
                  f"upper-16-bit rule ({rounding.replace('_', ' ')}) agrees with torch's FP32 -> BF16 cast on "
                  f"{agree:.2%} of 100,000 values; BF16 -> FP32 is the BF16 bits and 16 zero bits on {up:.2%}")


def bf16_training_without_scaling() -> Verdict:
    # The paper's claim is about convergence across its workloads; BF16's range (what makes loss
    # scaling unnecessary) is the bf16-range card; training to convergence at the paper's scale is
    # not something a build re-runs.
    return Verdict(NOT_TESTABLE, "n/a", "needs scale: training the paper's workloads to convergence in BF16 without "
                                        "loss scaling or other tuning (the range half is the card on BF16's range; "
                                        "the training regimes chapter trains one small GPT under BF16 regimes)")


def fp8_maxima(e4m3: float, e5m2: float) -> Verdict:
    # Decoded from all 256 bit patterns of torch's dtypes: the largest finite value of each.
    codes = torch.arange(256, dtype=torch.int32).to(torch.uint8)
    got = {}
    for name, dt in (("E4M3FN", torch.float8_e4m3fn), ("E5M2", torch.float8_e5m2)):
        v = codes.view(dt).float()
        got[name] = float(v[torch.isfinite(v)].max())
    return judged(got["E4M3FN"] == e4m3 and got["E5M2"] == e5m2,
                  f"largest finite of the 256 codes: E4M3FN {got['E4M3FN']:g}, E5M2 {got['E5M2']:g}")


def fp8_specials(e4m3_inf: int, e4m3_nan: int, e5m2_inf: int) -> Verdict:
    codes = torch.arange(256, dtype=torch.int32).to(torch.uint8)
    e4 = codes.view(torch.float8_e4m3fn).float()
    e5 = codes.view(torch.float8_e5m2).float()
    got = (int(torch.isinf(e4).sum()), int(torch.isnan(e4).sum()), int(torch.isinf(e5).sum()))
    return judged(got == (e4m3_inf, e4m3_nan, e5m2_inf),
                  f"of 256 codes: E4M3FN {got[0]} inf, {got[1]} NaN (one per sign); E5M2 {got[2]} inf, "
                  f"{int(torch.isnan(e5).sum())} NaN")


def e4m3_forward_e5m2_backward(forward: str, backward: str) -> Verdict:
    # Claim (the trade the recommendation rests on): `forward` rounds more finely, `backward` flushes
    # fewer small gradient elements. Measured on the FP8 chapter's captured GPT tensors with per-tensor
    # current scaling (amax -> the format's largest value): median SQNR of activations and gradients,
    # mean fraction of gradient elements flushed to zero. After such scaling the ordering follows from
    # the formats (E5M2's range contains E4M3's; E4M3 has one more mantissa bit): the data sets the size.
    import statistics

    from amp_docs_lib.fp8.capture import capture_tensors
    from amp_docs_lib.fp8.scaling import error_metrics, quantize_tensorwise

    tensors = capture_tensors()
    m = {}
    for kind in ("activation", "gradient"):
        xs = [x for name, x in tensors.items() if name.startswith(kind + ":")]
        for f in (forward, backward):
            rows = [error_metrics(x, quantize_tensorwise(x, f)) for x in xs]
            m[(kind, f)] = (statistics.median(r["SQNR (dB)"] for r in rows),
                            statistics.fmean(r["flushed to zero"] for r in rows))
    finer = all(m[(k, forward)][0] > m[(k, backward)][0] for k in ("activation", "gradient"))
    keeps = m[("gradient", backward)][1] < m[("gradient", forward)][1]
    short = lambda f: f.split()[-1]
    return judged(finer and keeps,
                  f"captured GPT tensors, per-tensor scaled: median SQNR of activations {short(forward)} "
                  f"{m[('activation', forward)][0]:.1f} dB, {short(backward)} {m[('activation', backward)][0]:.1f} dB; "
                  f"of gradients {m[('gradient', forward)][0]:.1f} and {m[('gradient', backward)][0]:.1f} dB; "
                  f"gradient elements flushed {m[('gradient', forward)][1]:.3%} and {m[('gradient', backward)][1]:.3%}")


def torchao_mx_block_size() -> int:
    """The block size torchao's ``MXTensor.to_mx`` uses by default (read from its signature)."""
    import inspect

    from torchao.prototype.mx_formats.mx_tensor import MXTensor

    return int(inspect.signature(MXTensor.to_mx).parameters["block_size"].default)


def mx_block(block: int, rule: str) -> Verdict:
    # Claim: MX shares one power-of-two scale per `block` consecutive elements, X = 2^(rule(log2 amax) - emax).
    # torchao's MXTensor.to_mx at its default block size and scale mode (FLOOR, the specification's
    # rule) against the rule computed here from each block's amax: a claimed block size other than
    # torchao's, or another rounding of log2(amax) (ceil: torchao's CEIL mode), is rejected. Also
    # reported: how many blocks torchao's RCEIL mode, 2^ceil(log2(amax / max)) (Mishra et al.'s rule,
    # cuBLAS's), gives the same scale as FLOOR and as CEIL: it is neither.
    from amp_docs_lib.fp8.scaling import emax_elem, torchao_to_mx

    if rule not in ("floor", "ceil"):
        raise ValueError(f"unknown scale rule {rule!r}; valid: ['floor', 'ceil']")
    x = torch.randn(16, 256, generator=torch.Generator().manual_seed(0)) * 10.0 ** torch.randint(
        -3, 3, (16, 1), generator=torch.Generator().manual_seed(1))
    default = torchao_mx_block_size()
    scale, _codes = torchao_to_mx(x, "FP8 E4M3FN", block_size=default, mode="floor")
    amax = x.reshape(16, 256 // block, block).abs().amax(-1)
    e = torch.floor(torch.log2(amax)) if rule == "floor" else torch.ceil(torch.log2(amax))
    predicted = torch.exp2(e - emax_elem("FP8 E4M3FN"))
    got = scale.float()
    same = got.shape == predicted.shape and bool(torch.equal(got, predicted))
    n_equal = int((got == predicted).sum()) if got.shape == predicted.shape else 0
    floor_s = got.flatten()
    rceil = torchao_to_mx(x, "FP8 E4M3FN", block_size=default, mode="rceil")[0].float().flatten()
    ceil_s = torchao_to_mx(x, "FP8 E4M3FN", block_size=default, mode="ceil")[0].float().flatten()
    return judged(block == default and same,
                  f"torchao MXFP8 (FLOOR) of a 16x256 tensor at its default block size {default}: {scale.numel()} "
                  f"scales; the {rule} rule over blocks of {block} predicts {predicted.numel()}, "
                  f"{n_equal} of them equal. torchao's RCEIL (Mishra et al.'s rule) equals FLOOR in "
                  f"{int((rceil == floor_s).sum())} blocks and CEIL in {int((rceil == ceil_s).sum())}")


def gradscaler_defaults(init_scale: float, growth_factor: float, backoff_factor: float, growth_interval: int) -> Verdict:
    from amp_docs_lib.amp.grad_scaler import torch_gradscaler_defaults

    d = torch_gradscaler_defaults()
    claimed = {"init_scale": init_scale, "growth_factor": growth_factor, "backoff_factor": backoff_factor,
               "growth_interval": growth_interval}
    got = {k: d.get(k) for k in claimed}
    return judged(got == claimed, "installed torch.amp.GradScaler: " + ", ".join(f"{k}={v:g}" for k, v in got.items()))


def autocast_default_dtypes(cuda: str, cpu: str) -> Verdict:
    from amp_docs_lib.amp.autocast_policy import default_autocast_dtypes

    d = default_autocast_dtypes()
    return judged(d.get("cpu") == cpu and d.get("cuda") == cuda, ", ".join(f"{k}: {v}" for k, v in d.items()))


def cpu_op_lists(lower_op: str, unlisted_op: str) -> Verdict:
    from amp_docs_lib.amp.autocast_policy import documented_category, probe_op

    lo, un = probe_op(lower_op, "cpu")["category"], probe_op(unlisted_op, "cpu")["category"]
    dlo, dun = documented_category(lower_op, "cpu"), documented_category(unlisted_op, "cpu")
    return judged(dlo == "lower" and lo == "lower" and dun == "unlisted" and un == "unchanged",
                  f"CPU autocast (bfloat16), probed: {lower_op} {lo}, {unlisted_op} {un}; documented: "
                  f"{lower_op} {dlo}, {unlisted_op} {dun}")


def mixed_adam_bytes(bytes_per_parameter: float, moments: float) -> Verdict:
    # The recipe's BF16 weights and gradients and FP32 master copy take the bytes of the one state table
    # (numbers.accounting, regime bf16_master: dtype sizes); what is measured is the state torch.optim.Adam
    # allocates in its first step (momentum and variance): a claim of 16-bit moments (4 bytes) is rejected by it.
    from amp_docs_lib.numbers.accounting import state_bytes

    n = 4096
    master = torch.nn.Parameter(torch.randn(n))
    opt = torch.optim.Adam([master], lr=1e-3)
    master.grad = torch.ones(n)
    opt.step()
    state = sum(t.numel() * t.element_size() for t in opt.state[master].values() if t.dim() > 0) / n
    held = state_bytes("bf16_master")
    total = held["weights"] + held["grads"] + held["master"] + state
    return judged(total == bytes_per_parameter and state == moments,
                  f"Adam's state after one step, measured: {state:g} bytes per parameter; with the recipe's BF16 "
                  f"weight {held['weights']} + BF16 grad {held['grads']} + FP32 master {held['master']} "
                  f"(dtype sizes): {total:g}")


def zero_7_5b(ddp: float, zero1: float, zero2: float, zero3: float) -> Verdict:
    from amp_docs_lib.distributed.memory import per_rank_bytes

    paper = {"DDP": ddp, "ZeRO-1": zero1, "ZeRO-2": zero2, "ZeRO-3": zero3}
    got = {s: per_rank_bytes(7_500_000_000, 64, s, "bf16_master")["total"] / 1e9 for s in paper}
    return judged(all(abs(got[s] - paper[s]) <= 0.05 for s in paper), ", ".join(f"{s} {got[s]:.2f} GB" for s in paper))


def constant_scale_bound(bound: float) -> Verdict:
    # Claim: a constant loss scale S keeps every scaled gradient finite in FP16 while max|g| * S stays
    # below `bound`. S is set so that max|g| * S is 1% below the bound (must stay finite) and 1% above
    # it (must overflow): the bound is resolved to 1%, so 83,000 or 60,000 fail where 65,504 holds.
    from amp_docs_lib.amp.underflow import synthetic_gradients

    g = synthetic_gradients(20_000, -12.0, -2.0, seed=3).double()
    gmax = float(g.abs().max())
    infs = {f: int(torch.isinf((g * (f * bound / gmax)).half()).sum()) for f in (0.99, 1.01)}
    return judged(infs[0.99] == 0 and infs[1.01] > 0,
                  f"max|g| = {gmax:.3g}: S with max|g|·S = 0.99 × {bound:,.0f} gives {infs[0.99]} infinities in FP16, "
                  f"1.01 × {bound:,.0f} gives {infs[1.01]}")


def tiles_contain_outliers(group_elements: int) -> Verdict:
    # Claim: with DeepSeek-V3's 1 x 128 activation tiles an outlier changes the quantized values of
    # other elements of its own 1 x `group_elements` group only, and most of them, where per-tensor
    # scaling changes most of the tensor. Measured: the non-outlier elements whose quantized value
    # changes when four outliers (10^4 x amax) are planted, where they lie. A group of 32 (an MX
    # block) is rejected by the changes outside it, one of 256 by the half of it left unchanged.
    from amp_docs_lib.fp8.fine_grained import ACTIVATION_TILE, WEIGHT_BLOCK, outlier_tensor, quantize_tiles
    from amp_docs_lib.fp8.scaling import quantize_tensorwise

    x, keep = outlier_tensor(256, 512, n_outliers=4, factor=1e4)
    if x.shape[1] % group_elements:
        raise ValueError(f"group_elements {group_elements} does not divide the row length {x.shape[1]}")
    clean = torch.where(keep, x, torch.zeros_like(x))  # the same tensor without its outliers
    n_out = int((~keep).sum())
    masks = {}
    for name, q in (("1x128 tiles", lambda t: quantize_tiles(t, ACTIVATION_TILE)),
                    ("128x128 blocks", lambda t: quantize_tiles(t, WEIGHT_BLOCK)),
                    ("per-tensor", quantize_tensorwise)):
        masks[name] = (q(x).dequantized != q(clean).dequantized) & keep
    changed = {k: int(m.sum()) / n_out for k, m in masks.items()}
    groups = lambda m: m.reshape(x.shape[0], -1, group_elements)
    has_outlier = groups(~keep).any(-1)
    tile = groups(masks["1x128 tiles"])
    outside = int(tile[~has_outlier].sum())
    most = bool((tile[has_outlier].sum(-1) > (group_elements - 1) / 2).all())
    whole = changed["per-tensor"] > 0.5 * (x.numel() - n_out) / n_out
    return judged(outside == 0 and most and whole,
                  "E4M3, 256x512 Gaussian, 4 outliers at 10^4 × amax: other elements changed per outlier: "
                  + ", ".join(f"{k} {v:,.0f}" for k, v in changed.items())
                  + f"; under 1x128 tiles, changed elements outside the outliers' {group_elements}-element groups: "
                    f"{outside}, in them: {int(tile[has_outlier].sum())} of {int(has_outlier.sum()) * group_elements}")


DEEPSEEK_MAX_RELATIVE_ERROR = 0.02  # DeepSeek-V3 §3.3.2: K = 4096, "a maximum relative error of nearly 2%"


def promotion_helps(promote_every: int, nearest: str = "below", toward_zero: str = "above") -> Verdict:
    # Claim: promoting every N_C elements makes a 14-bit accumulator more accurate on zero-mean
    # products (Gaussian E4M3 inputs, K = 4096), by a gain `nearest` ("below" or "above") K/N_C when
    # it rounds to nearest and `toward_zero` K/N_C when it truncates; and DeepSeek-V3's unpromoted
    # "maximum relative error of nearly 2%" lies between the two modes' (max |dC| / max |C|). Rounding
    # to nearest makes the errors a random walk (gain near sqrt(K/N_C)); truncation moves every
    # partial sum toward zero, so its errors do not cancel, and the gain exceeds K/N_C. The false
    # variant says the mode does not matter (truncation's gain below K/N_C too). Measured margins:
    # gains about 8 and 80 against K/N_C = 32; errors 0.16% and 5% against 2%.
    from amp_docs_lib.fp8.fine_grained import accumulation_study, promotion_gain

    k, sides = 4096, ("below", "above")
    if nearest not in sides or toward_zero not in sides:
        raise ValueError(f"nearest and toward_zero must be one of {list(sides)}, got {nearest!r}, {toward_zero!r}")
    linear = k / promote_every
    studies = {r: accumulation_study(m=32, n=32, k=k, bits=14, promote_every=promote_every, rounding=r)
               for r in ("nearest", "toward_zero")}
    gains = {r: promotion_gain(st) for r, st in studies.items()}
    worst = {r: float(st["max |ΔC| / max |C|"].iloc[0]) for r, st in studies.items()}
    side = lambda g: "above" if g > linear else "below"
    holds = (all(g > 1 for g in gains.values()) and side(gains["nearest"]) == nearest
             and side(gains["toward_zero"]) == toward_zero
             and worst["nearest"] < DEEPSEEK_MAX_RELATIVE_ERROR < worst["toward_zero"])
    return judged(holds,
                  f"K = 4096, 32x32 outputs, Gaussian x Gaussian E4M3 inputs, emulated 14-bit accumulator: gain from "
                  f"promotion every {promote_every} {gains['nearest']:.1f} rounding to nearest, "
                  f"{gains['toward_zero']:.1f} truncating (K/N_C = {linear:g}); without promotion, largest error "
                  f"against largest output {worst['nearest']:.2%} and {worst['toward_zero']:.2%} (the report: "
                  f"nearly {DEEPSEEK_MAX_RELATIVE_ERROR:.0%}); relative errors (Frobenius) "
                  + ", ".join(f"{r}: {st['relative error'].iloc[0]:.2e} -> {st['relative error'].iloc[1]:.2e}"
                              for r, st in studies.items()))


def nvfp4_beats_mxfp4(nvfp4_is: str) -> Verdict:
    # Claim: NVFP4 represents Gaussian data `nvfp4_is` ("more" or "less") accurately than MXFP4 (SQNR).
    from amp_docs_lib.fp8.nvfp4 import fp4_block_comparison, gaussian_blocks

    if nvfp4_is not in ("more", "less"):
        raise ValueError(f"nvfp4_is must be 'more' or 'less', got {nvfp4_is!r}")
    t = fp4_block_comparison({"gaussian": gaussian_blocks(64, 512, seed=0)}).set_index("scheme")["SQNR (dB)"]
    return judged((t["NVFP4"] > t["MXFP4"]) == (nvfp4_is == "more"),
                  f"64x512 standard normal: SQNR NVFP4 {t['NVFP4']:.1f} dB, MXFP4 {t['MXFP4']:.1f} dB")


def nvfp4_amax_precision(bound: float) -> Verdict:
    # Claim: a block whose E4M3 scale is in E4M3's normal range (amax(block) >= 2^-6 / 448 of the
    # tensor's amax) keeps its largest value to relative error at most `bound`, and the bound is
    # reached to within 5% (1/17 holds; the looser 2^-4 is rejected: 1/17 is 6% below it).
    # Data: Gaussian blocks, and the same with one block scaled by 10^6 so that the others' scales
    # fall below E4M3's normal range (reported, outside the claim).
    from amp_docs_lib.fp8.nvfp4 import NVFP4_BLOCK, block_amax_error, gaussian_blocks, nvfp4_quantize
    from amp_docs_lib.fp8.scaling import mx_quantize

    x = gaussian_blocks(64, 512, seed=1)
    y = x.clone()
    y[0, :NVFP4_BLOCK] *= 1e6
    in_range, below = [], []
    for t in (x, y):
        blocks = t.reshape(t.shape[0], -1, NVFP4_BLOCK).abs().amax(-1)
        ok_blocks = blocks >= t.abs().max() * 2.0**-6 / 448
        q = nvfp4_quantize(t)
        in_range.append(block_amax_error(t, q, NVFP4_BLOCK, ok_blocks))
        below.append(block_amax_error(t, q, NVFP4_BLOCK, ~ok_blocks))
    nv = float(torch.cat(in_range).max())
    low = torch.cat(below)
    mx = float(block_amax_error(x, mx_quantize(x, "FP4 E2M1"), 32).max())
    return judged(0.95 * bound < nv <= bound,
                  f"largest relative error of a block's amax, blocks with scales in E4M3's normal range: NVFP4 "
                  f"{nv:.4f} (claimed bound {bound:g}); MXFP4 {mx:.3f}; blocks whose scale falls below E4M3's "
                  f"range ({low.numel()}, one block ×10^6): up to {float(low.max()) if low.numel() else 0.0:.2f}")


def mx_element_maxima(e4m3: float, e5m2: float, e2m3: float, e3m2: float, e2m1: float) -> Verdict:
    # torchao's MXTensor.to_mx on a block whose values far exceed each element range: the largest
    # element it stores, read back through torchao's own dequantize and divided by the block's
    # scale (a power of two, so the division is exact), is the format's largest value.
    from torchao.prototype.mx_formats.config import ScaleCalculationMode
    from torchao.prototype.mx_formats.constants import DTYPE_FP6_E2M3, DTYPE_FP6_E3M2
    from torchao.prototype.mx_formats.mx_tensor import MXTensor, get_fp_scale

    stated = {"FP8 E4M3FN": e4m3, "FP8 E5M2": e5m2, "FP6 E2M3": e2m3, "FP6 E3M2": e3m2, "FP4 E2M1": e2m1}
    elem = {"FP8 E4M3FN": torch.float8_e4m3fn, "FP8 E5M2": torch.float8_e5m2, "FP6 E2M3": DTYPE_FP6_E2M3,
            "FP6 E3M2": DTYPE_FP6_E3M2, "FP4 E2M1": torch.float4_e2m1fn_x2}
    x = torch.full((1, 32), 1.0)
    x[0, 0] = 1.999  # amax 1.999 under FLOOR: the block scale is 2^(0 - emax), so 1.999 saturates
    got = {}
    for fmt in stated:
        t = MXTensor.to_mx(x, elem[fmt], block_size=32, scaling_mode=ScaleCalculationMode.FLOOR)
        got[fmt] = float(t.dequantize(torch.float32)[0, 0] / get_fp_scale(t.scale.flatten()[0]))
    ok = all(got[f] == stated[f] for f in stated)
    return judged(ok, "largest element torchao stores for a saturating block (its dequantize, divided by the block "
                      "scale): " + ", ".join(f"{f.split()[-1]} {got[f]:g}" for f in stated))


def dynamic_scaling_example(growth_interval: int, growth_factor: float, backoff_factor: float) -> Verdict:
    """The guide's dynamic loss scaling, run: what a default ``torch.amp.GradScaler("cpu")`` does.

    One step whose gradient holds an inf (is the update skipped, by what factor does the scale
    change), then overflow-free steps until the scale changes again (after how many, by what
    factor). The defaults read from the code are the GradScaler card's; this one runs them.
    """
    scaler = torch.amp.GradScaler("cpu")
    w = torch.nn.Parameter(torch.ones(4))
    opt = torch.optim.SGD([w], lr=0.1)

    def step(overflow: bool) -> bool:
        opt.zero_grad()
        scaler.scale((w * w).sum()).backward()
        if overflow:
            w.grad[0] = math.inf
        before = w.detach().clone()
        scaler.step(opt)
        scaler.update()
        return bool(torch.equal(before, w.detach()))

    s0 = scaler.get_scale()
    skipped = step(True)
    s1 = scaler.get_scale()
    clean = 0
    while scaler.get_scale() == s1 and clean <= 2 * growth_interval:
        step(False)
        clean += 1
    s2 = scaler.get_scale()
    ok = skipped and s1 == s0 * backoff_factor and clean == growth_interval and s2 == s1 * growth_factor
    return judged(ok, f"torch.amp.GradScaler('cpu') with its defaults, run: an overflowing step "
                      f"{'was skipped' if skipped else 'was not skipped'} and took the scale from {s0:g} to {s1:g} "
                      f"(×{s1 / s0:g}); it then grew to {s2:g} (×{s2 / s1:g}) after {clean} overflow-free steps")


# --------------------------------------------------------------------------- hardware and scale
def fp16_multiples_of_8(unaligned: str) -> Verdict:
    """On a CUDA GPU: FP16 GEMMs of n = 1023 and 1025 run ``unaligned`` ("slower": below 90% of the
    rate of n = 1024 and 1032, its aligned neighbours; "as fast": at 90% of it or more)."""
    if unaligned not in ("slower", "as fast"):
        raise ValueError(f"unaligned must be 'slower' or 'as fast', got {unaligned!r}")
    cuda = needs("cuda", "the rule is about GPU Tensor Core kernels; a CPU matmul has other tile sizes")
    if cuda is not None:
        return cuda
    from amp_docs_lib.bench.matmul import alignment_sweep

    al = alignment_sweep(1024, ("fp16",), (-1, 0, 1, 8), "cuda", min_run_time=0.05)
    rel = float(al[~al["multiple of 8"]]["relative to aligned"].mean())
    return judged((rel < 0.9) == (unaligned == "slower"),
                  f"FP16 n = 1023 and 1025 ran at {rel:.0%} of the rate of n = 1024 and 1032 on "
                  f"{torch.cuda.get_device_name(0)}", hardware_dependent=True)


def fp8_training_at_scale() -> Verdict:
    return needs_scale(175e9, "training runs of up to 175B parameters (FP8 itself runs here: the FP8 chapter "
                              "trains a small GPT with torchao's recipes)")


def mx_sub8bit_training() -> Verdict:
    # Rouhani et al. trained with an emulation library (microsoft/microxcaling), not MX hardware, and
    # MX arithmetic is emulated on any device: what no build reaches is the scale.
    return needs_scale(1.5e9, "training generative language models of up to 1.5B parameters (the paper's "
                              "results come from emulated MX arithmetic, which runs on any machine: the FP8 chapter trains a "
                              "small GPT with torchao's emulated MXFP8)")


def mxfp8_pretraining_at_scale() -> Verdict:
    return needs_scale(8e9, "pre-training up to 8B parameters on 15T tokens (the FP8 chapter trains a small GPT with "
                            "torchao's emulated MXFP8 under both scale rules)")


def fsdp_scaling() -> Verdict:
    # Not a GPU count and not a model size: the abstract's claim is throughput against DDP and its
    # scaling across many GPUs, which no single machine measures.
    return Verdict(NOT_TESTABLE, "n/a", "needs scale: FSDP's throughput against DDP and its scaling in TFLOPS are "
                                        "measured across many GPUs and nodes (a machine with a few GPUs does not "
                                        "test it either)")


def fp8_lm_speed() -> Verdict:
    return needs_scale(175e9, "GPT-175B training on H100 FP8 tensor cores (an FP8 GPU alone does not test it)")


def fishman_long_runs() -> Verdict:
    return needs_scale(7e9, "2 trillion tokens on a 7B model (FP8 training itself runs here, for a few steps)")


def deepseek_h800_accumulator() -> Verdict:
    # Not testable on any machine, Hopper included: no API reports the accumulator's width.
    return Verdict(NOT_TESTABLE, "n/a", "no API reports the tensor cores' accumulator width, on Hopper GPUs too; "
                                        "the FP8 chapter emulates a 14-bit accumulator and, on an FP8 GPU, compares "
                                        "torch._scaled_mm with use_fast_accum=True and False (cuBLAS's fast "
                                        "accumulation, a related switch, not the report's measurement)")


def nvfp4_training() -> Verdict:
    return needs_scale(12e9, "a 12B model on 10 trillion tokens on Blackwell NVFP4 tensor cores (a Blackwell GPU "
                             "alone does not test it)")
