"""A loss scaler rebuilt for reading: ``ReferenceGradScaler``.

It follows the semantics of ``torch.amp.GradScaler`` (same defaults, same
update rule, same skip-on-inf/NaN, same state dict) in plain Python, so the
chapter can show the whole mechanism on one screen. The tests feed it and
torch's scaler the same gradient stream and check they agree step by step.

The scale update itself is the pure function :func:`update_scale`; the
scale-dynamics simulations call it too, so there is one source of truth.
"""

from __future__ import annotations

import inspect
import math
import numbers
from typing import Any

import numpy as np
import pandas as pd
import torch

from amp_docs_lib.core.checks import positive_int, positive_number
from amp_docs_lib.core.tables import table_from_rows


def _fp32(x: float) -> float:
    """Round ``x`` to the nearest float32 (torch keeps the scale in a float32 tensor)."""
    with np.errstate(over="ignore"):
        return float(np.float32(x))


def check_scaler_settings(growth_factor: float, backoff_factor: float, growth_interval: int) -> None:
    """Refuse settings under which the scale would not do what its name says.

    torch.amp.GradScaler refuses ``growth_factor <= 1`` and ``backoff_factor >= 1``
    (torch/amp/grad_scaler.py:143-146 in torch 2.14); we also refuse ``backoff_factor <= 0`` (the
    scale would vanish or flip sign on the first overflow) and ``growth_interval < 1`` (the scale
    would never grow), which torch accepts silently.
    """
    for name, v in (("growth_factor", growth_factor), ("backoff_factor", backoff_factor)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"{name} must be a number, got {v!r} ({type(v).__name__})")
    if not growth_factor > 1.0 or not math.isfinite(growth_factor):
        raise ValueError(f"growth_factor must be a finite number > 1.0, got {growth_factor!r}")
    if not 0.0 < backoff_factor < 1.0:
        raise ValueError(f"backoff_factor must be in (0, 1), got {backoff_factor!r}")
    positive_int("growth_interval", growth_interval)


def update_scale(scale: float, growth_tracker: int, found_inf: bool, growth_factor: float,
                 backoff_factor: float, growth_interval: int) -> tuple[float, int]:
    """One step of dynamic loss scaling; returns ``(new_scale, new_growth_tracker)``.

    An overflow (``found_inf``) multiplies the scale by ``backoff_factor`` and
    resets the count of clean steps. Otherwise the count grows, and after
    ``growth_interval`` consecutive clean steps the scale is multiplied by
    ``growth_factor`` (unless that would overflow float32) and the count restarts.
    This is the rule of torch's ``_amp_update_scale_`` kernel.

    ``scale`` may be 0: backing off from the smallest float32 reaches it (the death-spiral
    scenario of :mod:`scale_dynamics` does), and the rule then keeps it there. At scale 0 the
    scaled gradients are 0, so no inf is found and the step is taken with 0 * inf = NaN
    gradients (:func:`zero_scale_step` measures it).
    """
    positive_number("scale", scale, allow_zero=True)
    check_scaler_settings(growth_factor, backoff_factor, growth_interval)
    if positive_int("growth_tracker", growth_tracker, minimum=0) >= growth_interval:
        # The count restarts at growth_interval, so a larger one would never reach it again.
        raise ValueError(f"growth_tracker must be in [0, growth_interval={growth_interval}), got {growth_tracker!r}")
    if found_inf:
        return _fp32(scale * backoff_factor), 0
    clean_steps = growth_tracker + 1
    if clean_steps == growth_interval:
        grown = _fp32(scale * growth_factor)
        return (grown if math.isfinite(grown) else scale), 0
    return scale, clean_steps


