"""Start K real ``torch.distributed`` processes and gather what each rank reports.

``run_workers(worker, world_size)`` spawns ``world_size`` processes with
``torch.multiprocessing`` (start method ``spawn``), initialises a process group
(NCCL on two GPUs, else gloo on the CPU: ``launch_plan``) on a free port of 127.0.0.1, calls
``worker(rank, world_size, device, **kwargs)`` in each, and returns the rows every
rank returned as one ``pandas.DataFrame`` with a ``rank`` column. A process that
raises makes the parent raise; a process group that hangs fails after
``timeout_s`` instead of waiting forever.
"""

from __future__ import annotations

import os
import pickle
import socket
import sys
import tempfile
import time
import traceback
from datetime import timedelta
from pathlib import Path
from typing import Any, Callable

import pandas as pd
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

BACKENDS = ("gloo", "nccl")


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on ``host`` now (bind to port 0 and let the OS choose)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


RANKS = 2  # the probes need two: one rank reduces nothing (no inf from another rank, no rounding of a sum)


def launch_plan(cuda_devices: int) -> tuple[str, int]:
    """Backend and world size for ``cuda_devices`` GPUs: NCCL, one rank per GPU, where there are two
    GPUs; otherwise two gloo processes on the CPU (one GPU would give one rank, and nothing to reduce)."""
    if not isinstance(cuda_devices, int) or cuda_devices < 0:
        raise ValueError(f"cuda_devices must be a count of GPUs (an int >= 0), got {cuda_devices!r}")
    return ("nccl", RANKS) if cuda_devices >= RANKS else ("gloo", RANKS)


def _cuda_devices() -> int:
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def default_backend() -> str:
    """``"nccl"`` on a machine with two or more GPUs, else ``"gloo"`` (see ``launch_plan``)."""
    return launch_plan(_cuda_devices())[0]


def worker_mesh(device: torch.device, world_size: int):
    """The 1-D device mesh of a worker's ranks on ``device``'s type, for ``fully_shard(mesh=...)``.

    Without one, FSDP2 builds its default mesh on CUDA whenever CUDA is available
    (``torch/distributed/fsdp/_fully_shard/_fsdp_init.py``, ``_init_default_fully_shard_mesh``): on a
    one-GPU machine, whose ranks run on the CPU under gloo, it moved the parameters to cuda:0 while the
    batch stayed on the CPU (the H100 build of 2026-11-25)."""
    from torch.distributed.device_mesh import init_device_mesh

    return init_device_mesh(device.type, (world_size,))


def default_world_size() -> int:
    """Two processes: one per GPU on two GPUs, two CPU processes otherwise (see ``launch_plan``)."""
    return launch_plan(_cuda_devices())[1]


def _entry(rank: int, world_size: int, port: int, backend: str, timeout_s: float, out_dir: str,
           worker: Callable[..., list[dict[str, Any]]], kwargs: dict[str, Any]) -> None:
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    if backend == "gloo":
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")  # stay on the loopback interface
    torch.set_num_threads(1)  # K processes share the cores; avoid oversubscription
    if backend == "nccl":
        torch.cuda.set_device(rank % torch.cuda.device_count())
        device = torch.device("cuda", torch.cuda.current_device())
    else:
        device = torch.device("cpu")
    dist.init_process_group(backend, rank=rank, world_size=world_size,
                            timeout=timedelta(seconds=timeout_s))
    try:
        try:
            rows = worker(rank, world_size, device, **kwargs)
        except BaseException:
            # Keep this rank's own error: the other ranks then fail with "connection closed",
            # which hides the cause if it is the first error the parent sees.
            (Path(out_dir) / f"rank{rank}.err").write_text(traceback.format_exc())
            raise
        for r in rows:
            r.setdefault("rank", rank)
        # Results are on disk (renamed into place whole) before the barrier, so once any rank has
        # passed it every rank's rows are complete, whatever happens to the processes afterwards.
        tmp = Path(out_dir) / f"rank{rank}.pkl.tmp"
        with open(tmp, "wb") as f:
            pickle.dump(rows, f)
        tmp.rename(Path(out_dir) / f"rank{rank}.pkl")
        dist.barrier()
    finally:
        dist.destroy_process_group()
    # Skip interpreter finalization: gloo's worker threads can abort a process as it is torn
    # down ("terminate called without an active exception", SIGABRT), after all work is done.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _results_complete(out_dir: str, world_size: int) -> bool:
    """Every rank's rows are on disk, written before the final barrier (see ``_entry``)."""
    return all((Path(out_dir) / f"rank{r}.pkl").exists() for r in range(world_size))


