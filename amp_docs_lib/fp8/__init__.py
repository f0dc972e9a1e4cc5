"""FP8 and microscaling: element formats, scaling recipes, NVFP4, FP8 GEMMs and training, memory.

Exports, by role (each imported from its module on first use, so importing one module never
imports the others); everything else, the chapters' page builders included, is imported from its
module (``from amp_docs_lib.fp8.<module> import <name>``):

* element formats: (``formats``) ``element_format``, ``max_finite``, ``cast``;
* scaling recipes: (``scaling``) ``Quantized``, ``quantize_tensorwise``, ``quantize_rowwise``, ``MXQuantized``, ``mx_quantize``, ``DelayedScaler``, ``error_metrics``;
* NVFP4: (``nvfp4``) ``NVFP4Quantized``, ``nvfp4_quantize``;
* scaled matmul: (``gemm``) ``fp8_gemm_support``, ``scaled_mm``;
* float8 training: (``float8_training``) ``float8_config``, ``convert``, ``convert_mx``.
"""

from amp_docs_lib.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "element formats": {
            "formats": (
                "element_format",
                "max_finite",
                "cast",
            ),
        },
        "scaling recipes": {
            "scaling": (
                "Quantized",
                "quantize_tensorwise",
                "quantize_rowwise",
                "MXQuantized",
                "mx_quantize",
                "DelayedScaler",
                "error_metrics",
            ),
        },
        "NVFP4": {
            "nvfp4": (
                "NVFP4Quantized",
                "nvfp4_quantize",
            ),
        },
        "scaled matmul": {
            "gemm": (
                "fp8_gemm_support",
                "scaled_mm",
            ),
        },
        "float8 training": {
            "float8_training": (
                "float8_config",
                "convert",
                "convert_mx",
            ),
        },
    },
)
