"""A custom autograd Function under autocast: torch.amp.custom_fwd / custom_bwd with device_type."""
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
autocast_in_forward = []  # whether autocast was on inside each forward call


class StableLogSigmoid(torch.autograd.Function):
    """log(sigmoid(z)) computed in FP32 whatever autocast says (cast_inputs=torch.float32)."""

    @staticmethod
    @torch.amp.custom_fwd(device_type=device, cast_inputs=torch.float32)
    def forward(ctx, z):
        autocast_in_forward.append(torch.is_autocast_enabled(device))  # recorded for the page's check
        ctx.save_for_backward(z)
        return -F.softplus(-z)

    @staticmethod
    @torch.amp.custom_bwd(device_type=device)  # backward runs with forward's autocast state
    def backward(ctx, grad):
        (z,) = ctx.saved_tensors
        return grad * torch.sigmoid(-z)


x, y = make_data(device=device)
model = make_model().to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
scaler = torch.amp.GradScaler(device)

for step in range(steps):
    optimizer.zero_grad(set_to_none=True)
    with torch.amp.autocast(device, dtype=torch.float16):
        output = model(x)
        log_p = StableLogSigmoid.apply(output)  # FP16 in, FP32 out: log sigmoid(z)
        log_not_p = StableLogSigmoid.apply(-output)  # log(1 - sigmoid(z))
        target = F.one_hot(y, output.shape[1]).float()
        # one-vs-rest: the true class's logit up, every other class's logit down
        loss = -(target * log_p + (1 - target) * log_not_p).sum(1).mean()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()

accuracy = (output.argmax(1) == y).float().mean().item()
print(f"final loss {loss.item():.4f}, training accuracy {accuracy:.3f}, output dtype {output.dtype}, "
      f"custom op output dtype {log_p.dtype}")
