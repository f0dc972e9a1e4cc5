"""Quantization-aware training of a digits MLP with torchao's QATConfig.

    python examples/quantization/qat_digits.py

Trains an MLP in FP32, quantizes it to INT2 per-channel weights after training
(PTQ), and compares with QAT: prepare (fake quantization), fine-tune, convert.
INT2 is used because INT4 loses little on this easy task (the chapter measures both).
"""
# Install: pip install scikit-learn torch torchao  (self-contained: no amp_docs_lib needed)
import copy

import torch
from sklearn.datasets import load_digits
from torch import nn
from torchao.quantization import IntxWeightOnlyConfig, quantize_
from torchao.quantization.granularity import PerAxis
from torchao.quantization.qat import QATConfig

torch.set_num_threads(1)  # a model this small gains nothing from more threads
torch.manual_seed(0)
digits = load_digits()
x = torch.tensor(digits.data, dtype=torch.float32) / 16.0
y = torch.tensor(digits.target)
perm = torch.randperm(len(x))
train_idx, test = perm[450:], perm[:450]


def train(m, epochs, lr):
    opt = torch.optim.Adam(m.parameters(), lr=lr)
    m.train()
    for epoch in range(epochs):
        for idx in train_idx[torch.randperm(len(train_idx))].split(64):
            loss = nn.functional.cross_entropy(m(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    return m.eval()


@torch.no_grad()
def accuracy(m):
    return (m(x[test]).argmax(1) == y[test]).float().mean().item()


model = train(nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(),
                            nn.Linear(128, 10)), epochs=15, lr=1e-3)
base = IntxWeightOnlyConfig(weight_dtype=torch.int2, granularity=PerAxis(0))

ptq = copy.deepcopy(model)
quantize_(ptq, base)

qat = copy.deepcopy(model)
quantize_(qat, QATConfig(base, step="prepare"))  # nn.Linear -> FakeQuantizedLinear
train(qat, epochs=3, lr=3e-4)                    # the forward pass sees INT2 rounding
quantize_(qat, QATConfig(base, step="convert"))  # real INT2 weights (stored in int8)

print(f"FP32 accuracy        {accuracy(model):.3f}")
print(f"PTQ INT2 accuracy    {accuracy(ptq):.3f}")
print(f"QAT INT2 accuracy    {accuracy(qat):.3f}")
