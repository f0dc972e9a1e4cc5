"""Exercise 3: quantize a trained classifier to INT8 and measure latency and accuracy.

Trains a small MLP on scikit-learn's bundled digits data, then applies torchao's
``quantize_`` with ``Int8WeightOnlyConfig`` and ``Int8DynamicActivationInt8WeightConfig``
and times inference with ``torch.utils.benchmark``. What to look for: how far each scheme
moves the model's outputs from FP32's (dynamic activation quantization rounds the inputs of
every layer too, so its logits move further than weight-only's); how many test predictions
change (in either direction) and the net accuracy lost. The latencies are one median per model,
timed one after another: a difference within their IQRs, or on a busy machine, is none. Weight-only
INT8 does not multiply in INT8 (torchao 0.18 converts the weight to the activation's dtype for a
float ``torch.mm``, int8_tensor.py:347-353); only the dynamic scheme calls ``torch._int_mm``.
See the quantization chapter for the methods in depth.

Task: predict which scheme moves the logits further from FP32's, measured as the largest
|logit - FP32 logit| over the test set (``--predict weight-only|dynamic|same``); the script
prints whether the prediction held. Accuracy is printed too, but on a few hundred test samples
one sample is a large step, so it cannot rank two schemes whose errors are this small.
"""
# Install: pip install scikit-learn torch torchao  (self-contained: no amp_docs_lib needed)

import argparse
import copy
import os

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
    ap.add_argument("--threads", type=int, default=1, help="CPU threads for the timed inference")
    ap.add_argument("--predict", choices=["weight-only", "dynamic", "same"], default=None,
                    help="your prediction: which INT8 scheme moves the logits further from FP32's (largest |logit error|)")
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
    print(f"{'model':>26} {'test accuracy':>14} {'correct':>8} {'max |logit err|':>16} {'changed preds':>14} "
          f"{'latency us [IQR]':>18}")
    correct, logits = {}, {}
    for name, m in variants.items():
        with torch.inference_mode():
            logits[name] = m(x[te]).float()
            correct[name] = int((logits[name].argmax(1) == y[te]).sum())
            t = benchmark.Timer("m(xb)", globals={"m": m, "xb": x[te]},
                                num_threads=args.threads).blocked_autorange(min_run_time=args.min_time)
        err = float((logits[name] - logits["fp32"]).abs().max())
        changed = int((logits[name].argmax(1) != logits["fp32"].argmax(1)).sum())
        print(f"{name:>26} {correct[name] / len(te):14.4f} {correct[name]:8d} {err:16.4f} {changed:14d} "
              f"{t.median * 1e6:9.1f} [{t.iqr * 1e6:5.1f}]")
    print(f"test samples: {len(te)}; latencies on {args.threads} thread(s), timed one model after another: a "
          f"difference smaller than the IQRs, or measured on a busy machine, is not one")
    try:  # the OS load average per core (tasks waiting for a core or blocked on I/O, this process included); none on Windows
        load = os.getloadavg()[0] / os.cpu_count()
    except (AttributeError, OSError):
        load = None
    if load is not None and load > 1:
        print(f"machine busy: load average {load:.2f} per core (above one); "
              f"the latencies above are not comparable")
    short = {"weight-only": "int8 weight-only", "dynamic": "int8 dynamic act + weight"}
    lost = {k: correct["fp32"] - correct[v] for k, v in short.items()}
    logit_error = {k: float((logits[v] - logits["fp32"]).abs().max()) for k, v in short.items()}
    changed = {k: int((logits[v].argmax(1) != logits["fp32"].argmax(1)).sum()) for k, v in short.items()}
    further = "same" if logit_error["weight-only"] == logit_error["dynamic"] else max(logit_error, key=logit_error.get)
    print(f"largest |logit error| against fp32: weight-only {logit_error['weight-only']:.4f}, dynamic "
          f"{logit_error['dynamic']:.4f} -> further from fp32: {further}")
    print(f"test predictions changed against fp32: weight-only {changed['weight-only']}, dynamic {changed['dynamic']}; "
          f"net correct answers lost: weight-only {lost['weight-only']}, dynamic {lost['dynamic']}")
    if args.predict is not None:
        print(f"your prediction: {args.predict} -> {'held' if args.predict == further else 'did not hold'}")
    return {"correct": correct, "lost": lost, "changed": changed, "logit error": logit_error,
            "further from fp32": further, "test samples": len(te), "load per core": load}


if __name__ == "__main__":
    RESULT = main()
