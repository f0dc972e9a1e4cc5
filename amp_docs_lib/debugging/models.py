"""A small model with faults planted where the debugging tools should find them.

:class:`UnstableMLP` is ``depth`` blocks of Linear + LayerNorm + ReLU and a head. Block
``hot_layer``'s Linear has its weights multiplied by ``hot_scale``: its outputs are far
beyond FP16's largest finite value (65504), so under FP16 autocast that Linear produces inf
and the LayerNorm after it NaN, while FP32 computes it fine and the LayerNorm brings the
values back. :class:`Magnitude` appends each row's Euclidean norm written as
``sqrt(sum(x**2))``; for an all-zero row the forward value is 0 but the backward of
``sqrt`` at 0 is inf, times 0: NaN. A fault that only shows in backward. With
``magnitude=True`` the model starts with a bias-free Linear and a :class:`Magnitude`, so an
all-zero input row (``make_inputs(zero_row=True)``) triggers it.
"""

from __future__ import annotations

import torch
from torch import nn


def _check_layers(depth: int, hot_layer: int, *, min_depth: int) -> None:
    """A model's depth (at least ``min_depth``) and the index of its faulty block, checked before it is built."""
    if not isinstance(depth, int) or depth < min_depth:
        raise ValueError(f"depth must be an int >= {min_depth}, got {depth!r}")
    if not isinstance(hot_layer, int) or not 0 <= hot_layer < depth:
        raise ValueError(f"hot_layer must be an int in [0, {depth - 1}], got {hot_layer!r}")


class Magnitude(nn.Module):
    """Appends ``sqrt(sum(x**2))`` per row: finite forward, NaN gradient for an all-zero row."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # two lines, so that a forward traceback has to say which of the two operations it means
        sum_of_squares = (x * x).sum(-1, keepdim=True)
        norm = torch.sqrt(sum_of_squares)
        return torch.cat([x, norm], dim=-1)


class UnstableMLP(nn.Module):
    """``depth`` Linear-LayerNorm-ReLU blocks, one with huge weights, then a head.

    Args:
        width: features per layer.
        depth: number of blocks (>= 2).
        hot_layer: index of the block whose Linear is scaled by ``hot_scale``.
        hot_scale: the factor (default 1e5: outputs of order 1e5 and more, past FP16's 65504).
        magnitude: insert a :class:`Magnitude` before the head (the backward fault).
    """

    def __init__(self, width: int = 32, depth: int = 6, hot_layer: int = 3, hot_scale: float = 1e5,
                 classes: int = 4, magnitude: bool = False, seed: int = 0):
        super().__init__()
        _check_layers(depth, hot_layer, min_depth=2)
        torch.manual_seed(seed)
        self.proj = nn.Linear(width, width, bias=False) if magnitude else nn.Identity()
        self.magnitude = Magnitude() if magnitude else nn.Identity()
        first = width + (1 if magnitude else 0)
        self.blocks = nn.Sequential(*[nn.Sequential(nn.Linear(first if i == 0 else width, width),
                                                    nn.LayerNorm(width), nn.ReLU()) for i in range(depth)])
        with torch.no_grad():
            self.blocks[hot_layer][0].weight.mul_(hot_scale)
            self.blocks[hot_layer][0].bias.mul_(hot_scale)
        self.head = nn.Linear(width, classes)
        self.hot_name = f"blocks.{hot_layer}.0"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.blocks(self.magnitude(self.proj(x))))


class ScaledResidual(nn.Module):
    """Linear, then ``ln(linear(x) * scale + x)`` written in ``forward``: the multiply and the add are no modules."""

    def __init__(self, width: int, scale: float):
        super().__init__()
        self.lin, self.ln, self.scale = nn.Linear(width, width), nn.LayerNorm(width), scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scaled = self.lin(x) * self.scale  # functional: past FP16's range when scale is large
        return self.ln(scaled + x)


class FunctionalFaultMLP(nn.Module):
    """Blocks of :class:`ScaledResidual`; block ``hot_layer`` multiplies by ``hot_scale`` (1e5), the others by 1.

    Every leaf module is finite-in, finite-out except the LayerNorm after the overflow, whose input
    is already inf: module hooks, which look for a module turning finite into non-finite, see none.
    """

    def __init__(self, width: int = 32, depth: int = 4, hot_layer: int = 2, hot_scale: float = 1e5,
                 classes: int = 4, seed: int = 0):
        super().__init__()
        _check_layers(depth, hot_layer, min_depth=1)
        torch.manual_seed(seed)
        self.blocks = nn.Sequential(*[ScaledResidual(width, hot_scale if i == hot_layer else 1.0) for i in range(depth)])
        self.head = nn.Linear(width, classes)
        self.hot_name = f"blocks.{hot_layer}"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.blocks(x))


class OffsetLinear(nn.Linear):
    """A Linear that adds a large constant and subtracts it again: exact in FP32, finite but wrong in FP16.

    ``(x W^T + b + offset) - offset``: in FP32 the offset (2048 by default) leaves 12 of 24
    significant bits for values of order 1; in FP16 the sum is rounded to the spacing where it
    lands: 2 in [2048, 4096) (non-negative outputs), 1 in [1024, 2048) (negative outputs down to
    -1024). Nothing overflows: only a comparison with FP32 finds it.
    """

    def __init__(self, in_features: int, out_features: int, offset: float = 2048.0):
        super().__init__(in_features, out_features)
        self.offset = offset

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (super().forward(x) + self.offset) - self.offset


class CancellationMLP(nn.Module):
    """Linear-LayerNorm-ReLU blocks, block ``hot_layer``'s Linear an :class:`OffsetLinear`: a finite fault."""

    def __init__(self, width: int = 32, depth: int = 6, hot_layer: int = 3, offset: float = 2048.0,
                 classes: int = 4, seed: int = 0):
        super().__init__()
        _check_layers(depth, hot_layer, min_depth=2)
        torch.manual_seed(seed)
        self.blocks = nn.Sequential(*[nn.Sequential(OffsetLinear(width, width, offset) if i == hot_layer
                                                    else nn.Linear(width, width), nn.LayerNorm(width), nn.ReLU())
                                      for i in range(depth)])
        self.head = nn.Linear(width, classes)
        self.hot_name = f"blocks.{hot_layer}.0"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.blocks(x))


def hot_layer_outputs(model: CancellationMLP, x: torch.Tensor,
                      dtype: torch.dtype = torch.float16) -> dict[torch.dtype, torch.Tensor]:
    """The planted layer's output in FP32 and under CPU autocast to ``dtype``, as FP32 tensors keyed by dtype."""
    out = {}
    hook = model.get_submodule(model.hot_name).register_forward_hook(
        lambda m, i, o: out.__setitem__(o.dtype, o.detach().float()))
    try:
        with torch.no_grad():
            model(x)
            with torch.autocast("cpu", dtype=dtype):
                model(x)
    finally:
        hook.remove()
    return out


def make_inputs(batch: int = 32, width: int = 32, *, zero_row: bool = False, seed: int = 0
                ) -> tuple[torch.Tensor, torch.Tensor]:
    """Gaussian inputs and random labels (4 classes); ``zero_row`` zeroes the first row."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, width, generator=g)
    if zero_row:
        x[0] = 0.0
    return x, torch.randint(0, 4, (batch,), generator=g)
