"""Optimizer-side precision: FP32 master weights, moments stored in BF16, Kahan summation.

Where the *update* happens matters as much as where the matmuls run. Three recipes
for parameters or optimizer state in 16 bits, used by the training-regimes chapter:

* :class:`MasterWeights` keeps an FP32 copy of 16-bit parameters; the optimizer
  (any ``torch.optim`` optimizer, FP32 state) updates the copy, which is then rounded
  back into the model (Micikevicius et al., *Mixed Precision Training*, ICLR 2018).
* :class:`RoundedStateAdamW` is ``torch.optim.AdamW`` whose moment tensors are rounded
  to a 16-bit dtype after every step: the numerics of storing them in BF16 (arithmetic
  in FP32, storage rounded), without the memory saving.
* Kahan-compensated AdamW is not rebuilt here: :func:`kahan_adamw` returns
  ``optimi.AdamW(..., kahan_sum=True)`` from the ``torch-optimi`` package.
* Stochastic rounding is not rebuilt either: :func:`stochastic_round_adamw` returns
  torchao's ``torchao.optim._AdamW(bf16_stochastic_round=True)`` (private: the leading
  underscore; its docstring: "AdamW optimizer that supports quantized training (parameter
  is quantized)", ``torchao/optim/adam.py`` line 418), whose step
  (``torchao.optim.adam.single_param_adam``) computes AdamW in FP32 and rounds the new BF16
  *weights* up or down with probability proportional to the distance, so small updates
  survive on average. The moments are not rounded stochastically: they are stored with
  ``exp_avg.copy_(exp_avg_f32)`` and ``exp_avg_sq.copy_(exp_avg_sq_f32)``, round to nearest
  into BF16 buffers (``torchao/optim/adam.py``, torchao 0.18 lines 194-195 against 207; its
  README: "this flag only applies to BF16 weight"). It runs eagerly here (torchao compiles
  the step with ``torch.compile``, which costs more than it saves at this size on a CPU).
"""

from __future__ import annotations

from typing import Callable, Iterable

import torch

from amp_docs_lib.amp.precision import OPTIMIZERS, Regime, get_regime


class MasterWeights:
    """FP32 master copies of (16-bit) parameters, updated by an FP32 optimizer.

    ``step()`` copies each parameter's gradient (upcast) onto its master copy, runs the
    inner optimizer on the masters, then rounds the masters back into the parameters.
    With FP32 parameters it is exactly the inner optimizer.

    Args:
        params: the model's parameters (any floating dtype).
        make_optimizer: called with the list of FP32 master tensors; returns the optimizer.
    """

    def __init__(self, params: Iterable[torch.nn.Parameter],
                 make_optimizer: Callable[[list[torch.Tensor]], torch.optim.Optimizer]):
        self.params = [p for p in params if p.requires_grad]
        if not self.params:
            raise ValueError("MasterWeights got no trainable parameters")
        self.masters = [p.detach().clone().float().requires_grad_(True) for p in self.params]
        self.optimizer = make_optimizer(self.masters)
        if not isinstance(self.optimizer, torch.optim.Optimizer):
            raise TypeError(f"make_optimizer must return a torch.optim.Optimizer, "
                            f"got {type(self.optimizer).__name__}")

    @property
    def param_groups(self) -> list[dict]:
        """The inner optimizer's parameter groups (to set the learning rate)."""
        return self.optimizer.param_groups

    @torch.no_grad()
    def step(self) -> None:
        """Upcast gradients onto the masters, step, round the masters back into the model.

        The masters' FP32 gradients exist only during the step (4 bytes per parameter at the
        step's peak); they are freed afterwards, so between steps the masters cost 4 bytes
        per parameter and their moments 8.
        """
        for p, m in zip(self.params, self.masters):
            m.grad = None if p.grad is None else p.grad.detach().float()
        self.optimizer.step()
        for p, m in zip(self.params, self.masters):
            p.copy_(m)
            m.grad = None

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear the model's and the masters' gradients."""
        for t in (*self.params, *self.masters):
            if set_to_none:
                t.grad = None
            elif t.grad is not None:
                t.grad.zero_()

    def state_bytes(self, scalars: bool = False) -> int:
        """Bytes held by the masters and the inner optimizer's state tensors (``scalars``: step counters too)."""
        n = sum(m.numel() * m.element_size() for m in self.masters)
        return n + _state_bytes(self.optimizer, scalars)


