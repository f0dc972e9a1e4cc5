"""A complete mixed-precision training loop with a --precision switch.

    python examples/amp_training_loop.py --precision amp_fp16
    python examples/amp_training_loop.py --precision amp_bf16 --steps 100

Precisions: fp32, amp_fp16 (autocast FP16 + GradScaler), amp_bf16 (autocast
BF16, no scaler), bf16 (BF16 weights). The loop is the same for all four:
a disabled GradScaler and a disabled autocast are pass-throughs.
"""
# Install: pip install amp_docs_lib-*.whl  (the wheel: Downloads bar of any chapter page)
import argparse

import torch
import torch.nn.functional as F

from amp_docs_lib.core.devices import default_device
from amp_docs_lib.amp.precision import PRECISIONS, precision_setup
from amp_docs_lib.core.profiles import active_profile
from amp_docs_lib.amp.toy_task import make_data, make_model


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--precision", choices=PRECISIONS, default="amp_fp16")
    parser.add_argument("--steps", type=int, default=active_profile()["train_steps"])
    parser.add_argument("--lr", type=float, default=0.05)
    args = parser.parse_args(argv)

    device = default_device()
    setup = precision_setup(args.precision, device)  # autocast factory, scaler, parameter dtype
    x, y = make_data(device=device)
    x = x.to(setup.param_dtype)
    model = make_model().to(device=device, dtype=setup.param_dtype)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    scaler = setup.scaler

    for step in range(args.steps):
        optimizer.zero_grad(set_to_none=True)
        with setup.autocast():  # forward and loss only
            loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()  # no-op scaling unless amp_fp16
        scaler.step(optimizer)  # outside autocast; skipped on inf/NaN gradients
        scaler.update()
        if step % max(args.steps // 5, 1) == 0 or step == args.steps - 1:
            print(f"step {step:4d}  loss {loss.item():.4f}  scale {scaler.get_scale():g}")

    accuracy = (model(x).argmax(1) == y).float().mean().item()
    print(f"{args.precision} on {device}: final loss {loss.item():.4f}, train accuracy {accuracy:.3f}")


if __name__ == "__main__":
    main()
