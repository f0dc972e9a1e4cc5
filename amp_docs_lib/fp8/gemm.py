"""FP8 matrix multiplication: ``torch._scaled_mm``, ``torch.nn.functional.scaled_mm`` and their scales.

Both compute ``(A_fp8 @ B_fp8) * scale_a * scale_b`` in higher precision: the scales passed are
**dequantization** scales, the reciprocal of the quantization scale ``s = max_finite / amax``
used to make ``A_fp8 = cast(A * s)``. Passing ``s`` itself (the "wrong convention") multiplies
the result by ``(s_a * s_b)^2`` instead of dividing out the scaling; :func:`check_scale_convention`
detects that from the output.

Layouts: ``mat_a`` is row-major ``(M, K)``, ``mat_b`` column-major ``(K, N)`` (a row-major
``(N, K)`` weight, transposed). Tensorwise scales are float32 scalars; rowwise scales are
float32 ``(M, 1)`` for A and ``(1, N)`` for B.
"""

from __future__ import annotations

import functools
import math

import pandas as pd
import torch
import torch.nn.functional as F

from amp_docs_lib.numbers.accounting import matmul_flops
from amp_docs_lib.core.devices import check_device
from amp_docs_lib.core.tables import table_from_rows
from amp_docs_lib.fp8.formats import element_format, max_finite

GRANULARITIES = ("tensorwise", "rowwise")
APIS = ("torch._scaled_mm", "torch.nn.functional.scaled_mm")
FP8_DTYPES = {"FP8 E4M3FN": torch.float8_e4m3fn, "FP8 E5M2": torch.float8_e5m2}


def fp8_gemm_support(capability: tuple[int, int] | None, *, hip_arch: str | None = None) -> tuple[bool, str]:
    """Whether ``torch._scaled_mm`` runs on a GPU of this compute ``capability``, and why.

    PyTorch's CUDA ``_scaled_mm`` checks the device before anything else and raises
    ("only supported on CUDA devices with compute capability >= 9.0 or 8.9, or ROCm MI300+",
    ``aten/src/ATen/native/cuda/ScaledBlas.cpp``): it does not emulate. ``capability`` is
    ``torch.cuda.get_device_capability()``; ``None`` means no GPU. On ROCm the capability is not an
    SM version, so the gfx architecture (``hip_arch``, ``get_device_properties().gcnArchName``) decides:
    MI300 (gfx940-942) computes in the FNUZ variants only, not the OCP formats this library uses
    (torchao ``float8/config.py``, ``Float8TypeConfig``: "ROCm supports 1. fnuz variants in MI300. 2. OCP
    F8 variants in MI350/Navi4"); MI350 (gfx950), Navi 4 (gfx120x) and gfx1250 run the OCP formats
    (torch's ``evaluate_platform_supports_fp8`` in ``torch/testing/_internal/common_cuda.py``).
    """
    if capability is None:
        return False, "no GPU"
    if (not isinstance(capability, tuple) or len(capability) != 2
            or not all(isinstance(c, int) and c >= 0 for c in capability)):
        raise ValueError(f"capability must be a (major, minor) tuple of ints or None, got {capability!r}")
    if hip_arch is not None:
        if hip_arch.startswith("gfx94"):
            return False, (f"ROCm {hip_arch} (MI300): FP8 only in the FNUZ variants (float8_e4m3fnuz, float8_e5m2fnuz), "
                           "not the OCP formats used here")
        ok = hip_arch.startswith(("gfx95", "gfx120", "gfx1250"))
        return ok, f"ROCm {hip_arch}: " + ("OCP FP8 (MI350 / Navi 4 class)" if ok else
                                           "no OCP FP8: torch._scaled_mm with OCP formats needs gfx950 or gfx12")
    sm = f"sm{capability[0]}{capability[1]}"
    if capability == (8, 9) or capability >= (9, 0):
        return True, f"{sm}: FP8 tensor cores"
    return False, f"{sm} has no FP8 tensor cores: torch._scaled_mm raises there (it needs sm89 or sm90+)"


