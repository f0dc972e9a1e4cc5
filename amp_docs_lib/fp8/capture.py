"""Real tensors to quantize: activations, weights and gradients captured from the library's GPT.

A few FP32 training steps of :class:`amp_docs_lib.gpt.GPT` on seeded random tokens, then one
more forward and backward pass with hooks on every ``nn.Linear``: its input (the activation an
FP8 GEMM would quantize), its weight, and the gradient flowing back into its output (what the
backward GEMMs quantize).
"""

from __future__ import annotations

import torch
from torch import nn

from amp_docs_lib.core.devices import check_device, default_device
from amp_docs_lib.gpt import GPT, GPTConfig, random_batch
from amp_docs_lib.core.profiles import active_profile

KINDS = ("activation", "weight", "gradient")


def capture_tensors(steps: int | None = None, *, seed: int = 0, lr: float = 3e-3,
                    cfg: GPTConfig | None = None, device: str | torch.device | None = None) -> dict[str, torch.Tensor]:
    """Train the GPT in FP32 for ``steps`` steps, then capture each Linear's input, weight and
    output gradient (as 2-D float32 tensors, last dimension = the GEMM's reduction dimension
    for activations and weights).

    Keys are ``"<kind>:<module name>"`` with kind in :data:`KINDS`.
    ``steps`` defaults to the profile's ``fp8_capture_steps``; the model runs on ``device``
    (default: the default device) and the tensors are returned on the CPU.
    """
    dev = check_device(device or default_device())
    steps = active_profile()["fp8_capture_steps"] if steps is None else steps
    if not isinstance(steps, int) or steps < 0:
        raise ValueError(f"steps must be a non-negative int, got {steps!r}")
    torch.manual_seed(seed)
    cfg = cfg or GPTConfig.from_profile()
    model = GPT(cfg).to(dev)
    p = active_profile()
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    for s in range(steps):
        x, y = random_batch(cfg, p["gpt_batch"], dev, seed=seed + s)
        _, loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    out: dict[str, torch.Tensor] = {}
    hooks = []
    for name, m in model.named_modules():
        if isinstance(m, nn.Linear) and name != "lm_head":
            def fwd(mod, inp, _out, name=name):
                out[f"activation:{name}"] = inp[0].detach().reshape(-1, inp[0].shape[-1]).clone()
                out[f"weight:{name}"] = mod.weight.detach().clone()

            def bwd(mod, grad_in, grad_out, name=name):
                g = grad_out[0]
                out[f"gradient:{name}"] = g.detach().reshape(-1, g.shape[-1]).clone()
            hooks += [m.register_forward_hook(fwd), m.register_full_backward_hook(bwd)]
    x, y = random_batch(cfg, p["gpt_batch"], dev, seed=seed + steps)
    _, loss = model(x, y)
    loss.backward()
    for h in hooks:
        h.remove()
    return {k: v.cpu() for k, v in sorted(out.items())}


def select(tensors: dict[str, torch.Tensor], kind: str) -> dict[str, torch.Tensor]:
    """The captured tensors of one kind ("activation", "weight" or "gradient")."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; valid: {list(KINDS)}")
    return {k: v for k, v in tensors.items() if k.startswith(kind + ":")}
