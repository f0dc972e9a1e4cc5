"""Where quantization speeds a linear layer up: latency against batch size, memory- vs compute-bound.

A linear layer ``y = x W^T`` with ``W`` of shape ``(N, K)`` reads the weights once per call
whatever the batch ``B``: ``K·N·e_w`` bytes against ``2·B·K·N`` FLOPs. At small ``B`` the
arithmetic intensity (FLOPs per byte) is low and the layer waits on memory: fewer weight bytes
(weight-only INT8/INT4) can only help there, and only if the kernel reads the small integers
directly instead of first writing a dequantized float copy. At large ``B`` the layer is
compute-bound: only a faster arithmetic (an integer matmul with more operations per
instruction, such as VNNI's ``vpdpbusd``) helps.

:func:`batch_sweep` times FP32 and torchao variants of one layer at each batch size in
interleaved rounds (:func:`amp_docs_lib.core.timing.interleaved`), so every speedup comes with
an interval; :func:`crossovers` reads off where each variant changes from slower to faster
than FP32 (only where both sides are resolved).
"""

from __future__ import annotations

import copy
import math
import warnings
from typing import Any, Callable, Iterable

import pandas as pd
import torch
from torch import nn
from amp_docs_lib.numbers.accounting import matmul_flops

from amp_docs_lib.core.timing import AA_SUFFIX, format_interval  # the float layer timed against a copy of itself: the noise floor

SWEEP_VARIANTS = ("int8_wo", "int4_wo", "int8_dyn")
TORCH_AO_LABEL = "torch.ao quantize_dynamic (deprecated, fbgemm)"
Timer = Callable[..., Any]  # timer(fns, baseline=name) -> an interleaved result (core.timing.Interleaved)


def torch_ao_dynamic(model: nn.Module) -> nn.Module:
    """A copy of ``model`` with ``torch.ao.quantization.quantize_dynamic`` INT8 Linear layers (deprecated API)."""
    from torch.ao.quantization import quantize_dynamic

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its deprecation warning is shown by the chapter's API section
        return quantize_dynamic(copy.deepcopy(model), {nn.Linear}, dtype=torch.qint8)


# torch/ao/nn/quantized/dynamic/modules/linear.py:59 (torch 2.14) calls quantized.linear_dynamic(..., reduce_range=True):
# the activations get 7 bits (0..127), fbgemm's guard against vpmaddubsw's int16 saturation
TORCH_AO_ACTIVATIONS = "uint8 (dynamic, 7-bit range: reduce_range=True)"


def torch_ao_reduce_range(model: nn.Module, x: torch.Tensor) -> dict[str, Any]:
    """Which activation range the ``torch.ao`` dynamic INT8 linear uses: the first quantized Linear of
    :func:`torch_ao_dynamic` (``model``) is called on ``x`` and compared with ``quantized.linear_dynamic`` on
    the same packed weights with ``reduce_range=True`` (7-bit activations) and ``False`` (8-bit).

    Measured, not read from the source, because the torch version decides it.
    """
    from amp_docs_lib.quantization.calibration import linear_inputs

    name = next(n for n, m in model.named_modules() if isinstance(m, nn.Linear))
    first = torch_ao_dynamic(model).get_submodule(name)
    inp = linear_inputs(model, x)[name]
    with torch.inference_mode():
        out = first(inp)
        by_range = {r: torch.ops.quantized.linear_dynamic(inp, first._packed_params._packed_params, reduce_range=r)
                    for r in (True, False)}
    return {"layer": name, "equals reduce_range=True": bool(torch.equal(out, by_range[True])),
            "equals reduce_range=False": bool(torch.equal(out, by_range[False])),
            "7-bit activations": bool(torch.equal(out, by_range[True])) and not torch.equal(out, by_range[False])}


