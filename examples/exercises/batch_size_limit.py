"""Exercise 2: double the batch size until a training step no longer fits, for each precision.

On CUDA the limit is the real one: the script catches ``torch.OutOfMemoryError``. On a CPU
exhausting RAM would stall the machine, so the script measures instead what one step
needs (parameters, gradients, optimizer state, and the activations autograd saves,
counted with ``torch.autograd.graph.saved_tensors_hooks``) and stops at a memory budget
(``--budget-mb``). What to look for: 16-bit activations halve the saved bytes, so the
largest batch roughly doubles; pure BF16 also halves parameters and gradients.
"""

import argparse

import torch
import torch.nn.functional as F
from torch import nn

from amp_docs_lib.core.devices import default_device
from amp_docs_lib.amp.precision import precision_setup
from amp_docs_lib.core.profiles import active_profile


def step_bytes(model: nn.Module, batch: int, setup, device: str, features: int = 256) -> int:
    """Bytes one step holds at its peak on CPU: model state plus the tensors saved for backward."""
    saved = []

    def pack(t: torch.Tensor) -> torch.Tensor:
        saved.append(t.numel() * t.element_size())
        return t

    x = torch.randn(batch, features, device=device, dtype=setup.param_dtype)
    y = torch.randint(0, 10, (batch,), device=device)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), setup.autocast():
        loss = F.cross_entropy(model(x).float(), y)
    loss.backward()
    state = sum(p.numel() * p.element_size() * 4 for p in model.parameters())  # param, grad, Adam m, v
    return state + sum(saved) + x.numel() * x.element_size()


def main() -> None:
    p = active_profile()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget-mb", type=float, default=p["exercise_memory_budget_mb"],
                    help="CPU only: the memory budget standing in for device memory")
    ap.add_argument("--max-batch", type=int, default=p["exercise_batch_max"])
    ap.add_argument("--width", type=int, default=512, help="hidden width of the MLP")
    ap.add_argument("--device", default=default_device())
    args = ap.parse_args()
    budget = args.budget_mb * 2**20
    mode = "real OOM" if args.device.startswith("cuda") else f"CPU budget {args.budget_mb:g} MiB (measured, not exhausted)"
    print(f"limit: {mode}")
    print(f"{'precision':>10} {'largest batch':>14} {'MiB at that batch':>18}")
    for name in ("fp32", "amp_bf16", "bf16"):
        setup = precision_setup(name, args.device)
        model = nn.Sequential(nn.Linear(256, args.width), nn.GELU(), nn.Linear(args.width, args.width),
                              nn.GELU(), nn.Linear(args.width, 10)).to(args.device, setup.param_dtype)
        batch, best, best_bytes = 8, None, None
        while batch <= args.max_batch:
            try:
                if args.device.startswith("cuda"):
                    torch.cuda.reset_peak_memory_stats()
                    step_bytes(model, batch, setup, args.device)
                    used = torch.cuda.max_memory_allocated()
                else:
                    used = step_bytes(model, batch, setup, args.device)
                    if used > budget:
                        break
            except torch.OutOfMemoryError:
                break
            best, best_bytes = batch, used
            batch *= 2
            model.zero_grad(set_to_none=True)
        mib = "n/a" if best_bytes is None else f"{best_bytes / 2**20:.1f}"
        print(f"{name:>10} {str(best):>14} {mib:>18}")


if __name__ == "__main__":
    main()
