"""Quantization for inference: affine quantization, calibration, torchao PTQ and QAT, ONNX Runtime, results.

Exports, by role (each imported from its module on first use, so importing one module never
imports the others); everything else, the chapters' page builders included, is imported from its
module (``from amp_docs_lib.quantization.<module> import <name>``):

* affine quantization: (``affine``) ``QParams``, ``choose_qparams``, ``quantize``, ``dequantize``, ``fake_quantize``, ``sqnr_db``;
* calibration: (``calibration``) ``calibrate``;
* the digits task: (``task``) ``DigitsTask``, ``trained_task``;
* torchao post-training quantization and QAT: (``ptq``) ``quantize_variant``; (``qat``) ``qat_model``; (``static``) ``static_quantize``; (``outliers``) ``smoothquant_copy``;
* saving and reloading: (``serialization``) ``save_reload``;
* ONNX Runtime: (``onnx_runtime``) ``export_onnx``, ``quantize_onnx_dynamic``, ``quantize_onnx_static``.
"""

from amp_docs_lib.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "affine quantization": {
            "affine": (
                "QParams",
                "choose_qparams",
                "quantize",
                "dequantize",
                "fake_quantize",
                "sqnr_db",
            ),
        },
        "calibration": {
            "calibration": ("calibrate",),
        },
        "the digits task": {
            "task": (
                "DigitsTask",
                "trained_task",
            ),
        },
        "torchao post-training quantization and QAT": {
            "ptq": ("quantize_variant",),
            "qat": ("qat_model",),
            "static": ("static_quantize",),
            "outliers": ("smoothquant_copy",),
        },
        "saving and reloading": {
            "serialization": ("save_reload",),
        },
        "ONNX Runtime": {
            "onnx_runtime": (
                "export_onnx",
                "quantize_onnx_dynamic",
                "quantize_onnx_static",
            ),
        },
    },
)
