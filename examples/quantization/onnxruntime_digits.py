"""Export a digits MLP to ONNX and quantize it with ONNX Runtime (dynamic and static QDQ INT8).

    python examples/quantization/onnxruntime_digits.py

Needs onnxruntime, and onnxscript for torch.onnx.export(dynamo=True)
(pip install onnxruntime onnxscript). quantize_static
reads calibration batches from a CalibrationDataReader. On x86 CPUs without
VNNI, uint8-activation x int8-weight kernels can saturate; pass
reduce_range=True or weight_type=QuantType.QUInt8 there.
"""
# Install: pip install numpy onnxruntime scikit-learn torch onnx onnxscript  (self-contained: no amp_docs_lib needed)
import os
import tempfile

import numpy as np
import onnxruntime as ort
import torch
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType, quantize_dynamic,
                                      quantize_static)
from onnxruntime.quantization.shape_inference import quant_pre_process
from sklearn.datasets import load_digits
from torch import nn

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


class Reader(CalibrationDataReader):
    """Feeds calibration batches (training images, never test images) to quantize_static."""

    def __init__(self, data, batch=64):
        self.batches = iter([{"x": data[i:i + batch].numpy()} for i in range(0, len(data), batch)])

    def get_next(self):
        return next(self.batches, None)


with tempfile.TemporaryDirectory() as d:
    raw, fp32, dyn, qdq = (os.path.join(d, f) for f in ("raw.onnx", "fp32.onnx", "dyn.onnx", "qdq.onnx"))
    torch.onnx.export(model, (x[:8],), raw, dynamo=True, external_data=False, input_names=["x"],
                      output_names=["logits"], dynamic_shapes=({0: torch.export.Dim("batch")},))
    quant_pre_process(raw, fp32)
    quantize_dynamic(fp32, dyn, weight_type=QuantType.QInt8)
    quantize_static(fp32, qdq, Reader(x[train[:256]]), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8)
    for name, path in (("FP32", fp32), ("dynamic INT8", dyn), ("static INT8 (QDQ)", qdq)):
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        logits = sess.run(None, {"x": x[test].numpy()})[0]
        acc = float(np.mean(logits.argmax(1) == y[test].numpy()))
        print(f"ONNX Runtime {name:<18} accuracy {acc:.3f}  size {os.path.getsize(path) / 1024:6.1f} KiB")
