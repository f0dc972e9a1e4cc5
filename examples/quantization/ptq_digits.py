"""Post-training quantization of a digits MLP with torchao's quantize_.

    python examples/quantization/ptq_digits.py

Trains a small MLP in FP32 on scikit-learn's bundled digits (no download),
quantizes copies with three torchao configs, and prints accuracy, size on
disk and latency of each next to FP32: latency as the median and IQR of
interleaved timing rounds (the site's harness, amp_docs_lib.core.timing),
speed as the median ratio to FP32 with its 90% interval, and whether that
interval resolves a difference. Runs on any device (CPU here).
"""
# Install: pip install amp_docs_lib-*.whl scikit-learn torchao  (the wheel: Downloads bar of any chapter page)
import copy
import io

import torch
from sklearn.datasets import load_digits
from torch import nn
from torchao.quantization import (Int8DynamicActivationInt8WeightConfig, Int8WeightOnlyConfig,
                                  IntxWeightOnlyConfig, quantize_)
from torchao.quantization.granularity import PerGroup

from amp_docs_lib.core.timing import interleaved

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

models = {"FP32": model}
configs = {
    "INT8 weight-only": Int8WeightOnlyConfig(),
    "INT8 dynamic act + INT8 weight": Int8DynamicActivationInt8WeightConfig(),
    "INT4 weight-only (group 32)": IntxWeightOnlyConfig(weight_dtype=torch.int4, granularity=PerGroup(32)),
}
for name, config in configs.items():
    q = copy.deepcopy(model)
    quantize_(q, config)  # replaces each nn.Linear weight with a quantized tensor, in place
    models[name] = q


def runner(m):
    def run():
        with torch.inference_mode():
            return m(x[test])
    return run


# All models timed together: each round times one block of each, in alternating order.
timed = interleaved({name: runner(m) for name, m in models.items()}, baseline="FP32", rounds=9, num_threads=1)
for name, m in models.items():
    buf = io.BytesIO()
    torch.save(m.state_dict(), buf)  # the checkpoint's size on disk
    with torch.inference_mode():
        acc = (m(x[test]).argmax(1) == y[test]).float().mean().item()
    t = timed.timings[name]
    line = (f"{name:<32} accuracy {acc:.3f}  size {buf.getbuffer().nbytes / 1024:6.1f} KiB  "
            f"latency {t.median_s * 1e6:7.1f} us (IQR {t.iqr_s * 1e6:6.1f})")
    if name != "FP32":
        c = timed.compare(name)
        line += f"  speed vs FP32 {c.interval_text()}: {c.verdict}"
    print(line)
# Why INT4 is not smaller than INT8 here: IntxWeightOnlyConfig's default packing stores each 4-bit
# code in its own int8 byte, and adds an FP32 scale and an int8 zero point per group of 32.
print("INT4 (Intx) stores each 4-bit code unpacked, one per int8 byte, plus a scale and zero point per "
      "group of 32, so it is no smaller than INT8 here; a packed INT4 layout halves the codes.")
