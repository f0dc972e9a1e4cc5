"""Watch dtypes flow through a model under FP32 and under autocast.

Forward hooks record each module's input and output dtype; ``dtype_flow``
summarises them per module type for several precision modes. After one
autocast training step, ``training_state_dtypes`` lists the dtypes of the
parameters, their gradients and the AdamW state: autocast changes the
dtype of *activations*, not of what the optimizer keeps.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable

import pandas as pd
import torch
import torch.nn as nn

from amp_docs_lib.core.palette import color_of
from amp_docs_lib.core.tables import short_dtype
from amp_docs_lib.core.devices import check_device
from amp_docs_lib.gpt import GPT, GPTConfig, random_batch
from amp_docs_lib.amp.precision import PRECISION_DTYPES, precision_setup
from amp_docs_lib.core.profiles import Profile, active_profile

# Precision names from ``amp_docs_lib.amp.precision`` (the one switch used everywhere).
MODES = ("fp32", "amp_fp16", "amp_bf16")


def _check_mode(mode: str) -> torch.dtype | None:
    if mode not in MODES:
        raise ValueError(f"unknown precision mode {mode!r}; valid modes: {list(MODES)}")
    return PRECISION_DTYPES[mode][0]


def _check_device(device: str | torch.device) -> str:
    return check_device(device).type


def precision_context(device: str, mode: str):
    """The autocast context of precision ``mode`` (disabled for ``fp32``)."""
    _check_mode(mode)
    return precision_setup(mode, _check_device(device)).autocast()


def _first_tensor(obj: Any) -> torch.Tensor | None:
    """The first tensor in a (nested) tuple/list/dict/ModelOutput, or ``None``."""
    if isinstance(obj, torch.Tensor):
        return obj
    if isinstance(obj, Mapping):
        obj = list(obj.values())
    if isinstance(obj, (tuple, list)):
        for o in obj:
            t = _first_tensor(o)
            if t is not None:
                return t
    return None


def trace_dtypes(model: nn.Module, run: Callable[[nn.Module], Any], device: str = "cpu",
                 mode: str = "fp32") -> pd.DataFrame:
    """Run ``run(model)`` under ``mode`` and record every module call's input/output dtype.

    Returns one row per module call, in call order: ``module`` (qualified
    name), ``type`` (class name), ``in`` and ``out`` dtypes. If ``run``
    returns a loss tensor, a last row ``loss`` records its dtype.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    ctx = precision_context(device, mode)
    rows: list[dict] = []

    def hook(name):
        def fn(mod, args, kwargs, out):
            t_in = _first_tensor(args) if args else _first_tensor(kwargs)
            t_out = _first_tensor(out)
            rows.append({"module": name or "(model)", "type": type(mod).__name__,
                         "in": short_dtype(t_in.dtype) if t_in is not None else "-",
                         "out": short_dtype(t_out.dtype) if t_out is not None else "-"})
        return fn

    handles = [m.register_forward_hook(hook(n), with_kwargs=True) for n, m in model.named_modules()]
    try:
        with ctx:
            result = run(model)
    finally:
        for h in handles:
            h.remove()
    loss = result if isinstance(result, torch.Tensor) else None
    if loss is not None:
        rows.append({"module": "loss", "type": "loss (F.cross_entropy)", "in": "-", "out": short_dtype(loss.dtype)})
    return pd.DataFrame(rows)


def dtype_flow(model: nn.Module, run: Callable[[nn.Module], Any], device: str = "cpu",
               modes=MODES) -> pd.DataFrame:
    """Per module type (in first-call order), ``"in → out"`` dtypes for each precision mode."""
    cols = {}
    order: list[str] = []
    for mode in modes:
        t = trace_dtypes(model, run, device, mode)
        order += [ty for ty in dict.fromkeys(t["type"]) if ty not in order]
        cols[mode] = t.assign(flow=t["in"] + " → " + t["out"]).groupby("type")["flow"].agg(
            lambda s: " / ".join(dict.fromkeys(s)))
        cols.setdefault("calls", t.groupby("type").size())
    df = pd.DataFrame({"module type": order})
    df["calls"] = [int(cols["calls"].get(ty, 0)) for ty in order]
    for mode in modes:
        df[mode] = [cols[mode].get(ty, "-") for ty in order]
    return df


def _gpt_and_run(device: str, profile: Profile | None, seed: int = 0):
    p = profile or active_profile()
    torch.manual_seed(seed)
    cfg = GPTConfig.from_profile(p)
    model = GPT(cfg).to(device)
    idx, targets = random_batch(cfg, p["gpt_batch"], device, seed)
    return model, (lambda m: m(idx, targets)[1])


def gpt_dtype_flow(device: str = "cpu", modes=MODES, profile: Profile | None = None) -> pd.DataFrame:
    """``dtype_flow`` of the library's GPT (``amp_docs_lib.gpt``) on a random batch."""
    device = _check_device(device)
    for m in modes:
        _check_mode(m)
    model, run = _gpt_and_run(device, profile)
    with torch.no_grad():
        return dtype_flow(model, run, device, modes)


