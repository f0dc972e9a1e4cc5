"""Distributed mixed precision: real multi-process runs, FSDP2 and DDP probes, memory and communication.

Exports, grouped by role (imported from their modules on first use, so importing one
module never imports the others):

* launching processes (``launch``): ``free_port``, ``launch_plan``, ``default_backend``, ``default_world_size``, ``run_workers``;
* collective dtypes (``comm_log``): ``log_collectives``;
* FSDP2 probe (``fsdp_probe``): ``make_mlp``, ``fsdp_worker``, ``accumulation_worker``, ``norm_softmax_worker``, ``run_fsdp_probe``, ``summary``;
* DDP (``ddp_compare``): ``distinct_storage_bytes``, ``ddp_worker``, ``run_ddp_compare``, ``run_distributed_probes``;
* memory and communication model (``memory``): ``per_rank_bytes``, ``fsdp_shard_elements``, ``memory_table``, ``comm_per_step``, ``comm_table``;
* loss scaling across ranks (``loss_scaling``): ``scaler_agreement_worker``;
* FSDP1/FSDP2 precision policies as installed (``policies``): ``policy_fields``, ``buffer_fields``, ``attribute_doc``, ``version_note``.
"""

from amp_docs_lib.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    # launching processes
    "launch": ("free_port", "launch_plan", "default_backend", "default_world_size", "run_workers",),
    # collective dtypes
    "comm_log": ("log_collectives",),
    # FSDP2 probe
    "fsdp_probe": ("make_mlp", "fsdp_worker", "accumulation_worker", "norm_softmax_worker", "run_fsdp_probe", "summary",),
    # DDP
    "ddp_compare": ("distinct_storage_bytes", "ddp_worker", "run_ddp_compare", "run_distributed_probes",),
    # memory and communication model
    "memory": ("per_rank_bytes", "fsdp_shard_elements", "memory_table", "comm_per_step", "comm_table",),
    # loss scaling across ranks
    "loss_scaling": ("scaler_agreement_worker",),
    # FSDP1/FSDP2 precision policies as installed
    "policies": ("policy_fields", "buffer_fields", "attribute_doc", "version_note",),
})
