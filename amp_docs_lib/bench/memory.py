"""Training memory: a calculator for parameters, gradients, optimizer states and
activations per precision regime, compared with what a training step holds.

The calculator (:func:`estimate`) multiplies element counts by bytes per
element under each regime's assumptions (:data:`CALCULATOR_REGIMES`; the bytes of
the model states from ``numbers.accounting.STATE_BYTES``, Adam with two states per parameter). Activation elements follow the per-layer count of Korthikanti
et al., "Reducing Activation Recomputation in Large Transformer Models" (2022),
for this GPT: without dropout masks and with a fused attention kernel, each
layer saves about ``16·s·b·h`` elements (LayerNorm inputs and outputs, Q/K/V,
the attention output, the MLP's 4h-wide input and GELU output), plus the
logits ``s·b·V``.

:func:`measure_step` measures the same quantities for one training step: the
bytes of parameters, gradients and optimizer states (read from the tensors),
the bytes saved for backward (``torch.autograd.graph.saved_tensors_hooks``,
counted once per storage; under autocast this includes the 16-bit weight
copies) and, on CUDA, the allocator's peak.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import torch

from amp_docs_lib.core.devices import check_device, is_out_of_memory
from amp_docs_lib.core.tables import short_dtype
from amp_docs_lib.numbers.accounting import state_bytes
from amp_docs_lib.numbers.formats import bytes_per_element
from amp_docs_lib.gpt import GPT, GPTConfig, random_batch

_BF16 = bytes_per_element("BF16")
# The calculator's regimes (amp.precision.REGIMES names). Weights, grads and optimizer state per parameter
# come from numbers.accounting.STATE_BYTES; what the calculator adds is per regime: weight_copies,
# low-precision copies of the weights made for the matmuls, and the bytes of one saved activation.
# No fp8 row: torchao's Float8Linear saves its high-precision input and weight for backward and casts them
# to FP8 again there (torchao/float8/float8_linear.py:45 and :95), so torchao float8 training keeps no FP8
# copies between forward and backward; :func:`float8_saved_for_backward` measures what it saves.
CALCULATOR_REGIMES = ("fp32", "amp_bf16", "bf16")
_MATMUL_BYTES: dict[str, dict[str, int]] = {
    "fp32": {"weight_copies": 0, "activations": bytes_per_element("FP32")},
    "amp_bf16": {"weight_copies": _BF16, "activations": _BF16},
    "bf16": {"weight_copies": 0, "activations": _BF16},
}
REGIME_NOTES = {
    "fp32": "everything FP32",
    "amp_bf16": "FP32 master weights, grads and Adam states; BF16 weight copies and activations",
    "bf16": "weights, grads, Adam states and activations in BF16",
}


def count_parameters(cfg: GPTConfig) -> int:
    """Parameters of :class:`GPT` for ``cfg`` (tied embeddings), computed from the shapes alone."""
    d, L, V, T = cfg.n_embd, cfg.n_layer, cfg.vocab_size, cfg.block_size
    per_block = (2 * 2 * d) + (d * 3 * d + 3 * d) + (d * d + d) + (d * 4 * d + 4 * d) + (4 * d * d + d)
    lm_head = 0 if cfg.tie_weights else V * d
    return V * d + T * d + L * per_block + 2 * d + lm_head


def activation_elements(cfg: GPTConfig, batch: int) -> int:
    """Elements saved for backward by one forward of :class:`GPT` (the calculator's model)."""
    s, b, h, L, V = cfg.block_size, batch, cfg.n_embd, cfg.n_layer, cfg.vocab_size
    return L * 16 * s * b * h + s * b * V


def autocast_excess_over_bf16_bytes(cfg: GPTConfig, batch: int) -> int:
    """Predicted bytes by which autocast BF16's saved-for-backward excess over the calculator's ``amp_bf16`` row
    exceeds pure BF16's excess over its ``bf16`` row, for one forward of :class:`GPT`: every tensor autocast
    keeps in FP32 where pure BF16 keeps BF16 costs 2 bytes more per element, namely each LayerNorm's input (the
    FP32 residual stream; ``2 * n_layer + 1`` LayerNorms) with its per-row mean and rstd, the loss's log-softmax
    (``cross_entropy`` runs in FP32) and the loss scalar; less 2 bytes per parameter autocast never copies to BF16
    for a matmul (position embedding, LayerNorm weights and biases, Linear biases: a bias is not saved for
    backward; and the token embedding where the head is not tied to it: a lookup casts nothing), which the
    calculator counts as a BF16 weight copy."""
    s, b, d, L, V = cfg.block_size, batch, cfg.n_embd, cfg.n_layer, cfg.vocab_size
    n_ln = 2 * L + 1
    fp32_instead_of_bf16 = n_ln * b * s * d + 2 * n_ln * b * s + b * s * V + 1  # LN input, its mean and rstd, logits, loss
    not_copied = s * d + n_ln * 2 * d + L * (3 * d + d + 4 * d + d) + (0 if cfg.tie_weights else V * d)
    return 2 * fp32_instead_of_bf16 - 2 * not_copied


def estimate(n_params: int, n_activations: int, regime: str) -> dict[str, int]:
    """Bytes per component under ``regime`` (a :data:`CALCULATOR_REGIMES` name), and their total."""
    if regime not in CALCULATOR_REGIMES:
        raise ValueError(f"unknown regime {regime!r}; valid regimes: {list(CALCULATOR_REGIMES)}")
    for name, v in (("n_params", n_params), ("n_activations", n_activations)):
        if not isinstance(v, int) or v < 0:
            raise ValueError(f"{name} must be a non-negative int, got {v!r}")
    r, m = state_bytes(regime), _MATMUL_BYTES[regime]
    out = {"weights": n_params * r["weights"], "grads": n_params * r["grads"],
           "optimizer": n_params * (r["moments"] + r["master"]), "weight_copies": n_params * m["weight_copies"],
           "activations": n_activations * m["activations"]}
    out["total"] = sum(out.values())
    return out


def model_state_bytes(cfg: GPTConfig, regime: str) -> int:
    """The calculator's bytes of weights, gradients and optimizer state (no activations, no weight copies)."""
    e = estimate(count_parameters(cfg), 0, regime)
    return e["weights"] + e["grads"] + e["optimizer"]


def plan_bytes(cfg: GPTConfig, batch: int, regimes) -> int:
    """Bytes one Adam training step of ``cfg`` holds at its peak under the neediest of ``regimes``
    (:data:`CALCULATOR_REGIMES` names), planned before anything is allocated: the calculator's total plus foreach
    AdamW's largest temporary, the square root of the second moments (one FP32 value per parameter)."""
    regimes = tuple(regimes)
    unknown = [r for r in regimes if r not in CALCULATOR_REGIMES]
    if unknown or not regimes:
        raise ValueError(f"unknown regimes {unknown or regimes!r}; valid: {list(CALCULATOR_REGIMES)}")
    n, a = count_parameters(cfg), activation_elements(cfg, batch)
    return max(estimate(n, a, r)["total"] for r in regimes) + 4 * n


@dataclass
class MemoryPlan:
    """Which sizes of a ladder fit a device: ``planned`` bytes per size against ``available`` bytes free
    (None on the CPU, where nothing is planned), and why a size was left out."""

    planned: dict[str, int]
    available: int | None
    skipped: dict[str, str] = field(default_factory=dict)

    def fits(self, name: str) -> bool:
        return self.available is None or self.planned[name] <= self.available

    def skip(self, name: str, why: str) -> None:
        self.skipped[name] = f"{name} left out: {why}"

    def note(self) -> str:
        """What the plan decided, in a sentence per size left out (or that all fit)."""
        if self.available is None:
            return "Memory was not planned on the CPU: every size of its ladder ran."
        if not self.skipped:
            return (f"Every size fit: the largest plan, {max(self.planned.values()) / 2**30:.1f} GiB, against "
                    f"{self.available / 2**30:.1f} GiB free on this device.")
        return " ".join(s + "." for s in self.skipped.values())


def memory_plan(configs: dict[str, GPTConfig], batch: int, regimes, device: str | torch.device = "cpu",
                memory_bytes: int | None = None) -> MemoryPlan:
    """Plan every size of ``configs`` (:func:`plan_bytes`) against ``memory_bytes`` (default: the CUDA
    device's free memory now; not planned on the CPU). Sizes over it are in ``skipped`` with the reason."""
    dev = check_device(device)
    available = (torch.cuda.mem_get_info(dev)[0] if dev.type == "cuda" else None) if memory_bytes is None \
        else memory_bytes
    if available is not None and (not isinstance(available, int) or isinstance(available, bool) or available <= 0):
        raise ValueError(f"memory_bytes must be a positive int (bytes), got {memory_bytes!r}")
    plan = MemoryPlan({name: plan_bytes(cfg, batch, regimes) for name, cfg in configs.items()}, available)
    for name, cfg in configs.items():
        if not plan.fits(name):
            plan.skip(name, f"{count_parameters(cfg) / 1e9:.2f}B parameters need about "
                            f"{plan.planned[name] / 2**30:.1f} GiB; this device has {available / 2**30:.1f} GiB free")
    return plan


def float8_saved_for_backward(
    dtypes: tuple[torch.dtype, ...] = (torch.float32, torch.bfloat16), features: int = 64, tokens: int = 32
) -> pd.DataFrame:
    """What torchao's ``Float8Linear`` saves for backward, per module dtype: one bias-free
    ``Linear(features, features)`` converted by ``convert_to_float8_training`` (``emulate=True``, so it runs
    on any device torch runs), a ``tokens × features`` input, and the tensors
    ``torch.autograd.graph.saved_tensors_hooks`` sees in its forward. ``saved (bytes)`` against
    ``as FP8 (bytes)``, one byte per saved element, is what FP8 copies would have taken."""
    from torchao.float8 import Float8LinearConfig, convert_to_float8_training

    rows = []
    for dt in dtypes:
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(features, features, bias=False)).to(dt)
        convert_to_float8_training(model, config=Float8LinearConfig(emulate=True))
        x = torch.randn(tokens, features, dtype=dt, requires_grad=True)
        saved: list[torch.Tensor] = []
        with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
            model(x)
        rows.append({
            "module dtype": short_dtype(dt),
            "saved tensors": ", ".join(f"{tuple(t.shape)} {short_dtype(t.dtype)}" for t in saved),
            "saved (bytes)": sum(t.numel() * t.element_size() for t in saved),
            "as FP8 (bytes)": sum(t.numel() for t in saved),
            "input + weight (bytes)": (x.numel() + model[0].weight.numel()) * x.element_size(),
        })
    return pd.DataFrame(rows)


