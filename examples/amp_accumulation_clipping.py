"""Mixed-precision training with gradient accumulation and gradient clipping.

    python examples/amp_accumulation_clipping.py

Per optimizer step: several micro-batches, each loss divided by their number
and scaled; then unscale_, clip in true units, step and update once.
"""
# Install: pip install amp_docs_lib-*.whl  (the wheel: Downloads bar of any chapter page)
import torch
import torch.nn.functional as F

from amp_docs_lib.core.devices import default_device
from amp_docs_lib.core.profiles import active_profile
from amp_docs_lib.amp.toy_task import make_data, make_model

ACCUMULATION_STEPS = 4
MAX_NORM = 1.0


def main():
    device = default_device()
    x, y = make_data(n=512, device=device)
    model = make_model().to(device)  # FP32 master weights
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    scaler = torch.amp.GradScaler(device)
    steps = active_profile()["train_steps"]

    for step in range(steps):
        optimizer.zero_grad(set_to_none=True)
        total = 0.0
        for xb, yb in zip(x.chunk(ACCUMULATION_STEPS), y.chunk(ACCUMULATION_STEPS)):
            with torch.amp.autocast(device, dtype=torch.float16):
                loss = F.cross_entropy(model(xb), yb) / ACCUMULATION_STEPS
            scaler.scale(loss).backward()
            total += loss.item()
        scaler.unscale_(optimizer)  # once, after the last micro-batch
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), MAX_NORM)
        scaler.step(optimizer)
        scaler.update()
        if step % max(steps // 5, 1) == 0 or step == steps - 1:
            print(f"step {step:4d}  loss {total:.4f}  grad norm {norm.item():.3f}  scale {scaler.get_scale():g}")

    accuracy = (model(x).argmax(1) == y).float().mean().item()
    print(f"final loss {total:.4f}, train accuracy {accuracy:.3f}")


if __name__ == "__main__":
    main()
