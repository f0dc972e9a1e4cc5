"""Distributed mixed precision, executed with real ``torch.distributed`` processes.

Laid out by workflow:

- :mod:`~amp_docs_lib.distributed.launch`: start K processes with ``torch.multiprocessing``
  (gloo on CPU, NCCL on CUDA), a free port, timeouts, results gathered to the parent.
- :mod:`~amp_docs_lib.distributed.comm_log`: record the dtype and size of every collective
  FSDP2 and DDP comm hooks issue.
- :mod:`~amp_docs_lib.distributed.fsdp_probe`: FSDP2 ``fully_shard`` with a
  ``MixedPrecisionPolicy``: dtypes and shapes of every tensor, per rank.
- :mod:`~amp_docs_lib.distributed.ddp_compare`: DDP with and without the BF16 compression hook.
- :mod:`~amp_docs_lib.distributed.memory`: per-rank bytes and communication volume under
  DDP, ZeRO-1/2/3 and FSDP for FP32, AMP and pure BF16.
"""
