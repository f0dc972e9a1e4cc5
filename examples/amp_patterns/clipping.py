"""Gradient clipping with AMP: unscale_ first, then clip, then step."""
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
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
scaler = torch.amp.GradScaler(device)
max_norm = 0.25  # small enough to act on this task's gradients
clipped_steps = 0
norms_after_clipping = []  # the global norm after clip_grad_norm_, on every step it acted

for step in range(steps):
    optimizer.zero_grad(set_to_none=True)
    with torch.amp.autocast(device, dtype=torch.float16):
        output = model(x)
        loss = F.cross_entropy(output, y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)  # gradients are now in true units
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)  # the norm before clipping
    clipped_norm = torch.nn.utils.get_total_norm([p.grad for p in model.parameters()])
    clipped_steps += int(norm > max_norm)
    if norm > max_norm:
        norms_after_clipping.append(clipped_norm.item())
    scaler.step(optimizer)  # knows the gradients are unscaled already
    scaler.update()

print(f"final loss {loss.item():.4f}; clipping acted on {clipped_steps} of {step + 1} steps; "
      f"last step: gradient norm {norm.item():.4g} before clipping, {clipped_norm.item():.4g} after "
      f"(max_norm {max_norm})")

# The WRONG order, measured: clipping the still-scaled gradients.
optimizer.zero_grad(set_to_none=True)
with torch.amp.autocast(device, dtype=torch.float16):
    loss = F.cross_entropy(model(x), y)
scaler.scale(loss).backward()
scale = scaler.get_scale()
scaled_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm).item()  # before unscale_!
scaler.unscale_(optimizer)
wrong_norm = torch.nn.utils.get_total_norm([p.grad for p in model.parameters()]).item()
true_norm = scaled_norm / scale
print(f"wrong order: true norm {true_norm:.4g} was clipped to {wrong_norm:.4g}; "
      f"effective max_norm = max_norm / scale = {max_norm / scale:.4g}")
