"""Performance measured correctly: matmul throughput, peaks, model sweeps, memory, the load check.

Exports, by role (each imported from its module on first use, so importing one module never
imports the others); everything else, the chapters' page builders included, is imported from its
module (``from amp_docs_lib.bench.<module> import <name>``):

* matmul throughput: (``matmul``) ``time_matmul``, ``throughput_sweep`` (the FLOP count: ``numbers.matmul_flops``);
* is the machine quiet: (``load``) ``LoadCheck``;
* peaks and the roofline: (``peaks``) ``device_peaks``, ``peak_fraction``; (``roofline``) ``attainable_tflops``;
* model sweeps: (``model_sweep``) ``sweep``;
* training memory: (``memory``) ``count_parameters``, ``memory_plan``, ``largest_batch``.
"""

from amp_docs_lib.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "matmul throughput": {
            "matmul": (
                "time_matmul",
                "throughput_sweep",
            ),
        },
        "is the machine quiet": {
            "load": ("LoadCheck",),
        },
        "peaks and the roofline": {
            "peaks": (
                "device_peaks",
                "peak_fraction",
            ),
            "roofline": ("attainable_tflops",),
        },
        "model sweeps": {
            "model_sweep": ("sweep",),
        },
        "training memory": {
            "memory": (
                "count_parameters",
                "memory_plan",
                "largest_batch",
            ),
        },
    },
)