def calculator_table(cfg: GPTConfig, batch: int) -> pd.DataFrame:
    """The calculator for every regime, in MiB."""
    n, a = count_parameters(cfg), activation_elements(cfg, batch)
    rows = []
    for reg in CALCULATOR_REGIMES:
        e = estimate(n, a, reg)
        rows.append({"regime": reg, **{f"{k} (MiB)": v / 2**20 for k, v in e.items()}, "assumes": REGIME_NOTES[reg]})
    return pd.DataFrame(rows)


def _state_bytes(tensors) -> int:
    return sum(t.numel() * t.element_size() for t in tensors if t is not None)


def measure_step(cfg: GPTConfig, batch: int, precision: str, device: str | torch.device = "cpu") -> dict[str, Any]:
    """Measure one Adam training step of :class:`GPT` under ``precision`` (fp32, amp_bf16, amp_fp16, bf16).

    Returns bytes of weights, grads, optimizer states, bytes saved for backward
    and (CUDA) the allocator's peak during the step.
    """
    from amp_docs_lib.amp.precision import precision_setup

    dev = check_device(device)
    setup = precision_setup(precision, dev)
    torch.manual_seed(0)
    with dev:  # built where it runs: a 700M-parameter model initialised on the host takes seconds
        model = GPT(cfg).to(dtype=setup.param_dtype)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    x, y = random_batch(cfg, batch, dev)
    seen: dict[tuple[int, torch.dtype], int] = {}
    params = {p.data_ptr() for p in model.parameters()}

    def pack(t: torch.Tensor):
        if t.device.type != "meta" and t.data_ptr() not in params:  # parameters are counted as weights
            key = (t.untyped_storage().data_ptr(), t.dtype)
            seen[key] = max(seen.get(key, 0), t.untyped_storage().nbytes())
        return t

    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
        torch.cuda.reset_peak_memory_stats(dev)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        with setup.autocast():
            _, loss = model(x, y)
    setup.scaler.scale(loss).backward()
    setup.scaler.step(opt)
    setup.scaler.update()
    out = {"weights": _state_bytes(model.parameters()),
           "grads": _state_bytes(p.grad for p in model.parameters()),
           "optimizer": _state_bytes(v for st in opt.state.values() for v in st.values()
                                     if torch.is_tensor(v) and v.dim() > 0),
           # Adam's per-tensor step counters (0-dim): not per-parameter state, kept apart so both are visible
           "optimizer scalars": _state_bytes(v for st in opt.state.values() for v in st.values()
                                             if torch.is_tensor(v) and v.dim() == 0),
           "saved for backward": sum(seen.values()),
           "peak allocated": torch.cuda.max_memory_allocated(dev) if dev.type == "cuda" else None}
    del model, opt
    return out


