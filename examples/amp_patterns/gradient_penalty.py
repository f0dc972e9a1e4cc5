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
params = list(model.parameters())
optimizer = torch.optim.SGD(params, lr=0.05, momentum=0.9)
scaler = torch.amp.GradScaler(device)
penalty_weight = 1e-3


def loss_and_penalty():
    with torch.amp.autocast(device, dtype=torch.float16):
        output = model(x)
        loss = F.cross_entropy(output, y)
    scaled_grads = torch.autograd.grad(scaler.scale(loss), params, create_graph=True)
    inv_scale = 1.0 / scaler.get_scale()
    grads = [g * inv_scale for g in scaled_grads]  # unscaled by hand: true gradients
    with torch.amp.autocast(device, dtype=torch.float16):
        grad_norm = torch.sqrt(sum(g.pow(2).sum() for g in grads))
        penalty = penalty_weight * grad_norm
    return loss, penalty


for step in range(active_profile()["pattern_steps"]):
    optimizer.zero_grad(set_to_none=True)
    loss, penalty = loss_and_penalty()
    scaler.scale(loss + penalty).backward()
    scaler.step(optimizer)
    scaler.update()

# What the unscaling buys: at the trained weights, the penalty the loop builds is penalty_weight
# times the true (FP32) gradient norm, not the norm of the scaled gradients.
loss, penalty = loss_and_penalty()
fp32_norm = torch.sqrt(sum(g.pow(2).sum() for g in torch.autograd.grad(F.cross_entropy(model(x), y), params)))
print(f"final loss {loss.item():.4f}; penalty {penalty.item():.5g} = {penalty_weight:g} x gradient norm "
      f"{penalty.item() / penalty_weight:.5g} (FP32 gradient norm {fp32_norm.item():.5g}; "
      f"loss scale {scaler.get_scale():g})")
