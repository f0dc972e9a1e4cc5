"""Static activation quantization with torchao, ranges from the calibration rules.

``Int8StaticActivationInt8WeightConfig(act_quant_scale, act_quant_zero_point, granularity=[PerTensor(),
PerRow()], act_mapping_type=ASYMMETRIC)`` fixes each layer's activation scale and zero point ahead of
time (one config per layer, applied with ``filter_fn``), where the dynamic config measures them on
every call. The ranges come from :mod:`amp_docs_lib.quantization.calibration` (min-max, percentile,
MSE), so the calibration section's rules are what torchao deploys.
"""

from __future__ import annotations

import copy

import pandas as pd
import torch
from torch import nn

from amp_docs_lib.quantization import calibration


def static_config(lo: float, hi: float):
    """torchao's INT8 static config for one layer whose input range is ``[lo, hi]`` (asymmetric, per tensor)."""
    from torchao.quantization import Int8StaticActivationInt8WeightConfig, MappingType
    from torchao.quantization.granularity import PerRow, PerTensor

    scale, zp = calibration.range_qparams(lo, hi, 8)
    # torchao wants the scale with the activation's number of dimensions (2-D for a batch of rows).
    return Int8StaticActivationInt8WeightConfig(
        act_quant_scale=torch.tensor([[scale]], dtype=torch.float32),
        act_quant_zero_point=torch.tensor([[zp]], dtype=torch.int8),
        granularity=[PerTensor(), PerRow()], act_mapping_type=MappingType.ASYMMETRIC)


def static_quantize(model: nn.Module, calib: torch.Tensor, method: str = "minmax") -> nn.Module:
    """A copy of ``model`` with every Linear statically INT8-quantized, input ranges calibrated by ``method``."""
    from torchao.quantization import quantize_

    calibration.check_method(method)
    q = copy.deepcopy(model).eval()
    for name, acts in calibration.linear_inputs(model, calib).items():
        lo, hi = calibration.calibrate(acts, method, 8)
        quantize_(q, static_config(lo, hi), filter_fn=lambda m, fqn, n=name: fqn == n)
    return q


def static_table(task) -> pd.DataFrame:
    """Accuracy and logits SQNR of torchao static INT8 per calibration rule, clean and with one bad image;
    torchao's dynamic INT8 (ranges measured per call) as the reference row."""
    from amp_docs_lib.quantization.affine import sqnr_db
    from amp_docs_lib.quantization.ptq import quantize_variant
    from amp_docs_lib.quantization.task import accuracy

    d = task.data
    with torch.no_grad():
        ref = task.model(d.x_test)
    rows = []
    for set_name, calib in (("clean", d.x_calib), ("1 image unnormalised", calibration.corrupt_calibration(d.x_calib))):
        for method in calibration.METHODS:
            q = static_quantize(task.model, calib, method)
            with torch.no_grad():
                rows.append({"activations": f"static, {method}", "calibration set": set_name,
                             "accuracy": accuracy(q, d.x_test, d.y_test), "logits SQNR (dB)": sqnr_db(ref, q(d.x_test))})
    from torchao.quantization import Int8DynamicActivationInt8WeightConfig, MappingType

    from amp_docs_lib.quantization.ptq import quantize_copy

    # torchao's default dynamic config maps activations symmetrically (quant_api.py:859 in 0.18); the asymmetric
    # row isolates what that costs on inputs that are never negative (pixels, ReLU outputs)
    for label, dyn in ((DYNAMIC_SYMMETRIC, quantize_variant(task.model, "int8_dyn")),
                       (DYNAMIC_ASYMMETRIC, quantize_copy(task.model, Int8DynamicActivationInt8WeightConfig(
                           act_mapping_type=MappingType.ASYMMETRIC)))):
        with torch.no_grad():
            rows.append({"activations": label, "calibration set": "none needed",
                         "accuracy": accuracy(dyn, d.x_test, d.y_test), "logits SQNR (dB)": sqnr_db(ref, dyn(d.x_test))})
    return pd.DataFrame(rows)


DYNAMIC_SYMMETRIC = "dynamic (per token, per call; torchao's default symmetric mapping)"
DYNAMIC_ASYMMETRIC = "dynamic (per token, per call; act_mapping_type=ASYMMETRIC)"
