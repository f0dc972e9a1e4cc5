"""Debugging numerical problems: planted faults, the first inf/NaN, per-layer statistics, precision bisection.

Exports, grouped by role (imported from their modules on first use, so importing one
module never imports the others):

* planted-fault models (``models``): ``Magnitude``, ``UnstableMLP``, ``ScaledResidual``, ``FunctionalFaultMLP``, ``OffsetLinear``, ``CancellationMLP``, ``make_inputs``, ``hot_layer_outputs``;
* locating non-finite values (``locate``): ``check_floating``, ``check_input``, ``model_output``, ``default_loss``, ``call_model``, ``resolve_modules``, ``NonfiniteReport``, ``locate_nonfinite``, ``anomaly_report``, ``first_nonfinite_ops``;
* per-layer statistics (``stats``): ``tensor_stats``, ``layer_stats``, ``compare_precisions``, ``first_divergence``, ``overflow_threshold``, ``growth_before_overflow``, ``plot_activation_growth``;
* precision bisection (``bisect``): ``lowered``, ``output_error``, ``bisect_precision``.
"""

from amp_docs_lib.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    # planted-fault models
    "models": ("Magnitude", "UnstableMLP", "ScaledResidual", "FunctionalFaultMLP", "OffsetLinear", "CancellationMLP", "make_inputs", "hot_layer_outputs",),
    # locating non-finite values
    "locate": ("check_floating", "check_input", "model_output", "default_loss", "call_model", "resolve_modules", "NonfiniteReport", "locate_nonfinite", "anomaly_report", "first_nonfinite_ops",),
    # per-layer statistics
    "stats": ("tensor_stats", "layer_stats", "compare_precisions", "first_divergence", "overflow_threshold", "growth_before_overflow", "plot_activation_growth",),
    # precision bisection
    "bisect": ("lowered", "output_error", "bisect_precision",),
})
