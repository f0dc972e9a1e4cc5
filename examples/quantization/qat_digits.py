"""Quantization-aware training of a digits MLP with torchao's QATConfig.

    python examples/quantization/qat_digits.py

Trains an MLP in FP32, quantizes it to INT2 per-channel weights after training
(PTQ), and compares with QAT: prepare (fake quantization), fine-tune, convert.
INT2 is used because INT4 loses little on this easy task (the chapter measures both).

The control: the FP32 model fine-tuned for the same epochs, then quantized the same
way, so QAT is not credited with three extra epochs of training. One test split
cannot rank models that differ by an image or two, so each comparison also prints
the images only one of the two models gets right and the exact sign test's p
(the chapter's own function, amp_docs_lib.quantization.qat.paired).
"""
# Install: pip install amp_docs_lib-*.whl scikit-learn torchao  (the wheel: Downloads bar of any chapter page)
import copy

import torch
from sklearn.datasets import load_digits
from torch import nn
from torchao.quantization import IntxWeightOnlyConfig, quantize_
from torchao.quantization.granularity import PerAxis
from torchao.quantization.qat import QATConfig

from amp_docs_lib.quantization.qat import paired

torch.set_num_threads(1)  # a model this small gains nothing from more threads
torch.manual_seed(0)
digits = load_digits()
x = torch.tensor(digits.data, dtype=torch.float32) / 16.0
y = torch.tensor(digits.target)
perm = torch.randperm(len(x))
train_idx, test = perm[450:], perm[:450]


def train(m, epochs, lr, seed):
    torch.manual_seed(seed)  # the same batches for QAT and its FP32 control
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
def correct(m):
    return m(x[test]).argmax(1) == y[test]


def quantized(m):
    m = copy.deepcopy(m)
    quantize_(m, base)
    return m


model = train(nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(),
                            nn.Linear(128, 10)), epochs=15, lr=1e-3, seed=1)
base = IntxWeightOnlyConfig(weight_dtype=torch.int2, granularity=PerAxis(0))
ptq = quantized(model)
finetuned = train(copy.deepcopy(model), epochs=3, lr=3e-4, seed=2)  # the control: same epochs, no rounding
ptq_finetuned = quantized(finetuned)

qat = copy.deepcopy(model)
quantize_(qat, QATConfig(base, step="prepare"))  # nn.Linear -> FakeQuantizedLinear
train(qat, epochs=3, lr=3e-4, seed=2)            # the forward pass sees INT2 rounding
quantize_(qat, QATConfig(base, step="convert"))  # real INT2 weights (stored in int8)

models = {"FP32": model, "FP32 fine-tuned": finetuned, "PTQ INT2": ptq,
          "PTQ INT2 of fine-tuned": ptq_finetuned, "QAT INT2": qat}
right = {name: correct(m) for name, m in models.items()}
print(f"test split: {len(test)} images")
for name, r in right.items():
    print(f"{name + ' accuracy':32s} {r.float().mean().item():.3f}")
for a, b in (("QAT INT2", "PTQ INT2"), ("QAT INT2", "PTQ INT2 of fine-tuned")):
    split = paired(right[a], right[b])
    print(f"{a} vs {b}: images only {a} gets right {split['a only']}, only {b} {split['b only']}, "
          f"sign test p = {split['p']:.3g}")