def torchao_activation_codes(model: nn.Module, x: torch.Tensor, layer: str | None = None) -> dict[str, Any]:
    """The INT8 codes torchao's default dynamic activation quantization (``Int8DynamicActivationInt8WeightConfig``:
    symmetric, ``act_mapping_type=MappingType.SYMMETRIC``, one scale per token) gives the input of ``model``'s
    Linear ``layer`` (default: the first) on ``x``: smallest and largest code and how many distinct codes occur.

    On inputs that are never negative a symmetric int8 mapping uses only 0..127, the same 128 levels as
    ``torch.ao``'s ``reduce_range=True`` (0..127, one scale per tensor): the difference is the granularity.
    """
    from torchao.quantization.quant_primitives import MappingType, choose_qparams_affine, quantize_affine

    from amp_docs_lib.quantization.calibration import linear_inputs

    name = layer or next(n for n, m in model.named_modules() if isinstance(m, nn.Linear))
    inp = linear_inputs(model, x)[name].float()
    block = (1, inp.shape[-1])  # per token: one scale per row
    scale, zp = choose_qparams_affine(inp, MappingType.SYMMETRIC, block, torch.int8, eps=torch.finfo(torch.float32).eps)
    q = quantize_affine(inp, block, scale, zp, torch.int8)
    return {"layer": name, "input min": float(inp.min()), "code min": int(q.min()), "code max": int(q.max()),
            "distinct codes": int(q.unique().numel()), "scales (one per token)": int(scale.numel())}


def baseline_for(device: str | torch.device) -> tuple[torch.dtype, str]:
    """The float layer quantized variants are compared with on ``device``: BF16 on CUDA (what torchao's GPU
    configurations start from, and what one would otherwise deploy there), FP32 elsewhere (a CPU without
    AVX512-BF16 or AMX emulates BF16 matmuls). Returns (dtype, label)."""
    return (torch.bfloat16, "BF16") if torch.device(device).type == "cuda" else (torch.float32, "FP32")


def _baseline_label(df: pd.DataFrame) -> str:
    """The baseline of a :func:`batch_sweep` frame, read from its speedup column's name."""
    col = next(c for c in df.columns if c.startswith("speedup vs ") and c.endswith(" (x)"))
    return col[len("speedup vs "):-len(" (x)")]


def linear_variants(in_features: int, out_features: int, names: Iterable[str] = SWEEP_VARIANTS,
                    seed: int = 0, device: str | torch.device = "cpu") -> dict[str, nn.Module]:
    """The float ``nn.Linear`` on ``device`` (:func:`baseline_for`: FP32, or BF16 on CUDA) and a quantized copy
    per torchao variant name (``ptq.VARIANTS``), by label."""
    from amp_docs_lib.quantization.ptq import check_variant, quantize_copy

    torch.manual_seed(seed)
    dtype, label = baseline_for(device)
    base = nn.Sequential(nn.Linear(in_features, out_features)).eval().to(device=device, dtype=dtype)
    out = {label: base}
    for name in names:
        v = check_variant(name)
        out[v.label] = quantize_copy(base, v.make_config())
    return out


def weight_bytes(model: nn.Module) -> int:
    """Bytes of the weight data a forward pass must read: plain tensors, a subclass's inner tensors, and the
    packed weights of ``torch.ao`` quantized modules (not parameters: they live in ``_packed_params``)."""
    total = 0
    for p in model.parameters():
        total += _tensor_bytes(p)
    for codes, rest in _packed_weights(model):
        total += codes + rest
    return total


def weight_code_bytes(model: nn.Module) -> int:
    """Bytes of the weight *codes* only: a quantized weight's ``qdata``, a float weight whole; biases not counted.

    What a weight format costs per element; scales, zero points and biases are the rest of
    :func:`weight_bytes` (as for ``torch.ao`` modules, whose bias sits with the packed scales).
    """
    total = 0
    for name, p in model.named_parameters():
        if name.rsplit(".", 1)[-1] == "bias":  # FP32 in every variant: not part of the weight format
            continue
        qdata = getattr(p, "qdata", None)
        total += _tensor_bytes(qdata) if qdata is not None else _tensor_bytes(p)
    for codes, _ in _packed_weights(model):
        total += codes
    return total


