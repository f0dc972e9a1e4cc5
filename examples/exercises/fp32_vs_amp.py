"""Exercise 1: train the same small model in FP32 and with AMP; compare loss, accuracy, time per step.

What to look for: the final losses agree to a few digits (AMP keeps FP32 master weights);
the time per step depends on the hardware: on a CPU without native BF16/FP16 matmul, AMP is
slower, on a GPU with Tensor Cores it is faster.
"""

import argparse
import time

import torch
import torch.nn.functional as F

from amp_docs_lib.core.devices import default_device
from amp_docs_lib.amp.precision import PRECISIONS, precision_setup
from amp_docs_lib.core.profiles import active_profile
from amp_docs_lib.amp.toy_task import make_data, make_model, train_step


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=active_profile()["exercise_steps"])
    ap.add_argument("--precisions", nargs="+", default=["fp32", "amp_bf16", "amp_fp16"], choices=PRECISIONS)
    ap.add_argument("--samples", type=int, default=512, help="training set size (one full batch)")
    ap.add_argument("--device", default=default_device())
    args = ap.parse_args()
    x, y = make_data(args.samples, device=args.device)
    print(f"{'precision':>10} {'final loss':>11} {'accuracy':>9} {'ms/step':>8}")
    for name in args.precisions:
        setup = precision_setup(name, args.device)
        model = make_model().to(args.device, setup.param_dtype)
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        xs = x.to(setup.param_dtype)
        train_step(model, opt, xs, y, setup)  # warm-up step, not timed
        t0 = time.perf_counter()
        for _ in range(args.steps):
            loss = train_step(model, opt, xs, y, setup)
        ms = (time.perf_counter() - t0) / args.steps * 1e3
        with torch.no_grad(), setup.autocast():
            acc = (model(xs).argmax(1) == y).float().mean().item()
            final = F.cross_entropy(model(xs).float(), y).item()
        print(f"{name:>10} {final:11.4f} {acc:9.3f} {ms:8.2f}   (last training loss {loss:.4f})")


if __name__ == "__main__":
    main()