class RoundedStateAdamW(torch.optim.AdamW):
    """``torch.optim.AdamW`` whose moments are rounded to ``state_dtype`` after each step.

    The update is computed by torch's AdamW in the parameters' dtype; afterwards
    ``exp_avg`` and ``exp_avg_sq`` are rounded to ``state_dtype`` and stored back, which
    reproduces the numerics of BF16-stored moments. With ``state_dtype=torch.float32`` and
    FP32 parameters it is exactly ``torch.optim.AdamW``.
    """

    def __init__(self, params, *args, state_dtype: torch.dtype = torch.bfloat16, **kwargs):
        if not isinstance(state_dtype, torch.dtype) or not state_dtype.is_floating_point:
            raise TypeError(f"state_dtype must be a floating torch.dtype, got {state_dtype!r}; "
                            f"valid: [torch.float32, torch.bfloat16, torch.float16]")
        kwargs.setdefault("foreach", False)
        super().__init__(params, *args, **kwargs)
        self.state_dtype = state_dtype

    @torch.no_grad()
    def step(self, closure=None):
        """One AdamW step, then round the moments to ``state_dtype``."""
        loss = super().step(closure)
        for state in self.state.values():
            for key in ("exp_avg", "exp_avg_sq", "max_exp_avg_sq"):
                t = state.get(key)
                if isinstance(t, torch.Tensor):
                    t.copy_(t.to(self.state_dtype))
        return loss


def kahan_adamw(params, lr: float, *, betas=(0.9, 0.999), eps: float = 1e-8,
                weight_decay: float = 0.0) -> torch.optim.Optimizer:
    """``optimi.AdamW`` with Kahan-compensated updates of 16-bit parameters (package ``torch-optimi``).

    Its defaults (betas, eps, weight decay) are set here to torch's, but its arithmetic is
    not torch's: it folds Adam's bias correction into the moving averages
    (``optimi/adam.py`` lines 263-266, ``beta2_hat = debias_beta(beta2, step)`` with
    ``optimi/utils.py`` ``debias_beta = (beta**step - beta) / (beta**step - 1)``), so the stored
    moments are the bias-corrected averages and change by about ``1/step`` per step instead of
    ``1 - beta2``. Equal to torch's in exact arithmetic, different once stored in BF16 (measured
    by :func:`amp_docs_lib.regimes.rounding.optimizer_second_moment_decay`). Its moments are
    stored in the parameters' dtype. Weight decay is applied to the 16-bit weight directly
    (``param.mul_(1 - lr * wd)``), outside the compensated update.
    """
    import optimi

    return optimi.AdamW(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        kahan_sum=True, foreach=False, triton=False)


def stochastic_round_adamw(params, lr: float, *, betas=(0.9, 0.999), eps: float = 1e-8,
                           weight_decay: float = 0.0) -> torch.optim.Optimizer:
    """torchao's ``_AdamW(bf16_stochastic_round=True)``, stepping eagerly (see the module docstring).

    Its moments are stored in the parameters' dtype (BF16 for BF16 parameters), rounded to
    nearest: only the weights are rounded stochastically. Its arithmetic is torchao's
    ``single_param_adam``, called as it is, without ``torch.compile``.
    """
    from torchao.optim import _AdamW

    class _EagerStochasticRoundAdamW(_AdamW):
        @torch.no_grad()
        def step(self, closure=None):
            from torchao.optim.adam import single_param_adam

            for group in self.param_groups:
                lr_ = group["lr"]
                lr_t = lr_ if isinstance(lr_, torch.Tensor) else torch.tensor(float(lr_))
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = torch.tensor(0.0)
                        state["exp_avg"] = self._new_buffer(p, True)
                        state["exp_avg_sq"] = self._new_buffer(p, False)
                    state["step"] += 1
                    single_param_adam(p.detach(), p.grad, state["step"], state["exp_avg"], state["exp_avg_sq"],
                                      None, lr_t, group["betas"][0], group["betas"][1], group["weight_decay"],
                                      group["eps"], True, p.dtype is torch.bfloat16)

    return _EagerStochasticRoundAdamW(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      bf16_stochastic_round=True)


