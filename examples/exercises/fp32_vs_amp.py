"""Exercise 1: train the same small model in FP32 and with AMP; compare loss, accuracy, time per step.

Every precision trains the same seeded model on the same data; then one training step of each
is timed with the book's harness (``amp_docs_lib.core.timing.interleaved``: every round times a
block of each precision, the order reversed every other round, so a busy machine slows all of
them alike). A precision is called faster or slower than FP32 only when the interval of the
median per-round speed ratio excludes 1; otherwise "same" (no difference resolved). On a CPU the
steps run on ``--threads`` threads (default 1, fewer than the machine's cores) and the OS load
average is read before and after: where it exceeds the number of cores (Linux counts the tasks
waiting for a core and those blocked on I/O; in a container it can be the host's figure) the
script says the machine was busy and draws no verdict. All final losses and accuracies are evaluated in FP32 (a copy of each model), so a gap
is the trained weights', not the evaluation's rounding.

Task: predict, for this machine, whether AMP BF16 steps are faster or slower than FP32 steps
(``--predict faster|slower|same``); the script prints whether the prediction held.
"""
# Install: pip install amp_docs_lib-*.whl  (the wheel: Downloads bar of any chapter page)

import argparse
import copy
import os

import torch
import torch.nn.functional as F

from amp_docs_lib.amp.precision import PRECISIONS, precision_setup
from amp_docs_lib.amp.toy_task import make_data, make_model, train_step
from amp_docs_lib.core.timing import NOISE_FLOOR_TOO_HIGH, interleaved
from amp_docs_lib.core.devices import default_device
from amp_docs_lib.core.profiles import active_profile


def compare(comparison) -> str:
    """'faster', 'slower' or 'same' (the harness's "no difference resolved": the interval holds 1)."""
    return {"no difference resolved": "same"}.get(comparison.verdict, comparison.verdict)


def load_per_core() -> float | None:
    """The OS's 1-minute load average per core (this process included); None where there is none."""
    try:
        return os.getloadavg()[0] / os.cpu_count()
    except (AttributeError, OSError):  # no load average (Windows)
        return None


def forward_dtypes(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, setup) -> dict:
    """The dtype of every leaf module's output and of the loss in one forward under ``setup``'s autocast.

    What autocast rounds is not only the matmul inputs: an op it runs in BF16 returns BF16, and the ops
    after it (ReLU here) compute in BF16 too; this records what the forward really produced.
    """
    seen = []
    hooks = [m.register_forward_hook(lambda m, i, o: seen.append((type(m).__name__, str(o.dtype).removeprefix("torch."))))
             for m in model.modules() if not list(m.children())]
    try:
        with torch.no_grad(), setup.autocast():
            loss = F.cross_entropy(model(x), y)
    finally:
        for h in hooks:
            h.remove()
    return {"layer outputs": seen, "loss": str(loss.dtype).removeprefix("torch.")}


def main() -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=active_profile()["exercise_steps"], help="training steps")
    ap.add_argument("--precisions", nargs="+", default=["fp32", "amp_bf16", "amp_fp16"], choices=PRECISIONS)
    ap.add_argument("--samples", type=int, default=512, help="training set size (one full batch)")
    ap.add_argument("--rounds", type=int, default=15, help="interleaved timing rounds (at least 5)")
    ap.add_argument("--threads", type=int, default=1, help="CPU threads for the timed steps")
    ap.add_argument("--device", default=default_device())
    ap.add_argument("--predict", choices=["faster", "slower", "same"], default=None,
                    help="your prediction for AMP BF16 against FP32 on this machine")
    args = ap.parse_args()
    if "fp32" not in args.precisions:
        ap.error("--precisions must include fp32, the baseline")
    if args.rounds < 5:  # the interval on a median ratio needs at least 5 rounds
        ap.error(f"--rounds must be >= 5, got {args.rounds}")
    x, y = make_data(args.samples, device=args.device)
    rows, steps = {}, {}
    for name in args.precisions:
        setup = precision_setup(name, args.device)
        model = make_model().to(args.device, setup.param_dtype)
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        xs = x.to(setup.param_dtype)
        dtypes = forward_dtypes(model, xs, y, setup)
        for _ in range(args.steps):
            loss = train_step(model, opt, xs, y, setup)
        with torch.no_grad():  # in FP32 for every precision: the gap is the weights', not the evaluation's rounding
            out = copy.deepcopy(model).float()(x)
            acc = (out.argmax(1) == y).float().mean().item()
            final = F.cross_entropy(out, y).item()
        steps[name] = (lambda m=model, o=opt, xs=xs, s=setup: train_step(m, o, xs, y, s))
        rows[name] = {"final loss": final, "accuracy": acc, "last training loss": loss, "forward dtypes": dtypes}
    for name, r in rows.items():
        layers = ", ".join(f"{m} {d}" for m, d in r["forward dtypes"]["layer outputs"])
        print(f"{name}: forward outputs {layers}; loss {r['forward dtypes']['loss']}")
    cpu = not args.device.startswith("cuda")
    load_before = load_per_core() if cpu else None
    timed = interleaved(steps, baseline="fp32", device=args.device, rounds=args.rounds,
                        num_threads=args.threads if cpu else None)
    loads = [v for v in (load_before, load_per_core() if cpu else None) if v is not None]
    busy = bool(loads) and max(loads) > 1
    if busy:
        print(f"machine busy: load average {max(loads):.2f} per core (above one) during the "
              f"timing; the times below are printed but no speed verdict is drawn")
    print(f"{'precision':>10} {'final loss':>11} {'accuracy':>9} {'ms/step':>8} {'IQR ms':>7} "
          f"{'speed vs fp32 [interval]':>25}  vs fp32")
    for name, r in rows.items():
        t = r["timing"] = timed.timings[name]
        c = None if name == "fp32" else timed.compare(name)
        r["vs fp32"] = "baseline" if c is None else "no verdict (machine busy)" if busy else compare(c)
        r["speed vs fp32"] = None if c is None else (c.ratio, c.ratio_lo, c.ratio_hi)
        print(f"{name:>10} {r['final loss']:11.4f} {r['accuracy']:9.3f} {t.median_s * 1e3:8.3f} "
              f"{t.iqr_s * 1e3:7.3f} {'' if c is None else c.interval_text():>25}  {r['vs fp32']}")
    print(f"A/A control (fp32 against itself in the same rounds): {timed.aa.interval_text()}"
          + ("  resolved a difference: the noise floor was too high for a verdict" if timed.aa.verdict != "no difference resolved" else ""))
    if args.predict is not None and "amp_bf16" in rows:
        held = args.predict == rows["amp_bf16"]["vs fp32"]
        outcome = ("not checked, the machine was busy" if busy else
                   "not checked, the noise floor was too high" if rows["amp_bf16"]["vs fp32"] == NOISE_FLOOR_TOO_HIGH
                   else "held" if held else "did not hold")
        print(f"your prediction: amp_bf16 {args.predict} -> {outcome} (measured: {rows['amp_bf16']['vs fp32']})")
    rows["load per core"] = max(loads) if loads else None
    rows["busy"] = busy
    return rows


if __name__ == "__main__":
    RESULT = main()