def planned_largest_batch(cfg: GPTConfig, precision: str, memory_bytes: int, limit: int) -> int:
    """The largest batch up to ``limit`` whose plan (:func:`plan_bytes`) fits ``memory_bytes``; 0 when batch 1
    does not. ``precision`` is a :data:`CALCULATOR_REGIMES` name or ``amp_fp16`` (planned as ``amp_bf16``: same bytes)."""
    regime = "amp_bf16" if precision == "amp_fp16" else precision
    if regime not in CALCULATOR_REGIMES:
        raise ValueError(f"unknown precision {precision!r}; valid: {[*CALCULATOR_REGIMES, 'amp_fp16']}")
    lo, hi = 0, limit  # plan_bytes grows with the batch, so bisect
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if plan_bytes(cfg, mid, (regime,)) <= memory_bytes else (lo, mid - 1)
    return lo


def search_largest(fits, start: int, limit: int) -> tuple[int, int]:
    """The largest batch in 1..``limit`` for which ``fits(batch)`` is true (false for every batch above it),
    searched from the guess ``start``: doubling or halving until the answer is bracketed, then bisection.
    Returns the batch (0 when batch 1 does not fit) and the number of trials."""
    trials = 0

    def fits_counted(b: int) -> bool:
        nonlocal trials
        trials += 1
        return fits(b)

    start = min(max(start, 1), limit)
    if fits_counted(start):
        lo, hi = start, min(start * 2, limit + 1)
        while hi <= limit and fits_counted(hi):
            lo, hi = hi, min(hi * 2, limit + 1)
    else:
        lo, hi = start // 2, start
        while lo >= 1 and not fits_counted(lo):
            lo, hi = lo // 2, lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits_counted(mid) else (lo, mid)
    return lo, trials


