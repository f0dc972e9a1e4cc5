"""Autocast as an operator policy: probe it, and compare it with the documented lists.

Autocast does not cast a model; at dispatch it picks a dtype for each *op*.
``probe_autocast_policy`` runs every op of the registry ``OPS`` on tiny
tensors and classifies what autocast did to it:

* ``lower``     - FP32 inputs come out in the autocast dtype (matmul, conv, ...);
* ``fp32``      - inputs given in the low dtype come out FP32 (forced to float32);
* ``promote``   - all-low inputs stay low, a low/FP32 mix comes out FP32 and
  autocast (not the op itself) is what makes the mix work;
* ``unchanged`` - the output follows the inputs (autocast leaves the op alone;
  mixed inputs may still come out FP32 through ordinary type promotion);
* ``error``     - the op raised (e.g. unsupported in that dtype, or banned).

The documented lists (PyTorch's "Autocast Op Reference") ship as data in
``amp_docs_lib/data/autocast_op_lists.json``; ``compare_with_documented``
puts documented and measured category side by side.
"""

from __future__ import annotations

import functools
import itertools
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any, Callable, Sequence

import pandas as pd
import torch
import torch.nn.functional as F

from amp_docs_lib.core.tables import short_dtype
from amp_docs_lib.core.devices import DEVICE_TYPES, available_devices, check_device

LOW_DTYPES = (torch.float16, torch.bfloat16)
CATEGORIES = ("lower", "fp32", "promote", "unchanged", "error")
_DOMAINS = {"any": (-1.0, 1.0), "pos": (0.5, 2.0), "unit": (0.05, 0.95)}
_COMPLEX_TO_REAL = {torch.complex32: torch.float16, torch.complex64: torch.float32,
                    torch.complex128: torch.float64}


# --------------------------------------------------------------------------- registry
@dataclass(frozen=True)
class OpSpec:
    """One probe: how to build the op's floating inputs and run it.

    ``run(*float_inputs, *extra)`` runs the op; ``shapes`` are the shapes of
    the floating inputs (the ones the probe puts in FP32, low or mixed
    precision); ``extra(device)`` makes inputs whose dtype is fixed (integer
    targets, indices, running statistics). ``aten`` names the ATen ops whose
    autocast registration is looked up, ``doc`` the names the documentation
    lists use for this op.
    """

    name: str
    run: Callable[..., Any]
    shapes: tuple[tuple[int, ...], ...]
    domain: str | tuple[str, ...] = "any"
    extra: Callable[[torch.device], tuple] | None = None
    aten: tuple[str, ...] = ()
    doc: tuple[str, ...] = ()

    @property
    def n_float_inputs(self) -> int:
        return len(self.shapes)

    def make_inputs(self, device: str | torch.device, dtypes: Sequence[torch.dtype]) -> list:
        """Seeded floating inputs in ``dtypes`` (one per input) plus the fixed extras."""
        if len(dtypes) != self.n_float_inputs:
            raise ValueError(f"op {self.name!r} takes {self.n_float_inputs} floating inputs, "
                             f"got {len(dtypes)} dtypes")
        g = torch.Generator().manual_seed(0)
        domains = (self.domain,) * self.n_float_inputs if isinstance(self.domain, str) else self.domain
        out: list = []
        for shape, dt, dom in zip(self.shapes, dtypes, domains):
            lo, hi = _DOMAINS[dom]
            t = torch.rand(shape, generator=g) * (hi - lo) + lo
            out.append(t.to(device=device, dtype=dt))
        if self.extra is not None:
            out.extend(self.extra(torch.device(device)))
        return out

    def __call__(self, device: str | torch.device, dtypes: Sequence[torch.dtype]) -> Any:
        """Make the inputs in ``dtypes`` on ``device`` and run the op."""
        return self.run(*self.make_inputs(device, dtypes))


def _targets(n: int, classes: int) -> Callable[[torch.device], tuple]:
    return lambda d: (torch.arange(n, device=d) % classes,)


def _op(name, run, *shapes, domain="any", extra=None, aten=None, doc=None) -> OpSpec:
    return OpSpec(name, run, tuple(shapes), domain, extra,
                  tuple(aten) if aten else (name,), tuple(doc) if doc else (name,))


_S = (4, 8)          # generic 2-D input
_V = (8,)            # vector
_IMG = (1, 2, 6, 6)  # N, C, H, W
_SEQ = (1, 2, 8)     # N, C, L
_VOL = (1, 2, 4, 4, 4)

