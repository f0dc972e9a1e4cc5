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


def qat_model(task: DigitsTask, base_config: object, epochs: int, lr: float = 3e-4, *,
              with_predictions: bool = False):
    """Prepare, fine-tune and convert a copy of the task's FP32 model; returns (fake-quant acc, converted model),
    and with ``with_predictions`` also the fake-quantized model's predicted classes on the test set (the
    converted model is the same object, so they are taken before ``convert``)."""
    from torchao.quantization import quantize_
    from torchao.quantization.qat import QATConfig

    m = copy.deepcopy(task.model)
    quantize_(m, QATConfig(base_config, step="prepare"))
    train(m, task.data, epochs, lr=lr, seed=2)
    fq_acc = accuracy(m, task.data.x_test, task.data.y_test)
    fq_pred = _predictions(m, task.data.x_test)
    quantize_(m, QATConfig(base_config, step="convert"))
    return (fq_acc, m.eval(), fq_pred) if with_predictions else (fq_acc, m.eval())


def _predictions(model, x):
    import torch

    with torch.inference_mode():
        return model.eval()(x).argmax(1)


def _correct(model, x, y):
    import torch

    with torch.inference_mode():
        return model(x).argmax(1) == y


def paired(a_correct, b_correct) -> dict:
    """Images only ``a`` gets right, only ``b`` gets right, and the two-sided sign-test p of that split."""
    from amp_docs_lib.core.stats import sign_test_p

    a_only, b_only = int((a_correct & ~b_correct).sum()), int((b_correct & ~a_correct).sum())
    return {"a only": a_only, "b only": b_only, "p": sign_test_p(a_only, b_only)}


def qat_table(task: DigitsTask, configs: dict[str, Callable[[], object]], epochs: int,
              lr: float = 3e-4) -> pd.DataFrame:
    """Per config: FP32, FP32 fine-tuned as long as QAT, PTQ, QAT (fake-quantized) and QAT converted.

    One split of the test set, so the differences are also given per image, paired: images only one
    of two models classifies correctly, and the exact sign test's p for that split (PTQ against FP32,
    QAT against PTQ, QAT against PTQ of the fine-tuned model).
    """
    d = task.data
    ft = train(copy.deepcopy(task.model), d, epochs, lr=lr, seed=2)
    ft_acc = accuracy(ft, d.x_test, d.y_test)
    rows = []
    for name, make in configs.items():
        ptq_m, ptq_ft_m = quantize_copy(task.model, make()), quantize_copy(ft, make())
        fq, conv, fq_pred = qat_model(task, make(), epochs, lr, with_predictions=True)
        c = {k: _correct(m, d.x_test, d.y_test) for k, m in
             (("fp32", task.model), ("ptq", ptq_m), ("ptq_ft", ptq_ft_m), ("qat", conv))}
        lost, gain, gain_ft = paired(c["fp32"], c["ptq"]), paired(c["qat"], c["ptq"]), paired(c["qat"], c["ptq_ft"])
        rows.append({"weights": name, "FP32": task.fp32_accuracy, "FP32 fine-tuned": ft_acc,
                     "PTQ": float(c["ptq"].float().mean()), "PTQ of fine-tuned": float(c["ptq_ft"].float().mean()),
                     "QAT (fake-quant)": fq, "QAT converted": float(c["qat"].float().mean()),
                     "test images whose class convert changed": int((_predictions(conv, d.x_test) != fq_pred).sum()),
                     "images only FP32 / only PTQ gets right": f"{lost['a only']} / {lost['b only']}",
                     "p (PTQ vs FP32)": lost["p"],
                     "images only QAT / only PTQ gets right": f"{gain['a only']} / {gain['b only']}",
                     "p (QAT vs PTQ)": gain["p"], "p (QAT vs PTQ of fine-tuned)": gain_ft["p"]})
    return pd.DataFrame(rows)