def plain_optimi_adamw(params, lr: float, *, betas=(0.9, 0.999), eps: float = 1e-8,
                       weight_decay: float = 0.0) -> torch.optim.Optimizer:
    """``optimi.AdamW`` without Kahan summation: the control for :func:`kahan_adamw`."""
    import optimi

    return optimi.AdamW(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        kahan_sum=False, foreach=False, triton=False)


def _state_bytes(optimizer: torch.optim.Optimizer, scalars: bool = False) -> int:
    n = 0
    for state in optimizer.state.values():
        for t in state.values():
            if isinstance(t, torch.Tensor) and (scalars or t.dim() > 0):
                n += t.numel() * t.element_size()
    if scalars:  # per-group tensors: torch-optimi's step counter, torchao's learning rate
        n += sum(v.numel() * v.element_size() for g in optimizer.param_groups for k, v in g.items()
                 if k != "params" and isinstance(v, torch.Tensor))
    return n


def gradient_bytes(params, optimizer=None) -> int:
    """Bytes of the gradients held now: the parameters' and, for :class:`MasterWeights`, the masters'."""
    tensors = [p.grad for p in params if p.grad is not None]
    if isinstance(optimizer, MasterWeights):
        tensors += [m.grad for m in optimizer.masters if m.grad is not None]
    return sum(t.numel() * t.element_size() for t in tensors)


def optimizer_state_bytes(optimizer, scalars: bool = False) -> int:
    """Bytes of optimizer state (and FP32 masters, for :class:`MasterWeights`).

    Per-parameter state only by default; ``scalars=True`` adds the 0-d tensors (AdamW's step
    counters, per-group tensors such as torch-optimi's step), which an allocator reading includes.
    """
    if isinstance(optimizer, MasterWeights):
        return optimizer.state_bytes(scalars)
    if isinstance(optimizer, torch.optim.Optimizer):
        return _state_bytes(optimizer, scalars)
    raise TypeError(f"expected a torch.optim.Optimizer or MasterWeights, got {type(optimizer).__name__}")


def make_optimizer(regime: Regime | str, params, lr: float, *, betas=(0.9, 0.999), eps: float = 1e-8,
                   weight_decay: float = 0.0):
    """The optimizer of ``regime`` over ``params`` (learning rate ``lr * regime.lr_scale``).

    Every recipe is AdamW with the same hyperparameters; only where and in which dtype
    the update is computed and stored differs.
    """
    r = get_regime(regime) if isinstance(regime, str) else regime
    if not isinstance(r, Regime):
        raise TypeError(f"regime must be a Regime or a name, got {type(regime).__name__}")
    kw = dict(lr=lr * r.lr_scale, betas=betas, eps=eps, weight_decay=weight_decay)
    if r.optimizer == "adamw":
        return torch.optim.AdamW(params, foreach=False, **kw)
    if r.optimizer == "master_adamw":
        return MasterWeights(params, lambda masters: torch.optim.AdamW(masters, foreach=False, **kw))
    if r.optimizer == "kahan_adamw":
        return kahan_adamw(params, **kw)
    if r.optimizer == "optimi_adamw":
        return plain_optimi_adamw(params, **kw)
    if r.optimizer == "sr_adamw":
        return stochastic_round_adamw(params, **kw)
    if r.optimizer == "adamw_bf16_moments":
        return RoundedStateAdamW(params, state_dtype=torch.bfloat16, **kw)
    raise ValueError(f"unknown optimizer recipe {r.optimizer!r}; valid: {list(OPTIMIZERS)}")
