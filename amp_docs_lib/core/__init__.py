"""The foundation: where things live, what this machine is, which packages matter, how table data looks.

Exports, by role (each imported from its module on first use, so importing one module never
imports the others); everything else, the chapters' page builders included, is imported from its
module (``from amp_docs_lib.core.<module> import <name>``):

* problem sizes: (``profiles``) ``Profile``, ``get_profile``, ``active_profile``;
* devices: (``devices``) ``available_devices``, ``default_device``, ``is_out_of_memory``;
* what this machine is: (``machine``) ``cpu_native_matmul``; (``env``) ``environment_report``, ``format_report``;
* timing and its statistics: (``timing``) ``Timing``, ``measure``, ``interleaved``; (``stats``) ``median_ci``;
* the operators a call dispatches: (``dispatch``) ``trace_ops``;
* colours: (``palette``) ``color_of``.
"""

from amp_docs_lib.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "problem sizes": {
            "profiles": (
                "Profile",
                "get_profile",
                "active_profile",
            ),
        },
        "devices": {
            "devices": (
                "available_devices",
                "default_device",
                "is_out_of_memory",
            ),
        },
        "what this machine is": {
            "machine": ("cpu_native_matmul",),
            "env": (
                "environment_report",
                "format_report",
            ),
        },
        "timing and its statistics": {
            "timing": (
                "Timing",
                "measure",
                "interleaved",
            ),
            "stats": ("median_ci",),
        },
        "the operators a call dispatches": {
            "dispatch": ("trace_ops",),
        },
        "colours": {
            "palette": ("color_of",),
        },
    },
)