@functools.lru_cache(maxsize=None)
def rowwise_scaled_mm_supported(device: str = "cpu") -> bool:
    """Whether this torch's ``_scaled_mm`` takes rowwise scales on ``device`` (measured with a 16³ call).

    torch 2.11's CPU kernel takes per-tensor scales only (an internal assert); 2.15's takes both.
    """
    dev = check_device(device)
    a8 = torch.ones(16, 16, device=dev).to(torch.float8_e4m3fn)
    b8 = torch.ones(16, 16, device=dev).to(torch.float8_e4m3fn).t()
    try:
        torch._scaled_mm(a8, b8, scale_a=torch.ones(16, 1, device=dev), scale_b=torch.ones(1, 16, device=dev),
                         out_dtype=torch.bfloat16)
    except RuntimeError:
        return False
    return True


def fp8_gemm_plan(capability: tuple[int, int] | None, *, hip_arch: str | None = None) -> dict:
    """Where FP8 GEMMs run for a GPU of this ``capability`` (``None``: no GPU), decided explicitly.

    ``{"device", "emulate", "reason"}``: native FP8 on a GPU that has it; on a GPU without FP8
    tensor cores, the same GPU with torchao's ``Float8LinearConfig(emulate=True)`` (operands still
    quantized to FP8, the product a high-precision matmul: FP8 numerics, no FP8 speed); without a
    GPU, torch's CPU ``_scaled_mm``.
    """
    native, why = fp8_gemm_support(capability, hip_arch=hip_arch)
    if capability is None:
        return {"device": "cpu", "emulate": False, "reason": "no CUDA GPU: torch._scaled_mm runs on the CPU"}
    if native:
        return {"device": "cuda", "emulate": False, "reason": why}
    return {"device": "cuda", "emulate": True,
            "reason": f"{why}; falling back to torchao's emulated FP8 GEMMs (emulate=True)"}


def _this_gpu() -> tuple[tuple[int, int] | None, str | None]:
    if not torch.cuda.is_available():
        return None, None
    hip = getattr(torch.cuda.get_device_properties(0), "gcnArchName", None) if torch.version.hip else None
    return tuple(torch.cuda.get_device_capability()), hip


def fp8_device() -> str:
    """Where ``torch._scaled_mm`` can run here: ``"cuda"`` on a GPU with FP8 support
    (:func:`fp8_gemm_support`), else ``"cpu"`` (torch's CPU implementation). On a GPU without FP8 the
    raw ``_scaled_mm`` experiments of this module run on the CPU; training uses :func:`fp8_gemm_plan`."""
    cap, hip = _this_gpu()
    return "cuda" if cap is not None and fp8_gemm_support(cap, hip_arch=hip)[0] else "cpu"


CPU_GEMM_MAX = 512  # torch's CPU _scaled_mm emulates FP8: a gpu-full 8192³ GEMM there takes minutes per call


def gemm_size(size: int) -> int:
    """The GEMM size to use here for a profile's ``size``: as given where FP8 GEMMs run on the GPU, at most
    :data:`CPU_GEMM_MAX` where they run on the CPU (no FP8 tensor cores: an sm86 card, or no GPU)."""
    if not isinstance(size, int) or isinstance(size, bool) or size < 1:
        raise ValueError(f"size must be a positive int, got {size!r}")
    return size if fp8_device() == "cuda" else min(size, CPU_GEMM_MAX)


def public_scaled_mm_available() -> bool:
    """Whether the installed torch has the public ``torch.nn.functional.scaled_mm``."""
    return hasattr(F, "scaled_mm") and hasattr(F, "ScalingType")


