"""Exercise 6: fix a mixed-precision training step that clips its gradients in the wrong place.

``clip_and_step`` below takes one step after a scaled FP16 backward: it should clip the
gradients to ``max_norm`` (in true units, as without a GradScaler) and step. As shipped it has a
bug. Task: find it and fix ``clip_and_step`` in this file, then run the script: it takes one
scaled FP16 step with your function, records the norm of the gradients the optimizer is handed,
and says whether it is fixed (that norm must equal ``max_norm``, which is set to half the true
gradient norm, so clipping has to act). ``--solution`` runs the worked solution instead.
"""
# Install: pip install amp_docs_lib-*.whl  (the wheel: Downloads bar of any chapter page)

import argparse

import torch
import torch.nn.functional as F

from amp_docs_lib.amp.toy_task import make_data, make_model
from amp_docs_lib.core.devices import default_device


def clip_and_step(model, optimizer, scaler, max_norm):
    """EXERCISE: clip the gradients to max_norm and step. This version has a bug: fix it."""
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    scaler.step(optimizer)
    scaler.update()


def solution(model, optimizer, scaler, max_norm):
    """The fix: unscale_ first, so clipping sees the gradients in true units; step then skips its own unscale."""
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    scaler.step(optimizer)
    scaler.update()


def check(step_fn, device: str) -> dict:
    """One scaled FP16 step through ``step_fn``: the gradient norm the optimizer was handed, and what it should be."""
    x, y = make_data(device=device)
    reference = make_model().to(device)  # the true gradients: the same step without a scale
    _loss(reference, x, y, device).backward()
    true_norm = float(torch.nn.utils.get_total_norm([p.grad for p in reference.parameters()]))
    max_norm = true_norm / 2  # clipping must act

    model = make_model().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    seen = []
    optimizer.register_step_pre_hook(lambda opt, args, kwargs: seen.append(
        float(torch.nn.utils.get_total_norm([p.grad for p in model.parameters()]))))
    scaler = torch.amp.GradScaler(device)
    scale = scaler.get_scale()
    optimizer.zero_grad(set_to_none=True)
    scaler.scale(_loss(model, x, y, device)).backward()
    step_fn(model, optimizer, scaler, max_norm)
    handed = seen[0] if seen else None
    fixed = handed is not None and abs(handed - max_norm) <= 1e-3 * max_norm
    return {"true norm": true_norm, "max_norm": max_norm, "scale": scale, "norm handed to the optimizer": handed,
            "fixed": fixed}


def _loss(model, x, y, device):
    """The step's forward and loss under FP16 autocast."""
    with torch.autocast(device, dtype=torch.float16):
        return F.cross_entropy(model(x), y)


def main() -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--solution", action="store_true", help="run the worked solution instead of clip_and_step")
    ap.add_argument("--device", default=default_device())
    args = ap.parse_args()
    result = check(solution if args.solution else clip_and_step, args.device)
    print(f"{'solution' if args.solution else 'clip_and_step'}: true gradient norm {result['true norm']:.4g}, "
          f"max_norm {result['max_norm']:.4g}, loss scale {result['scale']:g}")
    handed = result["norm handed to the optimizer"]
    print(f"the optimizer was handed gradients of norm {'none (the step was skipped)' if handed is None else f'{handed:.4g}'}"
          f" -> {'fixed' if result['fixed'] else 'not fixed: the optimizer must get gradients of norm max_norm'}")
    return result


if __name__ == "__main__":
    RESULT = main()
