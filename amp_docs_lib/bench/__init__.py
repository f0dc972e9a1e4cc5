"""Performance measured correctly: the one timing harness, matmul throughput, peaks, model sweeps, memory.

Exports, grouped by role (imported from their modules on first use, so importing one
module never imports the others):

* matmul throughput (``matmul``): ``matmul_flops``, ``dtype_supported``, ``tf32_matmuls``, ``matmul_fn``, ``time_matmul``, ``ONEDNN_FP32``, ``onednn_fp32_matmul_fn``, ``time_onednn_fp32_matmul``, ``throughput_sweep``, ``best_per_dtype``, ``alignment_sweep``, ``dtype_comparison``;
* load check (``load``): ``machine_cores``, ``timing_threads``, ``load_average``, ``runnable_tasks``, ``runnable_samples``, ``reference_blocks``, ``LoadCheck``;
* datasheet peaks (``peaks``): ``datasheet_table``, ``match_gpu``, ``cpu_lanes_fp32``, ``cpu_clock_ghz``, ``cpu_max_clock_ghz``, ``cpu_vendor``, ``physical_cores_reported``, ``CpuPeak``, ``cpu_peak``, ``cpu_peak_table``, ``device_peaks``, ``peak_fraction``, ``ABOVE_PEAK``, ``gpu_clock_state``;
* roofline (``roofline``): ``matmul_intensity``, ``attainable_tflops``, ``measured_intensity``, ``copy_bandwidth``, ``plot_roofline``;
* model sweeps (``model_sweep``): ``ladder_configs``, ``sweep_precisions``, ``step_fn``, ``step_flops``, ``step_plan_bytes``, ``sweep``, ``memory_note``, ``speedup_summary``, ``speedup_trend``, ``plot_speedup``, ``mfu_table``;
* training memory (``memory``): ``count_parameters``, ``activation_elements``, ``estimate``, ``plan_bytes``, ``MemoryPlan``, ``memory_plan``, ``calculator_table``, ``measure_step``, ``planned_largest_batch``, ``search_largest``, ``largest_batch``, ``comparison_table``;
* timing mistakes (``mistakes``): ``naive_seconds``, ``thread_count``, ``first_call``, ``fp32_warmup``, ``tiny_op_autocast``, ``autocast_cast_counts``, ``cache_flush``, ``last_level_cache_bytes``, ``no_sync``;
* torch.compile (``compiled``): ``top_ops``, ``compile_comparison``;
* CUDA graphs (``cuda_graphs``): ``GRAPHABLE``, ``EAGER_STEPS``, ``eager_steps``, ``graphed_step``, ``eager_and_graphed``, ``comparison_rows``, ``graph_comparison``;
* tile and wave quantization (``waves``): ``GUIDE_EXAMPLE_SMS``, ``GUIDE_TILE``, ``GUIDE_SOURCE``, ``tiles``, ``wave_model``, ``wave_table``, ``boundary_ns``, ``wave_comparison``, ``wave_sweep``;
* harness fidelity (``fidelity``): ``fidelity``;
* amp-docs bench (``suites``): ``parse_suites``, ``records``, ``run_suite``;
* amp-docs report (``report``): ``datasheet_peak``, ``Report``, ``matmul_throughput``, ``feature_table``, ``torchao_config_rows``, ``autocast_differences``, ``collect``.
"""

from amp_docs_lib.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    # matmul throughput
    "matmul": ("matmul_flops", "dtype_supported", "tf32_matmuls", "matmul_fn", "time_matmul", "ONEDNN_FP32", "onednn_fp32_matmul_fn", "time_onednn_fp32_matmul", "throughput_sweep", "best_per_dtype", "alignment_sweep", "dtype_comparison",),
    # load check
    "load": ("machine_cores", "timing_threads", "load_average", "runnable_tasks", "runnable_samples", "reference_blocks", "LoadCheck",),
    # datasheet peaks
    "peaks": ("datasheet_table", "match_gpu", "cpu_lanes_fp32", "cpu_clock_ghz", "cpu_max_clock_ghz", "cpu_vendor", "physical_cores_reported", "CpuPeak", "cpu_peak", "cpu_peak_table", "device_peaks", "peak_fraction", "ABOVE_PEAK", "gpu_clock_state",),
    # roofline
    "roofline": ("matmul_intensity", "attainable_tflops", "measured_intensity", "copy_bandwidth", "plot_roofline",),
    # model sweeps
    "model_sweep": ("ladder_configs", "sweep_precisions", "step_fn", "step_flops", "step_plan_bytes", "sweep", "memory_note", "speedup_summary", "speedup_trend", "plot_speedup", "mfu_table",),
    # training memory
    "memory": ("count_parameters", "activation_elements", "estimate", "plan_bytes", "MemoryPlan", "memory_plan", "calculator_table", "measure_step", "planned_largest_batch", "search_largest", "largest_batch", "comparison_table",),
    # timing mistakes
    "mistakes": ("naive_seconds", "thread_count", "first_call", "fp32_warmup", "tiny_op_autocast", "autocast_cast_counts", "cache_flush", "last_level_cache_bytes", "no_sync",),
    # torch.compile
    "compiled": ("top_ops", "compile_comparison",),
    # CUDA graphs
    "cuda_graphs": ("GRAPHABLE", "EAGER_STEPS", "eager_steps", "graphed_step", "eager_and_graphed", "comparison_rows", "graph_comparison",),
    # tile and wave quantization
    "waves": ("GUIDE_EXAMPLE_SMS", "GUIDE_TILE", "GUIDE_SOURCE", "tiles", "wave_model", "wave_table", "boundary_ns", "wave_comparison", "wave_sweep",),
    # harness fidelity
    "fidelity": ("fidelity",),
    # amp-docs bench
    "suites": ("parse_suites", "records", "run_suite",),
    # amp-docs report
    "report": ("datasheet_peak", "Report", "matmul_throughput", "feature_table", "torchao_config_rows", "autocast_differences", "collect",),
})