def _join(ctx: Any, out_dir: str) -> bool:
    """``ctx.join(1 s)``, but a failure is re-raised with the workers' own tracebacks."""
    try:
        return ctx.join(timeout=1.0)
    except mp.ProcessExitedException as e:
        # A rank killed by a signal after every rank wrote its rows died in teardown (gloo can
        # abort there); the results are whole, so they stand. Killed earlier, it is a failure.
        if e.signal_name is not None and _results_complete(out_dir, len(ctx.processes)):
            for p in ctx.processes:
                p.join(timeout=30.0)
            return True
        return _raise_with_worker_errors(e, out_dir)
    except mp.ProcessRaisedException as e:
        return _raise_with_worker_errors(e, out_dir)


def _raise_with_worker_errors(e: Exception, out_dir: str) -> bool:
    """Re-raise ``e`` with the workers' own tracebacks where they left them."""
    errs = sorted(Path(out_dir).glob("rank*.err"))
    if not errs:
        raise e
    msg = "\n".join(f"--- {p.stem}:\n{p.read_text()}" for p in errs)
    raise RuntimeError(f"distributed worker failed:\n{msg}") from e


def run_workers(worker: Callable[..., list[dict[str, Any]]], world_size: int | None = None, *,
                backend: str | None = None, timeout_s: float = 120.0, **kwargs: Any) -> pd.DataFrame:
    """Run ``worker(rank, world_size, device, **kwargs)`` in ``world_size`` real processes.

    Args:
        worker: a module-level function (it is pickled by name into each process) that
            returns a list of dicts, one per reported row.
        world_size: number of processes; default :func:`default_world_size`.
        backend: ``"gloo"`` or ``"nccl"``; default :func:`default_backend`.
        timeout_s: process-group timeout and overall deadline; a hung collective or
            process raises instead of waiting forever.
        **kwargs: passed to ``worker``.

    Returns:
        All ranks' rows, with a ``rank`` column, sorted by rank (row order kept within a rank).

    Raises:
        TypeError: ``worker`` is not callable or ``world_size`` not an int.
        ValueError: bad ``world_size`` or ``backend`` (the message lists the valid ones).
        TimeoutError: the processes did not finish within ``timeout_s``.
        RuntimeError: a rank's worker raised; the message holds that rank's traceback (the
            worker's own error, not the "connection closed" its peers then report).
    """
    if not callable(worker):
        raise TypeError(f"worker must be a module-level function, got {type(worker).__name__}")
    world_size = default_world_size() if world_size is None else world_size
    if not isinstance(world_size, int) or isinstance(world_size, bool):
        raise TypeError(f"world_size must be an int, got {type(world_size).__name__}")
    if world_size < 1:
        raise ValueError(f"world_size must be >= 1, got {world_size}")
    backend = default_backend() if backend is None else backend
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; valid backends: {list(BACKENDS)}")
    if backend == "nccl":
        if not torch.cuda.is_available():
            raise ValueError("backend 'nccl' needs CUDA, which is not available here; use 'gloo'")
    with tempfile.TemporaryDirectory(prefix="amp-docs-dist-") as out_dir:
        ctx = mp.start_processes(_entry, args=(world_size, free_port(), backend, timeout_s, out_dir,
                                               worker, kwargs),
                                 nprocs=world_size, join=False, start_method="spawn")
        deadline = time.monotonic() + timeout_s + 30.0  # process-group timeout fires first
        while not _join(ctx, out_dir):
            if time.monotonic() > deadline:
                for p in ctx.processes:
                    if p.is_alive():
                        p.terminate()
                raise TimeoutError(f"{world_size} {backend} processes did not finish within "
                                   f"{timeout_s + 30:.0f} s; terminated them")
        rows: list[dict[str, Any]] = []
        for rank in range(world_size):
            with open(Path(out_dir) / f"rank{rank}.pkl", "rb") as f:
                rows.extend(pickle.load(f))
    df = pd.DataFrame(rows)
    cols = ["rank"] + [c for c in df.columns if c != "rank"]
    return df[cols]
