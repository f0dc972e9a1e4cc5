"""Debugging numerical problems: planted faults, the first inf/NaN, per-layer statistics, precision bisection.

Exports, by role (each imported from its module on first use, so importing one module never
imports the others); everything else, the chapters' page builders included, is imported from its
module (``from amp_docs_lib.debugging.<module> import <name>``):

* locating non-finite values: (``locate``) ``locate_nonfinite``, ``NonfiniteReport``, ``anomaly_report``, ``first_nonfinite_ops``;
* per-layer statistics: (``stats``) ``tensor_stats``, ``layer_stats``, ``compare_precisions``, ``first_divergence``;
* precision bisection: (``bisect``) ``bisect_precision``.
"""

from amp_docs_lib.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "locating non-finite values": {
            "locate": (
                "locate_nonfinite",
                "NonfiniteReport",
                "anomaly_report",
                "first_nonfinite_ops",
            ),
        },
        "per-layer statistics": {
            "stats": (
                "tensor_stats",
                "layer_stats",
                "compare_precisions",
                "first_divergence",
            ),
        },
        "precision bisection": {
            "bisect": ("bisect_precision",),
        },
    },
)