class ReferenceGradScaler:
    """Dynamic loss scaling in the style of ``torch.amp.GradScaler``, for teaching.

    Usage is the same as torch's::

        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)      # optional, e.g. before clipping
        scaler.step(optimizer)          # skipped if any gradient is inf/NaN
        scaler.update()

    ``skipped_steps`` records, per ``update()``, whether that iteration's
    optimizer steps were skipped (torch keeps no such history).
    """

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        positive_number("init_scale", init_scale)
        check_scaler_settings(growth_factor, backoff_factor, growth_interval)
        self.enabled = enabled
        self.scale_value = _fp32(init_scale)
        self.growth_factor = growth_factor
        self.backoff_factor = backoff_factor
        self.growth_interval = growth_interval
        self.growth_tracker = 0
        self.skipped_steps: list[bool] = []
        self._optimizers: dict[int, dict[str, Any]] = {}  # id(optimizer) -> stage, found_inf

    def _state(self, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
        return self._optimizers.setdefault(id(optimizer), {"stage": "ready", "found_inf": False})

    def scale(self, loss: torch.Tensor) -> torch.Tensor:
        """Multiply ``loss`` (or a list/tuple of tensors) by the current scale."""
        if not self.enabled:
            return loss
        if isinstance(loss, (list, tuple)):
            return type(loss)(self.scale(t) for t in loss)
        return loss * torch.tensor(self.scale_value, dtype=torch.float32, device=loss.device)

    def unscale_(self, optimizer: torch.optim.Optimizer) -> None:
        """Divide ``optimizer``'s gradients by the scale in place and note any inf/NaN.

        Call it at most once per optimizer per iteration, after all backward passes.
        """
        if not self.enabled:
            return
        state = self._state(optimizer)
        if state["stage"] != "ready":
            raise RuntimeError(f"unscale_() called twice or after step() (stage {state['stage']!r})")
        # torch takes the reciprocal in float64; of a zero scale it is inf, as here (not ZeroDivisionError).
        inv_scale = _fp32(1.0 / self.scale_value) if self.scale_value else math.inf
        found_inf = False
        with torch.no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if p.grad.dtype == torch.float16:
                        raise ValueError("Attempting to unscale FP16 gradients: keep parameters in "
                                         "float32 (master weights) and let autocast cast them.")
                    found_inf |= not bool(torch.isfinite(p.grad).all())
                    p.grad.mul_(inv_scale)
        state.update(stage="unscaled", found_inf=found_inf)

    def step(self, optimizer: torch.optim.Optimizer, *args: Any, **kwargs: Any) -> Any:
        """Unscale (if not done yet), then run ``optimizer.step()`` unless a gradient is inf/NaN."""
        if not self.enabled:
            return optimizer.step(*args, **kwargs)
        state = self._state(optimizer)
        if state["stage"] == "stepped":
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] == "ready":
            self.unscale_(optimizer)
        result = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = "stepped"
        return result

    def update(self, new_scale: float | None = None) -> None:
        """Back off after an overflow, grow after ``growth_interval`` clean steps (see ``update_scale``)."""
        if not self.enabled:
            return
        if new_scale is not None:
            self.scale_value = _fp32(float(new_scale))
        else:
            if not self._optimizers:
                raise RuntimeError("update() called but no optimizer was unscaled or stepped.")
            found_inf = any(s["found_inf"] for s in self._optimizers.values())
            self.skipped_steps.append(found_inf)
            self.scale_value, self.growth_tracker = update_scale(
                self.scale_value, self.growth_tracker, found_inf,
                self.growth_factor, self.backoff_factor, self.growth_interval)
        self._optimizers = {}

    def get_scale(self) -> float:
        """The current scale as a Python float (1.0 when disabled)."""
        return self.scale_value if self.enabled else 1.0

    def state_dict(self) -> dict[str, Any]:
        """The scaler's state, with the same keys as torch's ``GradScaler.state_dict()``."""
        if not self.enabled:
            return {}
        return {"scale": self.scale_value, "growth_factor": self.growth_factor,
                "backoff_factor": self.backoff_factor, "growth_interval": self.growth_interval,
                "_growth_tracker": self.growth_tracker}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore a state from ``state_dict()`` (ours or torch's: the keys are the same)."""
        if not self.enabled:
            return
        missing = {"scale", "growth_factor", "backoff_factor", "growth_interval",
                   "_growth_tracker"} - set(state_dict)
        if missing:
            raise ValueError(f"scaler state dict lacks keys {sorted(missing)}; got {sorted(state_dict)}")
        self.scale_value = _fp32(state_dict["scale"])
        self.growth_factor = float(state_dict["growth_factor"])
        self.backoff_factor = float(state_dict["backoff_factor"])
        self.growth_interval = int(state_dict["growth_interval"])
        self.growth_tracker = int(state_dict["_growth_tracker"])


def torch_gradscaler_defaults() -> dict[str, Any]:
    """The defaults of the installed ``torch.amp.GradScaler.__init__``, read from its signature."""
    sig = inspect.signature(torch.amp.GradScaler.__init__)
    return {name: p.default for name, p in sig.parameters.items()
            if name != "self" and p.default is not inspect.Parameter.empty}


def reference_defaults() -> dict[str, Any]:
    """The defaults of ``ReferenceGradScaler`` (to compare with :func:`torch_gradscaler_defaults`)."""
    sig = inspect.signature(ReferenceGradScaler.__init__)
    return {name: p.default for name, p in sig.parameters.items()
            if name != "self" and p.default is not inspect.Parameter.empty}


def compare_with_torch(steps: int = 12, inject: dict[int, float] | None = None,
                       growth_interval: int = 3, init_scale: float = 2.0**10) -> "pd.DataFrame":
    """Drive ``ReferenceGradScaler`` and ``torch.amp.GradScaler("cpu")`` with the same gradients.

    Two identical small models see the same batches; at the steps in ``inject``
    one gradient element is overwritten (inf/NaN). Returns per step both
    scales, whether each skipped the step, and the max parameter difference.
    """
    import pandas as pd

    steps = positive_int("steps", steps)
    inject = {2: float("inf"), 6: float("nan")} if inject is None else inject
    kw = dict(init_scale=init_scale, growth_interval=growth_interval)
    runs = []
    for scaler in (ReferenceGradScaler(**kw), torch.amp.GradScaler("cpu", **kw)):
        torch.manual_seed(0)
        model = torch.nn.Linear(8, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        g = torch.Generator().manual_seed(1)
        scales, skipped = [], []
        for step in range(steps):
            x, y = torch.randn(16, 8, generator=g), torch.randn(16, 2, generator=g)
            opt.zero_grad()
            scaler.scale(torch.nn.functional.mse_loss(model(x), y)).backward()
            if step in inject:
                model.weight.grad[0, 0] = inject[step]
            before = model.weight.detach().clone()
            scaler.step(opt)
            scaler.update()
            skipped.append(bool(torch.equal(before, model.weight)))
            scales.append(scaler.get_scale())
        runs.append((scales, skipped, [p.detach() for p in model.parameters()]))
    (s_r, k_r, p_r), (s_t, k_t, p_t) = runs
    diff = max(float((a - b).abs().max()) for a, b in zip(p_r, p_t))
    return pd.DataFrame({"step": range(steps),
                         "injected": [str(inject.get(i, "")) for i in range(steps)],
                         "reference scale": s_r, "torch scale": s_t,
                         "reference skipped": k_r, "torch skipped": k_t}).assign(max_param_diff=diff)


# ---- what the scaler does around the optimizer ---------------------------------------------------
def _tiny_step_setup(seed: int = 0):
    torch.manual_seed(seed)
    model = torch.nn.Linear(4, 2)
    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(seed + 1))
    return model, x


def skipped_steps_and_scheduler(steps: int = 4, inject_at: tuple[int, ...] = (0, 2),
                                lr: float = 0.1, gamma: float = 0.5,
                                guarded: bool = False) -> tuple[pd.DataFrame, list[str]]:
    """An SGD + ``StepLR`` loop under ``torch.amp.GradScaler("cpu")`` with inf injected into the loss.

    Per step: the learning rate the step would use, whether the weights moved, the scale. Returns
    the table and the warnings torch gave (``lr_scheduler.step()`` before ``optimizer.step()``
    when the very first optimizer step is skipped). ``guarded`` steps the scheduler only when the
    scale did not drop (``scaler.get_scale() >= scale_before``), the usual guard against counting
    skipped steps.
    """
    import warnings

    model, x = _tiny_step_setup()
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=gamma)
    scaler = torch.amp.GradScaler("cpu")
    rows = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for step in range(steps):
            opt.zero_grad(set_to_none=True)
            loss = model(x).square().mean()
            if step in inject_at:
                loss = loss * math.inf
            scaler.scale(loss).backward()
            lr_used, before = opt.param_groups[0]["lr"], model.weight.detach().clone()
            scale_before = scaler.get_scale()
            scaler.step(opt)
            scaler.update()
            if not guarded or scaler.get_scale() >= scale_before:
                sched.step()
            rows.append({"step": step, "inf injected": step in inject_at, "lr of this step": lr_used,
                         "weights moved": bool((model.weight != before).any()),
                         "scale after update": scaler.get_scale()})
    return pd.DataFrame(rows), [str(w.message).split("\n")[0] for w in caught
                                if "lr_scheduler" in str(w.message)]


