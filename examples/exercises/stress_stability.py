"""Exercise 4: stress-test training stability by scaling the inputs, per precision.

Trains the tiny MLP for a few steps with its inputs multiplied by 1, 1e2, 1e3 and 1e5 and
reports whether the loss stayed finite and how many steps the GradScaler skipped. What to
look for: FP16 autocast overflows first (activations beyond 65504 become inf, the scaler
skips steps); BF16 keeps FP32's range and degrades by precision, not by overflow.
"""

import argparse
import math

import torch

from amp_docs_lib.core.devices import default_device
from amp_docs_lib.amp.precision import precision_setup
from amp_docs_lib.core.profiles import active_profile
from amp_docs_lib.amp.toy_task import make_data, make_model, train_step


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=active_profile()["exercise_stress_steps"])
    ap.add_argument("--scales", type=float, nargs="+", default=[1.0, 1e2, 1e3, 1e5])
    ap.add_argument("--device", default=default_device())
    args = ap.parse_args()
    x, y = make_data(256, device=args.device)
    print(f"{'precision':>10} {'input scale':>12} {'final loss':>11} {'finite':>7} {'skipped steps':>14}")
    for name in ("fp32", "amp_bf16", "amp_fp16"):
        for s in args.scales:
            setup = precision_setup(name, args.device)
            model = make_model().to(args.device)
            opt = torch.optim.SGD(model.parameters(), lr=1e-3 / s)
            skipped = 0
            for _ in range(args.steps):
                before = setup.scaler.get_scale() if setup.uses_scaler else None
                loss = train_step(model, opt, x * s, y, setup)
                if setup.uses_scaler and setup.scaler.get_scale() < before:
                    skipped += 1
            print(f"{name:>10} {s:12.0e} {loss:11.4g} {str(math.isfinite(loss)):>7} {skipped:14d}")


if __name__ == "__main__":
    main()
