"""Exercise 5: choose the precision in a config file (TOML or JSON), not in the code.

The training loop is written once against ``amp_docs_lib.amp.precision.precision_setup``; the
config names the precision (``fp32``, ``amp_fp16``, ``amp_bf16``, ``bf16``) and the run's
sizes. Without ``--config`` it reads ``precision.toml`` next to this script. What to look for:
changing one line of the config switches autocast, the GradScaler and the parameter dtype
together, and a misspelt precision fails with the list of valid names.

Task: write a config selecting pure BF16 (``precision = "bf16"``) and predict, before running,
the parameters' dtype and whether the GradScaler is on (``--predict-params bfloat16
--predict-scaler off``); the script prints whether the prediction held.
"""
# Install: pip install amp_docs_lib-*.whl  (the wheel: Downloads bar of any chapter page)

import argparse
import json
import tomllib
from pathlib import Path

import torch
import torch.nn.functional as F

from amp_docs_lib.core.devices import default_device
from amp_docs_lib.amp.precision import precision_setup
from amp_docs_lib.amp.toy_task import make_data, make_model, train_step

DEFAULT = Path(__file__).with_name("precision.toml")


def backward_scale(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, setup) -> float:
    """How many times larger the gradient reaching the logits is in the step's backward than in a plain one.

    The step backpropagates ``setup.scaler.scale(loss)``; an enabled GradScaler multiplies the loss by its
    scale (2**16 at first), a disabled one returns it unchanged. Measured on the logits' gradient, not read
    from the scaler's settings.
    """
    with setup.autocast():
        logits = model(x)
        loss = F.cross_entropy(logits, y)
    (plain,) = torch.autograd.grad(loss, logits, retain_graph=True)
    (stepped,) = torch.autograd.grad(setup.scaler.scale(loss), logits)
    return float(stepped.float().norm() / plain.float().norm())


def load_config(path: Path) -> dict:
    """Read a ``.toml`` or ``.json`` config with keys ``precision``, ``steps`` and ``lr``.

    Raises ValueError for a ``steps`` that is not a positive int or an ``lr`` that is not a positive
    number (the precision is checked by ``precision_setup``, which lists the valid names).
    """
    text = path.read_text()
    if path.suffix == ".toml":
        cfg = tomllib.loads(text)
    elif path.suffix == ".json":
        cfg = json.loads(text)
    else:
        raise ValueError(f"config must be .toml or .json, got {path.name!r}")
    cfg = {"steps": 20, "lr": 0.05, **cfg}
    steps, lr = cfg["steps"], cfg["lr"]
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps must be a positive int, got {steps!r}")
    if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not 0 < lr < float("inf"):
        raise ValueError(f"lr must be a positive number, got {lr!r}")
    return cfg


def main() -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", type=Path, default=DEFAULT, help="a .toml or .json file")
    ap.add_argument("--precision", help="override the config's precision")
    ap.add_argument("--predict-params", default=None, help="your prediction: the parameters' dtype (e.g. float32)")
    ap.add_argument("--predict-scaler", choices=["on", "off"], default=None,
                    help="your prediction: is the GradScaler on?")
    args = ap.parse_args()
    try:
        cfg = load_config(args.config)
    except (OSError, ValueError) as e:  # a missing file, bad TOML/JSON (ValueErrors both) or a bad value
        ap.error(f"--config {args.config.name}: {e}")
    source = f"config {args.config.name}"
    if args.precision:
        source = f"--precision (overriding {args.config.name}'s {cfg.get('precision')!r})"
        cfg["precision"] = args.precision
    device = default_device()
    setup = precision_setup(cfg["precision"], device)
    print(f"{source}: precision={setup.name} autocast={setup.autocast_dtype} "
          f"params={setup.param_dtype} GradScaler={'on' if setup.uses_scaler else 'off'}")
    x, y = make_data(256, device=device)
    model = make_model().to(device, setup.param_dtype)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    losses = [train_step(model, opt, x.to(setup.param_dtype), y, setup) for _ in range(cfg["steps"])]
    print(f"loss: first {losses[0]:.4f}, last {losses[-1]:.4f} after {cfg['steps']} steps")
    # measured on the trained model and on one backward, not read from the precision table
    param_dtypes = sorted({str(p.dtype).removeprefix("torch.") for p in model.parameters()})
    scale = backward_scale(model, x.to(setup.param_dtype), y, setup)
    print(f"measured: parameters {', '.join(param_dtypes)}; the step's backward carried {scale:g}x the loss gradient")
    measured = {"params": ", ".join(param_dtypes), "scaler": "on" if scale > 1 else "off", "backward scale": scale}
    for key, guess in (("params", args.predict_params), ("scaler", args.predict_scaler)):
        if guess is not None:
            print(f"your prediction for {key}: {guess} -> {'held' if guess == measured[key] else 'did not hold'} "
                  f"(measured: {measured[key]})")
    return {"precision": setup.name, **measured, "losses": losses}


if __name__ == "__main__":
    RESULT = main()