def largest_batch(cfg: GPTConfig, precision: str, device: str | torch.device = "cuda", *,
                  limit: int = 4096, memory_bytes: int | None = None) -> dict[str, int]:
    """The largest batch up to ``limit`` whose training step fits in GPU memory, measured, beside the
    memory plan's answer (:func:`planned_largest_batch` for ``memory_bytes``, default the free memory).

    The search starts at the planned batch (:func:`search_largest`), so it takes a few trials instead of
    twenty; out-of-memory errors are caught and memory is freed between trials.
    """
    dev = check_device(device)
    if dev.type != "cuda":
        raise ValueError(f"largest_batch needs a CUDA device, got {str(dev)!r}; valid: ['cuda']")
    available = torch.cuda.mem_get_info(dev)[0] if memory_bytes is None else memory_bytes
    planned = planned_largest_batch(cfg, precision, available, limit)

    def fits(b: int) -> bool:
        try:
            measure_step(cfg, b, precision, dev)
            return True
        except RuntimeError as e:  # OutOfMemoryError is one
            if is_out_of_memory(e):
                return False
            raise
        finally:
            import gc
            gc.collect()
            torch.cuda.empty_cache()

    measured, trials = search_largest(fits, planned, limit)
    return {"planned": planned, "measured": measured, "trials": trials}


def comparison_table(cfg: GPTConfig, batch: int, precisions=("fp32", "amp_bf16", "bf16"),
                     device: str | torch.device = "cpu") -> pd.DataFrame:
    """Calculator against measurement per precision, in MiB (saved for backward vs activations + weight copies)."""
    n, a = count_parameters(cfg), activation_elements(cfg, batch)
    rows = []
    for prec in precisions:
        m = measure_step(cfg, batch, prec, device)
        e = estimate(n, a, prec if prec in CALCULATOR_REGIMES else "amp_bf16")
        rows.append({
            "precision": prec,
            "weights+grads+Adam, calculated (MiB)": (e["weights"] + e["grads"] + e["optimizer"]) / 2**20,
            "weights+grads+Adam, measured (MiB)": (m["weights"] + m["grads"] + m["optimizer"]) / 2**20,
            "Adam step counters, measured (bytes)": m["optimizer scalars"],
            "saved for backward, calculated (MiB)": (e["activations"] + e["weight_copies"]) / 2**20,
            "saved for backward, measured (MiB)": m["saved for backward"] / 2**20,
            "peak allocated (MiB)": None if m["peak allocated"] is None else m["peak allocated"] / 2**20,
        })
    return pd.DataFrame(rows)