def _packed_weights(model: nn.Module) -> list[tuple[int, int]]:
    """Per ``torch.ao`` quantized module: (bytes of its weight codes, bytes of its scales, zero points and bias)."""
    out = []
    for m in model.modules():
        packed = getattr(m, "_packed_params", None)
        unpack = getattr(packed, "_weight_bias", None)
        if unpack is None:
            continue
        w, b = unpack()
        codes = w.numel() * w.element_size()
        if w.is_quantized and w.qscheme() in (torch.per_channel_affine, torch.per_channel_symmetric):
            rest = sum(t.numel() * t.element_size() for t in (w.q_per_channel_scales(), w.q_per_channel_zero_points()))
        else:
            rest = 8 + 8  # one float64 scale and one int64 zero point (Tensor.q_scale / q_zero_point)
        rest += 0 if b is None else b.numel() * b.element_size()
        out.append((codes, rest))
    return out


def _tensor_bytes(t: torch.Tensor) -> int:
    if hasattr(t, "__tensor_flatten__") and type(t) not in (torch.Tensor, nn.Parameter):
        names, _ = t.__tensor_flatten__()
        return sum(_tensor_bytes(getattr(t, n)) for n in names if getattr(t, n) is not None)
    return t.numel() * t.element_size()


def batch_sweep(in_features: int, out_features: int, batches: Iterable[int], timer: Timer,
                names: Iterable[str] = SWEEP_VARIANTS, *, device: str | torch.device = "cpu", reference: bool = True,
                aa_control: bool = True, progress=None) -> pd.DataFrame:
    """Latency of the float layer and each variant at each batch size, with the speedup over the float layer
    and its interval. The float layer is :func:`baseline_for` the device: FP32, or BF16 on CUDA (the column
    names say which).

    ``timer(fns, baseline=name)`` times a dict of functions in interleaved rounds: the site's harness,
    ``functools.partial(amp_docs_lib.core.timing.interleaved, rounds=..., num_threads=1)``.
    ``reference``: also time the deprecated ``torch.ao`` dynamic INT8 layer (fbgemm integer kernel; CPU only).
    ``aa_control``: also time a copy of the float layer (label ending in :data:`AA_SUFFIX`) in the same rounds:
    its "speedup" should contain 1, and where it resolves a difference the machine's noise made one.
    On CUDA the timer gets ``device`` and times with CUDA events.
    Columns: batch, variant, matmul that ran (a dispatch trace of the first, untimed call: on CUDA a
    refused ``aten._int_mm`` shows as torchao's FP32 fallback), weight bytes, median (us), IQR (us),
    speedup vs FP32 (x), interval low/high, verdict, FLOP/byte (FP32 layer), GFLOP/s.
    """
    from amp_docs_lib.core.dispatch import trace_ops

    batches = list(batches)
    if not batches or any(not isinstance(b, int) or b < 1 for b in batches):
        raise ValueError(f"batches must be positive ints, got {batches!r}")
    dev = torch.device(device)
    dtype, base = baseline_for(dev)
    models = linear_variants(in_features, out_features, names, device=dev)
    if reference and dev.type == "cpu":
        models[TORCH_AO_LABEL] = torch_ao_dynamic(models[base])
    aa_copy = copy.deepcopy(models[base]) if aa_control else None  # the A/A control's second arm (the harness's)
    wbytes = {k: weight_bytes(m) for k, m in models.items()}
    rows = []
    for b in batches:
        x = torch.randn(b, in_features, generator=torch.Generator().manual_seed(b)).to(device=dev, dtype=dtype)

        def runner(m):
            def run():
                with torch.inference_mode():
                    return m(x)
            return run
        ran = {k: trace_ops(runner(m)).matmul_summary() for k, m in models.items()}
        res = timer({k: runner(m) for k, m in models.items()}, baseline=base, device=dev,
                    aa_control=False if aa_copy is None else runner(aa_copy))
        flops = matmul_flops(b, out_features, in_features)
        base_bytes = x.element_size() * (in_features * out_features + out_features + b * (in_features + out_features))
        timed = [(k, t, None if k == base else res.compare(k)) for k, t in res.timings.items()]
        if res.aa is not None:  # the A/A control's own row: its interval is the noise floor of this batch's set
            timed.append((base + AA_SUFFIX, res.aa_timing, res.aa))
            ran[base + AA_SUFFIX], wbytes[base + AA_SUFFIX] = ran[base], wbytes[base]
        for k, t, c in timed:
            rows.append({"batch": b, "variant": k, "matmul that ran": ran[k], "weight bytes": wbytes[k],
                         "median (us)": t.median_s * 1e6, "IQR (us)": t.iqr_s * 1e6,
                         f"speedup vs {base} (x)": None if c is None else c.ratio,
                         "interval low": None if c is None else c.ratio_lo,
                         "interval high": None if c is None else c.ratio_hi,
                         "verdict": None if c is None else c.verdict,
                         f"FLOP/byte ({base} layer)": flops / base_bytes,
                         "GFLOP/s": flops / t.median_s / 1e9})
        if progress:
            progress()
    df = pd.DataFrame(rows).astype(object)
    return df.where(df.notna(), None)


