"""Gradient accumulation with AMP: scale every micro-batch loss, step and update once per batch."""
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
accumulation_steps = 4

for step in range(steps):
    optimizer.zero_grad(set_to_none=True)
    for xb, yb in zip(x.chunk(accumulation_steps), y.chunk(accumulation_steps)):
        with torch.amp.autocast(device, dtype=torch.float16):
            output = model(xb)
            loss = F.cross_entropy(output, yb) / accumulation_steps  # average over micro-batches
        scaler.scale(loss).backward()  # gradients accumulate, all at the same scale
    scaler.step(optimizer)  # once per effective batch
    scaler.update()  # once per effective batch, never per micro-batch

print(f"final micro-batch loss {loss.item() * accumulation_steps:.4f}, loss scale {scaler.get_scale():g}")

# Check at the trained weights: the accumulated, unscaled gradient is the full-batch gradient.
def flat_grad():
    return torch.cat([p.grad.flatten() for p in model.parameters()])


optimizer.zero_grad(set_to_none=True)
for xb, yb in zip(x.chunk(accumulation_steps), y.chunk(accumulation_steps)):
    with torch.amp.autocast(device, dtype=torch.float16):
        loss = F.cross_entropy(model(xb), yb) / accumulation_steps
    scaler.scale(loss).backward()
accumulated = flat_grad() / scaler.get_scale()
optimizer.zero_grad(set_to_none=True)
F.cross_entropy(model(x), y).backward()  # FP32, whole batch
full_batch_fp32 = flat_grad()
optimizer.zero_grad(set_to_none=True)
with torch.amp.autocast(device, dtype=torch.float16):
    full_batch_loss = F.cross_entropy(model(x), y)
scaler.scale(full_batch_loss).backward()
full_batch_amp = flat_grad() / scaler.get_scale()
optimizer.zero_grad(set_to_none=True)
accumulation_error = float((accumulated - full_batch_fp32).norm() / full_batch_fp32.norm())
fp16_noise = float((full_batch_amp - full_batch_fp32).norm() / full_batch_fp32.norm())  # FP16 autocast alone
# What accumulation itself adds: accumulated vs the same FP16 autocast on the whole batch.
accumulation_vs_amp = float((accumulated - full_batch_amp).norm() / full_batch_fp32.norm())
print(f"accumulated vs full-batch FP32 gradient: relative difference {accumulation_error:.2e} "
      f"(FP16 autocast on the full batch: {fp16_noise:.2e}; accumulated vs that: {accumulation_vs_amp:.2e})")
