"""Train a small GPT on a generated Markov corpus under one precision regime.

    python examples/train_gpt_precision.py --precision amp_bf16
    python examples/train_gpt_precision.py --precision bf16 --steps 100
    python examples/train_gpt_precision.py --precision fp16      # naive FP16: stops on a NaN loss

Regimes (amp_docs_lib.amp.precision.REGIMES): fp32, tf32 (CUDA only), fp16 (naive FP16
parameters, no scaler), amp_fp16 (autocast FP16 + GradScaler), amp_bf16 (autocast BF16),
bf16 (pure BF16 + plain AdamW), bf16_master (BF16 parameters + FP32 master weights),
bf16_kahan (BF16 parameters + optimi.AdamW(kahan_sum=True)), bf16_optimi (the same without
Kahan summation), bf16_sr (torchao's AdamW with BF16 stochastic rounding), amp_bf16_moments (AdamW
moments rounded to BF16), amp_fp16_overflow (AMP FP16 at a learning rate that overflows).
Every regime sees the same initialisation, batches and validation windows.
"""
# Install: pip install amp_docs_lib-*.whl  (the wheel: Downloads bar of any chapter page)
import argparse
import math

from amp_docs_lib.core.devices import available_devices, default_device
from amp_docs_lib.amp.precision import REGIMES, regimes_for
from amp_docs_lib.regimes.loop import TrainConfig, corpus_from_profile, train_regime, with_steps


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--precision", choices=list(REGIMES), default="amp_bf16",
                        help="training regime (default: amp_bf16)")
    parser.add_argument("--steps", type=int, default=None, help="optimizer steps (default: the profile's)")
    parser.add_argument("--device", choices=available_devices(), default=default_device())
    args = parser.parse_args(argv)
    if args.precision not in regimes_for(args.device):
        parser.error(f"regime {args.precision!r} is not available on {args.device}; "
                     f"available there: {', '.join(regimes_for(args.device))}")
    if args.steps is not None and args.steps < 1:
        parser.error(f"--steps must be >= 1, got {args.steps}")

    config = TrainConfig.from_profile()
    if args.steps is not None:
        config = with_steps(config, args.steps)
    corpus = corpus_from_profile()
    run = train_regime(args.precision, corpus=corpus, config=config, device=args.device)

    every = max(len(run.log) // 10, 1)
    for row in run.log.iloc[::every].itertuples():
        scale = "" if row.scale is None or (isinstance(row.scale, float) and math.isnan(row.scale)) \
            else f"  scale {row.scale:g}"
        print(f"step {row.step:4d}  loss {row.train_loss:.4f}  grad norm {row.grad_norm:.3g}"
              f"  {row.tokens_per_s:,.0f} tok/s{scale}")
    for row in run.val.itertuples():
        print(f"val @ {row.step:4d}  {row.val_loss:.4f}")
    val = "not evaluated" if run.final_val_loss is None else f"{run.final_val_loss:.4f}"
    print(f"{args.precision} on {args.device}: status: {run.status}; final train loss {run.final_train_loss:.4f}, "
          f"final val loss {val} (entropy floor "
          f"{corpus.source.window_floor(run.tokens_per_step // config.batch_size):.4f})")


if __name__ == "__main__":
    main()
