"""FSDP2 with a mixed-precision policy, run by real processes; prints what each rank holds.

Two processes: NCCL ranks, one per GPU, on a machine with two or more GPUs; gloo processes on
the CPU otherwise (one GPU would give one rank, with nothing to reduce). The same code path:
``fully_shard`` with ``MixedPrecisionPolicy(param_dtype=bfloat16, reduce_dtype=float32)``, one
Adam step, hooks that record the dtype and shape of the parameters, layer inputs and outputs,
gradients, collectives and optimizer state. The per-rank code is ``amp_docs_lib.distributed.fsdp_probe.fsdp_worker``.

    python examples/distributed/fsdp_mixed_precision.py --world-size 2
"""
# Install: pip install amp_docs_lib-*.whl  (the wheel: Downloads bar of any chapter page)

import argparse

import pandas as pd

from amp_docs_lib.distributed import fsdp_probe, memory
from amp_docs_lib.distributed.launch import default_backend, default_world_size
from amp_docs_lib.core.profiles import active_profile


def main() -> None:
    p = active_profile()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--world-size", type=int, default=default_world_size())
    ap.add_argument("--backend", choices=["gloo", "nccl"], default=default_backend())
    ap.add_argument("--param-dtype", default="bfloat16", help="float32, bfloat16 or float16")
    ap.add_argument("--reduce-dtype", default="float32",
                    help="float32, bfloat16, float16 or none (reduce_dtype=None: since torch 2.15 the "
                         "parameters' own dtype, before that param_dtype)")
    ap.add_argument("--hidden", type=int, default=p["dist_hidden"])
    ap.add_argument("--classes", type=int, default=5, help="rows of the last layer (5: not a multiple of 2)")
    args = ap.parse_args()
    reduce_dtype = None if args.reduce_dtype.lower() == "none" else args.reduce_dtype

    df = fsdp_probe.run_fsdp_probe(args.world_size, backend=args.backend, param_dtype=args.param_dtype,
                                   reduce_dtype=reduce_dtype, features=p["dist_features"],
                                   hidden=args.hidden, classes=args.classes, batch=p["dist_batch"])
    with pd.option_context("display.width", 200, "display.max_rows", 500):
        print(f"backend={args.backend} world_size={args.world_size} param_dtype={args.param_dtype} "
              f"reduce_dtype={reduce_dtype}")
        print(fsdp_probe.summary(df).to_string(index=False))
        print()
        print(df[df["rank"] == 0].drop(columns="rank").to_string(index=False))
    params = df[(df["rank"] == 0) & (df["stage"] == "1 sharded parameter (stored)")]
    shapes = list(params["global shape"])
    n = int(sum(pd.Series(s).prod() for s in shapes))
    shard = memory.fsdp_shard_elements(shapes, args.world_size)  # each parameter split on its first dimension
    stored = df[df["stage"].isin(["1 sharded parameter (stored)", "6 gradient (sharded)", "8 optimizer state"])]
    print(f"\nparameters N={n}; measured model-state bytes per rank: "
          f"{stored.groupby('rank')['local bytes'].sum().to_dict()}; "
          f"memory.per_rank_bytes(K * shard, K, 'FSDP', 'amp_bf16') predicts "
          f"{memory.per_rank_bytes(args.world_size * shard, args.world_size, 'FSDP', 'amp_bf16')['total']} "
          f"for the largest shard ({shard} elements)")

if __name__ == "__main__":
    main()
