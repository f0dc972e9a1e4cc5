"""Shared training pieces for the GradScaler chapter, its patterns and examples.

Generated data, a tiny model and the canonical AMP train step live here
once; ``examples/amp_patterns/*.py`` and ``examples/amp_*.py`` import them.
"""

from __future__ import annotations

import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn

from amp_docs_lib.core.devices import default_device
from amp_docs_lib.amp.precision import PrecisionSetup, precision_setup


def make_data(n: int = 256, features: int = 32, classes: int = 4, *, seed: int = 0,
              device: str | torch.device = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
    """A generated classification task: Gaussian inputs labelled by a random linear teacher."""
    for name, v in (("n", n), ("features", features), ("classes", classes)):
        if not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be a positive int, got {v!r}")
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, features, generator=g)
    teacher = torch.randn(features, classes, generator=g)
    y = (x @ teacher).argmax(dim=1)
    return x.to(device), y.to(device)


def make_model(features: int = 32, hidden: int = 64, classes: int = 4, *, seed: int = 0) -> nn.Module:
    """A tiny MLP (Linear-ReLU-Linear-ReLU-Linear) with a seeded initialisation."""
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(features, hidden), nn.ReLU(),
                         nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, classes))


def train_step(model: nn.Module, optimizer: torch.optim.Optimizer, x: torch.Tensor, y: torch.Tensor,
               setup: PrecisionSetup, *, loss_fn=F.cross_entropy, max_norm: float | None = None) -> float:
    """The canonical AMP step: autocast around forward + loss only, scaled backward,
    unscale before clipping, step through the scaler, update the scale. Returns the loss."""
    optimizer.zero_grad(set_to_none=True)
    with setup.autocast():
        loss = loss_fn(model(x), y)
    setup.scaler.scale(loss).backward()
    if max_norm is not None:
        setup.scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    setup.scaler.step(optimizer)
    setup.scaler.update()
    return loss.item()


def _lost_updates(before: list[torch.Tensor], after: list[torch.Tensor], updates: list[torch.Tensor]) -> dict:
    """Count the non-zero element updates, those that left the stored weight unchanged, and those
    that the rounding rule predicts lost: weight + update (exact, float64) rounded once to the
    weight's dtype equals the weight."""
    counts = {"updates": 0, "lost updates": 0, "predicted lost": 0}
    for w0, w1, u in zip(before, after, updates):
        nz = u != 0
        counts["updates"] += int(nz.sum())
        counts["lost updates"] += int(((w1 == w0) & nz).sum())
        counts["predicted lost"] += int((((w0.double() + u).to(w0.dtype) == w0) & nz).sum())
    return counts


def train(precision: str = "fp32", steps: int = 50, *, device: str | None = None, lr: float = 0.05,
          n: int = 256, hidden: int = 64, max_norm: float | None = None, seed: int = 0,
          track_lost_updates: bool = False) -> pd.DataFrame:
    """Train the tiny MLP with ``precision`` and return per-step loss and loss scale.

    With ``track_lost_updates`` each row also has the median |gradient| and the count of non-zero
    element updates (``lr`` times SGD's momentum buffer), of those that left the stored weight
    unchanged ("lost updates"), and of those the rounding rule predicts lost (see ``_lost_updates``).
    """
    device = device or default_device()
    setup = precision_setup(precision, device)
    x, y = make_data(n, seed=seed, device=device)
    model = make_model(hidden=hidden, seed=seed).to(device=device, dtype=setup.param_dtype)
    x = x.to(setup.param_dtype)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    rows = []
    params = list(model.parameters())
    for step in range(steps):
        before = [p.detach().clone() for p in params] if track_lost_updates else None
        loss = train_step(model, optimizer, x, y, setup, max_norm=max_norm)
        row = {"precision": precision, "step": step, "loss": loss, "scale": setup.scaler.get_scale()}
        if track_lost_updates:
            grads = torch.cat([p.grad.detach().abs().flatten().float() for p in params])
            updates = [-lr * optimizer.state[p]["momentum_buffer"].double() if p in optimizer.state
                       else torch.zeros_like(p, dtype=torch.float64) for p in params]
            row |= {"median |grad|": grads.median().item(),
                    **_lost_updates(before, [p.detach() for p in params], updates)}
        rows.append(row)
    return pd.DataFrame(rows)
