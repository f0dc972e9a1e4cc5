"""Exercise 4: stress-test training stability by scaling the inputs, per precision.

Trains the tiny MLP for a few steps with its inputs multiplied by growing factors, in FP32,
BF16 autocast and FP16 autocast with a GradScaler, and reports for each run: the largest
|input| and the largest activation of the first forward (in FP32; autocast casts the input to
FP16 too, so either can be the first value past FP16's range), the steps whose loss was not finite (an overflow
in forward), the steps the GradScaler skipped, the first step it did not skip, and its final
scale. Skipped steps have two causes that look alike in a log: the forward overflowed (the
loss is inf/NaN), or only the *scaled* gradients overflowed while the forward was finite,
which is the scaler calibrating itself (its initial scale, 2**16, is too large for these
gradients; it halves the scale at every skip until the scaled gradients fit, then trains).

Task: predict the smallest input scale at which FP16's *forward* overflows, and pass it with
``--predict-overflow-scale``; the script prints whether the prediction held.
"""
# Install: pip install amp_docs_lib-*.whl  (the wheel: Downloads bar of any chapter page)

import argparse
import math

import torch

from amp_docs_lib.amp.precision import precision_setup
from amp_docs_lib.amp.toy_task import make_data, make_model, train_step
from amp_docs_lib.core.devices import default_device
from amp_docs_lib.core.profiles import active_profile

FP16_MAX = torch.finfo(torch.float16).max


def largest_activation(model: torch.nn.Module, x: torch.Tensor) -> float:
    """The largest |output| of any layer in one FP32 forward (forward hooks on every leaf module).

    The input is not a layer's output: the caller reports its largest |value| beside this one.
    """
    seen = []
    hooks = [m.register_forward_hook(lambda m, i, o: seen.append(float(o.detach().abs().max())))
             for m in model.modules() if not list(m.children())]
    with torch.no_grad():
        model(x)
    for h in hooks:
        h.remove()
    return max(seen)


def stress(name: str, scale: float, x: torch.Tensor, y: torch.Tensor, steps: int, device: str) -> dict:
    setup = precision_setup(name, device)
    model = make_model().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3 / scale)
    act = largest_activation(model, x * scale)
    largest_input = float((x * scale).abs().max())
    nonfinite, skipped, losses = [], [], []
    for step in range(steps):
        before = setup.scaler.get_scale() if setup.uses_scaler else None
        loss = train_step(model, opt, x * scale, y, setup)
        losses.append(loss)
        if not math.isfinite(loss):
            nonfinite.append(step)
        if setup.uses_scaler and setup.scaler.get_scale() < before:
            skipped.append(step)
    first_kept = next((s for s in range(steps) if s not in skipped), None)
    if nonfinite:
        cause = "forward overflow"
    elif skipped and first_kept is None:
        cause = "every step skipped, none kept"  # calibration that had not finished when the run ended
    elif skipped and skipped == list(range(len(skipped))):
        cause = "scaler calibration"  # an initial run of skips with a finite forward, then none
    elif skipped:
        cause = "scaled gradients overflowed later"
    else:
        cause = "none"
    return {"precision": name, "input scale": scale, "largest |input|": largest_input,
            "largest activation (fp32)": act,
            "non-finite losses": len(nonfinite), "skipped steps": len(skipped), "first kept step": first_kept,
            "final scale": setup.scaler.get_scale() if setup.uses_scaler else None,
            "final loss": losses[-1], "cause of skips": cause}


def main() -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=active_profile()["exercise_stress_steps"])
    ap.add_argument("--scales", type=float, nargs="+", default=[1.0, 1e2, 1e3, 1e5])
    ap.add_argument("--device", default=default_device())
    ap.add_argument("--predict-overflow-scale", type=float, default=None,
                    help="your prediction: the smallest of --scales at which FP16's forward overflows "
                         "(0 for 'at none of them')")
    args = ap.parse_args()
    if args.steps < 1:
        ap.error(f"--steps must be >= 1, got {args.steps}")
    x, y = make_data(256, device=args.device)
    rows = [stress(name, s, x, y, args.steps, args.device)
            for name in ("fp32", "amp_bf16", "amp_fp16") for s in args.scales]
    print(f"{'precision':>10} {'scale':>9} {'max |in|':>9} {'max act.':>9} {'non-finite':>10} {'skipped':>8} {'1st kept':>8} "
          f"{'final scale':>11} {'final loss':>10}  cause of skips")
    for r in rows:
        fs = "-" if r["final scale"] is None else f"{r['final scale']:g}"
        fk = "-" if r["first kept step"] is None else str(r["first kept step"])
        print(f"{r['precision']:>10} {r['input scale']:9.3g} {r['largest |input|']:9.3g} "
              f"{r['largest activation (fp32)']:9.3g} "
              f"{r['non-finite losses']:10d} {r['skipped steps']:8d} {fk:>8} {fs:>11} {r['final loss']:10.4g}  "
              f"{r['cause of skips']}")
    fp16 = [r for r in rows if r["precision"] == "amp_fp16"]
    measured = next((r["input scale"] for r in fp16 if r["non-finite losses"]), 0.0)
    print(f"FP16's largest finite value: {FP16_MAX:g}; smallest scale whose FP16 forward overflowed: "
          f"{measured:g} (0: none)")
    if args.predict_overflow_scale is not None:
        held = args.predict_overflow_scale == measured
        print(f"your prediction: {args.predict_overflow_scale:g} -> {'held' if held else 'did not hold'}")
    return {"rows": rows, "forward overflow scale": measured}


if __name__ == "__main__":
    RESULT = main()
