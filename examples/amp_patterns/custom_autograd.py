"""A custom autograd Function under autocast: torch.amp.custom_fwd / custom_bwd with device_type."""
# Install: pip install amp_docs_lib-*.whl  (the wheel: Downloads bar of any chapter page)
import torch
import torch.nn.functional as F

from amp_docs_lib.core.devices import default_device
from amp_docs_lib.core.profiles import active_profile
from amp_docs_lib.amp.toy_task import make_data, make_model

device = default_device()
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

for step in range(active_profile()["pattern_steps"]):
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
