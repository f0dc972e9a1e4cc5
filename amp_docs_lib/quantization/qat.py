"""Quantization-aware training with torchao's ``QATConfig``.

The flow of torchao 0.18:

    quantize_(model, QATConfig(base_config, step="prepare"))   # Linear -> FakeQuantizedLinear
    train(model)                                                # forward sees the rounding
    quantize_(model, QATConfig(base_config, step="convert"))   # real quantized weights

``base_config`` is the PTQ config the model will be deployed with; torchao
infers the matching fake quantizers from it (``IntxWeightOnlyConfig`` is one of
the supported bases). The comparison that matters is QAT against PTQ *and*
against FP32 fine-tuned for the same number of steps, so the gain is not just
extra training.
"""

from __future__ import annotations

import copy
from typing import Callable

import pandas as pd

from amp_docs_lib.quantization.ptq import quantize_copy
from amp_docs_lib.quantization.task import DigitsTask, accuracy, train


def qat_model(task: DigitsTask, base_config: object, epochs: int, lr: float = 3e-4):
    """Prepare, fine-tune and convert a copy of the task's FP32 model; returns (fake-quant acc, converted model)."""
    from torchao.quantization import quantize_
    from torchao.quantization.qat import QATConfig

    m = copy.deepcopy(task.model)
    quantize_(m, QATConfig(base_config, step="prepare"))
    train(m, task.data, epochs, lr=lr, seed=2)
    fq_acc = accuracy(m, task.data.x_test, task.data.y_test)
    quantize_(m, QATConfig(base_config, step="convert"))
    return fq_acc, m.eval()


def qat_table(task: DigitsTask, configs: dict[str, Callable[[], object]], epochs: int,
              lr: float = 3e-4) -> pd.DataFrame:
    """Per config: FP32, FP32 fine-tuned as long as QAT, PTQ, QAT (fake-quantized) and QAT converted."""
    d = task.data
    ft = train(copy.deepcopy(task.model), d, epochs, lr=lr, seed=2)
    ft_acc = accuracy(ft, d.x_test, d.y_test)
    rows = []
    for name, make in configs.items():
        ptq = accuracy(quantize_copy(task.model, make()), d.x_test, d.y_test)
        ptq_ft = accuracy(quantize_copy(ft, make()), d.x_test, d.y_test)
        fq, conv = qat_model(task, make(), epochs, lr)
        rows.append({"weights": name, "FP32": task.fp32_accuracy, "FP32 fine-tuned": ft_acc,
                     "PTQ": ptq, "PTQ of fine-tuned": ptq_ft, "QAT (fake-quant)": fq,
                     "QAT converted": accuracy(conv, d.x_test, d.y_test)})
    return pd.DataFrame(rows)
