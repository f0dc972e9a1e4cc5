"""The chapter's task: scikit-learn's bundled handwritten digits and a small MLP trained in FP32.

``load_digits`` ships with scikit-learn (1,797 8x8 images, 10 classes), so
nothing is downloaded. Everything is seeded: the split, the initialisation
and the batch order, so the same machine trains the same model every time.
"""

from __future__ import annotations

import io

import contextlib
import functools
from dataclasses import dataclass

import torch
from torch import nn

from amp_docs_lib.core.profiles import active_profile


@dataclass
class DigitsData:
    """Train / calibration / test split of the digits (pixels scaled to [0, 1])."""

    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor

    @property
    def x_calib(self) -> torch.Tensor:
        """Calibration inputs: the first 256 training images (never the test set)."""
        return self.x_train[:256]


def load_digits_split(test_fraction: float = 0.25, seed: int = 0) -> DigitsData:
    """The digits, shuffled with ``seed`` and split into train and test."""
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction!r}")
    from sklearn.datasets import load_digits

    d = load_digits()
    x = torch.tensor(d.data, dtype=torch.float32) / 16.0
    y = torch.tensor(d.target, dtype=torch.long)
    perm = torch.randperm(len(x), generator=torch.Generator().manual_seed(seed))
    n_test = int(round(test_fraction * len(x)))
    te, tr = perm[:n_test], perm[n_test:]
    return DigitsData(x[tr], y[tr], x[te], y[te])


def make_mlp(hidden: int = 256, seed: int = 0) -> nn.Sequential:
    """64 -> hidden -> hidden -> 10 MLP with ReLUs (three ``nn.Linear`` layers), seeded."""
    if not isinstance(hidden, int) or hidden <= 0:
        raise ValueError(f"hidden must be a positive int, got {hidden!r}")
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(64, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                         nn.Linear(hidden, 10))


@contextlib.contextmanager
def single_thread():
    """Run a block on one intra-op thread, then restore the previous count.

    A model this small gains nothing from threads, and on a shared 2-core
    machine two threads are several times slower than one.
    """
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def train(model: nn.Module, data: DigitsData, epochs: int, lr: float = 1e-3, batch: int = 64,
          seed: int = 1) -> nn.Module:
    """Adam on cross-entropy for ``epochs`` passes over the training set; returns the model in eval mode."""
    if not isinstance(epochs, int) or epochs < 0:
        raise ValueError(f"epochs must be a non-negative int, got {epochs!r}")
    with single_thread():
        return _train(model, data, epochs, lr, batch, seed)


def _train(model, data, epochs, lr, batch, seed):
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    gen = torch.Generator().manual_seed(seed)
    model.train()
    n = len(data.x_train)
    for _ in range(epochs):
        order = torch.randperm(n, generator=gen)
        for i in range(0, n, batch):
            idx = order[i:i + batch]
            loss = nn.functional.cross_entropy(model(data.x_train[idx]), data.y_train[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
    return model.eval()


@torch.inference_mode()
def accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    """Top-1 accuracy of ``model`` on ``(x, y)``; inputs are cast to the model's parameter dtype."""
    p = next(model.parameters(), None)
    dtype = p.dtype if p is not None and p.is_floating_point() else x.dtype
    return float((model(x.to(dtype)).argmax(1) == y).float().mean())


@dataclass
class DigitsTask:
    """The data and the FP32 model trained on it."""

    data: DigitsData
    model: nn.Sequential
    fp32_accuracy: float
    hidden: int
    epochs: int


@functools.lru_cache(maxsize=4)
def _trained(hidden: int, epochs: int, seed: int) -> DigitsTask:
    data = load_digits_split(seed=seed)
    model = train(make_mlp(hidden, seed=seed), data, epochs)
    return DigitsTask(data, model, accuracy(model, data.x_test, data.y_test), hidden, epochs)


def trained_task(hidden: int | None = None, epochs: int | None = None, seed: int = 0) -> DigitsTask:
    """The digits task with its FP32 model, trained once per process (sizes from the active profile).

    Callers must not modify the returned model: deep-copy it before quantizing.
    """
    prof = active_profile()
    return _trained(hidden or prof["quant_hidden"], epochs or prof["quant_epochs"], seed)


def state_dict_bytes(model: nn.Module) -> int:
    """Bytes of ``torch.save(model.state_dict())`` (what a checkpoint of the model occupies on disk)."""
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    return buf.getbuffer().nbytes
