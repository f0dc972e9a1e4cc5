"""The CUDA branches of the chapters, run on the CPU as far as they can be (``-m gpu_readiness``).

Each test takes the part of a chapter's CUDA path that does not need a GPU (byte accounting on the
``meta`` device, which allocates nothing; the choices a chapter makes from the device it finds) and
checks it where CI runs: on a CPU.
"""

import pytest
import torch

from amp_docs_lib.regimes.loop import _state_tensors, held_bytes

pytestmark = pytest.mark.gpu_readiness


def _one_adamw_step(device: str):
    model = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.Linear(32, 10)).to(device)
    params = list(model.parameters())
    opt = torch.optim.AdamW(params, foreach=False)  # what regimes.optimizers.make_optimizer builds
    for p in params:
        p.grad = torch.zeros_like(p)
    opt.step()
    return params, opt


def test_allocator_count_leaves_out_the_optimizers_cpu_step_counters():
    """On a GPU, AdamW(foreach=False) keeps each parameter's ``step`` on the CPU; the CUDA allocator
    never holds it, so the count the training-regimes chapter compares with the allocator's record
    must leave it out (it counted 512 B per parameter tensor: 26,624 B for the gpu-full GPT)."""
    params, opt = _one_adamw_step("meta")  # the meta device stands in for CUDA: same placement rules
    assert {str(opt.state[p]["step"].device) for p in params} == {"cpu"}
    # parameter, gradient and two moments per parameter tensor, each in 512-byte CUDA blocks
    expected = sum(4 * (-(-p.numel() * p.element_size() // 512) * 512) for p in params)
    assert held_bytes(_state_tensors(params, opt), torch.device("meta"), 512) == expected


def test_allocator_count_on_the_cpu_keeps_the_step_counters():
    params, opt = _one_adamw_step("cpu")
    expected = sum(4 * p.numel() * p.element_size() for p in params) + sum(
        opt.state[p]["step"].untyped_storage().nbytes() for p in params)
    assert held_bytes(_state_tensors(params, opt), torch.device("cpu")) == expected


def test_views_share_one_storage():
    t = torch.zeros(256, device="meta")
    assert held_bytes([t, t[:10], t.view(16, 16)], torch.device("meta"), 512) == 1024


@pytest.mark.parametrize("gpus, plan", [(0, ("gloo", 2)), (1, ("gloo", 2)), (2, ("nccl", 2)), (8, ("nccl", 2))])
def test_distributed_probes_always_have_two_ranks(gpus, plan):
    """One H100 gave one NCCL rank: no inf planted on rank 1, a BF16 reduction error of 0, and the
    chapter's claims failed. The probes run as two ranks on every machine."""
    from amp_docs_lib.distributed.launch import launch_plan

    assert launch_plan(gpus) == plan

