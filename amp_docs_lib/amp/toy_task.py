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


def train(precision: str = "fp32", steps: int = 50, *, device: str | None = None, lr: float = 0.05,
          n: int = 256, hidden: int = 64, max_norm: float | None = None, seed: int = 0) -> pd.DataFrame:
    """Train the tiny MLP with ``precision`` and return per-step loss and loss scale."""
    device = device or default_device()
    setup = precision_setup(precision, device)
    x, y = make_data(n, seed=seed, device=device)
    model = make_model(hidden=hidden, seed=seed).to(device=device, dtype=setup.param_dtype)
    x = x.to(setup.param_dtype)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    rows = []
    for step in range(steps):
        loss = train_step(model, optimizer, x, y, setup, max_norm=max_norm)
        rows.append({"precision": precision, "step": step, "loss": loss,
                     "scale": setup.scaler.get_scale()})
    return pd.DataFrame(rows)