def fused_optimizer_unscaling(scale: float = 1024.0, optimizer_class: type[torch.optim.Optimizer] | None = None,
                              **optimizer_kwargs: Any) -> pd.DataFrame:
    """One step of an optimizer with and without ``fused=True`` under ``torch.amp.GradScaler("cpu")``.

    ``GradScaler.step`` hands an optimizer that sets ``_step_supports_amp_scaling`` the scale
    and inf flag (``grad_scale``/``found_inf``) and lets its fused kernel unscale; the others get
    their gradients unscaled first by ``_amp_foreach_non_finite_check_and_unscale_``. The dispatch
    trace of ``scaler.step`` shows which ops ran; the weights after the step are compared with the
    non-fused path's and with a plain step on the gradients left scaled (what a kernel that ignored
    ``grad_scale`` would give). The default optimizer is SGD (lr 0.1): its step is proportional to
    the gradient, so the comparison can tell unscaled from scaled gradients, which Adam's first
    step, lr * g / (|g| + eps), cannot.
    """
    from amp_docs_lib.amp.autocast_policy import dispatch_trace

    optimizer_class = optimizer_class or torch.optim.SGD
    optimizer_kwargs = optimizer_kwargs or {"lr": 0.1}
    model, x = _tiny_step_setup()
    opt = optimizer_class(model.parameters(), **optimizer_kwargs)
    (model(x).sum() * scale).backward()
    opt.step()
    left_scaled = model.weight.detach().clone()
    rows, weights = [], {}
    for fused in (False, True):
        model, x = _tiny_step_setup()
        try:
            opt = optimizer_class(model.parameters(), fused=fused, **optimizer_kwargs)
        except (RuntimeError, ValueError) as e:  # no fused kernel for this device in this torch
            rows.append({"fused": fused, "_step_supports_amp_scaling": None, "error": str(e).split("\n")[0]})
            continue
        scaler = torch.amp.GradScaler("cpu", init_scale=scale)
        scaler.scale(model(x).sum()).backward()
        calls = dispatch_trace(lambda: scaler.step(opt), keep_args=True)
        scaler.update()
        weights[fused] = model.weight.detach().clone()
        # the inf check runs on both paths; only the non-fused one passes the true 1/scale to it
        inv = [float(args[2]) for op, _, args in calls if op == "_amp_foreach_non_finite_check_and_unscale_"]
        rows.append({"fused": fused,
                     "_step_supports_amp_scaling": bool(getattr(opt, "_step_supports_amp_scaling", False)),
                     "inv_scale given to the inf check / unscale op": inv[0] if inv else None,
                     "optimizer kernel": next((op for op, _, _ in calls if op.startswith("_fused_")),
                                              "per-op (foreach/for-loop)"),
                     "max |weight difference| vs gradients left scaled":
                         float((weights[fused] - left_scaled).abs().max())})
    df = table_from_rows(rows)
    if len(weights) == 2:
        df["max |weight difference| vs non-fused"] = float((weights[True] - weights[False]).abs().max())
    return df


