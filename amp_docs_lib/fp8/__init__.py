"""FP8 and microscaling: element formats, scaling recipes, NVFP4, FP8 GEMMs and training, memory.

Exports, grouped by role (imported from their modules on first use, so importing one
module never imports the others):

* element formats (``formats``): ``element_format``, ``max_finite``, ``all_codes``, ``code_summary``, ``counts_from_definition``, ``code_summary_disagreements``, ``positive_values``, ``positive_values_from_definition``, ``plot_codes``, ``cast``, ``encode_tensor``, ``cast_comparison``, ``casts_agree_in_range``, ``binades``, ``relative_error_curve``, ``relative_error_envelope``, ``plot_relative_error``, ``dynamic_range_table``, ``plot_range``, ``ml_dtypes_type``, ``fnuz_cast_table``, ``fnuz_casts_agree``;
* tensors of the GPT (``capture``): ``capture_tensors``, ``select``;
* scaling recipes (``scaling``): ``Quantized``, ``overflow_threshold``, ``scale_from_amax``, ``quantize_unscaled``, ``quantize_tensorwise``, ``quantize_rowwise``, ``emax_elem``, ``MXQuantized``, ``mx_scale_exponent``, ``mx_quantize``, ``torchao_to_mx``, ``compare_with_torchao``, ``error_metrics``, ``quantize``, ``strategy_table``, ``mx_mode_table``, ``strategy_summary``, ``sqnr_by_strategy``, ``inject_outlier``, ``outlier_sensitivity``, ``outlier_channels``, ``outlier_channel_table``, ``DelayedScaler``, ``spike_stream``, ``delayed_scaling_run``, ``overflow_windows``, ``plot_delayed_scaling``, ``plot_sqnr``, ``sqnr_prediction_db``, ``tiled_columns``, ``outlier_channel_blocks``, ``rounding_noise_sqnr_db``, ``double_quantization_table``, ``rowwise_scale_rule_table``;
* NVFP4 (``nvfp4``): ``nvfp4_tensor_scale``, ``NVFP4Quantized``, ``nvfp4_quantize``, ``torchao_nvfp4``, ``block_amax_error``, ``fp4_block_comparison``, ``gaussian_blocks``, ``scale_floor_comparison``, ``wide_range_blocks``, ``fp4_ablation``, ``fp4_values``, ``stochastic_round_fp4``, ``rounding_bias_study``;
* fine-grained scaling and accumulation (``fine_grained``): ``quantize_tiles``, ``tile_vs_tensor``, ``outlier_tensor``, ``round_significand``, ``limited_precision_matmul``, ``fp8_codes``, ``gemm_operands``, ``accumulator_rounding``, ``accumulation_study``, ``rounding_study``, ``promotion_gain``;
* scaled matmul (``gemm``): ``fp8_gemm_support``, ``rowwise_scaled_mm_supported``, ``fp8_gemm_plan``, ``fp8_device``, ``gemm_size``, ``public_scaled_mm_available``, ``quantize_operand``, ``scaled_mm``, ``operands``, ``rel_error``, ``gemm_error_table``, ``operand_rounding_error_ratio``, ``check_scale_convention``, ``throughput_table``, ``fast_accum_comparison``, ``fast_accum_speed``, ``accumulation_knobs``, ``scaled_mm_recipe_table``;
* float8 training (``float8_training``): ``pattern_batches``, ``float8_config``, ``this_machine_plan``, ``cast_float8_inputs_for_cpu_autocast``, ``convert``, ``linear_layer``, ``build_model``, ``train_curves``, ``curve_summary``, ``plot_curves``, ``float8_modules``, ``fp8_gemms_per_layer``, ``recipe_config_table``, ``fsdp_float8_all_gather_support``, ``mx_training_config``, ``convert_mx``, ``mx_override_drops_bias``, ``mx_linear_bias_errors``, ``mx_modules``, ``converted_linears``, ``scaled_mm_calls``, ``linear_layers``, ``mx_training_unsupported``, ``available_recipes``;
* memory (``memory``): ``memory_table``, ``saved_for_backward``;
* Transformer Engine (``transformer_engine``): ``recipe_table``, ``autocast_table``, ``installed_recipe_defaults``, ``te_linear_check``;
* scale conventions (``conventions``): ``classify``, ``scale_convention_table``, ``te_scale_conventions``.
"""

