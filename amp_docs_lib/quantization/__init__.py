"""Quantization for inference: affine quantization, calibration, torchao PTQ and QAT, ONNX Runtime, results.

Exports, grouped by role (imported from their modules on first use, so importing one
module never imports the others):

* affine quantization (``affine``): ``check_bits``, ``check_granularity``, ``check_scheme``, ``quant_range``, ``block_size``, ``QParams``, ``choose_qparams``, ``quantize``, ``dequantize``, ``fake_quantize``, ``sqnr_db``, ``scale_overhead_bits``, ``roundtrip_table``, ``sqnr_per_bit``, ``inject_outlier_channel``, ``granularity_table``, ``plot_grid``, ``compare_with_torchao``;
* calibration (``calibration``): ``check_method``, ``range_qparams``, ``fake_quantize_range``, ``calibrate``, ``mse_curve``, ``capture_linears``, ``linear_inputs``, ``with_quantized_inputs``, ``corrupt_calibration``, ``calibration_table``, ``calibration_size_table``, ``plot_calibration``;
* the digits task (``task``): ``DigitsData``, ``load_digits_split``, ``make_mlp``, ``single_thread``, ``train``, ``accuracy``, ``DigitsTask``, ``trained_task``, ``state_dict_bytes``;
* post-training quantization (``ptq``): ``Variant``, ``unmet_requirement``, ``check_variant``, ``quantize_copy``, ``quantize_variant``, ``try_variant``, ``variant_status``, ``intx_opaque_status``, ``weight_storage``, ``layer_outputs``, ``linear_names``, ``layer_sqnr_table``, ``keep_fp32_table``, ``metadata_bits_per_weight``, ``gpu_table``;
* quantization-aware training (``qat``): ``qat_model``, ``paired``, ``qat_table``;
* static activation quantization (``static``): ``static_config``, ``static_quantize``, ``static_table``;
* activation outliers and SmoothQuant (``outliers``): ``with_activation_outlier``, ``channel_absmax``, ``smoothquant_copy``, ``outlier_table``;
* saving and reloading (``serialization``): ``save_reload``, ``compare_outputs``, ``save_reload_check``, ``load_without_assign``;
* what really runs (dispatch traces) (``kernels``): ``forward_trace``, ``describe``, ``kernel_table``, ``cpu_int8_path``, ``int8_path_probe``, ``int8_path_probe_capped``, ``da8w4_cpu_kernel``;
* where quantization is faster (``speed``): ``baseline_for``, ``torch_ao_dynamic``, ``linear_variants``, ``weight_bytes``, ``weight_code_bytes``, ``batch_sweep``, ``packed_int4_cpu``, ``crossovers``, ``aa_summary``, ``plot_batch_sweep``, ``compiled_comparison``;
* results over seeds (``seeds``): ``seed_accuracies``, ``seed_summary``;
* ONNX Runtime (``onnx_runtime``): ``export_onnx``, ``DigitsCalibrationReader``, ``preprocess``, ``quantize_onnx_dynamic``, ``quantize_onnx_static``, ``session``, ``predict``, ``op_counts``, ``optimized_op_counts``, ``cpu_flags``, ``cpu_int8_features``, ``saturation_table``, ``file_size``;
* results (``results``): ``results_table``, ``summary``, ``decision_table``, ``withhold_verdicts``;
* what the APIs say (``apis``): ``torch_ao_warnings``, ``announced_removal``, ``torchao_api_table``.
"""

from amp_docs_lib.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    # affine quantization
    "affine": ("check_bits", "check_granularity", "check_scheme", "quant_range", "block_size", "QParams", "choose_qparams", "quantize", "dequantize", "fake_quantize", "sqnr_db", "scale_overhead_bits", "roundtrip_table", "sqnr_per_bit", "inject_outlier_channel", "granularity_table", "plot_grid", "compare_with_torchao",),
    # calibration
    "calibration": ("check_method", "range_qparams", "fake_quantize_range", "calibrate", "mse_curve", "capture_linears", "linear_inputs", "with_quantized_inputs", "corrupt_calibration", "calibration_table", "calibration_size_table", "plot_calibration",),
    # the digits task
    "task": ("DigitsData", "load_digits_split", "make_mlp", "single_thread", "train", "accuracy", "DigitsTask", "trained_task", "state_dict_bytes",),
    # post-training quantization
    "ptq": ("Variant", "unmet_requirement", "check_variant", "quantize_copy", "quantize_variant", "try_variant", "variant_status", "intx_opaque_status", "weight_storage", "layer_outputs", "linear_names", "layer_sqnr_table", "keep_fp32_table", "metadata_bits_per_weight", "gpu_table",),
    # quantization-aware training
    "qat": ("qat_model", "paired", "qat_table",),
    # static activation quantization
    "static": ("static_config", "static_quantize", "static_table",),
    # activation outliers and SmoothQuant
    "outliers": ("with_activation_outlier", "channel_absmax", "smoothquant_copy", "outlier_table",),
    # saving and reloading
    "serialization": ("save_reload", "compare_outputs", "save_reload_check", "load_without_assign",),
    # what really runs (dispatch traces)
    "kernels": ("forward_trace", "describe", "kernel_table", "cpu_int8_path", "int8_path_probe", "int8_path_probe_capped", "da8w4_cpu_kernel",),
    # where quantization is faster
    "speed": ("baseline_for", "torch_ao_dynamic", "linear_variants", "weight_bytes", "weight_code_bytes", "batch_sweep", "packed_int4_cpu", "crossovers", "aa_summary", "plot_batch_sweep", "compiled_comparison",),
    # results over seeds
    "seeds": ("seed_accuracies", "seed_summary",),
    # ONNX Runtime
    "onnx_runtime": ("export_onnx", "DigitsCalibrationReader", "preprocess", "quantize_onnx_dynamic", "quantize_onnx_static", "session", "predict", "op_counts", "optimized_op_counts", "cpu_flags", "cpu_int8_features", "saturation_table", "file_size",),
    # results
    "results": ("results_table", "summary", "decision_table", "withhold_verdicts",),
    # what the APIs say
    "apis": ("torch_ao_warnings", "announced_removal", "torchao_api_table",),
})
