"""Distributed mixed precision: real multi-process runs, FSDP2 and DDP probes, memory and communication.

Exports, by role (each imported from its module on first use, so importing one module never
imports the others); everything else, the chapters' page builders included, is imported from its
module (``from amp_docs_lib.distributed.<module> import <name>``):

* launching processes: (``launch``) ``run_workers``, ``default_backend``, ``default_world_size``;
* collective dtypes: (``comm_log``) ``log_collectives``;
* the FSDP2 probe: (``fsdp_probe``) ``run_fsdp_probe``, ``summary``;
* memory and communication model: (``memory``) ``per_rank_bytes``, ``fsdp_shard_elements``, ``comm_per_step``.
"""

from amp_docs_lib.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "launching processes": {
            "launch": (
                "run_workers",
                "default_backend",
                "default_world_size",
            ),
        },
        "collective dtypes": {
            "comm_log": ("log_collectives",),
        },
        "the FSDP2 probe": {
            "fsdp_probe": (
                "run_fsdp_probe",
                "summary",
            ),
        },
        "memory and communication model": {
            "memory": (
                "per_rank_bytes",
                "fsdp_shard_elements",
                "comm_per_step",
            ),
        },
    },
)