def packed_int4_cpu(features: int, batch: int, timer: Timer) -> pd.DataFrame:
    """``Linear(features, features)`` at ``batch`` rows in FP32 and BF16, each against torchao's packed INT4 for
    CPU (``PrototypeInt4WeightOnlyConfig``) with activations of the same dtype, in one set of interleaved rounds.

    Each row: the matmul a dispatch trace saw, weight bytes, median and IQR, and the speed ratio over the
    same dtype's float layer with its interval and verdict. On the CPU only (``Int4OpaqueTensor``).
    """
    from amp_docs_lib.core.dispatch import trace_ops
    from amp_docs_lib.quantization.ptq import check_variant, quantize_copy

    torch.manual_seed(0)
    base = nn.Sequential(nn.Linear(features, features)).eval()
    x = torch.randn(batch, features, generator=torch.Generator().manual_seed(batch))
    models, inputs, baseline_of = {}, {}, {}
    for dt, name in ((torch.float32, "FP32"), (torch.bfloat16, "BF16")):
        m = copy.deepcopy(base).to(dt)
        packed = f"packed INT4, {name} activations"
        models[name], models[packed] = m, quantize_copy(m, check_variant("int4_cpu_packed").make_config())
        inputs[name] = inputs[packed] = x.to(dt)
        baseline_of[packed] = name

    def runner(k):
        def run():
            with torch.inference_mode():
                return models[k](inputs[k])
        return run
    ran = {k: trace_ops(runner(k)).matmul_summary() for k in models}
    res = timer({k: runner(k) for k in models}, baseline="FP32")
    rows = []
    for k, t in res.timings.items():
        c = res.compare(k, baseline_of[k]) if k in baseline_of else None
        rows.append({"batch": batch, "layer": k, "matmul that ran": ran[k], "weight bytes": weight_bytes(models[k]),
                     "median (us)": t.median_s * 1e6, "IQR (us)": t.iqr_s * 1e6,
                     "vs the same dtype's float layer": None if c is None else f"{c.interval_text()} ({c.verdict})",
                     "A/A control (FP32 vs itself)": None if res.aa is None else res.aa.interval_text()})
    return pd.DataFrame(rows).astype(object).where(lambda d: d.notna(), None)


def packed_int4_verdicts(p4: pd.DataFrame) -> dict[str, dict[str, str]]:
    """Per activation dtype of a :func:`packed_int4_cpu` frame ("FP32", "BF16"): the packed INT4 layer's
    speedup over the float layer of that dtype with its interval ("0.04x [0.03, 0.05]") and its verdict
    ("faster", "slower", ...).

    The kernel's speed depends on the activation dtype (its FP32 and BF16 paths differ), so a
    conclusion about packed INT4 on the CPU is drawn per dtype, never from whichever row was slower.
    """
    out = {}
    for layer, cell in zip(p4["layer"], p4["vs the same dtype's float layer"], strict=True):
        if cell is None or pd.isna(cell):
            continue  # a float layer: the baseline itself
        interval, verdict = str(cell).rsplit(" (", 1)
        out[layer.rsplit(", ", 1)[1].removesuffix(" activations")] = {"interval": interval,
                                                                      "verdict": verdict.removesuffix(")")}
    return out