from amp_docs_lib.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    # element formats
    "formats": ("element_format", "max_finite", "all_codes", "code_summary", "counts_from_definition", "code_summary_disagreements", "positive_values", "positive_values_from_definition", "plot_codes", "cast", "encode_tensor", "cast_comparison", "casts_agree_in_range", "binades", "relative_error_curve", "relative_error_envelope", "plot_relative_error", "dynamic_range_table", "plot_range", "ml_dtypes_type", "fnuz_cast_table", "fnuz_casts_agree",),
    # tensors of the GPT
    "capture": ("capture_tensors", "select",),
    # scaling recipes
    "scaling": ("Quantized", "overflow_threshold", "scale_from_amax", "quantize_unscaled", "quantize_tensorwise", "quantize_rowwise", "emax_elem", "MXQuantized", "mx_scale_exponent", "mx_quantize", "torchao_to_mx", "compare_with_torchao", "error_metrics", "quantize", "strategy_table", "mx_mode_table", "strategy_summary", "sqnr_by_strategy", "inject_outlier", "outlier_sensitivity", "outlier_channels", "outlier_channel_table", "DelayedScaler", "spike_stream", "delayed_scaling_run", "overflow_windows", "plot_delayed_scaling", "plot_sqnr", "sqnr_prediction_db", "tiled_columns", "outlier_channel_blocks", "rounding_noise_sqnr_db", "double_quantization_table", "rowwise_scale_rule_table",),
    # NVFP4
    "nvfp4": ("nvfp4_tensor_scale", "NVFP4Quantized", "nvfp4_quantize", "torchao_nvfp4", "block_amax_error", "fp4_block_comparison", "gaussian_blocks", "scale_floor_comparison", "wide_range_blocks", "fp4_ablation", "fp4_values", "stochastic_round_fp4", "rounding_bias_study",),
    # fine-grained scaling and accumulation
    "fine_grained": ("quantize_tiles", "tile_vs_tensor", "outlier_tensor", "round_significand", "limited_precision_matmul", "fp8_codes", "gemm_operands", "accumulator_rounding", "accumulation_study", "rounding_study", "promotion_gain",),
    # scaled matmul
    "gemm": ("fp8_gemm_support", "rowwise_scaled_mm_supported", "fp8_gemm_plan", "fp8_device", "gemm_size", "public_scaled_mm_available", "quantize_operand", "scaled_mm", "operands", "rel_error", "gemm_error_table", "operand_rounding_error_ratio", "check_scale_convention", "throughput_table", "fast_accum_comparison", "fast_accum_speed", "accumulation_knobs", "scaled_mm_recipe_table",),
    # float8 training
    "float8_training": ("pattern_batches", "float8_config", "this_machine_plan", "cast_float8_inputs_for_cpu_autocast", "convert", "linear_layer", "build_model", "train_curves", "curve_summary", "plot_curves", "float8_modules", "fp8_gemms_per_layer", "recipe_config_table", "fsdp_float8_all_gather_support", "mx_training_config", "convert_mx", "mx_override_drops_bias", "mx_linear_bias_errors", "mx_modules", "converted_linears", "scaled_mm_calls", "linear_layers", "mx_training_unsupported", "available_recipes",),
    # memory
    "memory": ("memory_table", "saved_for_backward",),
    # Transformer Engine
    "transformer_engine": ("recipe_table", "autocast_table", "installed_recipe_defaults", "te_linear_check",),
    # scale conventions
    "conventions": ("classify", "scale_convention_table", "te_scale_conventions",),
})
