"""Activation outliers and SmoothQuant-style migration, on the digits model.

Large language models have a few activation *channels* whose values are tens to hundreds of
times larger than the rest (Dettmers et al., *LLM.int8()*, 2022; Xiao et al., *SmoothQuant*,
2023). Per-token INT8 activation scales then spend almost all their range on those channels.
:func:`with_activation_outlier` plants one such channel in the trained digits MLP without
changing what the model computes: hidden unit ``c`` of the first layer is multiplied by ``f``
(weights and bias) and the second layer's input column ``c`` divided by ``f``; ReLU is
positively homogeneous, so the logits are unchanged up to FP32 rounding, but the second layer's
input now has one channel ``f`` times larger.

SmoothQuant migrates the difficulty from activations to weights: per input channel ``j`` it
divides the activation by ``s_j = max|X_j|^alpha / max|W_j|^(1-alpha)`` and multiplies the
weight column by ``s_j`` (an exact rewrite in real arithmetic), with ``alpha = 0.5`` by default.
torchao implements it as ``torchao.prototype.smoothquant.SmoothQuantConfig(base_config,
step="prepare" / "convert", alpha)``: the prepare step observes the calibration data, the
convert step folds ``s`` into the weights and stores ``1/s`` as the quantized weight's
activation pre-scale.
"""

from __future__ import annotations

import copy
from typing import Iterable

import pandas as pd
import torch
from torch import nn

LAYER = "2"  # the second Linear of the digits MLP: its input is the planted channel


def with_activation_outlier(model: nn.Sequential, channel: int = 0, factor: float = 100.0) -> nn.Sequential:
    """A copy of the digits MLP whose second layer sees hidden channel ``channel`` scaled by ``factor``."""
    if not factor > 0:
        raise ValueError(f"factor must be positive (ReLU commutes only with positive scaling), got {factor!r}")
    hidden = model[0].out_features
    if not 0 <= channel < hidden:
        raise ValueError(f"channel must be in [0, {hidden}), got {channel!r}")
    m = copy.deepcopy(model).eval()
    with torch.no_grad():
        m[0].weight[channel] *= factor
        m[0].bias[channel] *= factor
        m[2].weight[:, channel] /= factor
    return m


def channel_absmax(model: nn.Sequential, x: torch.Tensor) -> torch.Tensor:
    """Per-channel max |activation| of the second layer's input on ``x``."""
    with torch.no_grad():
        return torch.relu(model[0](x)).abs().amax(0)


def _int8_dyn():
    from torchao.quantization import Int8DynamicActivationInt8WeightConfig
    return Int8DynamicActivationInt8WeightConfig()


def smoothquant_copy(model: nn.Module, calib: torch.Tensor, alpha: float = 0.5, layer: str = LAYER) -> nn.Module:
    """``model`` with ``layer`` quantized by torchao's SmoothQuant over INT8 dynamic, calibrated on ``calib``."""
    from torchao.prototype.smoothquant import SmoothQuantConfig
    from torchao.quantization import quantize_

    only = lambda m, fqn: fqn == layer  # noqa: E731
    q = copy.deepcopy(model).eval()
    quantize_(q, SmoothQuantConfig(_int8_dyn(), step="prepare", alpha=alpha), filter_fn=only)
    with torch.no_grad():
        q(calib)
    quantize_(q, SmoothQuantConfig(_int8_dyn(), step="convert", alpha=alpha), filter_fn=only)
    return q.eval()


def outlier_table(task, factors: Iterable[float] = (1.0, 30.0, 300.0), channel: int = 0,
                  alpha: float = 0.5) -> pd.DataFrame:
    """Per outlier factor: the channel's size, and the second layer's output SQNR and accuracy, INT8
    dynamic (per-token activations) without and with SmoothQuant, against the FP32 model."""
    from amp_docs_lib.quantization.affine import sqnr_db
    from amp_docs_lib.quantization.ptq import layer_outputs, quantize_copy
    from amp_docs_lib.quantization.task import accuracy

    d = task.data
    ref_logits = task.model(d.x_test).detach()
    rows = []
    for f in factors:
        m = with_activation_outlier(task.model, channel, f)
        amax = channel_absmax(m, d.x_calib)
        ref = layer_outputs(m, d.x_test)[LAYER]
        plain = quantize_copy(m, _int8_dyn(), filter_fn=lambda mod, fqn: fqn == LAYER)
        smooth = smoothquant_copy(m, d.x_calib, alpha)
        others = torch.cat([amax[:channel], amax[channel + 1:]])
        rows.append({
            "outlier factor": f,
            "channel max / median of other channels": float(amax[channel] / others.median()),
            "logits change from planting (max abs)": float((m(d.x_test).detach() - ref_logits).abs().max()),
            "layer-2 SQNR, INT8 dynamic (dB)": sqnr_db(ref, layer_outputs(plain, d.x_test)[LAYER]),
            "layer-2 SQNR, SmoothQuant + INT8 dynamic (dB)": sqnr_db(ref, layer_outputs(smooth, d.x_test)[LAYER]),
            "accuracy, INT8 dynamic": accuracy(plain, d.x_test, d.y_test),
            "accuracy, SmoothQuant": accuracy(smooth, d.x_test, d.y_test),
        })
    return pd.DataFrame(rows)