def training_state_dtypes(model: nn.Module, run: Callable[[nn.Module], torch.Tensor],
                          device: str = "cpu", mode: str = "amp_bf16",
                          lr: float = 1e-3) -> pd.DataFrame:
    """One AdamW step with the forward under ``mode``; dtypes of what training keeps.

    Rows: parameters, gradients, ``exp_avg`` and ``exp_avg_sq``, each with
    the dtypes found and the number of tensors.
    """
    _check_mode(mode)
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    opt.zero_grad(set_to_none=True)
    with precision_context(device, mode):
        loss = run(model)
    loss.backward()  # outside autocast, as recommended
    opt.step()
    params = list(model.parameters())
    groups = {
        "parameters": [p.dtype for p in params],
        "gradients (.grad)": [p.grad.dtype for p in params if p.grad is not None],
        "AdamW exp_avg": [opt.state[p]["exp_avg"].dtype for p in params if p in opt.state],
        "AdamW exp_avg_sq": [opt.state[p]["exp_avg_sq"].dtype for p in params if p in opt.state],
        "loss": [loss.dtype],
    }
    return pd.DataFrame([{"tensors": k, "dtypes": ", ".join(sorted({short_dtype(d) for d in v})),
                          "count": len(v)} for k, v in groups.items()])


def gpt_training_state_dtypes(device: str = "cpu", mode: str = "amp_bf16",
                              profile: Profile | None = None) -> pd.DataFrame:
    """``training_state_dtypes`` for the library's GPT after one autocast step."""
    model, run = _gpt_and_run(_check_device(device), profile)
    return training_state_dtypes(model, run, device, mode)


def gpt2_dtype_flow(device: str = "cpu", modes=MODES, *, n_layer: int = 2, n_embd: int = 64,
                    n_head: int = 4, vocab_size: int = 128, n_positions: int = 32,
                    batch: int = 2, seed: int = 0) -> pd.DataFrame:
    """``dtype_flow`` of a randomly initialised Hugging Face GPT-2 (tiny config, no download).

    Needs the ``transformers`` package.
    """
    try:
        from transformers import GPT2Config, GPT2LMHeadModel
    except ImportError as e:
        raise ImportError("gpt2_dtype_flow needs the `transformers` package (pip install transformers)") from e
    device = _check_device(device)
    for m in modes:
        _check_mode(m)
    torch.manual_seed(seed)
    config = GPT2Config(vocab_size=vocab_size, n_positions=n_positions, n_embd=n_embd,
                        n_layer=n_layer, n_head=n_head)
    model = GPT2LMHeadModel(config).to(device).eval()
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, vocab_size, (batch, n_positions), generator=g).to(device)

    def run(m):
        return m(input_ids=ids, labels=ids).loss

    with torch.no_grad():
        return dtype_flow(model, run, device, modes)


# Float dtypes in the book's colours (core.palette); an integer output and "no output" in neutral greys.
_DTYPE_COLORS = {"float32": color_of("float32"), "float16": color_of("float16"), "bfloat16": color_of("bfloat16"),
                 "int64": "#bbbbbb", "-": "#ffffff"}


def plot_dtype_flow(flow: pd.DataFrame, title: str = "Output dtype per module type"):
    """A grid figure: one row per module type, one column per mode, coloured by output dtype."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    modes = [c for c in flow.columns if c in MODES]
    if not modes:
        raise ValueError(f"flow has no mode columns; expected some of {list(MODES)}")
    n, m = len(flow), len(modes)
    fig, ax = plt.subplots(figsize=(2.3 * m + 2.4, 0.36 * n + 1.2))
    outs = set()
    for i in range(n):
        for j, mode in enumerate(modes):
            text = str(flow.iloc[i][mode])
            cell_outs = list(dict.fromkeys(f.split(" → ")[-1] for f in text.split(" / ")))
            outs.update(cell_outs)
            w = 1 / len(cell_outs)  # a cell whose calls end in several dtypes is striped
            for k, out in enumerate(cell_outs):
                ax.add_patch(plt.Rectangle((j + k * w, n - 1 - i), w, 1, lw=0,
                                           color=_DTYPE_COLORS.get(out, "#cccccc")))
            ax.add_patch(plt.Rectangle((j, n - 1 - i), 1, 1, fill=False, ec="white", lw=1.5))
            ax.text(j + 0.5, n - 0.5 - i, text.replace("float", "f"), ha="center", va="center",
                    fontsize=7.5, color="white")
    ax.set_xlim(0, m)
    ax.set_ylim(0, n)
    ax.set_xticks([j + 0.5 for j in range(m)], modes)
    ax.xaxis.tick_top()
    ax.set_yticks([n - 0.5 - i for i in range(n)], flow["module type"])
    ax.tick_params(length=0)
    for s in ax.spines.values():
        s.set_visible(False)
    used = [k for k in _DTYPE_COLORS if k in outs and k != "-"]
    ax.legend(handles=[Patch(color=_DTYPE_COLORS[k], label=f"output {k}") for k in used],
              loc="upper center", bbox_to_anchor=(0.5, -0.02), ncol=len(used), fontsize=8, frameon=False)
    ax.set_title(title, fontsize=10, pad=22)
    return fig