OPS: dict[str, OpSpec] = {s.name: s for s in [
    # --- matrix products and convolutions
    _op("matmul", torch.matmul, _S, (8, 4)),
    _op("__matmul__", lambda a, b: a @ b, _S, (8, 4), aten=("matmul",), doc=("__matmul__", "matmul")),
    _op("mm", torch.mm, _S, (8, 4)),
    _op("mv", torch.mv, _S, _V),
    _op("bmm", torch.bmm, (2, 4, 8), (2, 8, 4)),
    _op("addmm", torch.addmm, (4, 4), _S, (8, 4)),
    _op("addmv", torch.addmv, (4,), _S, _V),
    _op("addr", torch.addr, _S, (4,), _V),
    _op("addbmm", torch.addbmm, (4, 4), (2, 4, 8), (2, 8, 4)),
    _op("baddbmm", torch.baddbmm, (2, 4, 4), (2, 4, 8), (2, 8, 4)),
    _op("multi_dot", lambda a, b, c: torch.linalg.multi_dot([a, b, c]), _S, (8, 4), (4, 2),
        aten=("linalg_multi_dot",)),
    _op("linalg_vecdot", torch.linalg.vecdot, _S, _S),
    _op("einsum", lambda a, b: torch.einsum("bij,bjk->bik", a, b), (2, 4, 8), (2, 8, 4)),
    _op("linear", F.linear, _S, (3, 8), (3,)),
    _op("bilinear", F.bilinear, (4, 3), (4, 5), (2, 3, 5), (2,)),
    _op("conv1d", F.conv1d, _SEQ, (3, 2, 3)),
    _op("conv2d", F.conv2d, _IMG, (3, 2, 3, 3)),
    _op("conv3d", F.conv3d, _VOL, (3, 2, 2, 2, 2)),
    _op("conv_transpose1d", F.conv_transpose1d, _SEQ, (2, 3, 3)),
    _op("conv_transpose2d", F.conv_transpose2d, _IMG, (2, 3, 3, 3)),
    _op("prelu", F.prelu, _S, (1,)),
    _op("scaled_dot_product_attention", F.scaled_dot_product_attention,
        (1, 2, 4, 8), (1, 2, 4, 8), (1, 2, 4, 8)),
    # --- normalisation, softmax, pointwise transcendental functions
    _op("softmax", lambda x: torch.softmax(x, -1), _S),
    _op("log_softmax", lambda x: torch.log_softmax(x, -1), _S),
    _op("softmin", lambda x: F.softmin(x, -1), _S),
    _op("layer_norm", lambda x, w, b: F.layer_norm(x, (8,), w, b), _S, _V, _V),
    _op("group_norm", lambda x: F.group_norm(x, 2), _IMG),
    _op("rms_norm", lambda x: F.rms_norm(x, (8,)), _S),
    _op("batch_norm", lambda x, m, v: F.batch_norm(x, m, v, training=True), _IMG,
        extra=lambda d: (torch.zeros(2, device=d), torch.ones(2, device=d)), aten=("batch_norm",)),
    _op("exp", torch.exp, _S),
    _op("expm1", torch.expm1, _S),
    _op("log", torch.log, _S, domain="pos"),
    _op("log1p", torch.log1p, _S, domain="pos"),
    _op("log2", torch.log2, _S, domain="pos"),
    _op("log10", torch.log10, _S, domain="pos"),
    _op("pow", lambda x: torch.pow(x, 2.5), _S, domain="pos"),
    _op("__pow__", lambda x: x ** 2.5, _S, domain="pos", aten=("pow",), doc=("__pow__", "pow")),
    _op("rsqrt", torch.rsqrt, _S, domain="pos"),
    _op("reciprocal", torch.reciprocal, _S, domain="pos"),
    _op("sqrt", torch.sqrt, _S, domain="pos"),
    _op("acos", torch.acos, _S),
    _op("asin", torch.asin, _S),
    _op("cosh", torch.cosh, _S),
    _op("sinh", torch.sinh, _S),
    _op("tan", torch.tan, _S),
    _op("erfinv", torch.erfinv, _S),
    _op("tanh", torch.tanh, _S),
    _op("sigmoid", torch.sigmoid, _S),
    _op("softplus", F.softplus, _S),
    _op("gelu", F.gelu, _S),
    _op("silu", F.silu, _S),
    _op("relu", torch.relu, _S),
    _op("dropout", lambda x: F.dropout(x, 0.5, training=True), _S, aten=("dropout", "native_dropout")),
    # --- reductions and distances
    _op("sum", torch.sum, _S),
    _op("mean", torch.mean, _S),
    _op("prod", torch.prod, _S, domain="pos"),
    _op("cumsum", lambda x: torch.cumsum(x, -1), _S),
    _op("cumprod", lambda x: torch.cumprod(x, -1), _S, domain="pos"),
    _op("var", torch.var, _S),
    _op("max", torch.max, _S),
    _op("quantile", lambda x: torch.quantile(x, 0.5), _S),
    _op("norm", torch.norm, _S),
    _op("normalize", F.normalize, _S),
    _op("renorm", lambda x: torch.renorm(x, 2, 0, 1.0), _S),
    _op("dist", torch.dist, _S, _S),
    _op("cdist", torch.cdist, _S, (5, 8)),
    _op("pdist", F.pdist, _S, aten=("pdist", "_pdist_forward")),
    _op("cosine_similarity", F.cosine_similarity, _S, _S),
    _op("trace", torch.trace, (4, 4)),
    # --- losses
    _op("cross_entropy", lambda x, t: F.cross_entropy(x, t), _S, extra=_targets(4, 8),
        aten=("cross_entropy_loss",), doc=("cross_entropy", "cross_entropy_loss")),
    _op("nll_loss", lambda x, t: F.nll_loss(x, t), _S, extra=_targets(4, 8)),
    _op("mse_loss", F.mse_loss, _S, _S),
    _op("l1_loss", F.l1_loss, _S, _S),
    _op("smooth_l1_loss", F.smooth_l1_loss, _S, _S),
    _op("huber_loss", F.huber_loss, _S, _S),
    _op("kl_div", lambda x, y: F.kl_div(x, y, reduction="batchmean"), _S, _S, domain=("any", "unit")),
    _op("binary_cross_entropy_with_logits", F.binary_cross_entropy_with_logits, _S, _S,
        domain=("any", "unit")),
    _op("binary_cross_entropy", F.binary_cross_entropy, _S, _S, domain="unit"),
    _op("soft_margin_loss", F.soft_margin_loss, _S, _S),
    _op("margin_ranking_loss", F.margin_ranking_loss, _V, _V, _V),
    _op("hinge_embedding_loss", F.hinge_embedding_loss, _S, _S),
    _op("cosine_embedding_loss", F.cosine_embedding_loss, _S, _S, (4,)),
    _op("poisson_nll_loss", F.poisson_nll_loss, _S, _S, domain="pos"),
    _op("triplet_margin_loss", F.triplet_margin_loss, _S, _S, _S),
    _op("multi_margin_loss", lambda x, t: F.multi_margin_loss(x, t), _S, extra=_targets(4, 8)),
    # --- pooling, padding, spectral, linear algebra
    _op("max_pool2d", lambda x: F.max_pool2d(x, 2), _IMG, aten=("max_pool2d", "max_pool2d_with_indices")),
    _op("max_pool3d", lambda x: F.max_pool3d(x, 2), _VOL, aten=("max_pool3d", "max_pool3d_with_indices")),
    _op("avg_pool3d", lambda x: F.avg_pool3d(x, 2), _VOL),
    _op("adaptive_avg_pool3d", lambda x: F.adaptive_avg_pool3d(x, 2), _VOL,
        aten=("adaptive_avg_pool3d", "_adaptive_avg_pool3d")),
    _op("reflection_pad1d", lambda x: F.pad(x, (1, 1), mode="reflect"), _SEQ),
    _op("replication_pad2d", lambda x: F.pad(x, (1, 1, 1, 1), mode="replicate"), _IMG),
    _op("fft_rfft", lambda x: torch.fft.rfft(x), _S),
    _op("linalg_inv", lambda x: torch.linalg.inv(x + 4 * torch.eye(4, device=x.device, dtype=x.dtype)),
        (4, 4), aten=("linalg_inv", "linalg_inv_ex")),
    _op("embedding", lambda w, i: F.embedding(i, w), (10, 4),
        extra=lambda d: (torch.tensor([[1, 2, 3]], device=d),)),
    # --- multi-input ops (the promote probes)
    _op("add", torch.add, _S, _S),
    _op("mul", torch.mul, _S, _S),
    _op("cat", lambda a, b: torch.cat([a, b]), _S, _S),
    _op("stack", lambda a, b: torch.stack([a, b]), _S, _S),
    _op("addcmul", torch.addcmul, _S, _S, _S),
    _op("addcdiv", torch.addcdiv, _S, _S, _S, domain=("any", "any", "pos")),
    _op("atan2", torch.atan2, _S, _S),
    # torch.cross, not torch.linalg.cross: the lists name aten::cross (AutocastCUDA has a kernel
    # for it), and linalg_cross, which it calls inside, has none.
    _op("cross", lambda a, b: torch.cross(a, b, dim=1), (4, 3), (4, 3),
        aten=("cross", "linalg_cross")),
    _op("dot", torch.dot, _V, _V),
    _op("tensordot", lambda a, b: torch.tensordot(a, b, dims=1), _S, (8, 4)),
    _op("index_put", lambda s, v, i: s.index_put((i,), v), _S, (2, 8),
        extra=lambda d: (torch.tensor([0, 2], device=d),)),
    _op("index_copy", lambda s, v, i: s.index_copy(0, i, v), _S, (2, 8),
        extra=lambda d: (torch.tensor([0, 2], device=d),)),
    _op("scatter_add", lambda s, v, i: s.scatter_add(0, i, v), _S, _S,
        extra=lambda d: (torch.zeros(4, 8, dtype=torch.long, device=d),)),
    _op("grid_sample", lambda x, g: F.grid_sample(x, g, align_corners=False), _IMG, (1, 3, 3, 2),
        aten=("grid_sampler", "grid_sampler_2d"), doc=("grid_sample", "grid_sampler", "grid_sampler_2d")),
]}


# --------------------------------------------------------------------------- validation
def _check_devices(devices) -> list[str]:
    if devices is None:
        return available_devices()
    if isinstance(devices, (str, torch.device)):
        devices = [devices]
    return [check_device(d).type for d in devices]


def _check_dtypes(dtypes) -> list[torch.dtype]:
    valid = [str(d) for d in LOW_DTYPES]
    if isinstance(dtypes, (torch.dtype, str)):
        dtypes = [dtypes]
    out = []
    for dt in dtypes:
        if isinstance(dt, str):
            dt = getattr(torch, dt.removeprefix("torch."), dt)
        if not isinstance(dt, torch.dtype):
            raise TypeError(f"autocast dtype must be a torch.dtype, got {dt!r}; valid: {valid}")
        if dt not in LOW_DTYPES:
            raise ValueError(f"autocast dtype {dt} is not a lower-precision dtype; valid: {valid}")
        out.append(dt)
    return out


