"""Probe PyTorch's autocast operator policy on every device this machine has.

For each op, autocast either lowers it (FP32 in -> FP16/BF16 out), forces it to
float32, promotes mixed inputs to the widest type, or leaves it alone. Run:

    python examples/autocast_policy_probe.py
"""
# Install: pip install amp_docs_lib-*.whl  (the wheel: Downloads bar of any chapter page)

import pandas as pd
import torch

from amp_docs_lib.amp.autocast_policy import (available_devices, compare_with_documented,
                                          probe_autocast_policy, summarize_policy, wide_policy_table)


def main() -> None:
    pd.set_option("display.width", 200)
    pd.set_option("display.max_rows", 500)
    print(f"torch {torch.__version__}; devices probed: {available_devices()}")
    print("default autocast dtypes:",
          {d: str(torch.get_autocast_dtype(d)) for d in ("cpu", "cuda")})

    probe = probe_autocast_policy()  # all available devices, float16 and bfloat16
    print("\nOps per category:")
    print(summarize_policy(probe).to_string(index=False))
    print("\nCategory of each op:")
    print(wide_policy_table(probe).to_string(index=False))

    cmp = compare_with_documented(probe)
    differ = cmp[cmp["verdict"] == "differ"]
    print(f"\nAgreement with the documented lists: {len(cmp) - len(differ)} of {len(cmp)} agree")
    if len(differ):
        print(differ[["op", "device", "dtype", "documented", "measured", "why"]].to_string(index=False))


if __name__ == "__main__":
    main()