# What each of torch.nn.functional.ScalingType's recipes is on this site, and where torch runs it on CUDA:
# read from the installed torch's OpInfo samples for scaled_mm (torch/testing/_internal/
# common_methods_invocations.py, sample_inputs_scaled_mm_v2: "Blockwise scaling requires cublasLt >= 12.9"
# and compute capability 9.x for the 1x128 / 128x128 recipes; "if dmajor >= 10" for MXFP8 and NVFP4).
SCALED_MM_RECIPES = (
    ("TensorWise", "one FP32 scale per tensor", "per-tensor (scaling.quantize_tensorwise)",
     "wherever FP8 runs (sm89, sm90+, MI300+ in its FNUZ formats; torch's CPU kernel)"),
    ("RowWise", "one FP32 scale per row of A, per column of B", "per-row (scaling.quantize_rowwise)",
     "wherever FP8 runs; on a CPU where the torch kernel takes rowwise scales (the GEMM table's \"runs here\")"),
    ("BlockWise1x128", "one FP32 scale per 1x128 tile", "DeepSeek-V3 activation tiles (fine_grained.quantize_tiles)",
     "sm90 with CUDA 12.9+"),
    ("BlockWise128x128", "one FP32 scale per 128x128 block", "DeepSeek-V3 weight blocks (fine_grained.quantize_tiles)",
     "sm90 with CUDA 12.9+ (paired with BlockWise1x128)"),
    ("BlockWise1x32", "one E8M0 scale per 32 elements (swizzled)", "MX (scaling.mx_quantize)", "sm100+"),
    ("BlockWise1x16", "one E4M3 scale per 16 elements, optionally with a TensorWise FP32 scale",
     "NVFP4 (nvfp4.nvfp4_quantize)", "sm100+"),
)
SCALED_MM_SOURCE = ("installed torch: F.ScalingType; torch/testing/_internal/common_methods_invocations.py "
                    "(sample inputs of scaled_mm: the capability checks before each recipe)")


def scaled_mm_recipe_table() -> pd.DataFrame:
    """The block-scaled recipes of the public ``torch.nn.functional.scaled_mm``: each ``ScalingType``, whether the
    installed torch has it, the scale layout, the emulation on this site and the CUDA hardware torch runs it on."""
    have = {a for a in dir(F.ScalingType) if not a.startswith("_")} if public_scaled_mm_available() else set()
    return table_from_rows([{"ScalingType": name, "in this torch": name in have, "scales": scales,
                             "this site's emulation": emulation, "CUDA hardware": hw}
                            for name, scales, emulation, hw in SCALED_MM_RECIPES])


def quantize_operand(x: torch.Tensor, granularity: str = "tensorwise", fmt: str = "FP8 E4M3FN"):
    """Quantize a row-major ``(rows, K)`` operand to FP8 for a GEMM.

    Returns ``(x_fp8, dequant_scale, quant_scale)``: tensorwise scales are 0-d, rowwise ``(rows, 1)``
    (one per row, amax over K). ``dequant_scale = 1 / quant_scale`` is what ``scaled_mm`` wants.
    """
    if granularity not in GRANULARITIES:
        raise ValueError(f"unknown granularity {granularity!r}; valid: {list(GRANULARITIES)}")
    f = element_format(fmt)
    if f.name not in FP8_DTYPES:
        raise ValueError(f"scaled_mm takes FP8 operands; got {f.name!r}, valid: {list(FP8_DTYPES)}")
    x = x.detach().to(torch.float32)
    amax = x.abs().amax() if granularity == "tensorwise" else x.abs().amax(dim=1, keepdim=True)
    qs = (max_finite(f) / amax.clamp(min=1e-12)).to(torch.float32)
    m = max_finite(f)
    x_fp8 = (x * qs).clamp(-m, m).to(FP8_DTYPES[f.name])
    return x_fp8, (1.0 / qs).to(torch.float32), qs


def scaled_mm(a_fp8: torch.Tensor, b_fp8: torch.Tensor, scale_a: torch.Tensor, scale_b: torch.Tensor, *,
              api: str = "torch._scaled_mm", out_dtype: torch.dtype = torch.bfloat16) -> torch.Tensor:
    """``a_fp8 (M, K) @ b_fp8 (N, K)^T`` with dequantization scales, through ``api`` (one of :data:`APIS`).

    ``scale_b`` is given per row of ``b_fp8`` (``(N, 1)``) for rowwise and is passed transposed.
    """
    if api not in APIS:
        raise ValueError(f"unknown scaled_mm API {api!r}; valid: {list(APIS)}")
    rowwise = scale_a.dim() > 0 and scale_a.numel() > 1
    sb = scale_b.reshape(1, -1) if rowwise else scale_b
    if api == "torch._scaled_mm":
        return torch._scaled_mm(a_fp8, b_fp8.t(), scale_a=scale_a, scale_b=sb, out_dtype=out_dtype)
    if not public_scaled_mm_available():
        raise ValueError("torch.nn.functional.scaled_mm is not in this torch; valid here: ['torch._scaled_mm']")
    rec = F.ScalingType.RowWise if rowwise else F.ScalingType.TensorWise
    return F.scaled_mm(a_fp8, b_fp8.t(), scale_a, rec, sb, rec, output_dtype=out_dtype)