def _check_ops(ops) -> list[OpSpec]:
    if ops is None:
        return list(OPS.values())
    out = []
    for o in ops:
        if isinstance(o, OpSpec):
            out.append(o)
        elif o in OPS:
            out.append(OPS[o])
        else:
            raise ValueError(f"unknown op {o!r}; valid ops: {sorted(OPS)}")
    return out


# --------------------------------------------------------------------------- probing
def _out_dtype(result: Any) -> torch.dtype:
    while isinstance(result, (tuple, list)):
        result = result[0]
    dt = result.dtype
    return _COMPLEX_TO_REAL.get(dt, dt)


def _run(spec: OpSpec, device: str, dtypes: Sequence[torch.dtype], autocast_dtype: torch.dtype | None):
    """Output dtype of one run, or the exception it raised."""
    inputs = spec.make_inputs(device, dtypes)  # built outside autocast: exactly these dtypes
    try:
        if autocast_dtype is None:
            return _out_dtype(spec.run(*inputs))
        with torch.autocast(device_type=device, dtype=autocast_dtype):
            return _out_dtype(spec.run(*inputs))
    except Exception as e:  # noqa: BLE001 - an op refusing a dtype is a result, not a crash
        return e


@functools.lru_cache(maxsize=None)
def _op_overloads(base: str) -> tuple[str, ...]:
    names = torch._C._dispatch_get_all_op_names()
    return tuple(n for n in names if n == f"aten::{base}" or n.startswith(f"aten::{base}."))


def autocast_kernel_registered(aten_name: str, device: str) -> bool | None:
    """Whether this build's dispatcher has an autocast kernel for ``aten::<aten_name>`` on ``device``.

    Looks at the ``AutocastCPU`` / ``AutocastCUDA`` dispatch key of every
    overload; needs no GPU. ``None`` when no ATen op of that name exists.
    """
    if device not in DEVICE_TYPES:
        raise ValueError(f"unknown device {device!r}; valid devices: {list(DEVICE_TYPES)}")
    key = "AutocastCPU" if device == "cpu" else "AutocastCUDA"
    overloads = [n for n in _op_overloads(aten_name) if not n.endswith("_out") and ".out" not in n]
    if not overloads:
        return None
    return any(torch._C._dispatch_has_kernel_for_dispatch_key(n, key) for n in overloads)


def _classify(fp32_in, low_in, mixed_in, mixed_eager, low: torch.dtype, kernel: bool) -> str:
    if isinstance(fp32_in, Exception):
        return "error"
    if fp32_in == low:
        return "lower"
    if isinstance(low_in, Exception):
        return "error"
    if low_in == torch.float32:
        return "fp32"
    if mixed_in is None:  # single floating input
        return "unchanged" if low_in == low else "error"
    if isinstance(mixed_in, Exception):
        # autocast left the mix alone and the op itself refuses mixed dtypes
        return "unchanged" if low_in == low else "error"
    if mixed_in == torch.float32 and low_in == low:
        # Autocast did the promoting if the op cannot mix dtypes on its own, or if
        # autocast has a kernel for it; otherwise it is the op's own type promotion.
        autocast_did_it = isinstance(mixed_eager, Exception) or mixed_eager != torch.float32 or kernel
        return "promote" if autocast_did_it else "unchanged"
    return "unchanged" if low_in == low else "error"


def probe_op(spec: OpSpec | str, device: str = "cpu", dtype: torch.dtype = torch.bfloat16) -> dict:
    """Probe one op on one device with one autocast dtype; returns one row of the policy table."""
    (spec,) = _check_ops([spec])
    (device,) = _check_devices([device])
    (dtype,) = _check_dtypes([dtype])
    n = spec.n_float_inputs
    fp32 = torch.float32
    fp32_in = _run(spec, device, [fp32] * n, dtype)
    low_in = _run(spec, device, [dtype] * n, dtype)
    mixed_in = mixed_eager = None
    if n > 1:
        mixed = [dtype] + [fp32] * (n - 1)
        mixed_in = _run(spec, device, mixed, dtype)
        mixed_eager = _run(spec, device, mixed, None)
    kernel = any(bool(autocast_kernel_registered(a, device)) for a in spec.aten)
    errors = [(what, r) for what, r in (("fp32 in", fp32_in), ("low in", low_in), ("mixed in", mixed_in))
              if isinstance(r, Exception)]

    def show(r):
        return "error" if isinstance(r, Exception) else short_dtype(r)

    return {
        "device": device, "dtype": short_dtype(dtype), "op": spec.name,
        "category": _classify(fp32_in, low_in, mixed_in, mixed_eager, dtype, kernel),
        "fp32 in": show(fp32_in), "low in": show(low_in),
        "mixed in": show(mixed_in), "mixed, no autocast": show(mixed_eager),
        "autocast kernel": kernel,
        "note": (f"{errors[0][0]}: {type(errors[0][1]).__name__}: {str(errors[0][1]).splitlines()[0][:80]}"
                 if errors else ""),
    }


def probe_autocast_policy(devices=None, dtypes=LOW_DTYPES, ops=None) -> pd.DataFrame:
    """Probe the autocast policy of every op in ``OPS`` (or ``ops``).

    For each device (default: every available one) and autocast dtype, each
    op runs under autocast with FP32 inputs, with low-precision inputs and,
    for multi-input ops, with mixed inputs (first low, the rest FP32), plus
    the mixed case without autocast. Returns one row per (device, dtype, op)
    with the output dtypes, whether autocast has a kernel registered for the
    op, and the resulting ``category`` (one of ``CATEGORIES``).
    """
    devs, dts, specs = _check_devices(devices), _check_dtypes(dtypes), _check_ops(ops)
    rows = [probe_op(s, d, dt) for d in devs for dt in dts for s in specs]
    return pd.DataFrame(rows)


def summarize_policy(probe: pd.DataFrame) -> pd.DataFrame:
    """Count of ops per category, one column per (device, autocast dtype)."""
    counts = (probe.assign(column=probe["device"] + " / " + probe["dtype"])
              .pivot_table(index="category", columns="column", values="op", aggfunc="count", fill_value=0))
    counts = counts.reindex([c for c in CATEGORIES if c in counts.index])
    counts.columns.name = None
    return counts.reset_index()


def wide_policy_table(probe: pd.DataFrame) -> pd.DataFrame:
    """One row per op, one category column per (device, autocast dtype)."""
    t = (probe.assign(column=probe["device"] + " / " + probe["dtype"])
         .pivot(index="op", columns="column", values="category"))
    t = t.reindex([o for o in OPS if o in t.index] + [o for o in t.index if o not in OPS])
    t.columns.name = None
    return t.reset_index()


# --------------------------------------------------------------------------- documented lists
@functools.lru_cache(maxsize=1)
def documented_op_lists() -> dict:
    """The documented autocast op lists (and their source) from ``data/autocast_op_lists.json``."""
    text = resources.files("amp_docs_lib").joinpath("data/autocast_op_lists.json").read_text()
    return json.loads(text)


def documentation_source() -> str:
    """The documented lists' source and version, for the source stamp of tables built from them."""
    src = documented_op_lists()["source"]
    return f"PyTorch documentation amp.md (Autocast Op Reference) at commit {src['commit'][:8]}"


def dtype_disagreements(probe: pd.DataFrame, device: str = "cpu") -> pd.DataFrame:
    """Ops whose measured category on ``device`` differs between the autocast dtypes (the exceptions)."""
    wide = wide_policy_table(probe[probe["device"] == device])
    cols = [c for c in wide.columns if c != "op"]
    return wide[wide[cols].nunique(axis=1) > 1].reset_index(drop=True)


