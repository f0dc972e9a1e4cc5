"""Baseline: a plain FP32 training loop. Every AMP pattern is shown as a diff against this file."""
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

for step in range(steps):
    optimizer.zero_grad(set_to_none=True)
    output = model(x)
    loss = F.cross_entropy(output, y)
    loss.backward()
    optimizer.step()

print(f"final loss {loss.item():.4f}")
