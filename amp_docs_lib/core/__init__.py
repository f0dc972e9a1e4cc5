"""The foundation: where things live, what this machine is, which packages matter, how table data looks.

Exports, grouped by role (imported from their modules on first use, so importing one
module never imports the others):

* the machine, read without torch (``machine``): ``nvidia_gpus_light``, ``cpu_model``, ``cpu_flags``, ``cpu_native_matmul``, ``machine_light``, ``environment_inputs``;
* the packages that matter (``packages``): ``Package``, ``check_known``, ``installed_versions``, ``hidden_packages``, ``is_hidden``, ``HiddenPackageFinder``, ``install_blocker``, ``subprocess_env``;
* the environment report (``env``): ``gpus``, ``cpu_capability``, ``cpu_matmul_support``, ``device_summary``, ``short_device_name``, ``tf32_settings``, ``tf32_summary``, ``package_versions``, ``git_revision``, ``hardware_description``, ``hardware_fingerprint``, ``stamp_fields``, ``environment_report``, ``report_rows``, ``format_report``;
* problem sizes (``profiles``): ``Profile``, ``profile_names``, ``get_profile``, ``default_profile_name``, ``profile_override``, ``active_profile``;
* the ``AMP_DOCS_*`` variables, checked before any work (``settings``): ``SettingError``, ``jobs_override``, ``progress_override``, ``save_reference_requested``, ``load_check_override``, ``build_hidden_packages``, ``cuda_gpu_listed``, ``check_environment``;
* devices (``devices``): ``available_devices``, ``default_device``, ``check_device``, ``is_out_of_memory``;
* argument checks (``checks``): ``positive_int``, ``positive_number``, ``nonempty_tensor``, ``finite_tensor``;
* gated cells (``gating``): ``valid_requirements``, ``describe``, ``requirement_met``, ``requirements_from_tags``, ``unmet_requirements``, ``skip_note_html``;
* chapter sources (``chapters``): ``read_chapter``, ``parse_chapter``, ``chapter_id_for``, ``chapter_path``, ``heading_anchor``, ``headings``, ``chapter_anchors``, ``heading_for_anchor``;
* table data (``tables``): ``table_from_rows``, ``format_cell``, ``na_to_none``;
* package exports (``exports``): ``lazy_exports``;
* the timing harness (``timing``): ``Timing``, ``default_threads``, ``cuda_event_times``, ``measure``, ``timings_frame``, ``Comparison``, ``interleaved``, ``Interleaved``, ``measurements``, ``compare_text``;
* distribution-free statistics (``stats``): ``quartiles``, ``min_values_for``, ``median_ci``, ``sign_test_p``;
* dispatch traces (``dispatch``): ``is_matmul``, ``OpCall``, ``OpTrace``, ``trace_ops``;
* colours (``palette``): ``color_of``, ``css_variables``;
* torch.profiler, quietly (``profiling``): ``quiet_stderr``.
"""

from amp_docs_lib.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        # the machine, read without torch
        "machine": (
            "nvidia_gpus_light",
            "cpu_model",
            "cpu_flags",
            "cpu_native_matmul",
            "machine_light",
            "environment_inputs",
        ),
        # the packages that matter
        "packages": (
            "Package",
            "check_known",
            "installed_versions",
            "hidden_packages",
            "is_hidden",
            "HiddenPackageFinder",
            "install_blocker",
            "subprocess_env",
        ),
        # the environment report
        "env": (
            "gpus",
            "cpu_capability",
            "cpu_matmul_support",
            "device_summary",
            "short_device_name",
            "tf32_settings",
            "tf32_summary",
            "package_versions",
            "git_revision",
            "hardware_description",
            "hardware_fingerprint",
            "stamp_fields",
            "environment_report",
            "report_rows",
            "format_report",
        ),
        # problem sizes
        "profiles": (
            "Profile",
            "profile_names",
            "get_profile",
            "default_profile_name",
            "profile_override",
            "active_profile",
        ),
        # the AMP_DOCS_* variables, checked before any work
        "settings": (
            "SettingError",
            "jobs_override",
            "progress_override",
            "save_reference_requested",
            "load_check_override",
            "build_hidden_packages",
            "cuda_gpu_listed",
            "check_environment",
        ),
        # devices
        "devices": (
            "available_devices",
            "default_device",
            "check_device",
            "is_out_of_memory",
        ),
        # argument checks
        "checks": (
            "positive_int",
            "positive_number",
            "nonempty_tensor",
            "finite_tensor",
        ),
        # gated cells
        "gating": (
            "valid_requirements",
            "describe",
            "requirement_met",
            "requirements_from_tags",
            "unmet_requirements",
            "skip_note_html",
        ),
        # chapter sources
        "chapters": (
            "read_chapter",
            "parse_chapter",
            "chapter_id_for",
            "chapter_path",
            "heading_anchor",
            "headings",
            "chapter_anchors",
            "heading_for_anchor",
        ),
        # table data
        "tables": (
            "table_from_rows",
            "format_cell",
            "na_to_none",
        ),
        # package exports
        "exports": ("lazy_exports",),
        # the timing harness
        "timing": (
            "Timing",
            "default_threads",
            "cuda_event_times",
            "measure",
            "timings_frame",
            "Comparison",
            "interleaved",
            "Interleaved",
            "measurements",
            "compare_text",
        ),
        # distribution-free statistics
        "stats": (
            "quartiles",
            "min_values_for",
            "median_ci",
            "sign_test_p",
        ),
        # dispatch traces
        "dispatch": (
            "is_matmul",
            "OpCall",
            "OpTrace",
            "trace_ops",
        ),
        # colours
        "palette": (
            "color_of",
            "css_variables",
        ),
        # torch.profiler, quietly
        "profiling": ("quiet_stderr",),
    },
)