def crossovers(df: pd.DataFrame) -> pd.DataFrame:
    """Per variant: its verdict at each batch and where it changes between resolved verdicts.

    With a one-sided error of about 5% per comparison and dozens of comparisons on a page, one
    resolved verdict at a single batch is weak evidence. A crossover is reported only between two
    runs of at least two consecutive batch sizes with the same resolved verdict ("slower" then
    "faster", or back); a change resting on a single batch is listed apart, as not counted.
    """
    base = _baseline_label(df)
    rows = []
    variants = df[(df["variant"] != base) & ~df["variant"].str.endswith(AA_SUFFIX)]  # the A/A control is no variant
    for v, g in variants.groupby("variant", sort=False):
        g = g.sort_values("batch")
        verdicts = list(zip((int(b) for b in g["batch"]), g["verdict"]))
        resolved = [(b, s) for b, s in verdicts if s in ("faster", "slower")]
        runs: list[tuple[str, list[int]]] = []  # consecutive batches with one verdict
        for b, s in verdicts:
            if runs and runs[-1][0] == s:
                runs[-1][1].append(b)
            else:
                runs.append((s, [b]))
        firm = [(s, bs) for s, bs in runs if s in ("faster", "slower") and len(bs) >= 2]
        changes = [f"{s0} at {', '.join(map(str, b0))}; {s1} at {', '.join(map(str, b1))}"
                   for (s0, b0), (s1, b1) in zip(firm, firm[1:]) if s0 != s1]
        weak = [f"{s0} at {b0}, {s1} at {b1}" for (b0, s0), (b1, s1) in zip(resolved, resolved[1:]) if s0 != s1]
        kinds = {s for _, s in resolved}
        rows.append({"variant": v,
                     f"faster than {base} at batch": ", ".join(str(b) for b, s in resolved if s == "faster") or "none",
                     f"slower than {base} at batch": ", ".join(str(b) for b, s in resolved if s == "slower") or "none",
                     "not resolved at batch": ", ".join(str(b) for b, s in verdicts
                                                        if s not in ("faster", "slower")) or "none",
                     "crossover": " / ".join(changes) if changes else
                     ("none: " + (next(iter(kinds)) + " wherever resolved") if len(kinds) == 1 else
                      "none resolved at two consecutive batches on each side" if kinds else "none resolved"),
                     "change on a single batch (not counted)": None if changes or not weak else "; ".join(weak)})
    return pd.DataFrame(rows)


def _batch_label(batch: float, _pos=None) -> str:
    """A batch size as a tick label: ``$2^{k}$`` for a power of two, else the number."""
    b = round(batch)
    return f"$2^{{{b.bit_length() - 1}}}$" if b > 0 and b & (b - 1) == 0 else str(b)


