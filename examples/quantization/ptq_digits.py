"""Post-training quantization of a digits MLP with torchao's quantize_.

    python examples/quantization/ptq_digits.py

Trains a small MLP in FP32 on scikit-learn's bundled digits (no download),
quantizes copies with three torchao configs, and prints accuracy, size on
disk and latency of each next to FP32. Runs on any device (CPU here).
"""
import copy
import io

import torch
from sklearn.datasets import load_digits
from torch import nn
from torch.utils import benchmark
from torchao.quantization import (Int8DynamicActivationInt8WeightConfig, Int8WeightOnlyConfig,
                                  IntxWeightOnlyConfig, quantize_)
from torchao.quantization.granularity import PerGroup

torch.set_num_threads(1)  # a model this small gains nothing from more threads
torch.manual_seed(0)
digits = load_digits()
x = torch.tensor(digits.data, dtype=torch.float32) / 16.0
y = torch.tensor(digits.target)
perm = torch.randperm(len(x))
train, test = perm[450:], perm[:450]

model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 10))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(15):
    for idx in train[torch.randperm(len(train))].split(64):
        loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
model.eval()


def report(name, m):
    buf = io.BytesIO()
    torch.save(m.state_dict(), buf)  # the checkpoint's size on disk
    with torch.inference_mode():
        acc = (m(x[test]).argmax(1) == y[test]).float().mean().item()
        t = benchmark.Timer("m(xb)", globals={"m": m, "xb": x[test]}).blocked_autorange(min_run_time=0.2)
    print(f"{name:<34} accuracy {acc:.3f}  size {buf.getbuffer().nbytes / 1024:6.1f} KiB  "
          f"latency {t.median * 1e6:7.1f} us")


report("FP32", model)
configs = {
    "INT8 weight-only": Int8WeightOnlyConfig(),
    "INT8 dynamic act + INT8 weight": Int8DynamicActivationInt8WeightConfig(),
    "INT4 weight-only (group 32)": IntxWeightOnlyConfig(weight_dtype=torch.int4, granularity=PerGroup(32)),
}
for name, config in configs.items():
    q = copy.deepcopy(model)
    quantize_(q, config)  # replaces each nn.Linear weight with a quantized tensor, in place
    report(name, q)