def closure_under_scaler(scale: float = 1024.0) -> dict[str, Any]:
    """``torch.optim.LBFGS`` (which needs a closure) stepped through ``torch.amp.GradScaler("cpu")``.

    ``GradScaler.step`` refuses a closure passed by keyword (``if "closure" in kwargs``) but hands
    positional arguments on to ``optimizer.step``; the closure's ``scaler.scale(loss).backward()``
    then leaves scaled gradients that nothing unscales. Returns the keyword call's error (None if
    none), whether the positional call raised, and the ratio of the gradient the optimizer was left
    with to the true gradient at the weights the closure saw.
    """
    model, x = _tiny_step_setup()
    opt = torch.optim.LBFGS(model.parameters(), lr=0.1, max_iter=1)
    scaler = torch.amp.GradScaler("cpu", init_scale=scale)

    def closure():
        opt.zero_grad(set_to_none=True)
        loss = model(x).square().mean()
        scaler.scale(loss).backward()
        return loss

    closure()
    try:
        scaler.step(opt, closure=closure)
        keyword_error = None
    except RuntimeError as exc:
        keyword_error = str(exc).split("\n")[0]
    # with max_iter=1 LBFGS evaluates the closure once, at the weights it starts from
    true = torch.autograd.grad(model(x).square().mean(), model.weight)[0]
    try:
        scaler.step(opt, closure)
        positional_error = None
    except RuntimeError as exc:
        positional_error = str(exc).split("\n")[0]
    left = model.weight.grad.detach().clone()
    return {"keyword closure error": keyword_error, "positional closure error": positional_error,
            "gradient left / true gradient": float(left.norm() / true.norm())}


