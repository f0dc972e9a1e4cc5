"""Number formats: the registry of every format the site discusses, and the Formats chapter's experiments.

Exports, grouped by role (imported from their modules on first use, so importing one
module never imports the others):

* the format registry (``formats``): ``NumberFormat``, ``format_names``, ``float_format_names``, ``get_format``, ``bytes_per_element``, ``encode``, ``bits_to_value``, ``value_from_fields``, ``classify_fields``, ``Decoded``, ``decode``, ``decode_table``, ``next_up``, ``format_table``, ``definition_table``, ``limits_disagreeing_with_definition``, ``plot_bit_layout``, ``overflow_probe``, ``cast_rules``, ``cast_rules_table``, ``double_rounding``, ``torch_header_line``;
* experiments (``numerics``): ``spacing_vs_magnitude``, ``plot_spacing``, ``subnormal_survival``, ``measured_decimal_digits``, ``exp_overflow``, ``softplus_naive``, ``softplus_stable``, ``softmax_naive``, ``softmax_stable``, ``softplus_errors``, ``summarize_softplus``, ``plot_softplus``, ``softmax_errors``, ``first_failing_scale``, ``predicted_exp_overflow_scale``, ``predicted_row_sum_overflow_scale``, ``summarize_softmax``, ``softmax_one_hot_rows``, ``accumulation_error``, ``sum_rounding``, ``rounds_once``, ``split_k_reduction_error``, ``reduction_flags_restored``, ``fp32_precision_state``, ``fp32_precision_restored``, ``fp32_precision_values``, ``reduced_precision_reduction_gpu``, ``gpu_subnormal_matmul``, ``fp32_precision_settings``, ``plot_accumulation``, ``cancellation``, ``variance_cancellation``, ``update_stagnation``, ``stagnation_thresholds``, ``sgd_stagnation``, ``plot_sgd_stagnation``, ``tf32_matmul_error``, ``tf32_input_rounding``, ``overflow_casts``, ``mx_floor_scale_overshoot``, ``agrees_at_stated_precision``, ``stochastic_rounding_update``.
"""

from amp_docs_lib.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    # the format registry
    "formats": ("NumberFormat", "format_names", "float_format_names", "get_format", "bytes_per_element", "encode", "bits_to_value", "value_from_fields", "classify_fields", "Decoded", "decode", "decode_table", "next_up", "format_table", "definition_table", "limits_disagreeing_with_definition", "plot_bit_layout", "overflow_probe", "cast_rules", "cast_rules_table", "double_rounding", "torch_header_line",),
    # experiments
    "numerics": ("spacing_vs_magnitude", "plot_spacing", "subnormal_survival", "measured_decimal_digits", "exp_overflow", "softplus_naive", "softplus_stable", "softmax_naive", "softmax_stable", "softplus_errors", "summarize_softplus", "plot_softplus", "softmax_errors", "first_failing_scale", "predicted_exp_overflow_scale", "predicted_row_sum_overflow_scale", "summarize_softmax", "softmax_one_hot_rows", "accumulation_error", "sum_rounding", "rounds_once", "split_k_reduction_error", "reduction_flags_restored", "fp32_precision_state", "fp32_precision_restored", "fp32_precision_values", "reduced_precision_reduction_gpu", "gpu_subnormal_matmul", "fp32_precision_settings", "plot_accumulation", "cancellation", "variance_cancellation", "update_stagnation", "stagnation_thresholds", "sgd_stagnation", "plot_sgd_stagnation", "tf32_matmul_error", "tf32_input_rounding", "overflow_casts", "mx_floor_scale_overshoot", "agrees_at_stated_precision", "stochastic_rounding_update",),
})