def documented_category(op: str, device: str) -> str:
    """Documented category of ``op`` on ``device``: a list's name, or ``'unlisted'``.

    ``op`` is a registry name (its documented aliases are looked up) or a name
    as the documentation spells it.
    """
    if device not in DEVICE_TYPES:
        raise ValueError(f"unknown device {device!r}; valid devices: {list(DEVICE_TYPES)}")
    lists = documented_op_lists()["devices"][device]["lists"]
    names = OPS[op].doc if op in OPS else (op,)
    for name in names:
        for category, members in lists.items():
            if name in members:
                return category
    return "unlisted"


_AGREES = {"lower": {"lower"}, "fp32": {"fp32"}, "promote": {"promote"},
           "raises": {"error"}, "unlisted": {"unchanged"}}


class _Row:
    def __init__(self, d: dict):
        self.__dict__.update(d)
        self.kernel = d["autocast kernel"]


def _explain(documented: str, measured: str, kernel: bool, note: str) -> str:
    if measured == "error":
        return note
    if documented == "unlisted" and kernel:
        return "this build registers an autocast kernel the documented list does not name"
    if documented == "unlisted" and measured == "lower":
        return "composite op: no autocast kernel of its own, it calls a lowered op (mm/bmm) inside"
    if documented != "unlisted" and not kernel:
        return "documented, but this build registers no autocast kernel for it"
    return "measured behaviour differs from the documented list"


def compare_with_documented(probe: pd.DataFrame) -> pd.DataFrame:
    """Documented vs measured category per op, device and dtype, with a verdict.

    A documented ``unlisted`` op agrees when it measured ``unchanged``; the
    documentation's CPU lists hold for both bfloat16 and float16.
    """
    rows = []
    for r in probe.to_dict("records"):
        r = _Row(r)
        doc = documented_category(r.op, r.device)
        agree = r.category in _AGREES[doc]
        rows.append({"op": r.op, "device": r.device, "dtype": r.dtype, "documented": doc,
                     "measured": r.category, "autocast kernel": r.kernel,
                     "verdict": "agree" if agree else "differ",
                     "why": "" if agree else _explain(doc, r.category, r.kernel, r.note)})
    return pd.DataFrame(rows)


def documented_differences(probe: pd.DataFrame) -> pd.DataFrame:
    """The ``differ`` rows of ``compare_with_documented``, one row per op and device
    (the autocast dtypes that show the same difference are joined in ``dtype``)."""
    c = compare_with_documented(probe)
    c = c[c["verdict"] == "differ"].drop(columns="verdict")
    # Rows merge only when the explanation is identical too (an error message names its dtype).
    keys = ["op", "device", "documented", "measured", "autocast kernel", "why"]
    out = (c.groupby(keys, sort=False)
           .agg(dtype=("dtype", lambda s: ", ".join(dict.fromkeys(s))))
           .reset_index())
    first_seen = {op: i for i, op in enumerate(dict.fromkeys(c["op"]))}  # keep an op's rows together
    out = out.sort_values("op", key=lambda col: col.map(first_seen), kind="stable").reset_index(drop=True)
    return out[["op", "device", "dtype", "documented", "measured", "autocast kernel", "why"]]


# documentation names -> ATen op names, where they differ
DOC_TO_ATEN = {
    "__matmul__": "matmul", "__pow__": "pow", "__rpow__": "pow", "multi_dot": "linalg_multi_dot",
    "GRUCell": "gru_cell", "LSTMCell": "lstm_cell", "RNNCell": "rnn_tanh_cell",
    "cross_entropy": "cross_entropy_loss", "normalize": None, "softmin": None,
    "__rdiv__": None, "__rtruediv__": None,
    "grid_sample": "grid_sampler",  # F.grid_sample returns torch.grid_sampler(...) (torch/nn/functional.py)
}
# Further ATen ops a documented name stands for: RNNCell(nonlinearity="relu") calls
# _VF.rnn_relu_cell (torch/nn/modules/rnn.py), and aten::layer_norm computes through
# aten::native_layer_norm (its trace shows it), so neither is an op the documentation omits.
DOC_ALSO_ATEN = {"RNNCell": ("rnn_relu_cell",), "layer_norm": ("native_layer_norm",)}


def documented_cpu_vs_cuda(only: Sequence[str] | None = None) -> pd.DataFrame:
    """Ops whose documented category differs between CPU and CUDA (no GPU needed), with the CUDA
    category of the installed ``ATen/autocast_mode.h`` and whether ``AutocastCUDA`` has a kernel.

    ``only`` restricts the table to those names (documentation or ATen spelling).
    """
    names: dict[str, str] = {}
    for dev in DEVICE_TYPES:
        for members in documented_op_lists()["devices"][dev]["lists"].values():
            for n in members:
                names.setdefault(DOC_TO_ATEN.get(n) or n, n)
    rows = []
    for key, name in sorted(names.items()):
        cats = {}
        for dev in DEVICE_TYPES:
            spelled = [n for n in (name, key) if documented_category(n, dev) != "unlisted"]
            cats[dev] = documented_category(spelled[0], dev) if spelled else "unlisted"
        if only is not None and key not in only and name not in only:
            continue
        if cats["cpu"] != cats["cuda"]:
            # One name per op across the page's tables: the probe's name where the op is probed.
            shown = name if name in OPS else key
            rows.append({"op": shown, "CPU (documented)": cats["cpu"], "CUDA (documented)": cats["cuda"],
                         HEADER_COLUMN: header_category(shown),
                         "CUDA autocast kernel": autocast_kernel_registered(
                             _header_aten_name(shown) if shown in OPS else key, "cuda")})
    return pd.DataFrame(rows)


# Matrix products and the composite ops built on them.
MATMUL_FAMILY = ("matmul", "mm", "mv", "addmv", "addr", "dot", "multi_dot", "einsum", "tensordot")


# Ops whose range or accumulation matters: softmax, exp/log, reductions, normalisation, losses.
RANGE_SENSITIVE = ("softmax", "log_softmax", "exp", "log", "sum", "norm", "layer_norm", "mse_loss")


def policy_by_device(ops: Sequence[str], probe: pd.DataFrame | None = None,
                     dtype: str = "bfloat16") -> pd.DataFrame:
    """Category of each op per device: measured where ``probe`` covers the device, else documented.

    Without ``probe``, the ops are probed on every available device (the CPU
    always). ``autocast kernel`` columns ask this build's dispatcher, which
    needs no GPU: an op with no kernel of its own on a device is at most
    lowered *downstream*, through the ops it calls.
    """
    specs = _check_ops(ops)
    if probe is None:
        probe = probe_autocast_policy(devices=available_devices(), ops=[s.name for s in specs],
                                      dtypes=[getattr(torch, dtype)])
    rows = []
    for spec in specs:
        op = spec.name
        aten = OPS[op].aten[0] if OPS[op].aten else op
        row = {"op": op}
        for dev in DEVICE_TYPES:
            hit = probe[(probe["op"] == op) & (probe["device"] == dev) & (probe["dtype"] == dtype)]
            label = "measured" if len(hit) else "documented"
            row[f"{dev.upper()} category ({label})"] = (hit["category"].iloc[0] if len(hit)
                                                         else documented_category(op, dev))
            row[f"{dev.upper()} autocast kernel"] = autocast_kernel_registered(aten, dev)
        rows.append(row)
    return pd.DataFrame(rows)


def matmul_family_by_device(probe: pd.DataFrame, dtype: str = "bfloat16") -> pd.DataFrame:
    """``policy_by_device`` for the matrix products and the composite ops built on them, with the
    CUDA category of the installed ``ATen/autocast_mode.h``."""
    return _with_header_column(policy_by_device(MATMUL_FAMILY, probe, dtype))


HEADER_COLUMN = "CUDA category (installed ATen/autocast_mode.h)"