def plot_batch_sweep(df: pd.DataFrame):
    """Latency per row (us) and speedup over the float baseline with its interval, against batch size."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    base = _baseline_label(df)
    from amp_docs_lib.core.palette import color_or_default

    # The legend sits in a row of its own, one label a line: the variant names are long, and beside the
    # panels or in two columns they took the column's width, leaving each panel about 50 px wide.
    n = df["variant"].nunique()
    fig = plt.figure(figsize=(7.6, 4.0 + 0.22 * n), layout="constrained")
    grid = fig.add_gridspec(2, 2, height_ratios=[4.0, 0.22 * n])
    ax1, ax2 = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1])
    key = fig.add_subplot(grid[1, :])
    key.axis("off")
    for i, (v, g) in enumerate(df.groupby("variant", sort=False)):
        g = g.sort_values("batch")
        b = g["batch"].astype(float)
        c = color_or_default(v, f"C{i}")
        ax1.plot(b, g["median (us)"].astype(float) / b, "o-", label=v, color=c)
        if v != base:
            s = g[f"speedup vs {base} (x)"].astype(float)
            lo, hi = g["interval low"].astype(float), g["interval high"].astype(float)
            ax2.errorbar(b, s, yerr=[s - lo, hi - s], fmt="o-", capsize=3, label=v, color=c)
    ax1.set_ylabel("latency per row (us)")
    ax2.axhline(1.0, color="0.5", lw=0.8)
    ax2.set_ylabel(f"speedup over {base} (x), interval")
    batches = sorted(df["batch"].astype(int).unique())
    for ax in (ax1, ax2):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("batch (rows)")
        # One tick per batch timed (base-2 decades alone labelled only 2^0 and 2^10), a power of two written
        # as one: "1024" and "4096" two octaves apart overlapped on a panel half the column wide.
        ax.xaxis.set_major_locator(FixedLocator(batches))
        ax.xaxis.set_major_formatter(FuncFormatter(_batch_label))
        ax.xaxis.set_minor_locator(NullLocator())
    key.legend(*ax1.get_legend_handles_labels(), loc="center", ncol=1, frameon=False)
    return fig


def _profiled_kernels(fn) -> str:
    """aten operators the profiler saw in one call of ``fn`` that multiply matrices (compiled code calls them)."""
    from torch.profiler import ProfilerActivity, profile

    from amp_docs_lib.core.dispatch import MATMUL_OPS
    from amp_docs_lib.core.profiling import quiet_stderr

    names = {op.replace("aten.", "aten::").replace("quantized.", "quantized::") for op in MATMUL_OPS}
    with quiet_stderr(), profile(activities=[ProfilerActivity.CPU]) as p:  # aten ops are recorded on the host on any device
        fn()
    seen = dict.fromkeys(e.key for e in p.key_averages() if e.key in names)
    return ", ".join(seen) or "none of the known matmul operators"


def compiled_comparison(features: int, batch: int, names: Iterable[str], timer: Timer,
                        device: str | torch.device = "cpu") -> pd.DataFrame:
    """The eager float layer and, for each name, the eager and ``torch.compile``-d layer at one batch size.

    ``names``: torchao variant names (``ptq.VARIANTS``) and/or ``"fp32"`` (the float layer, compiled). The
    float layer is :func:`baseline_for` the device: FP32, or BF16 on CUDA. Every model is timed in the same
    interleaved rounds against the eager float layer; the kernels column is what the profiler saw. A
    variant whose kernel this device lacks (``ptq.unmet_requirement``: sm80 for tinygemm, sm89 for FP8,
    sm90 for the mslk INT4) or that fails to quantize or compile keeps a row saying why.
    """
    from amp_docs_lib.quantization.ptq import check_variant, quantize_copy, unmet_requirement

    names = list(names)
    dev = torch.device(device)
    dtype, base = baseline_for(dev)
    models = linear_variants(features, features, [], device=dev)
    x = torch.randn(batch, features, generator=torch.Generator().manual_seed(batch)).to(device=dev, dtype=dtype)
    fns, errors = {}, {}

    def runner(m):
        def run():
            with torch.inference_mode():
                return m(x)
        return run
    fns[f"{base} (eager)"] = runner(models[base])
    for n in names:
        lab = base if n == "fp32" else check_variant(n).label
        why = None if n == "fp32" else unmet_requirement(n, dev)
        if why:
            errors[f"{lab} (compiled)"] = f"not run: {why}"
            continue
        try:
            if lab != base:
                models[lab] = quantize_copy(models[base], check_variant(n).make_config())
                runner(models[lab])()
                fns[f"{lab} (eager)"] = runner(models[lab])
            c = torch.compile(copy.deepcopy(models[lab]))
            with warnings.catch_warnings():
                # advice to torchao's authors about AOT autograd's cache key (torch/_functorch/_aot_autograd/
                # autograd_cache.py:707 in torch 2.14), not about this layer: kept off the page
                warnings.filterwarnings("ignore", message=".*does not implement _stable_hash_for_caching")
                runner(c)()  # compiles here, outside the timing
            fns[f"{lab} (compiled)"] = runner(c)
        except Exception as e:  # Inductor needs a C++ compiler on CPU; a config may not run here: say why, keep the row
            errors[f"{lab} (compiled)"] = f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"
    res = timer(fns, baseline=f"{base} (eager)", device=dev)
    speed_col = f"speedup vs eager {base} (x)"
    rows = []
    for k, fn in fns.items():
        t = res.timings[k]
        c = None if k == f"{base} (eager)" else res.compare(k)
        rows.append({"model": k, "median (us)": t.median_s * 1e6, "IQR (us)": t.iqr_s * 1e6,
                     speed_col: None if c is None else c.ratio,
                     "interval": None if c is None else f"[{c.ratio_lo:.2f}, {c.ratio_hi:.2f}]",
                     "verdict": None if c is None else c.verdict, "matmul kernels (profiler)": _profiled_kernels(fn),
                     "A/A control": None if res.aa is None else res.aa.interval_text(), "error": None})
    rows += [{"model": k, "median (us)": None, "IQR (us)": None, speed_col: None, "interval": None,
              "verdict": None, "matmul kernels (profiler)": None, "A/A control": None, "error": e}
             for k, e in errors.items()]
    df = pd.DataFrame(rows).astype(object)
    return df.where(df.notna(), None)


def aa_summary(df: pd.DataFrame) -> dict[str, Any]:
    """The A/A control of a :func:`batch_sweep` frame: its intervals per batch and the batches where it
    resolved a difference (none expected; each such batch says the noise there was larger than the interval)."""
    aa = df[df["variant"].str.endswith(AA_SUFFIX)].sort_values("batch")
    if aa.empty:
        raise ValueError("the sweep has no A/A control (batch_sweep(..., aa_control=True))")
    # rounded outward (core.timing.format_interval): a low end of 0.996 printed as 1.00 would hide that the
    # interval holds 1
    return {"intervals": ", ".join(f"batch {int(r.batch)}: "
                                   f"{format_interval(float(r['interval low']), float(r['interval high']))}"
                                   for _, r in aa.iterrows()),
            "resolved at batch": [int(b) for b, v in zip(aa["batch"], aa["verdict"], strict=True)
                                  if v in ("faster", "slower")]}



def same_layer_twice(sweep: pd.DataFrame, compiled: pd.DataFrame) -> pd.DataFrame:
    """The eager layers timed both in a :func:`batch_sweep` (at its largest batch) and in a
    :func:`compiled_comparison` at that batch: the same layer, weights and input, timed in two sets of rounds.

    Per layer: both medians and IQRs, their ratio, and whether they agree, taken as the two ranges
    median +- IQR overlapping (``|m1 - m2| <= IQR1 + IQR2``). Where they do not, each set's interval covers the
    noise within that set only, and a speedup is to be read against its own set's baseline."""
    big = sweep[sweep["batch"] == sweep["batch"].max()].set_index("variant")
    comp = compiled.set_index("model")
    rows = []
    for k in comp.index:
        if not str(k).endswith(" (eager)") or comp.loc[k, "median (us)"] is None:
            continue
        lab = str(k).removesuffix(" (eager)")
        if lab not in big.index:
            continue
        m1, q1 = float(big.loc[lab, "median (us)"]), float(big.loc[lab, "IQR (us)"])
        m2, q2 = float(comp.loc[k, "median (us)"]), float(comp.loc[k, "IQR (us)"])
        rows.append({"layer (eager)": lab, "batch sweep (us)": m1, "batch sweep IQR (us)": q1,
                     "compile table (us)": m2, "compile table IQR (us)": q2, "ratio (sweep / compile)": m1 / m2,
                     "agree": abs(m1 - m2) <= q1 + q2})
    return pd.DataFrame(rows)
