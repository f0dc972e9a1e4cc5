"""Exercise 2: double the batch size until a training step no longer fits, for each precision.

On CUDA the limit is the real one: the script catches ``torch.OutOfMemoryError`` (and cuBLAS
failing to allocate, which is reported as another RuntimeError). On a CPU
exhausting RAM would stall the machine, so the script measures instead what one step
needs (parameters, gradients, optimizer state, and the activations autograd saves,
counted with ``torch.autograd.graph.saved_tensors_hooks``) and stops at a memory budget
(``--budget-mb``). On CUDA there is no cap unless ``--max-batch`` is given: the batch doubles
until the device's memory runs out.

Task: predict by what factor the largest batch of AMP BF16 exceeds FP32's (a power of two,
since the batch doubles), and pass it with ``--predict-ratio``; the script prints whether the
prediction held.
"""
# Install: pip install amp_docs_lib-*.whl  (the wheel: Downloads bar of any chapter page)

import argparse

import torch
import torch.nn.functional as F
from torch import nn

from amp_docs_lib.core.devices import check_device, default_device, is_out_of_memory
from amp_docs_lib.amp.precision import precision_setup
from amp_docs_lib.core.profiles import active_profile


def model_state_bytes(model: nn.Module) -> int:
    """Parameters, gradients and Adam's two moments, in the parameters' dtype: what does not grow with the batch.

    The script builds no optimizer; Adam's moments are counted as the training step this stands for would hold them.
    """
    return sum(p.numel() * p.element_size() * 4 for p in model.parameters())


def step_bytes(model: nn.Module, batch: int, setup, device: str, features: int = 256) -> int:
    """Bytes one step holds on CPU, counted: model state plus the input batch and the tensors saved for backward.

    Not the step's peak: transient tensors and the gradients being built during backward are not counted, and
    Adam's moments are counted though no optimizer is built (``model_state_bytes``).

    Each storage counts once: in FP32 the first Linear saves the input batch itself and every Linear saves its
    weight, which are the tensors already counted as the input and the parameters; under autocast the saved
    inputs and weights are BF16 copies, new storages beside the FP32 originals.
    """
    storages = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        storages[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
        return t

    x = torch.randn(batch, features, device=device, dtype=setup.param_dtype)
    y = torch.randint(0, 10, (batch,), device=device)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), setup.autocast():
        loss = F.cross_entropy(model(x).float(), y)
        # everything saved is alive here, so no two distinct storages share an address in `storages`
        for t in (x, *model.parameters()):
            storages.pop(t.untyped_storage().data_ptr(), None)  # counted below, once
    loss.backward()
    return model_state_bytes(model) + x.numel() * x.element_size() + sum(storages.values())


def main() -> dict:
    p = active_profile()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--budget-mb",
        type=float,
        default=p["exercise_memory_budget_mb"],
        help="CPU only: the memory budget standing in for device memory",
    )
    ap.add_argument(
        "--max-batch",
        type=int,
        default=None,
        help=f"stop doubling here (default: {p['exercise_batch_max']} on a CPU; none on CUDA, "
        f"where the device's memory is the limit)",
    )
    ap.add_argument(
        "--predict-ratio", type=float, default=None, help="your prediction: largest AMP BF16 batch / largest FP32 batch"
    )
    ap.add_argument("--width", type=int, default=512, help="hidden width of the MLP")
    ap.add_argument("--device", default=default_device())
    args = ap.parse_args()
    first_batch = 8
    if not args.budget_mb > 0:  # a budget nothing fits in would report "largest batch: None"
        ap.error(f"--budget-mb must be > 0, got {args.budget_mb:g}")
    if args.max_batch is not None and args.max_batch < first_batch:
        ap.error(f"--max-batch must be >= {first_batch} (the first batch tried), got {args.max_batch}")
    if args.width < 1:
        ap.error(f"--width must be >= 1, got {args.width}")
    try:
        check_device(args.device)
    except ValueError as e:
        ap.error(f"--device: {e}")
    on_cuda = args.device.startswith("cuda")
    max_batch = args.max_batch if args.max_batch is not None else (2**40 if on_cuda else p["exercise_batch_max"])
    budget = args.budget_mb * 2**20
    mode = (
        f"real OOM ({torch.cuda.mem_get_info()[1] / 2**30:.1f} GiB device)"
        if on_cuda
        else f"CPU budget {args.budget_mb:g} MiB (measured, not exhausted)"
    )
    print(f"limit: {mode}")
    print(
        f"{'precision':>10} {'largest batch':>14} {'MiB at that batch':>18} {'model state share':>18} "
        f"{'bytes per sample':>17}"
    )
    largest = {}
    for name in ("fp32", "amp_bf16", "bf16"):
        setup = precision_setup(name, args.device)
        model = nn.Sequential(
            nn.Linear(256, args.width),
            nn.GELU(),
            nn.Linear(args.width, args.width),
            nn.GELU(),
            nn.Linear(args.width, 10),
        ).to(args.device, setup.param_dtype)
        batch, best, best_bytes, by_batch = first_batch, None, None, {}
        while batch <= max_batch:
            try:
                if args.device.startswith("cuda"):
                    torch.cuda.reset_peak_memory_stats()
                    step_bytes(model, batch, setup, args.device)
                    used = torch.cuda.max_memory_allocated()
                else:
                    used = step_bytes(model, batch, setup, args.device)
                    if used > budget:
                        break
            except RuntimeError as e:  # torch.OutOfMemoryError, or cuBLAS failing to allocate
                if not is_out_of_memory(e):
                    raise
                break
            best, best_bytes, by_batch[batch] = batch, used, used
            batch *= 2
            model.zero_grad(set_to_none=True)
        mib = "n/a" if best_bytes is None else f"{best_bytes / 2**20:.1f}"
        capped = "  (stopped at --max-batch, not at the limit)" if best is not None and best * 2 > max_batch else ""
        # what one more sample costs: the growth between the last two batches that fitted
        per_sample = (by_batch[best] - by_batch[best // 2]) / (best // 2) if best and best // 2 in by_batch else None
        # on CUDA the peak is allocated memory, which holds parameters and gradients but no Adam moments
        state = model_state_bytes(model) if not on_cuda else model_state_bytes(model) // 2
        share = None if not best_bytes else state / best_bytes
        print(
            f"{name:>10} {str(best):>14} {mib:>18} {'n/a' if share is None else f'{share:.0%}':>18} "
            f"{'n/a' if per_sample is None else f'{per_sample:.0f}':>17}{capped}"
        )
        largest[name] = {
            "largest batch": best,
            "bytes": best_bytes,
            "state bytes": state,
            "state share": share,
            "bytes per sample": per_sample,
            "capped": bool(capped),
        }
        del model
        if on_cuda:
            torch.cuda.empty_cache()
    ratio = (
        largest["amp_bf16"]["largest batch"] / largest["fp32"]["largest batch"]
        if largest["fp32"]["largest batch"] and largest["amp_bf16"]["largest batch"]
        else None
    )
    print(f"largest batch, amp_bf16 / fp32: {ratio}")
    if args.predict_ratio is not None:
        held = ratio is not None and args.predict_ratio == ratio
        print(f"your prediction: {args.predict_ratio:g} -> {'held' if held else 'did not hold'}")
    return {"largest": largest, "ratio": ratio}


if __name__ == "__main__":
    RESULT = main()
