"""Gradient penalty under AMP: the penalty's gradients come from autograd.grad on the *scaled* loss.

Unscale them by hand (they are not attached to any optimizer, so scaler.unscale_ cannot), compute
the penalty in FP32 under autocast, then scale the total loss as usual.
"""
# Install: pip install torch  (self-contained: no amp_docs_lib needed)
import torch
import torch.nn.functional as F


# The task, inline so that this program needs torch alone (the same data and model as the site's
# amp_docs_lib.amp.toy_task): Gaussian inputs labelled by a random linear teacher, and a seeded MLP.
def make_data(n=256, features=32, classes=4, *, seed=0, device="cpu"):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, features, generator=g)
    y = (x @ torch.randn(features, classes, generator=g)).argmax(dim=1)
    return x.to(device), y.to(device)


def make_model(features=32, hidden=64, classes=4, *, seed=0):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(features, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, hidden),
                               torch.nn.ReLU(), torch.nn.Linear(hidden, classes))


device = "cuda" if torch.cuda.is_available() else "cpu"
steps = 200 if device == "cuda" else 30  # as the site's builds run it (profiles gpu-full, cpu-small)
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


for step in range(steps):
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
