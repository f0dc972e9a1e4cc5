"""Exercise 3: quantize a trained classifier to INT8 and measure latency and accuracy.

Trains a small MLP on scikit-learn's bundled digits data, then applies torchao's
``quantize_`` with ``Int8WeightOnlyConfig`` and ``Int8DynamicActivationInt8WeightConfig``
and times inference with ``torch.utils.benchmark``. What to look for: how much test
accuracy each scheme gives up (dynamic activation quantization rounds the inputs of every
layer too, so it usually loses more than weight-only); whether INT8 is faster depends on the CPU's integer kernels and
on the layer sizes (at this size, dispatch overhead can dominate). See the quantization
chapter for the methods in depth.
"""

import argparse
import copy

import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch import nn
from torch.utils import benchmark
from torchao.quantization import Int8DynamicActivationInt8WeightConfig, Int8WeightOnlyConfig, quantize_


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=60)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--min-time", type=float, default=0.2, help="seconds of timing per model")
    args = ap.parse_args()
    torch.manual_seed(0)
    d = load_digits()
    x = torch.tensor(d.data, dtype=torch.float32) / 16.0
    y = torch.tensor(d.target)
    perm = torch.randperm(len(x))
    tr, te = perm[:1400], perm[1400:]
    model = nn.Sequential(nn.Linear(64, args.hidden), nn.ReLU(), nn.Linear(args.hidden, args.hidden),
                          nn.ReLU(), nn.Linear(args.hidden, 10))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(args.epochs):
        opt.zero_grad()
        F.cross_entropy(model(x[tr]), y[tr]).backward()
        opt.step()
    model.eval()
    variants = {"fp32": model}
    for name, cfg in (("int8 weight-only", Int8WeightOnlyConfig()),
                      ("int8 dynamic act + weight", Int8DynamicActivationInt8WeightConfig())):
        q = copy.deepcopy(model)
        quantize_(q, cfg)
        variants[name] = q
    print(f"{'model':>26} {'test accuracy':>14} {'latency (us)':>13}")
    for name, m in variants.items():
        with torch.inference_mode():
            acc = (m(x[te]).argmax(1) == y[te]).float().mean().item()
            t = benchmark.Timer("m(xb)", globals={"m": m, "xb": x[te]}).blocked_autorange(min_run_time=args.min_time)
        print(f"{name:>26} {acc:14.4f} {t.median * 1e6:13.1f}")
    print(f"test samples: {len(te)}")


if __name__ == "__main__":
    main()
