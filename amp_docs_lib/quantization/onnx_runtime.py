"""ONNX Runtime on the CPU: export, dynamic and static (QDQ) INT8 quantization, saturation check.

- ``export_onnx``: ``torch.onnx.export(..., dynamo=True)`` (the exporter built on
  ``torch.export``; it needs ``onnxscript``) with a dynamic batch dimension and the
  weights inside the file, so its size on disk is the model's.
- ``quantize_onnx_dynamic``: ``onnxruntime.quantization.quantize_dynamic``: INT8
  weights, activations quantized per batch at run time (uint8).
- ``quantize_onnx_static``: ``quantize_static`` in the QDQ format
  (QuantizeLinear/DequantizeLinear pairs around each op) with activation ranges
  from a ``CalibrationDataReader`` over the calibration images.

ONNX Runtime's x86 kernels multiply uint8 activations by int8 weights (U8S8)
with ``vpmaddubsw`` on CPUs without VNNI, which sums pairs in int16 and can
saturate; ONNX Runtime's documentation recommends ``reduce_range=True`` or
uint8 weights there. ``saturation_table`` measures the variants on this CPU.
ONNX Runtime picks its kernels from the CPU's real features (cpuid), so the
``ATEN_CPU_CAPABILITY`` emulation of the AVX2 machine does not apply to it.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from onnxruntime.quantization import CalibrationDataReader
from torch import nn

from amp_docs_lib.quantization.affine import sqnr_db


def export_onnx(model: nn.Module, path: str | Path, example: torch.Tensor) -> Path:
    """Export ``model`` to ONNX at ``path`` (dynamo exporter, dynamic batch, weights embedded)."""
    path = Path(path)
    batch = torch.export.Dim("batch", min=1)
    quiet = logging.getLogger("torch.onnx")
    old = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            torch.onnx.export(model.eval(), (example,), str(path), dynamo=True, external_data=False,
                              input_names=["x"], output_names=["logits"],
                              dynamic_shapes=({0: batch},), verbose=False)
    finally:
        quiet.setLevel(old)
    return path


class DigitsCalibrationReader(CalibrationDataReader):
    """A ``CalibrationDataReader``: feeds calibration images to ``quantize_static`` batch by batch."""

    def __init__(self, x: torch.Tensor, batch: int = 64, input_name: str = "x"):
        if not isinstance(x, torch.Tensor) or x.dim() != 2:
            raise ValueError(f"x must be a 2-D tensor of calibration inputs, got {type(x).__name__}")
        self._batches = [{input_name: x[i:i + batch].numpy()} for i in range(0, len(x), batch)]
        self._it = iter(self._batches)

    def get_next(self):
        """The next ``{input name: array}`` feed, or None when the data is exhausted."""
        return next(self._it, None)

    def rewind(self):
        """Start again from the first batch."""
        self._it = iter(self._batches)


def preprocess(src: str | Path, dst: str | Path) -> Path:
    """ONNX Runtime's recommended pre-processing (shape inference, graph optimisation) before quantizing."""
    from onnxruntime.quantization.shape_inference import quant_pre_process

    quant_pre_process(str(src), str(dst))
    return Path(dst)


def quantize_onnx_dynamic(src: str | Path, dst: str | Path, *, weight_type: str = "QInt8",
                          reduce_range: bool = False, per_channel: bool = False) -> Path:
    """``quantize_dynamic``: INT8 weights, activations quantized per batch at run time."""
    from onnxruntime.quantization import quantize_dynamic

    quantize_dynamic(str(src), str(dst), weight_type=_qtype(weight_type), reduce_range=reduce_range,
                     per_channel=per_channel)
    return Path(dst)


def quantize_onnx_static(src: str | Path, dst: str | Path, calib: torch.Tensor, *,
                         activation_type: str = "QInt8", weight_type: str = "QInt8",
                         reduce_range: bool = False, per_channel: bool = False,
                         method: str = "MinMax") -> Path:
    """``quantize_static`` in the QDQ format, calibrated on ``calib`` with ``method`` (MinMax, Entropy, Percentile)."""
    from onnxruntime.quantization import CalibrationMethod, QuantFormat, quantize_static

    valid = [m.name for m in CalibrationMethod]
    if method not in valid:
        raise ValueError(f"invalid calibration method {method!r}; valid: {valid}")
    quantize_static(str(src), str(dst), DigitsCalibrationReader(calib), quant_format=QuantFormat.QDQ,
                    activation_type=_qtype(activation_type), weight_type=_qtype(weight_type),
                    reduce_range=reduce_range, per_channel=per_channel,
                    calibrate_method=CalibrationMethod[method])
    return Path(dst)


def _qtype(name: str):
    from onnxruntime.quantization import QuantType

    valid = [q.name for q in QuantType]
    if name not in valid:
        raise ValueError(f"invalid quant type {name!r}; valid: {valid}")
    return QuantType[name]


