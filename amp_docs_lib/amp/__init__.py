"""Automatic mixed precision: autocast's operator policy, GradScaler, the precision switch and regime vocabulary.

Exports, grouped by role (imported from their modules on first use, so importing one
module never imports the others):

* the precision switch and regime vocabulary (``precision``): ``PrecisionSetup``, ``precision_setup``, ``Regime``, ``regimes_for``, ``get_regime``;
* autocast's operator policy (``autocast_policy``): ``OpSpec``, ``short_dtype``, ``autocast_kernel_registered``, ``probe_op``, ``probe_autocast_policy``, ``summarize_policy``, ``wide_policy_table``, ``documented_op_lists``, ``documentation_source``, ``dtype_disagreements``, ``documented_category``, ``compare_with_documented``, ``documented_differences``, ``documented_cpu_vs_cuda``, ``policy_by_device``, ``matmul_family_by_device``, ``registered_autocast_ops``, ``undocumented_registrations``, ``default_autocast_dtypes``, ``installed_header_lists``, ``header_category``, ``fp32_candidates_table``, ``fp32_split``, ``dispatch_trace``, ``composite_inside_trace``, ``downstream_vs_inside``, ``eligibility_and_state``, ``cast_cache_counts``, ``cast_cache_and_grad_modes``, ``sdpa_math_reduction``, ``with_header_column``, ``compile_backward_autocast``, ``compiled_backward_effect``, ``header_aten_name``, ``cuda_kernels_outside_header``, ``custom_op_autocast``, ``matvec_spellings``, ``low_precision_kernels_vs_fp32``, ``onednn_kernel``, ``blas_info``, ``cpu_matmul_interleaved``, ``cpu_matmul_kernels``, ``cast_cache_eligibility``, ``autocast_dtype_without_dtype_arg``, ``custom_fwd_input_dtype``;
* dtype tracing (``dtype_trace``): ``precision_context``, ``first_tensor``, ``trace_dtypes``, ``dtype_flow``, ``gpt_dtype_flow``, ``training_state_dtypes``, ``gpt_training_state_dtypes``, ``gpt2_dtype_flow``, ``plot_dtype_flow``;
* loss scaling (``grad_scaler``): ``check_scaler_settings``, ``update_scale``, ``ReferenceGradScaler``, ``torch_gradscaler_defaults``, ``reference_defaults``, ``compare_with_torch``, ``skipped_steps_and_scheduler``, ``fused_optimizer_unscaling``, ``closure_under_scaler``, ``bce_scaled_backoff``, ``multiple_optimizers_one_skips``, ``skipped_step_fused_vs_not``, ``pure_fp16_unscale``, ``zero_scale_step``;
* scale dynamics (``scale_dynamics``): ``ScaleScenario``, ``update_scale_megatron``, ``scenario``, ``simulate``, ``remedy_table``, ``plot_scale``;
* gradient underflow (``underflow``): ``synthetic_gradients``, ``cast_report``, ``underflow_table``, ``predicted_fraction_below``, ``format_limits``, ``underflow_histogram``, ``real_backward_underflow``, ``bce_gradient_overflow``, ``cast_overflow_point``;
* the canonical train step (``toy_task``): ``make_data``, ``make_model``, ``train_step``, ``train``.
"""

from amp_docs_lib.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    # the precision switch and regime vocabulary
    "precision": ("PrecisionSetup", "precision_setup", "Regime", "regimes_for", "get_regime",),
    # autocast's operator policy
    "autocast_policy": ("OpSpec", "short_dtype", "autocast_kernel_registered", "probe_op", "probe_autocast_policy", "summarize_policy", "wide_policy_table", "documented_op_lists", "documentation_source", "dtype_disagreements", "documented_category", "compare_with_documented", "documented_differences", "documented_cpu_vs_cuda", "policy_by_device", "matmul_family_by_device", "registered_autocast_ops", "undocumented_registrations", "default_autocast_dtypes", "installed_header_lists", "header_category", "fp32_candidates_table", "fp32_split", "dispatch_trace", "composite_inside_trace", "downstream_vs_inside", "eligibility_and_state", "cast_cache_counts", "cast_cache_and_grad_modes", "sdpa_math_reduction", "with_header_column", "compile_backward_autocast", "compiled_backward_effect", "header_aten_name", "cuda_kernels_outside_header", "custom_op_autocast", "matvec_spellings", "low_precision_kernels_vs_fp32", "onednn_kernel", "blas_info", "cpu_matmul_interleaved", "cpu_matmul_kernels", "cast_cache_eligibility", "autocast_dtype_without_dtype_arg", "custom_fwd_input_dtype",),
    # dtype tracing
    "dtype_trace": ("precision_context", "first_tensor", "trace_dtypes", "dtype_flow", "gpt_dtype_flow", "training_state_dtypes", "gpt_training_state_dtypes", "gpt2_dtype_flow", "plot_dtype_flow",),
    # loss scaling
    "grad_scaler": ("check_scaler_settings", "update_scale", "ReferenceGradScaler", "torch_gradscaler_defaults", "reference_defaults", "compare_with_torch", "skipped_steps_and_scheduler", "fused_optimizer_unscaling", "closure_under_scaler", "bce_scaled_backoff", "multiple_optimizers_one_skips", "skipped_step_fused_vs_not", "pure_fp16_unscale", "zero_scale_step",),
    # scale dynamics
    "scale_dynamics": ("ScaleScenario", "update_scale_megatron", "scenario", "simulate", "remedy_table", "plot_scale",),
    # gradient underflow
    "underflow": ("synthetic_gradients", "cast_report", "underflow_table", "predicted_fraction_below", "format_limits", "underflow_histogram", "real_backward_underflow", "bce_gradient_overflow", "cast_overflow_point",),
    # the canonical train step
    "toy_task": ("make_data", "make_model", "train_step", "train",),
})