def _with_header_column(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` (one row per op, with a "CUDA autocast kernel" column) plus the installed header's
    CUDA category, placed before the kernel column: this torch's own list, which the
    documentation can lag behind."""
    table = table.copy()
    table.insert(table.columns.get_loc("CUDA autocast kernel"), HEADER_COLUMN,
                 [header_category(op) for op in table["op"]])
    return table


@functools.lru_cache(maxsize=None)
def registered_autocast_ops(device: str) -> frozenset[str]:
    """Base names of all ATen ops with an autocast kernel for ``device`` in this build."""
    if device not in DEVICE_TYPES:
        raise ValueError(f"unknown device {device!r}; valid devices: {list(DEVICE_TYPES)}")
    key = "AutocastCPU" if device == "cpu" else "AutocastCUDA"
    return frozenset(n.split("::", 1)[1].split(".", 1)[0] for n in torch._C._dispatch_get_all_op_names()
                     if torch._C._dispatch_has_kernel_for_dispatch_key(n, key))


def undocumented_registrations(device: str) -> list[str]:
    """ATen ops this build autocasts on ``device`` that the documented lists do not name."""
    documented = set()
    for members in documented_op_lists()["devices"][device]["lists"].values():
        documented.update(DOC_TO_ATEN.get(n) or n for n in members)
        documented.update(a for n in members for a in DOC_ALSO_ATEN.get(n, ()))
    return sorted(n for n in registered_autocast_ops(device) - documented if not n.startswith("_"))


def default_autocast_dtypes() -> dict[str, str]:
    """``torch.get_autocast_dtype`` for each device type (no GPU needed)."""
    return {d: short_dtype(torch.get_autocast_dtype(d)) for d in DEVICE_TYPES}


# ---- what the summary says about FP32 ops, and the mechanisms around the lists ---------------
# Ops a reader expects autocast to protect: softmax, exp/log, normalisation, reductions.
FP32_CANDIDATES = ("softmax", "log_softmax", "exp", "log", "layer_norm", "group_norm", "rms_norm",
                   "batch_norm", "sum", "prod", "cumsum", "mean", "var", "max", "norm", "quantile")


_HEADER_MACROS = {"AT_FORALL_LOWER_PRECISION_FP": "lower", "AT_FORALL_FP32": "fp32",
                  "AT_FORALL_FP32_SET_OPT_DTYPE": "fp32", "AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE": "fp32",
                  "AT_FORALL_PROMOTE": "promote"}


@functools.lru_cache(maxsize=1)
def installed_header_lists() -> dict[str, Any]:
    """The op lists of the installed torch's ``ATen/autocast_mode.h`` (the CUDA autocast policy).

    ``AutocastCUDA`` registers its kernels from these macros; reading them tells what *this* torch
    does on CUDA without a GPU. Returns ``{"path": ..., "ops": {op: (category, line)}}``; ``ops`` is
    empty when the header (or the macros) are missing from this torch.
    """
    import os
    import re

    path = os.path.join(os.path.dirname(torch.__file__), "include", "ATen", "autocast_mode.h")
    ops: dict[str, tuple[str, int]] = {}
    if not os.path.exists(path):
        return {"path": path, "ops": ops}
    macro = None
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            m = re.match(r"#define (AT_FORALL_\w+)\(_\)", line)
            if m:
                macro = m.group(1) if m.group(1) in _HEADER_MACROS else None
                continue
            if macro is None or not line.strip():
                if not line.rstrip().endswith("\\"):
                    macro = None if not line.strip() else macro
                continue
            m = re.match(r"\s*_\((?:ADD_NS\()?(\w+)", line)
            if m and m.group(1) not in ops:
                ops[m.group(1)] = (_HEADER_MACROS[macro], lineno)
            if not line.rstrip().endswith("\\"):
                macro = None
    return {"path": path, "ops": ops}


def matvec_spellings(device: str = "cpu", dtype: torch.dtype = torch.bfloat16) -> dict[str, str]:
    """Output dtype of one FP32 matrix-vector product under autocast, spelled four ways: ``matmul``
    and ``@`` go through matmul's autocast kernel, ``mv`` and ``addmv`` through their own (or none)."""
    dev = check_device(device)
    g = torch.Generator().manual_seed(0)
    m, v, b = (torch.randn(*shape, generator=g).to(dev) for shape in ((8, 16), (16,), (8,)))
    with torch.autocast(dev.type, dtype=dtype):
        return {"torch.matmul(M, v)": short_dtype(torch.matmul(m, v).dtype), "M @ v": short_dtype((m @ v).dtype),
                "torch.mv(M, v)": short_dtype(torch.mv(m, v).dtype),
                "torch.addmv(b, M, v)": short_dtype(torch.addmv(b, m, v).dtype)}


_CUSTOM_OPS_MADE = itertools.count()


def custom_op_autocast(device: str = "cpu", dtype: torch.dtype = torch.bfloat16) -> dict[str, str]:
    """The dtype a fresh ``torch.library.custom_op`` receives from an FP32 input under autocast,
    before and after ``torch.library.register_autocast(op, device, dtype)``: autocast acts only
    through a kernel registered for its dispatch key, and a custom op has none until given one."""
    dev = check_device(device)
    name = f"amp_docs_probe::passthrough_{next(_CUSTOM_OPS_MADE)}"  # a custom op is defined once per process
    received: list[torch.dtype] = []

    @torch.library.custom_op(name, mutates_args=())
    def passthrough(x: torch.Tensor) -> torch.Tensor:
        received.append(x.dtype)
        return x.clone()

    x = torch.randn(4, device=dev)
    with torch.autocast(dev.type, dtype=dtype):
        passthrough(x)
    torch.library.register_autocast(name, dev.type, dtype)
    with torch.autocast(dev.type, dtype=dtype):
        passthrough(x)
    return {"without register_autocast": short_dtype(received[0]), "with register_autocast": short_dtype(received[1])}


def cuda_kernels_outside_header() -> list[str]:
    """ATen ops (private ones left out) with an ``AutocastCUDA`` kernel that no macro list of the
    installed ``ATen/autocast_mode.h`` names: registered outside the macros (e.g. the banned
    ``binary_cross_entropy``, by hand in ATen's ``autocast_mode.cpp``), so the header alone does not tell what CUDA autocast does to them."""
    listed = installed_header_lists()["ops"]
    return sorted(n for n in registered_autocast_ops("cuda") - set(listed) if not n.startswith("_"))


def _header_aten_name(op: str) -> str:
    """The ATen name under which the installed header lists ``op``: the first of its registry
    entry's ATen names that the header names, else the first one (``op`` itself if unregistered)."""
    names = OPS[op].aten if op in OPS and OPS[op].aten else (op,)
    listed = installed_header_lists()["ops"]
    return next((n for n in names if n in listed), names[0])


def header_category(op: str) -> str:
    """Category of ``op`` (any ATen name of its registry entry) in the installed header, or "unlisted"."""
    hit = installed_header_lists()["ops"].get(_header_aten_name(op))
    return hit[0] if hit else "unlisted"


def fp32_candidates_table(probe: pd.DataFrame | None = None) -> pd.DataFrame:
    """``policy_by_device`` for ``FP32_CANDIDATES`` plus the CUDA category in the installed header."""
    return _with_header_column(policy_by_device(FP32_CANDIDATES, probe))


def fp32_split(table: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """From ``fp32_candidates_table``: per device, which ops are forced to FP32 and which are not.

    CPU: the measured column. CUDA: measured where a GPU probed it, else the installed header
    (this torch's own list; the documented list can lag behind it, as it does for rms_norm).
    """
    out = {}
    for dev in DEVICE_TYPES:
        cols = [c for c in table.columns if c.startswith(f"{dev.upper()} category")]
        col = next((c for c in cols if "measured" in c), None)
        if col is None:
            col = next((c for c in cols if "autocast_mode.h" in c), cols[0])
        fp32 = table.loc[table[col] == "fp32", "op"].tolist()
        out[dev] = {"fp32": fp32, "not fp32": [o for o in table["op"] if o not in fp32],
                    "source": col[col.index("(") + 1:-1]}
    return out


def dispatch_trace(fn: Callable[[], Any], keep_args: bool = False) -> list[tuple]:
    """The ATen ops ``fn`` dispatches below autocast, each with its tensor inputs' dtypes.

    A ``TorchDispatchMode`` sits after the Autocast keys in dispatch order, so it sees what
    autocast handed on: an op that a composite calls internally shows up with the dtypes autocast
    gave *that* call. With ``keep_args`` each entry also carries the call's positional arguments.
    Recorded by the library's one recorder, ``core.dispatch.trace_ops``.
    """
    from amp_docs_lib.core.dispatch import trace_ops

    calls = trace_ops(fn, keep_args=keep_args).calls
    return [(c.op, tuple(short_dtype(d) for d in c.dtypes)) + ((c.args,) if keep_args else ()) for c in calls]


def composite_inside_trace(device: str = "cpu", dtype: torch.dtype = torch.bfloat16) -> pd.DataFrame:
    """einsum under autocast, traced: the bmm it calls inside gets low-precision inputs."""
    dev = check_device(device)
    g = torch.Generator().manual_seed(0)
    a = torch.randn(3, 4, 5, generator=g).to(dev)
    b = torch.randn(3, 5, 6, generator=g).to(dev)
    with torch.autocast(dev.type, dtype=dtype):
        calls = dispatch_trace(lambda: torch.einsum("bij,bjk->bik", a, b))
    return pd.DataFrame([{"aten op": op, "input dtypes": ", ".join(d)} for op, d in calls
                         if op not in ("view", "permute", "unsqueeze", "squeeze", "reshape")])


def downstream_vs_inside(device: str = "cpu", dtype: torch.dtype = torch.bfloat16) -> dict[str, str]:
    """Output dtypes: an unlisted op (relu) on a lowered output ("downstream") and on an FP32 input."""
    dev = check_device(device)
    a = torch.randn(4, 8, device=dev)
    with torch.autocast(dev.type, dtype=dtype):
        lowered = a @ a.T
        return {"matmul output": short_dtype(lowered.dtype),
                "relu of the matmul output (downstream)": short_dtype(torch.relu(lowered).dtype),
                "relu of an FP32 tensor": short_dtype(torch.relu(a).dtype)}


def _inputs_reaching(aten_name: str, fn: Callable[[], Any]) -> str:
    """The dtypes of the tensor inputs of the first ``aten::<aten_name>`` call ``fn`` dispatches below autocast."""
    return ", ".join(next(dtypes for op, dtypes in dispatch_trace(fn) if op == aten_name))


def eligibility_and_state(device: str = "cpu", dtype: torch.dtype = torch.bfloat16) -> pd.DataFrame:
    """Measured: which calls autocast leaves alone, and that its state does not cross into a new thread.

    The calls the Op Eligibility section excludes, next to the eligible call: float64 inputs,
    ``out=``, an in-place op (``addmm_`` vs ``addmm``) and an explicit ``dtype=`` (``prod``, on
    the FP32 lists of both devices, given a low-precision input with and without ``dtype=``).
    """
    import threading

    dev = check_device(device)
    a = torch.randn(4, 8, device=dev)
    m = torch.randn(4, 4, device=dev)
    out = torch.empty(4, 4, device=dev)
    low = (torch.rand(8, device=dev) + 0.5).to(dtype)
    seen: dict[str, Any] = {}
    with torch.autocast(dev.type, dtype=dtype):
        seen["float32 matmul"] = short_dtype((a @ a.T).dtype)
        seen["float64 matmul"] = short_dtype((a.double() @ a.double().T).dtype)
        torch.mm(a, a.T, out=out)
        seen["float32 mm with out= (FP32 out)"] = short_dtype(out.dtype)
        seen["addmm (FP32 inputs)"] = short_dtype(m.addmm(a, a.T).dtype)
        seen["in-place addmm_ (FP32 inputs)"] = short_dtype(m.clone().addmm_(a, a.T).dtype)
        seen["prod of a low-precision tensor"] = short_dtype(torch.prod(low).dtype)
        seen["prod of a low-precision tensor, dtype= that dtype"] = short_dtype(torch.prod(low, dtype=dtype).dtype)
        # What reaches the kernel below autocast: the output dtype alone cannot tell (out=, in-place
        # and dtype= fix it whatever autocast did to the inputs).
        seen["mm with out=: inputs reaching aten.mm"] = _inputs_reaching("mm", lambda: torch.mm(a, a.T, out=out))
        seen["addmm: inputs reaching aten.addmm"] = _inputs_reaching("addmm", lambda: m.addmm(a, a.T))
        seen["addmm_ in place: inputs reaching aten.addmm_"] = _inputs_reaching(
            "addmm_", lambda: m.clone().addmm_(a, a.T))
        seen["prod, dtype= that dtype: input reaching aten.prod"] = _inputs_reaching(
            "prod", lambda: torch.prod(low, dtype=dtype))
        # What that cast changes in the result: prod casts its input to dtype= before computing
        # (torch/_torch_docs.py, the dtype argument), and low -> FP32 -> low is exact.
        rows = (1 + 0.01 * torch.randn(64, 512, generator=torch.Generator().manual_seed(0))).to(dev, dtype)
        inside = torch.prod(rows, dim=1, dtype=dtype)
    outside = torch.prod(rows, dim=1, dtype=dtype)
    computed_in_fp32 = torch.prod(rows.float(), dim=1).to(dtype)
    seen["prod, dtype=: rows equal to the call without autocast"] = f"{int((inside == outside).sum())}/{len(rows)}"
    seen["prod, dtype=: rows equal to the FP32-computed product, rounded"] = (
        f"{int((inside == computed_in_fp32).sum())}/{len(rows)}")
    with torch.autocast(dev.type, dtype=dtype):

        def in_thread():
            seen["thread: autocast enabled"] = torch.is_autocast_enabled(dev.type)
            seen["thread: float32 matmul"] = short_dtype((a @ a.T).dtype)

        t = threading.Thread(target=in_thread)
        t.start()
        t.join()
        seen["main thread: autocast enabled"] = torch.is_autocast_enabled(dev.type)
    return pd.DataFrame([{"observation": k, "value": str(v)} for k, v in seen.items()])


def cast_cache_counts(calls: int = 3, device: str = "cpu", dtype: torch.dtype = torch.bfloat16) -> pd.DataFrame:
    """How many casts (``aten._to_copy``) ``calls`` calls of one Linear make, with and without the cast cache.

    Autocast caches the low-precision copy of a leaf tensor that requires grad (a parameter) for
    the life of the region; ``cache_enabled=False`` casts it again on every call. The input is not
    a leaf that requires grad, so it is cast every time either way.
    """
    dev = check_device(device)
    lin = torch.nn.Linear(8, 4).to(dev)
    x = torch.randn(2, 8, device=dev)
    rows = []
    for cache in (True, False):
        with torch.autocast(dev.type, dtype=dtype, cache_enabled=cache):
            ops = dispatch_trace(lambda: [lin(x) for _ in range(calls)])
        rows.append({"cache_enabled": cache, "Linear calls": calls, "parameters": 2,
                     "casts": sum(op == "_to_copy" for op, _ in ops)})
    return pd.DataFrame(rows)


def cast_cache_and_grad_modes(device: str = "cpu", dtype: torch.dtype = torch.bfloat16) -> dict[str, Any]:
    """Within one autocast region, a Linear called under ``torch.no_grad()`` (or ``torch.inference_mode()``)
    and then with grad enabled: does the second call still build a graph and give the weight a gradient?

    Older torch cached the grad-less cast made under ``no_grad`` and reused it, silently dropping the
    gradient (pytorch/pytorch#65766, #105211, #112583); pytorch/pytorch#165068 makes the cache always
    hold casts made with grad enabled and skips caching under inference_mode. Measured here.
    """
    dev = check_device(device)
    out: dict[str, Any] = {}
    for mode, ctx in (("no_grad", torch.no_grad), ("inference_mode", torch.inference_mode)):
        lin = torch.nn.Linear(8, 4).to(dev)
        x = torch.randn(2, 8, device=dev)
        with torch.autocast(dev.type, dtype=dtype):
            with ctx():
                lin(x)
            y = lin(x)
        out[f"{mode}: output has grad_fn"] = y.grad_fn is not None
        try:
            y.float().sum().backward()
            out[f"{mode}: weight gets a gradient"] = lin.weight.grad is not None
        except RuntimeError as exc:  # a cached inference tensor cannot be saved for backward
            out[f"{mode}: weight gets a gradient"] = False
            out[f"{mode}: error"] = str(exc).split("\n")[0]
    return out


def cast_cache_eligibility(calls: int = 2, device: str = "cpu", dtype: torch.dtype = torch.bfloat16) -> pd.DataFrame:
    """Which FP32 tensors the cast cache keeps: casts (``aten._to_copy``) of one tensor used by
    ``calls`` matmuls in one region, for a parameter (a leaf that requires grad), a leaf without
    grad, a non-leaf that requires grad and a view of a parameter. Cached: cast once, not per call."""
    dev = check_device(device)
    x = torch.randn(2, 8, device=dev)
    w = torch.nn.Parameter(torch.randn(8, 8, device=dev))
    kinds = {"parameter (leaf, requires grad)": lambda: w,
             "leaf without requires_grad": lambda: w.detach().clone(),
             "non-leaf that requires grad (w * 1)": lambda: w * 1,
             "view of a parameter (w[:])": lambda: w[:]}
    rows = []
    for kind, make in kinds.items():
        t = make()
        with torch.autocast(dev.type, dtype=dtype):
            ops = dispatch_trace(lambda t=t: [x @ t for _ in range(calls)])
        casts = sum(op == "_to_copy" for op, _ in ops) - calls  # x, not a leaf that requires grad, each call
        rows.append({"tensor": kind, "matmuls": calls, "casts of it": casts, "cached": casts == 1})
    return pd.DataFrame(rows)


def autocast_dtype_without_dtype_arg(device: str = "cpu", outer: torch.dtype = torch.float16) -> dict[str, str]:
    """The dtype a ``torch.autocast(device)`` region without ``dtype=`` runs in: alone, nested in a
    region entered with ``dtype=outer``, and in a thread started in that region that enters autocast
    as ``DataParallel``'s workers do (``torch.amp.autocast(device_type, enabled=...)``, nothing else)."""
    import threading

    dev = check_device(device)
    a = torch.randn(4, 4, device=dev)
    seen: dict[str, str] = {}
    with torch.autocast(dev.type):
        seen["alone"] = short_dtype((a @ a).dtype)
    with torch.autocast(dev.type, dtype=outer):
        with torch.autocast(dev.type):
            seen["nested in a region entered with dtype=" + short_dtype(outer)] = short_dtype((a @ a).dtype)
        enabled = torch.is_autocast_enabled(dev.type)

        def worker():
            with torch.amp.autocast(dev.type, enabled=enabled):
                seen["thread entering autocast(enabled=True) inside that region"] = short_dtype((a @ a).dtype)

        t = threading.Thread(target=worker)
        t.start()
        t.join()
    return seen


def custom_fwd_input_dtype(device: str = "cpu", dtype: torch.dtype = torch.bfloat16) -> dict[str, str]:
    """The dtype a custom ``autograd.Function``'s forward receives for a ``dtype`` input inside a
    ``dtype`` autocast region, decorated with ``torch.amp.custom_fwd(device_type=device,
    cast_inputs=torch.float32)``, and the dtype its matmul then returns (autocast is off inside)."""
    dev = check_device(device)
    seen: dict[str, str] = {}

    class FP32Matmul(torch.autograd.Function):
        @staticmethod
        @torch.amp.custom_fwd(device_type=dev.type, cast_inputs=torch.float32)
        def forward(ctx, a, b):
            seen["input dtype in forward"] = short_dtype(a.dtype)
            return a @ b

        @staticmethod
        @torch.amp.custom_bwd(device_type=dev.type)
        def backward(ctx, g):  # pragma: no cover - the forward is what is measured
            return g, g

    a = torch.randn(4, 4, device=dev).to(dtype)
    with torch.autocast(dev.type, dtype=dtype):
        out = FP32Matmul.apply(a, a)
    seen["output dtype"] = short_dtype(out.dtype)
    return seen


def sdpa_math_reduction(dtypes: Sequence[torch.dtype] = LOW_DTYPES, seeds: Sequence[int] = (0, 1, 2),
                        shape: tuple[int, int, int, int] = (2, 4, 64, 32)) -> pd.DataFrame:
    """Error of the math backend of ``scaled_dot_product_attention`` against float64, with
    ``torch.backends.cuda.allow_fp16_bf16_reduction_math_sdp`` off (the default: FP16/BF16
    inputs are upcast to FP32 inside) and on (the reductions stay in 16 bits). The switch is
    restored afterwards. Runs on the CPU, where the math backend is selected explicitly.
    """
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    before = torch.backends.cuda.fp16_bf16_reduction_math_sdp_allowed()
    rows = []
    try:
        for seed in seeds:
            g = torch.Generator().manual_seed(seed)
            q, k, v = (torch.randn(*shape, generator=g, dtype=torch.float64) for _ in range(3))
            for dt in dtypes:
                # the reference takes the rounded inputs: the error is the computation's alone
                ql, kl, vl = q.to(dt), k.to(dt), v.to(dt)
                ref = F.scaled_dot_product_attention(ql.double(), kl.double(), vl.double())
                for allowed in (False, True):
                    torch.backends.cuda.allow_fp16_bf16_reduction_math_sdp(allowed)
                    with sdpa_kernel(SDPBackend.MATH):
                        o = F.scaled_dot_product_attention(ql, kl, vl)
                    rows.append({"dtype": short_dtype(dt), "seed": seed, "16-bit reduction allowed": allowed,
                                 "relative error": ((o.double() - ref).norm() / ref.norm()).item()})
    finally:
        torch.backends.cuda.allow_fp16_bf16_reduction_math_sdp(before)
    return pd.DataFrame(rows)


def compile_backward_autocast() -> dict[str, Any]:
    """``torch._functorch.config.backward_pass_autocast`` in this torch (None where it does not exist).

    It decides under which autocast state ``torch.compile`` traces a compiled region's backward:
    "same_as_forward" (the default where it exists), "off", or a list of autocast kwargs.
    """
    import inspect

    from torch._functorch import config

    value = getattr(config, "backward_pass_autocast", None)
    line = None
    if value is not None:
        with open(inspect.getsourcefile(config), encoding="utf-8") as fh:
            line = next((i for i, t in enumerate(fh, 1) if t.startswith("backward_pass_autocast")), None)
    return {"value": value, "file": "torch/_functorch/config.py", "line": line}


def compiled_backward_effect(size: int = 64, dtype: torch.dtype = torch.bfloat16, seed: int = 0) -> pd.DataFrame:
    """The gradient of an FP32 region (autocast disabled inside) nested in a CPU autocast region,
    eager and compiled (``torch.compile(backend="aot_eager")``) under each ``backward_pass_autocast``,
    with ``backward()`` called outside the region as usual.

    Eager runs the backward of the FP32 region in FP32. A compiled backward traced under the
    forward's outer autocast state ("same_as_forward") has no record of the inner disabled region,
    so its matmul is lowered. Error: relative Frobenius error of the weight's gradient against a
    float64 computation; "same as eager" compares the bits.
    """
    import torch._dynamo
    from torch._functorch import config

    def region(x, w):
        with torch.autocast("cpu", enabled=False):
            return (x @ w).square().sum()

    g = torch.Generator().manual_seed(seed)
    x, w0 = torch.randn(size, size, generator=g), torch.randn(size, size, generator=g)
    w64 = w0.double().requires_grad_()
    ref = torch.autograd.grad((x.double() @ w64).square().sum(), w64)[0]

    def weight_grad(fn):
        w = w0.clone().requires_grad_()
        with torch.autocast("cpu", dtype=dtype):
            loss = fn(x, w)
        loss.backward()
        return w.grad

    def err(gr):
        return ((gr.double() - ref).norm() / ref.norm()).item()

    eager = weight_grad(region)
    rows = [{"backward": "eager", "relative error of the weight gradient": err(eager), "same as eager": True}]
    modes = ("same_as_forward", "off") if hasattr(config, "backward_pass_autocast") else (None,)
    for mode in modes:
        torch._dynamo.reset()
        if mode is None:
            gr = weight_grad(torch.compile(region, backend="aot_eager"))
        else:
            with config.patch(backward_pass_autocast=mode):
                gr = weight_grad(torch.compile(region, backend="aot_eager"))
        rows.append({"backward": f"compiled, backward_pass_autocast={mode!r}" if mode else "compiled",
                     "relative error of the weight gradient": err(gr), "same as eager": bool(torch.equal(gr, eager))})
    torch._dynamo.reset()
    return pd.DataFrame(rows)


# Ops CPU autocast leaves in the input's dtype; their low-precision kernels may still compute in FP32.
UNCHANGED_ON_CPU = {
    "softmax": lambda t: torch.softmax(t, -1),
    "log_softmax": lambda t: torch.log_softmax(t, -1),
    "layer_norm": lambda t: F.layer_norm(t, t.shape[-1:]),
    "rms_norm": lambda t: F.rms_norm(t, t.shape[-1:]),
    "sum": lambda t: t.sum(-1),
    "exp": torch.exp,
}


def _softmax_of_low_precision_ops(t: torch.Tensor) -> torch.Tensor:
    """Softmax composed of ``t``'s-dtype ops (subtract the max, exp, sum, divide), each rounding its
    result to that dtype: what a kernel doing its arithmetic in the low dtype would give."""
    e = (t - t.amax(-1, keepdim=True)).exp()
    return e / e.sum(-1, keepdim=True)


# The false variant of "rounds once": a plausible softmax whose intermediate results are rounded.
COMPOSED_SOFTMAX = "softmax composed of bfloat16 ops (exp, sum, divide; not a torch kernel)"


def _ulps(value: torch.Tensor, exact: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """``|value - exact|`` in units in the last place of ``dtype`` at ``exact``: eps * 2**floor(log2|exact|),
    the spacing of ``dtype``'s numbers in the binade of ``exact`` (subnormals: the smallest normal's)."""
    fi = torch.finfo(dtype)
    binade = torch.floor(torch.log2(exact.double().abs().clamp_min(fi.tiny)))
    return (value.double() - exact.double()).abs() / (fi.eps * torch.exp2(binade))


def low_precision_kernels_vs_fp32(device: str = "cpu", dtype: torch.dtype = torch.bfloat16,
                                  shape: tuple[int, int] = (64, 4096), seed: int = 0) -> pd.DataFrame:
    """Does each op of ``UNCHANGED_ON_CPU``, run under autocast on a ``dtype`` tensor (autocast leaves it
    in ``dtype``), compute in FP32 inside and round its result once?

    Measured against float64 on the same values (the exact result, to far below a ``dtype`` ulp):
    a kernel that rounds once is within half a ulp of it, up to its FP32 arithmetic's own error,
    estimated by the same op run in FP32 ("FP32 op's max error"). "rounds once" is
    ``max error <= 0.5 + FP32 op's max error``; "identical" is the share of outputs with the bits
    of the FP32 op rounded once to ``dtype``. The last row, a softmax composed of ``dtype`` ops
    that round each intermediate result, is the false variant the criterion must reject.
    """
    dev = check_device(device)
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g).to(dev).to(dtype)
    ops = dict(UNCHANGED_ON_CPU)
    ops[COMPOSED_SOFTMAX] = _softmax_of_low_precision_ops
    rows = []
    for name, fn in ops.items():
        with torch.autocast(dev.type, dtype=dtype):
            low = fn(x)
        fp32, exact = fn(x.float()), fn(x.double())
        err = float(_ulps(low, exact, dtype).max())
        fp32_err = float(_ulps(fp32, exact, dtype).max())
        rows.append({"op": name, "output dtype": short_dtype(low.dtype),
                     "identical to FP32 rounded once": float((low == fp32.to(dtype)).float().mean()),
                     "max error (ulps)": err, "FP32 op's max error (ulps)": fp32_err,
                     "rounds once": err <= 0.5 + fp32_err})
    return pd.DataFrame(rows)


def onednn_kernel(fn: Callable[[], Any]) -> str:
    """The oneDNN primitive implementation ``fn`` runs (e.g. ``brg_matmul:avx512_core_bf16``), read from
    oneDNN's own verbose log (``torch.backends.mkldnn.verbose``), or "none" where no oneDNN primitive
    ran (on CPU an FP32 matmul then goes to the BLAS named by ``BLAS_INFO`` in ``torch.__config__.show()``)."""
    from amp_docs_lib.core.profiling import c_stdout_lines

    fn()  # primitives are created on the first call; the verbose log is read from a warm one

    def verbose_call():
        with torch.backends.mkldnn.verbose(torch.backends.mkldnn.VERBOSE_ON):
            fn()

    lines = c_stdout_lines(verbose_call)  # oneDNN writes to the C stdout, not to sys.stdout
    kernels = [ln.split(",")[6] for ln in lines if ",primitive,exec," in ln]
    return ", ".join(dict.fromkeys(kernels)) or "none"


def blas_info() -> str:
    """The BLAS this torch was built with (``BLAS_INFO`` in ``torch.__config__.show()``), or "unknown"."""
    import re

    hit = re.search(r"BLAS_INFO=(\w+)", torch.__config__.show())
    return hit.group(1) if hit else "unknown"


def cpu_matmul_interleaved(size: int = 256, rounds: int = 9, num_threads: int | None = None) -> Any:
    """A ``size`` x ``size`` CPU matmul in float32, bfloat16 and float16, timed in interleaved rounds
    (``core.timing.interleaved``, float32 the baseline): whether FP16 and BF16 have fast kernels here.
    Time it between ``bench.load.LoadCheck.start()`` and ``finish()``; ``num_threads`` as for ``interleaved``."""
    from amp_docs_lib.core.timing import interleaved

    a = torch.randn(size, size, generator=torch.Generator().manual_seed(0))
    xs = {short_dtype(dt): a.to(dt) for dt in (torch.float32, torch.bfloat16, torch.float16)}
    return interleaved({name: (lambda x=x: x @ x) for name, x in xs.items()}, rounds=rounds,
                       num_threads=num_threads)


def cpu_matmul_kernels(size: int = 256) -> dict[str, str]:
    """Per dtype, the oneDNN kernel a ``size`` x ``size`` CPU matmul runs ("none": not oneDNN)."""
    a = torch.randn(size, size)
    xs = {short_dtype(dt): a.to(dt) for dt in (torch.float32, torch.bfloat16, torch.float16)}
    return {name: onednn_kernel(lambda x=x: x @ x) for name, x in xs.items()}