def session(path: str | Path, threads: int = 1):
    """A CPU ``InferenceSession`` with ``threads`` intra-op threads (1, like ``torch.utils.benchmark``)."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])


def predict(sess, x: torch.Tensor) -> np.ndarray:
    """Logits of an ONNX Runtime session on ``x``."""
    return sess.run(None, {sess.get_inputs()[0].name: x.numpy()})[0]


def op_counts(path: str | Path) -> dict[str, int]:
    """How many nodes of each op type the ONNX graph at ``path`` has."""
    import onnx

    counts: dict[str, int] = {}
    for node in onnx.load(str(path)).graph.node:
        counts[node.op_type] = counts.get(node.op_type, 0) + 1
    return dict(sorted(counts.items()))


def _read_optimized(path: str | Path, threads: int, read):
    """``read`` applied to the graph ONNX Runtime runs: the model after the graph optimisations a CPU session
    applies at creation, written out through ``SessionOptions.optimized_model_filepath``."""
    import tempfile

    import onnxruntime as ort

    with tempfile.TemporaryDirectory(prefix="amp-docs-ort-") as tmp:
        opts = ort.SessionOptions()
        opts.intra_op_num_threads, opts.inter_op_num_threads, opts.log_severity_level = threads, 1, 3
        opts.optimized_model_filepath = str(Path(tmp) / "optimized.onnx")
        ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        return read(opts.optimized_model_filepath)


def optimized_op_counts(path: str | Path, threads: int = 1) -> dict[str, int]:
    """:func:`op_counts` of the graph ONNX Runtime runs: the model after the graph optimisations a CPU
    session applies at creation (``SessionOptions.optimized_model_filepath``), where QDQ groups are
    fused into integer operators (``QGemm``, ``DynamicQuantizeMatMul``, ...)."""
    return _read_optimized(path, threads, op_counts)


def activation_types(path: str | Path, optimized: bool = True, threads: int = 1) -> list[str]:
    """The element types (``"INT8"``, ``"UINT8"``) of the activation zero points of the ONNX graph at ``path``:
    those of each ``QuantizeLinear``/``DequantizeLinear`` whose input is not a stored initializer (a weight's
    pair reads an initializer). With ``optimized``, of the graph a CPU session runs after its optimisations at
    creation (``SessionOptions.optimized_model_filepath``), where ONNX Runtime may rewrite int8 QDQ pairs to
    uint8 (its ``QDQS8ToU8Transformer``, added where int8 QDQ is not allowed, e.g. on x86)."""
    import onnx

    def types(model_path: str) -> list[str]:
        g = onnx.load(model_path).graph
        inits = {i.name: i for i in g.initializer}
        return sorted({onnx.TensorProto.DataType.Name(inits[n.input[2]].data_type) for n in g.node
                       if n.op_type in ("QuantizeLinear", "DequantizeLinear") and n.input[0] not in inits
                       and len(n.input) > 2 and n.input[2] in inits})

    return _read_optimized(path, threads, types) if optimized else types(str(path))


def cpu_flags() -> set[str]:
    """The CPU feature flags from ``/proc/cpuinfo`` (empty where it does not exist)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def cpu_int8_features() -> dict[str, bool]:
    """Which int8 dot-product instruction sets this CPU has (VNNI, AMX-INT8)."""
    f = cpu_flags()
    return {"avx2": "avx2" in f, "avx512_vnni": "avx512_vnni" in f, "avx_vnni": "avx_vnni" in f,
            "amx_int8": "amx_int8" in f}


def saturation_table(fp32_path: str | Path, workdir: str | Path, x: torch.Tensor, y: torch.Tensor,
                     calib: torch.Tensor) -> pd.DataFrame:
    """U8S8 variants that can saturate without VNNI, and the documented fixes, measured on this CPU."""
    workdir = Path(workdir)
    ref = predict(session(fp32_path), x)
    plans = {
        "dynamic, int8 weights (default)": lambda p: quantize_onnx_dynamic(fp32_path, p),
        "dynamic, int8 weights, reduce_range": lambda p: quantize_onnx_dynamic(fp32_path, p, reduce_range=True),
        "dynamic, uint8 weights": lambda p: quantize_onnx_dynamic(fp32_path, p, weight_type="QUInt8"),
        "static QDQ, uint8 act + int8 weights (U8S8)":
            lambda p: quantize_onnx_static(fp32_path, p, calib, activation_type="QUInt8"),
        "static QDQ, U8S8, reduce_range":
            lambda p: quantize_onnx_static(fp32_path, p, calib, activation_type="QUInt8", reduce_range=True),
        "static QDQ, int8 act + int8 weights (default S8S8)":
            lambda p: quantize_onnx_static(fp32_path, p, calib),
    }
    rows = []
    for i, (name, make) in enumerate(plans.items()):
        p = make(workdir / f"sat_{i}.onnx")
        out = predict(session(p), x)
        static = name.startswith("static")
        rows.append({"quantization": name,
                     "activations as saved": ", ".join(activation_types(p, optimized=False)).lower() if static
                     else "float (dynamic)",
                     "activations as ONNX Runtime runs them": ", ".join(activation_types(p)).lower() if static
                     else "n/a (dynamic: quantized inside the operator at run time)",
                     "accuracy": float((out.argmax(1) == y.numpy()).mean()),
                     "logits SQNR vs ORT FP32 (dB)": sqnr_db(torch.from_numpy(ref), torch.from_numpy(out))})
    return pd.DataFrame(rows)


def file_size(path: str | Path) -> int:
    """Size of a file on disk in bytes."""
    return os.path.getsize(path)
