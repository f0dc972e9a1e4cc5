"""Exercise 3: quantize a trained classifier to INT8 and measure latency and accuracy.

Trains a small MLP on scikit-learn's bundled digits data, then applies torchao's
``quantize_`` with ``Int8WeightOnlyConfig`` and ``Int8DynamicActivationInt8WeightConfig``
and times inference with ``torch.utils.benchmark``. What to look for: how much test
accuracy each scheme gives up (dynamic activation quantization rounds the inputs of every
layer too, so it usually loses more than weight-only); whether INT8 is faster depends on the CPU's integer kernels and
on the layer sizes (at this size, dispatch overhead can dominate). See the quantization
chapter for the methods in depth.

Task: predict which scheme gives up more test accuracy (``--predict weight-only|dynamic|same``);
the script prints whether the prediction held, counting changed predictions, not rounding
noise: one test sample is 1/len(test set) of accuracy.
"""
# Install: pip install scikit-learn torch torchao  (self-contained: no amp_docs_lib needed)

import argparse
import copy

import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch import nn
from torch.utils import benchmark
from torchao.quantization import Int8DynamicActivationInt8WeightConfig, Int8WeightOnlyConfig, quantize_


def main() -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=60)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--min-time", type=float, default=0.2, help="seconds of timing per model")
    ap.add_argument("--predict", choices=["weight-only", "dynamic", "same"], default=None,
                    help="your prediction: which INT8 scheme loses more test accuracy")
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
    print(f"{'model':>26} {'test accuracy':>14} {'correct':>8} {'latency (us)':>13}")
    correct = {}
    for name, m in variants.items():
        with torch.inference_mode():
            correct[name] = int((m(x[te]).argmax(1) == y[te]).sum())
            t = benchmark.Timer("m(xb)", globals={"m": m, "xb": x[te]}).blocked_autorange(min_run_time=args.min_time)
        print(f"{name:>26} {correct[name] / len(te):14.4f} {correct[name]:8d} {t.median * 1e6:13.1f}")
    print(f"test samples: {len(te)}")
    lost = {"weight-only": correct["fp32"] - correct["int8 weight-only"],
            "dynamic": correct["fp32"] - correct["int8 dynamic act + weight"]}
    worse = "same" if lost["weight-only"] == lost["dynamic"] else max(lost, key=lost.get)
    print(f"test samples lost against fp32: weight-only {lost['weight-only']}, dynamic {lost['dynamic']} "
          f"-> loses more: {worse}")
    if args.predict is not None:
        print(f"your prediction: {args.predict} -> {'held' if args.predict == worse else 'did not hold'}")
    return {"correct": correct, "lost": lost, "loses more": worse, "test samples": len(te)}


if __name__ == "__main__":
    RESULT = main()
