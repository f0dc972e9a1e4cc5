"""Gradient penalty under AMP: the penalty's gradients come from autograd.grad on the *scaled* loss.

Unscale them by hand (they are not attached to any optimizer, so scaler.unscale_ cannot), compute
the penalty in FP32 under autocast, then scale the total loss as usual.
"""
# Install: pip install amp_docs_lib-*.whl  (the wheel: Downloads bar of any chapter page)
import torch
import torch.nn.functional as F

from amp_docs_lib.core.devices import default_device
from amp_docs_lib.core.profiles import active_profile
from amp_docs_lib.amp.toy_task import make_data, make_model

device = default_device()
x, y = make_data(device=device)
model = make_model().to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
scaler = torch.amp.GradScaler(device)
penalty_weight = 1e-3

for step in range(active_profile()["pattern_steps"]):
    optimizer.zero_grad(set_to_none=True)
    with torch.amp.autocast(device, dtype=torch.float16):
        output = model(x)
        loss = F.cross_entropy(output, y)
    params = list(model.parameters())
    scaled_grads = torch.autograd.grad(scaler.scale(loss), params, create_graph=True)
    inv_scale = 1.0 / scaler.get_scale()
    grads = [g * inv_scale for g in scaled_grads]  # unscaled by hand: true gradients
    with torch.amp.autocast(device, dtype=torch.float16):
        grad_norm = torch.sqrt(sum(g.pow(2).sum() for g in grads))
        penalty = penalty_weight * grad_norm
        total = loss + penalty
    scaler.scale(total).backward()
    scaler.step(optimizer)
    scaler.update()

# What the unscaling buys: the penalty sees the true gradient norm (the FP32 loop's), not the scaled one.
fp32_norm = torch.sqrt(sum(g.pow(2).sum() for g in torch.autograd.grad(F.cross_entropy(model(x), y), params)))
with torch.amp.autocast(device, dtype=torch.float16):
    amp_loss = F.cross_entropy(model(x), y)
scaled = torch.autograd.grad(scaler.scale(amp_loss), params)
amp_norm = torch.sqrt(sum(g.float().pow(2).sum() for g in scaled)) / scaler.get_scale()
print(f"final loss {loss.item():.4f}, penalty {penalty.item():.3g}; gradient norm after the last step: "
      f"FP32 {fp32_norm.item():.5g}, AMP unscaled by hand {amp_norm.item():.5g}, "
      f"scaled (not unscaled) {amp_norm.item() * scaler.get_scale():.4g} at loss scale {scaler.get_scale():g}")