def skipped_step_fused_vs_not(scale: float = 1024.0) -> pd.DataFrame:
    """An overflowing first step of AdamW + ``StepLR`` under ``torch.amp.GradScaler("cpu")``,
    with and without ``fused=True``: what the skipped step still does.

    Per path: how many times the optimizer's step post-hooks ran, the optimizer state's ``step``
    counter, whether the weights moved, whether ``StepLR`` warned that it was stepped before the
    optimizer (it reads ``optimizer.step`` having been called), and the host synchronisations
    (``aten::_local_scalar_dense``, what ``.item()`` runs) inside ``scaler.step`` and inside
    ``scaler.get_scale()``. The non-fused path reads ``found_inf`` on the host to decide whether to
    call ``optimizer.step()`` (``_maybe_opt_step`` in ``torch/amp/grad_scaler.py``); the fused path
    always calls it and lets the kernel skip the update.
    """
    import warnings

    from amp_docs_lib.amp.autocast_policy import dispatch_trace

    rows = []
    for fused in (False, True):
        model, x = _tiny_step_setup()
        try:
            opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=fused)
        except (RuntimeError, ValueError) as e:  # no fused kernel for this device in this torch
            rows.append({"fused": fused, "error": str(e).split("\n")[0]})
            continue
        hooks = []
        opt.register_step_post_hook(lambda *_: hooks.append(1))
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
        scaler = torch.amp.GradScaler("cpu", init_scale=scale)
        before = model.weight.detach().clone()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            scaler.scale(model(x).sum() * math.inf).backward()
            step_ops = dispatch_trace(lambda: scaler.step(opt))
            scaler.update()
            sched.step()
        scale_ops = dispatch_trace(scaler.get_scale)
        state_step = opt.state[model.weight].get("step") if model.weight in opt.state else None
        rows.append({"fused": fused, "step hooks ran": len(hooks),
                     "optimizer state step": None if state_step is None else float(state_step),
                     "weights moved": bool((model.weight != before).any()),
                     "scheduler warning": any("lr_scheduler" in str(w.message) for w in caught),
                     "host syncs in scaler.step": sum(op == "_local_scalar_dense" for op, _ in step_ops),
                     "host syncs in get_scale()": sum(op == "_local_scalar_dense" for op, _ in scale_ops)})
    return table_from_rows(rows)


