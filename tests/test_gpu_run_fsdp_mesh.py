"""The H100 build (2026-11-25) failed in the Distributed chapter: on a one-GPU machine the ranks run on the CPU
under gloo, and ``fully_shard`` without a mesh builds its default mesh on CUDA whenever CUDA is available, so the
parameters went to cuda:0 while the batch stayed on the CPU. Every ``fully_shard`` call of the package now names
the worker's mesh; the mesh follows the worker's device."""

import ast
from pathlib import Path

import pytest

import amp_docs_lib.distributed as dist_pkg
from amp_docs_lib.distributed import launch


def _fully_shard_calls():
    for path in sorted(Path(dist_pkg.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", getattr(node.func, "attr", None)) == "fully_shard"
            ):
                yield f"{path.name}:{node.lineno}", {k.arg for k in node.keywords}


def test_every_fully_shard_call_names_the_workers_mesh():
    calls = list(_fully_shard_calls())
    assert len(calls) >= 7  # fsdp, accumulation, norm/softmax and loss-scaling workers
    assert [where for where, kw in calls if "mesh" not in kw] == []


def test_worker_mesh_is_on_the_workers_device_type():
    import torch
    import torch.distributed as dist

    if not dist.is_available():
        pytest.skip("torch.distributed is not built in")
    dist.init_process_group("gloo", rank=0, world_size=1, store=dist.HashStore())
    try:
        mesh = launch.worker_mesh(torch.device("cpu"), 1)
        assert (mesh.device_type, mesh.size()) == ("cpu", 1)
    finally:
        dist.destroy_process_group()