def operands(m: int, k: int, n: int, *, seed: int = 0, row_spread: float = 4.0,
             device: str | torch.device = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
    """Seeded GEMM operands: ``a (m, k)`` whose rows differ in magnitude by up to 2^±row_spread
    (as activations of different tokens do), ``b (n, k)`` Gaussian with std 0.02 (a weight)."""
    for name, v in (("m", m), ("k", k), ("n", n)):
        if not isinstance(v, int) or v < 16 or v % 16:
            raise ValueError(f"{name} must be a positive multiple of 16 (FP8 GEMM alignment), got {v!r}")
    g = torch.Generator().manual_seed(seed)
    rows = torch.exp2((torch.rand(m, 1, generator=g) * 2 - 1) * row_spread)
    a = torch.randn(m, k, generator=g) * rows
    b = torch.randn(n, k, generator=g) * 0.02
    return a.to(device), b.to(device)


def rel_error(out: torch.Tensor, ref: torch.Tensor) -> float:
    """Relative Frobenius error ||out - ref|| / ||ref|| in float64."""
    out, ref = out.to(torch.float64), ref.to(torch.float64)
    return float(torch.linalg.norm(out - ref) / torch.linalg.norm(ref))


def gemm_error_table(size: int, *, device: str | torch.device | None = None, seed: int = 0) -> pd.DataFrame:
    """Error of FP8 GEMMs against float64 and BF16 references, including a wrong-convention call.

    Rows: BF16 matmul; FP8 tensorwise and rowwise through each available API; tensorwise and
    rowwise with the *quantization* scales passed (wrong convention). Columns: relative error
    vs float64 and vs the BF16 result, the checker's verdict, and whether this torch's kernel runs
    the call on this device ("runs here"; older torch's CPU kernel takes per-tensor scales only,
    and such rows hold n/a).
    """
    dev = check_device(device or fp8_device())
    a, b = operands(size, size, size, seed=seed, device=dev)
    ref64 = a.double() @ b.double().t()
    bf16 = (a.bfloat16() @ b.bfloat16().t()).float()
    rows = [{"method": "BF16 matmul", "api": "torch.matmul", "scales passed": None,
             "rel. error vs float64": rel_error(bf16, ref64), "rel. error vs BF16": 0.0, "checker": None}]
    apis = [a_ for a_ in APIS if a_ == "torch._scaled_mm" or public_scaled_mm_available()]
    for api in apis:
        for gran in GRANULARITIES:
            a8, da, qa = quantize_operand(a, gran)
            b8, db, qb = quantize_operand(b, gran)
            for label, sa, sb in (("dequantization (1/s)", da, db), ("quantization (s): wrong", qa, qb)):
                try:
                    out = scaled_mm(a8, b8, sa, sb, api=api).float()
                except RuntimeError as e:  # e.g. torch 2.11's CPU kernel: per-tensor scales only
                    rows.append({"method": f"FP8 E4M3 {gran}", "api": api, "scales passed": label,
                                 "rel. error vs float64": None, "rel. error vs BF16": None,
                                 "checker": None, "runs here": f"no: {str(e).splitlines()[0][:120]}"})
                    continue
                verdict = check_scale_convention(a, b, out)
                rows.append({"method": f"FP8 E4M3 {gran}", "api": api, "scales passed": label,
                             "rel. error vs float64": rel_error(out, ref64), "rel. error vs BF16": rel_error(out, bf16),
                             "checker": verdict["verdict"], "runs here": "yes"})
    rows[0]["runs here"] = "yes"
    return table_from_rows(rows)


def operand_rounding_error_ratio(size: int, fmt: str = "FP8 E4M3FN", granularity: str = "tensorwise", *,
                                 seed: int = 0) -> float:
    """Relative error (against float64) of a ``size``³ GEMM whose operands are quantized to ``fmt`` and read back,
    divided by that of the same GEMM on BF16-rounded operands. Both products are taken in float64, so only the operand
    rounding counts, on any device and for every FP8 format (torch's CUDA ``_scaled_mm`` refuses two E5M2
    operands, "Multiplication of two Float8_e5m2 matrices is not supported", ``aten/src/ATen/native/cuda/ScaledBlas.cpp``)."""
    a, b = operands(size, size, size, seed=seed)
    ref64 = a.double() @ b.double().t()
    # BF16 operands read back the same way: a BF16 matmul's output rounding would count on one side only
    bf16 = a.bfloat16().double() @ b.bfloat16().double().t()
    a8, da, _ = quantize_operand(a, granularity, fmt)
    b8, db, _ = quantize_operand(b, granularity, fmt)
    read_back = (a8.double() * da.double()) @ (b8.double() * db.double()).t()
    return rel_error(read_back, ref64) / rel_error(bf16, ref64)


def check_scale_convention(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, *, sample_rows: int = 16,
                           tol_log2: float = 0.25) -> dict:
    """Check a scaled-GEMM output against a high-precision product on a few rows of ``a``.

    Fits the factor ``c`` in ``out ≈ c * (a @ b.T)`` (least squares over ``sample_rows`` rows).
    With dequantization scales ``c ≈ 1``; with the quantization scales passed by mistake it is
    ``(s_a * s_b)^2`` (far from 1 unless the scales are). Returns the factor and a verdict.
    """
    idx = torch.linspace(0, a.shape[0] - 1, min(sample_rows, a.shape[0])).long()
    ref = a[idx].double() @ b.double().t()
    o = out[idx].double()
    c = float((o * ref).sum() / (ref * ref).sum())
    ok = c > 0 and abs(math.log2(c)) <= tol_log2
    if ok:
        verdict = "ok: dequantization scales"
    else:
        verdict = f"wrong scale convention: output off by x{c:.3g}; pass 1/scale"
    return {"factor": c, "ok": ok, "verdict": verdict}


AA_COLUMN = "A/A control (BF16 vs itself)"  # throughput_table's noise floor: the baseline against itself


def throughput_table(size: int, *, device: str | torch.device | None = None, rounds: int = 9,
                     min_block_s: float = 0.05) -> pd.DataFrame:
    """TFLOP/s of a square GEMM of ``size``: BF16 ``torch.mm`` against FP8 ``_scaled_mm`` (tensorwise, rowwise).

    The GEMMs that run are timed in interleaved rounds by the one harness
    (``core.timing.interleaved``), so each speed relative to BF16 is a median ratio with an
    interval and a verdict ("faster", "slower", "no difference resolved" or "noise floor too high"), and
    the "A/A control" column is BF16 timed against itself in the same rounds, the floor each verdict clears. A call this torch's
    kernel refuses on this device (torch 2.11's CPU ``_scaled_mm`` takes per-tensor scales only)
    is a row saying so, with n/a timings.
    """
    from amp_docs_lib.core.timing import interleaved

    dev = check_device(device or fp8_device())
    a, b = operands(size, size, size, device=dev)
    abf, bbf = a.bfloat16(), b.bfloat16()
    a8t, dat, _ = quantize_operand(a, "tensorwise")
    b8t, dbt, _ = quantize_operand(b, "tensorwise")
    a8r, dar, _ = quantize_operand(a, "rowwise")
    b8r, dbr, _ = quantize_operand(b, "rowwise")
    b8t_t, b8r_t, dbr_t = b8t.t(), b8r.t(), dbr.reshape(1, -1)
    cases = {
        "BF16 torch.mm": lambda: torch.mm(abf, bbf.t()),
        "FP8 _scaled_mm tensorwise": lambda: torch._scaled_mm(a8t, b8t_t, scale_a=dat, scale_b=dbt,
                                                              out_dtype=torch.bfloat16),
        "FP8 _scaled_mm rowwise": lambda: torch._scaled_mm(a8r, b8r_t, scale_a=dar, scale_b=dbr_t,
                                                           out_dtype=torch.bfloat16),
    }
    refused = {}
    for name, fn in cases.items():
        try:
            fn()
        except RuntimeError as e:
            refused[name] = f"no: {str(e).splitlines()[0][:120]}"
    if "BF16 torch.mm" in refused:
        raise RuntimeError(f"the BF16 baseline does not run on {dev}: {refused['BF16 torch.mm']}")
    runs = {n: fn for n, fn in cases.items() if n not in refused}
    res = interleaved(runs, baseline="BF16 torch.mm", device=dev, rounds=rounds, min_block_s=min_block_s) \
        if len(runs) > 1 else None
    flops = matmul_flops(size, size, size)
    rows = []
    for name in cases:
        if name in refused or res is None:
            rows.append({"GEMM": name, "size": size, "device": str(dev), "median time (ms)": None, "IQR (ms)": None,
                         "TFLOP/s": None, "speed vs BF16": None, "verdict": None, AA_COLUMN: None,
                         "runs here": refused.get(name, "yes (no FP8 GEMM to compare with)")})
            continue
        t, c = res.timings[name], None if name == res.baseline else res.compare(name)
        rows.append({"GEMM": name, "size": size, "device": str(dev), "median time (ms)": t.median_s * 1e3,
                     "IQR (ms)": t.iqr_s * 1e3, "TFLOP/s": flops / t.median_s / 1e12,
                     "speed vs BF16": "1 (baseline)" if c is None else c.interval_text(),
                     "verdict": None if c is None else c.verdict,
                     AA_COLUMN: res.aa.interval_text() if res.aa is not None else None, "runs here": "yes"})
    return table_from_rows(rows)


def fast_accum_comparison(k: int = 4096, m: int = 256, n: int = 256, *, device: str | torch.device = "cuda",
                          seed: int = 0) -> pd.DataFrame:
    """``torch._scaled_mm`` with ``use_fast_accum=True`` against ``False``, error against float64.

    DeepSeek-V3's experiment (§3.3.2): on Hopper, the fast-accumulation path keeps the FP8 GEMM's
    partial sums in the tensor cores' limited-precision accumulator; without it, cuBLAS promotes
    them to FP32. The reference is the float64 product of the *same* FP8 inputs, so only
    accumulation error is measured. Columns: use_fast_accum, K, relative error (Frobenius),
    max |ΔC| / max |C|. Needs a GPU with FP8 (on a CPU the flag changes nothing).
    """
    dev = check_device(device)
    for name, v in (("k", k), ("m", m), ("n", n)):
        if not isinstance(v, int) or v < 16 or v % 16:
            raise ValueError(f"{name} must be a positive multiple of 16, got {v!r}")
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(m, k, generator=g)
    b = torch.randn(n, k, generator=g)
    a8, da, _ = quantize_operand(a)
    b8, db, _ = quantize_operand(b)
    exact = (a8.double() * da.double()) @ (b8.double() * db.double()).t()
    a8, b8, da, db = a8.to(dev), b8.to(dev), da.to(dev), db.to(dev)
    rows = []
    for fast in (False, True):
        out = torch._scaled_mm(a8, b8.t(), scale_a=da, scale_b=db, out_dtype=torch.float32,
                               use_fast_accum=fast).double().cpu()
        d = out - exact
        rows.append({"use_fast_accum": fast, "K": k, "relative error": float(d.norm() / exact.norm()),
                     "max |ΔC| / max |C|": float(d.abs().max() / exact.abs().max())})
    return pd.DataFrame(rows)


def fast_accum_speed(size: int = 8192, *, device: str | torch.device = "cuda", rounds: int = 9) -> pd.DataFrame:
    """Throughput of a square E4M3 ``_scaled_mm`` with ``use_fast_accum=False`` and ``True`` against BF16.

    The three GEMMs are timed in interleaved rounds by the one harness
    (``core.timing.interleaved``), so each speed relative to BF16 has an interval and a verdict.
    Columns: GEMM, median time, IQR, TFLOP/s, speed vs BF16 (median ratio and interval), verdict;
    a last row compares ``use_fast_accum=True`` with ``False`` directly (its verdict starts with
    "faster", "slower" or "no difference resolved").

    Raises:
        ValueError: ``size`` not a positive multiple of 16.
    """
    from amp_docs_lib.core.timing import interleaved

    if isinstance(size, bool) or not isinstance(size, int) or size < 16 or size % 16:
        raise ValueError(f"size must be a positive multiple of 16, got {size!r}")
    dev = check_device(device)
    a, b = operands(size, size, size, device=dev)
    abf, bbf = a.bfloat16(), b.bfloat16().t()
    a8, da, _ = quantize_operand(a)
    b8, db, _ = quantize_operand(b)
    b8t = b8.t()
    fns = {"BF16 torch.mm": lambda: torch.mm(abf, bbf)}
    for fast in (False, True):
        fns[f"FP8 _scaled_mm, use_fast_accum={fast}"] = (
            lambda fast=fast: torch._scaled_mm(a8, b8t, scale_a=da, scale_b=db, out_dtype=torch.bfloat16,
                                               use_fast_accum=fast))
    res = interleaved(fns, baseline="BF16 torch.mm", device=dev, rounds=rounds)
    flops = matmul_flops(size, size, size)
    rows = []
    for name, t in res.timings.items():
        c = None if name == res.baseline else res.compare(name)
        rows.append({"GEMM": name, "size": size, "median (ms)": t.median_s * 1e3, "IQR (ms)": t.iqr_s * 1e3,
                     "TFLOP/s": flops / t.median_s / 1e12,
                     "speed vs BF16": "1 (baseline)" if c is None else c.interval_text(),
                     "verdict": None if c is None else c.verdict})
    fast = res.compare("FP8 _scaled_mm, use_fast_accum=True", baseline="FP8 _scaled_mm, use_fast_accum=False")
    rows.append({"GEMM": "fast accumulation against without", "size": size,
                 "speed vs BF16": None, "verdict": f"{fast.verdict}: {fast.interval_text()}"})
    return pd.DataFrame(rows)


def accumulation_knobs() -> pd.DataFrame:
    """Where each FP8 training stack chooses its GEMM accumulation path.

    torchao's rows are read from the installed ``Float8LinearConfig()`` (the tensorwise recipe's
    defaults); ``torch._scaled_mm``'s default from its signature; Transformer Engine's from its
    source (``Float8CurrentScaling``'s ``fp8_gemm_*`` MMParams, not installable here).
    """
    from torchao.float8 import Float8LinearConfig

    c = Float8LinearConfig()
    arg = next(a for a in torch.ops.aten._scaled_mm.default._schema.arguments if a.name == "use_fast_accum")
    default = arg.default_value
    # The two knobs have opposite polarity: use_fast_accum=True keeps the limited accumulator, while TE's
    # use_split_accumulator=True promotes (TE common/gemm/cublaslt_gemm.cu sets cuBLASLt's
    # CUBLASLT_MATMUL_DESC_FAST_ACCUM to `use_split_accumulator ? 0 : 1`).
    def path(fast: bool) -> str:
        return "limited (fast accumulation)" if fast else "promoted"

    rows = [{"stack": "torch._scaled_mm / F.scaled_mm", "GEMM": "any", "knob": "use_fast_accum",
             "default": str(bool(default)), "accumulation": path(bool(default)),
             "source": f"torch {torch.__version__} (op schema)"}]
    for gemm, cfg in (("output (forward)", c.gemm_config_output), ("grad_input", c.gemm_config_grad_input),
                      ("grad_weight", c.gemm_config_grad_weight)):
        rows.append({"stack": "torchao Float8LinearConfig", "GEMM": gemm, "knob": "use_fast_accum (Float8GemmConfig)",
                     "default": str(cfg.use_fast_accum), "accumulation": path(cfg.use_fast_accum),
                     "source": "installed torchao"})
    for gemm, v in (("fprop (forward)", False), ("dgrad", True), ("wgrad", True)):
        rows.append({"stack": "Transformer Engine Float8CurrentScaling", "GEMM": gemm,
                     "knob": "use_split_accumulator (MMParams)", "default": str(v), "accumulation": path(not v),
                     "source": "TE source (common/): recipe/__init__.py, gemm/cublaslt_gemm.cu"})
    return pd.DataFrame(rows)
