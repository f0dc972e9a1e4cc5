"""Measure a training step's AMP speedup correctly: warm-up in the measured precision,
a deliberate thread count, synchronisation on CUDA, median and IQR, and FP32 and AMP timed
in interleaved rounds so the speedup comes with an interval.

    python examples/measure_amp_speedup.py
    python examples/measure_amp_speedup.py --width 1024 --batch 256 --precision amp_fp16

The autocast region is inside the timed function, so the harness's warm-up
runs in the precision being measured.
"""
# Install: pip install amp_docs_lib-*.whl  (the wheel: Downloads bar of any chapter page)
import argparse

import torch

from amp_docs_lib.bench.load import LoadCheck
from amp_docs_lib.core.timing import MIN_ROUNDS, interleaved
from amp_docs_lib.core.devices import default_device
from amp_docs_lib.amp.precision import PRECISIONS, precision_setup


def make_step(model, x, precision, device):
    """A whole training step: autocast forward, scaled backward, scaler.step (unscale, inf check, optimizer step),
    scaler.update (the new scale)."""
    setup = precision_setup(precision, device)
    opt = torch.optim.SGD(model.parameters(), lr=1e-6)

    def step():
        with setup.autocast():
            loss = model(x).float().pow(2).mean()
        setup.scaler.scale(loss).backward()
        setup.scaler.step(opt)
        setup.scaler.update()
        opt.zero_grad(set_to_none=True)
    return step


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--precision", choices=[p for p in PRECISIONS if p != "fp32"], default="amp_bf16")
    parser.add_argument("--threads", type=int, default=torch.get_num_threads(),
                        help="CPU threads for the timer (torch.utils.benchmark.Timer defaults to 1)")
    parser.add_argument("--rounds", type=int, default=9, help=f"interleaved timing rounds (at least {MIN_ROUNDS})")
    args = parser.parse_args(argv)
    for flag, value, least in (("--width", args.width, 1), ("--batch", args.batch, 1), ("--threads", args.threads, 1),
                               ("--rounds", args.rounds, MIN_ROUNDS)):
        if value < least:  # refused here, not by torch after the model is built
            parser.error(f"{flag} must be >= {least}, got {value}")

    device = default_device()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(args.width, 4 * args.width), torch.nn.GELU(),
                                torch.nn.Linear(4 * args.width, args.width)).to(device)
    x = torch.randn(args.batch, args.width, device=device)
    # A reference kernel timed before and after decides whether the CPU was quiet enough to conclude from.
    check = LoadCheck.start(threads=args.threads) if device == "cpu" else None
    # One block of each per round, order reversed every other round: machine drift hits both alike.
    timed = interleaved({p: make_step(model, x, p, device) for p in ("fp32", args.precision)}, baseline="fp32",
                        device=device, rounds=args.rounds, num_threads=args.threads)
    for precision, t in timed.timings.items():
        print(f"{precision:>9}: median {t.median_s * 1e3:8.3f} ms, IQR {t.iqr_s * 1e3:7.3f} ms "
              f"({t.runs} rounds of {t.calls_per_run} calls, {t.num_threads} threads, {t.method})")
    if check is not None:
        check.finish()
        print(check.note())
    c = timed.compare(args.precision)
    verdict = c.verdict if check is None or check.quiet else "no verdict: the machine was busy"
    print(f"{args.precision} speedup over fp32 on {device}: {c.interval_text()} (median, {c.level:.0%} interval): "
          f"{verdict}")
    # fp32 was also timed a second time in the same rounds: where that A/A pair differs, no verdict is drawn
    print(f"A/A control (fp32 against itself): {c.aa_text()}")


if __name__ == "__main__":
    main()