def _fp16_scaled_backward(scaler) -> torch.nn.Module:
    """``model.to(torch.float16)`` of the tiny step, its loss scaled by ``scaler`` and backpropagated."""
    model, x = _tiny_step_setup()
    model = model.to(torch.float16)
    scaler.scale(model(x.to(torch.float16)).float().square().mean()).backward()
    return model


def pure_fp16_unscale() -> dict[str, str | None]:
    """``model.to(torch.float16)`` under a scaler: the error ``GradScaler.unscale_`` raises for FP16
    gradients (``_unscale_grads_`` with ``allow_fp16=False`` in ``torch/amp/grad_scaler.py``), from
    torch's scaler and from ``ReferenceGradScaler``; None where no error was raised."""
    out: dict[str, str | None] = {}
    for name, make in (("torch.amp.GradScaler", lambda: torch.amp.GradScaler("cpu")),
                       ("ReferenceGradScaler", ReferenceGradScaler)):
        scaler = make()
        opt = torch.optim.SGD(_fp16_scaled_backward(scaler).parameters(), lr=0.1)
        try:
            scaler.unscale_(opt)
            out[name] = None
        except ValueError as exc:
            out[name] = str(exc).split("\n")[0]
    return out


def pure_fp16_fused_step(init_scale: float = 2.0**10, lr: float = 0.1) -> dict[str, object]:
    """``model.to(torch.float16)`` under ``torch.amp.GradScaler`` with a *fused* SGD (``fused=True``): ``step``
    does not call ``unscale_`` for an optimizer with ``_step_supports_amp_scaling``; it checks for infs with
    ``allow_fp16=True`` (``_check_inf_per_device``) and the fused kernel unscales the FP16 gradients.

    Returns ``{"error": None or the first line of what step raised, "update / expected": the weights'
    change over ``lr * g / scale`` (g: the scaled FP16 gradient, unscaled in float64), median over the
    entries}``; about 1 when the kernel unscaled (FP16 rounding of the weight aside), the scale when not.
    """
    scaler = torch.amp.GradScaler("cpu", init_scale=init_scale)
    model = _fp16_scaled_backward(scaler)
    opt = torch.optim.SGD(model.parameters(), lr=lr, fused=True)
    before = model.weight.detach().double().clone()
    expected = lr * model.weight.grad.double() / init_scale
    try:
        scaler.step(opt)
    except (RuntimeError, ValueError) as exc:
        return {"error": str(exc).split("\n")[0], "update / expected": None}
    moved = before - model.weight.detach().double()
    keep = expected.abs() > 0
    return {"error": None, "update / expected": float((moved[keep] / expected[keep]).median())}


