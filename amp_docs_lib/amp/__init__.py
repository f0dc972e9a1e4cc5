"""Automatic mixed precision: autocast's operator policy, GradScaler, the precision switch and regime vocabulary.

Exports, by role (each imported from its module on first use, so importing one module never
imports the others); everything else, the chapters' page builders included, is imported from its
module (``from amp_docs_lib.amp.<module> import <name>``):

* the precision switch and regime vocabulary: (``precision``) ``PrecisionSetup``, ``precision_setup``, ``Regime``, ``regimes_for``, ``get_regime``;
* autocast's operator policy: (``autocast_policy``) ``probe_op``, ``probe_autocast_policy``, ``summarize_policy``, ``compare_with_documented``;
* dtype tracing: (``dtype_trace``) ``dtype_flow``;
* loss scaling: (``grad_scaler``) ``ReferenceGradScaler``, ``update_scale``; (``scale_dynamics``) ``simulate``;
* the canonical train step: (``toy_task``) ``make_data``, ``make_model``, ``train_step``, ``train``.
"""

from amp_docs_lib.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "the precision switch and regime vocabulary": {
            "precision": (
                "PrecisionSetup",
                "precision_setup",
                "Regime",
                "regimes_for",
                "get_regime",
            ),
        },
        "autocast's operator policy": {
            "autocast_policy": (
                "probe_op",
                "probe_autocast_policy",
                "summarize_policy",
                "compare_with_documented",
            ),
        },
        "dtype tracing": {
            "dtype_trace": ("dtype_flow",),
        },
        "loss scaling": {
            "grad_scaler": (
                "ReferenceGradScaler",
                "update_scale",
            ),
            "scale_dynamics": ("simulate",),
        },
        "the canonical train step": {
            "toy_task": (
                "make_data",
                "make_model",
                "train_step",
                "train",
            ),
        },
    },
)