def bce_scaled_backoff(probabilities: tuple[float, ...] = (0.5, 0.1, 1e-2, 1e-3), batch: int = 4,
                       init_scale: float = 2.0**16, max_steps: int = 40) -> pd.DataFrame:
    """``binary_cross_entropy`` on an FP16 input under ``torch.amp.GradScaler("cpu")``: the steps the
    scaler skips before the scaled gradient fits in FP16.

    Each FP32 parameter holds ``batch`` copies of a probability ``p`` (target 1); the forward casts
    it to FP16 and back to FP32 before the loss (mean reduction), as autocast does around an op it
    runs in FP32, so the backward hands the FP16 input the gradient ``S * (-1/(batch * p))`` cast to
    FP16. SGD with lr 0 keeps ``p`` fixed; the loop runs until a step is not skipped. Per ``p``: its
    FP16 value (what the loss sees), the steps skipped, the scale the scaler settled at, and whether the unscaled gradient is finite in FP16.
    """
    rows = []
    for p in probabilities:
        z = torch.nn.Parameter(torch.full((batch,), p, dtype=torch.float16).float())
        y = torch.ones(batch)
        opt = torch.optim.SGD([z], lr=0.0)
        scaler = torch.amp.GradScaler("cpu", init_scale=init_scale)
        skipped = 0
        for _ in range(max_steps):
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.binary_cross_entropy(z.half().float(), y)
            scaler.scale(loss).backward()
            scale_used = scaler.get_scale()
            scaler.step(opt)
            scaler.update()
            if scaler.get_scale() >= scale_used:  # not backed off: the step was taken
                break
            skipped += 1
        opt.zero_grad(set_to_none=True)
        torch.nn.functional.binary_cross_entropy(z.half().float(), y).backward()
        rows.append({"p": p, "p in FP16": float(z.detach()[0]), "steps skipped": skipped, "scale that fits": scale_used,
                     "unscaled gradient finite in FP16": bool(z.grad.isfinite().all())})
    return pd.DataFrame(rows)


def multiple_optimizers_one_skips(scale: float = 1024.0) -> pd.DataFrame:
    """Two models, two SGD optimizers, one ``torch.amp.GradScaler("cpu")``; inf only in model A's loss.

    ``GradScaler.step`` checks each optimizer's own gradients (its ``found_inf_per_device``), so
    A's step is skipped while B's is taken, and one ``update()`` backs the shared scale off. Per
    optimizer: whether its weights moved; and the scale before and after.
    """
    model_a, x = _tiny_step_setup(seed=0)
    model_b, _ = _tiny_step_setup(seed=1)
    opt_a = torch.optim.SGD(model_a.parameters(), lr=0.1)
    opt_b = torch.optim.SGD(model_b.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=scale)
    before = {"A": model_a.weight.detach().clone(), "B": model_b.weight.detach().clone()}
    loss_a = model_a(x).square().mean() * math.inf
    loss_b = model_b(x).square().mean()
    scaler.scale(loss_a + loss_b).backward()
    scale_before = scaler.get_scale()
    scaler.step(opt_a)
    scaler.step(opt_b)
    scaler.update()
    return pd.DataFrame([{"optimizer": name, "inf in its gradients": name == "A",
                          "weights moved": bool((model.weight != before[name]).any()),
                          "scale before": scale_before, "scale after update": scaler.get_scale()}
                         for name, model in (("A", model_a), ("B", model_b))])


def zero_scale_step() -> pd.DataFrame:
    """One iteration at loss scale 0, with torch's scaler and ``ReferenceGradScaler``.

    Scaling by 0 gives zero gradients, which are finite, so neither scaler finds an inf; unscaling
    multiplies them by 1/0 = inf, 0 * inf is NaN, and the optimizer step writes NaN into the
    weights. Per scaler: inf found, whether the step left NaN weights, the scale after ``update()``.
    """
    rows = []
    for name, make in (("torch.amp.GradScaler", lambda: torch.amp.GradScaler("cpu", init_scale=1.0)),
                       ("ReferenceGradScaler", lambda: ReferenceGradScaler(init_scale=1.0))):
        model, x = _tiny_step_setup()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        scaler = make()
        scaler.scale(torch.ones(()))  # torch creates its scale tensor on first use
        scaler.update(0.0)  # an explicit new scale: 0, where a death spiral ends
        scaler.scale(model(x).square().mean()).backward()
        scaler.unscale_(opt)
        found_inf = (bool(sum(v.item() for v in scaler._found_inf_per_device(opt).values()))
                     if isinstance(scaler, torch.amp.GradScaler) else scaler._state(opt)["found_inf"])
        scaler.step(opt)
        scaler.update()
        rows.append({"scaler": name, "inf found": found_inf,
                     "weights NaN after step": any(bool(p.isnan().any()) for p in model.parameters()),
                     "scale after update": scaler.get_scale()})
    return pd.DataFrame(rows)
