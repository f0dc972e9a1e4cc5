"""Name the first module that produces inf or NaN, in forward and in backward.

:func:`locate_nonfinite` registers a forward hook and a full backward hook on every leaf
module (or on the modules given), runs forward, loss and backward once, and records each
module whose *output* (forward) or *gradient with respect to its input* (backward) contains
inf or NaN while what came into it was finite. The first such module in execution order is
where the problem starts. :func:`anomaly_report` runs the same step under
```torch.autograd.detect_anomaly`` for comparison: it names the autograd *function* whose
backward returned NaN, and only checks backward. :func:`first_nonfinite_ops` looks one level
lower, at every ATen operator (a ``TorchDispatchMode``): it finds faults in code written inside
a module's ``forward`` (a multiply, a residual add, ``F.cross_entropy``), which module hooks
cannot see, and names the operator and the line of Python that called it.

The tools take any model and any input: floating features, or integer token ids such as the
book's GPT takes (``amp_docs_lib.gpt.GPT``); a model that returns a tuple (the GPT returns
``(logits, loss)``) is judged by its first floating tensor.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn
from amp_docs_lib.core.tables import short_dtype


def check_floating(t: Any, name: str = "tensor") -> torch.Tensor:
    """Raise ``TypeError`` unless ``t`` is a floating-point tensor (the tools need one)."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if not t.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor, got dtype {t.dtype}; "
                        f"valid dtypes: float16, bfloat16, float32, float64")
    return t


MODEL_OUTPUT = "(model output)"  # the backward event name for a non-finite gradient of the model's output


def check_input(x: Any, name: str = "x") -> Any:
    """Raise ``TypeError`` unless ``x`` is a tensor (any dtype: features or token ids) or a tuple of tensors."""
    items = x if isinstance(x, tuple) else (x,)
    if not items or not all(isinstance(t, torch.Tensor) for t in items):
        got = type(x).__name__ if not isinstance(x, tuple) else f"tuple of {[type(t).__name__ for t in x]}"
        raise TypeError(f"{name} must be a torch.Tensor or a tuple of tensors, got {got}")
    return x


def model_output(out: Any) -> torch.Tensor:
    """The tensor a model's result is judged by: the result itself, or the first floating tensor of a tuple."""
    if isinstance(out, torch.Tensor):
        return out
    if isinstance(out, (tuple, list)):
        for t in out:
            if isinstance(t, torch.Tensor) and t.is_floating_point():
                return t
    raise TypeError(f"the model returned {type(out).__name__} with no floating tensor to judge")


def default_loss(out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of ``out`` (``(..., classes)``, e.g. a GPT's ``(B, T, V)`` logits) against ``y``."""
    return F.cross_entropy(out.reshape(-1, out.size(-1)), y.reshape(-1))


def call_model(model: nn.Module, x: Any) -> Any:
    return model(*x) if isinstance(x, tuple) else model(x)


def _with_grad(x: Any) -> Any:
    """Floating inputs get ``requires_grad`` (so the first module's input gradient exists); token ids stay."""
    if isinstance(x, tuple):
        return tuple(_with_grad(t) for t in x)
    return x.detach().requires_grad_(True) if x.is_floating_point() else x


def resolve_modules(model: nn.Module, modules: Iterable[str | nn.Module] | None = None) -> dict[str, nn.Module]:
    """``{qualified name: module}`` for ``modules`` (names or module objects) or all leaf modules.

    Raises ``TypeError`` when ``model`` is not an ``nn.Module`` and ``ValueError`` naming
    the valid names when a requested module is not part of ``model``.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    named = dict(model.named_modules())
    if modules is None:
        return {n: m for n, m in named.items()
                if n and not list(m.children()) and not isinstance(m, nn.Identity)}
    by_obj = {id(m): n for n, m in named.items()}
    out: dict[str, nn.Module] = {}
    for m in modules:
        if isinstance(m, str):
            if m not in named:
                raise ValueError(f"module {m!r} is not in the model; valid names: "
                                 f"{[n for n in named if n]}")
            out[m] = named[m]
        elif isinstance(m, nn.Module):
            if id(m) not in by_obj:
                raise ValueError(f"module {type(m).__name__} object is not part of the model; "
                                 f"valid names: {[n for n in named if n]}")
            out[by_obj[id(m)]] = m
        else:
            raise TypeError(f"modules must be names or nn.Module objects, got {type(m).__name__}")
    return out


def _nonfinite(x: Any) -> tuple[int, int]:
    """(number of infs, number of NaNs) over the floating tensors in ``x``."""
    if isinstance(x, torch.Tensor):
        if x.is_floating_point():
            return int(torch.isinf(x).sum()), int(torch.isnan(x).sum())
        return 0, 0
    if isinstance(x, (tuple, list)):
        infs = nans = 0
        for v in x:
            i, n = _nonfinite(v)
            infs, nans = infs + i, nans + n
        return infs, nans
    return 0, 0


@dataclass
class NonfiniteReport:
    """What :func:`locate_nonfinite` found: every event in order, and the first per pass."""

    events: pd.DataFrame
    first_forward: str | None
    first_backward: str | None
    loss: float = field(default=float("nan"))


def locate_nonfinite(model: nn.Module, x: Any, y: torch.Tensor | None = None, *,
                     loss_fn: Callable[..., torch.Tensor] = default_loss,
                     autocast_dtype: torch.dtype | None = None,
                     modules: Iterable[str | nn.Module] | None = None,
                     loss_scale: float = 1.0) -> NonfiniteReport:
    """Run one forward + backward and name the first module producing inf/NaN in each pass.

    Args:
        model: the model (left unchanged; hooks are removed afterwards).
        x: the input: a tensor of any dtype (features, or token ids) or a tuple of positional
            arguments.
        y: target for ``loss_fn``; without it the loss is ``output.float().sum()``.
        loss_fn: loss applied to ``(output.float(), y)`` (default: cross-entropy over the last dim).
        autocast_dtype: run forward under ``torch.autocast(device, dtype=...)``.
        modules: names or modules to watch (default: every leaf module).
        loss_scale: multiply the loss by this before backward, as a GradScaler does (its
            initial scale is 2**16). Scaled gradients can overflow FP16 where the true ones
            do not: the backward events then show what the scaler will skip, not a bug.

    Returns:
        A :class:`NonfiniteReport`. A module counts in forward when its output has inf/NaN and
        its inputs had none; in backward when the gradient w.r.t. its input has inf/NaN and the
        gradient w.r.t. its output had none. A gradient that is already non-finite when it
        reaches the model's output (the loss times a scale too large for the output's dtype)
        is reported as ``MODEL_OUTPUT``, first in backward.
    """
    check_input(x, "x")
    if not (isinstance(loss_scale, (int, float)) and loss_scale > 0 and math.isfinite(loss_scale)):
        raise ValueError(f"loss_scale must be a positive finite number, got {loss_scale!r}")
    watched = resolve_modules(model, modules)
    device_type = (x[0] if isinstance(x, tuple) else x).device.type
    events: list[dict[str, Any]] = []
    order = {"forward": 0, "backward": 0}

    def watch(pass_name: str, name: str) -> Callable[..., None]:
        """A hook recording where ``pass_name`` first produces a non-finite value from finite ones.

        A forward hook gets (module, inputs, output); a backward hook (module, grad_input,
        grad_output), where the gradient flows from grad_output to grad_input.
        """
        def hook(module: nn.Module, first: Any, second: Any) -> None:
            upstream, produced = (first, second) if pass_name == "forward" else (second, first)
            order[pass_name] += 1
            i_up, n_up = _nonfinite(upstream)
            i_pr, n_pr = _nonfinite(produced)
            if (i_pr or n_pr) and not (i_up or n_up):
                events.append({"pass": pass_name, "order": order[pass_name], "module": name,
                               "type": type(module).__name__, "infs": i_pr, "nans": n_pr})
        return hook

    handles = []
    for name, m in watched.items():
        handles.append(m.register_forward_hook(watch("forward", name)))
        handles.append(m.register_full_backward_hook(watch("backward", name)))
    try:
        x = _with_grad(x)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with torch.autocast(device_type, dtype=autocast_dtype or torch.float32,
                                enabled=autocast_dtype is not None):
                out = model_output(call_model(model, x))
            if out.requires_grad:  # the gradient arriving from the loss, before any module's backward
                out.register_hook(lambda g: events.append(
                    {"pass": "backward", "order": 0, "module": MODEL_OUTPUT, "type": "loss gradient",
                     "infs": _nonfinite(g)[0], "nans": _nonfinite(g)[1]}) if any(_nonfinite(g)) else None)
            loss = loss_fn(out.float(), y) if y is not None else out.float().sum()
            model.zero_grad(set_to_none=True)
            (loss * loss_scale).backward()
    finally:
        for h in handles:
            h.remove()
    df = pd.DataFrame(events, columns=["pass", "order", "module", "type", "infs", "nans"])
    first = {p: (df[df["pass"] == p].sort_values("order")["module"].iloc[0]
                 if (df["pass"] == p).any() else None) for p in ("forward", "backward")}
    return NonfiniteReport(df, first["forward"], first["backward"], float(loss.detach()))


def anomaly_report(model: nn.Module, x: Any, y: torch.Tensor | None = None, *,
                   loss_fn: Callable[..., torch.Tensor] = default_loss,
                   autocast_dtype: torch.dtype | None = None) -> dict[str, Any]:
    """The same step under ``torch.autograd.detect_anomaly(check_nan=True)``.

    Returns ``raised`` (whether backward raised), ``message`` (the error's first line, which
    names the autograd function, e.g. ``'SqrtBackward0'``), ``seconds`` (wall time) and
    ``forward_frame``: the last frame of the forward traceback anomaly mode prints as a warning
    for the failing function (``(file, line, source)``, None when it warned nothing).
    """
    check_input(x, "x")
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    device_type = (x[0] if isinstance(x, tuple) else x).device.type
    t0 = time.perf_counter()
    raised, message = False, None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # detect_anomaly warns with the forward traceback: keep it
        try:
            with torch.autograd.detect_anomaly(check_nan=True):
                with torch.autocast(device_type, dtype=autocast_dtype or torch.float32,
                                    enabled=autocast_dtype is not None):
                    out = model_output(call_model(model, x))
                loss = loss_fn(out.float(), y) if y is not None else out.float().sum()
                model.zero_grad(set_to_none=True)
                loss.backward()
        except RuntimeError as e:
            raised, message = True, str(e).splitlines()[0]
    return {"raised": raised, "message": message, "seconds": time.perf_counter() - t0,
            "forward_frame": _last_forward_frame([str(w.message) for w in caught])}


def _last_forward_frame(messages: list[str]) -> tuple[str, int, str] | None:
    """``(file, line, source)`` of the last frame of anomaly mode's "Traceback of forward call" warning."""
    import re

    for text in messages:
        if "Traceback of forward call" not in text:
            continue
        frames = re.findall(r'File "([^"]+)", line (\d+), in [^\n]*\n\s*(.*)', text)
        if frames:
            file, line, source = frames[-1]
            return file, int(line), source.strip()
    return None


def first_nonfinite_ops(model: nn.Module, x: Any, y: torch.Tensor | None = None, *,
                        loss_fn: Callable[..., torch.Tensor] = default_loss,
                        autocast_dtype: torch.dtype | None = None, backward: bool = True,
                        limit: int = 10) -> pd.DataFrame:
    """Every ATen operator that turned finite inputs into a non-finite output, in execution order.

    Runs forward (under autocast if ``autocast_dtype``), the loss and, with ``backward``, backward
    inside a ``TorchDispatchMode`` that checks each operator's floating outputs. Returns at most
    ``limit`` rows: ``pass`` (forward/backward), ``op`` (``aten.mul.Tensor``), output ``dtype``, ``infs``,
    ``nans``, and ``file``/``line``/``code``: the innermost Python frame outside torch that called it
    (for backward operators, the line that called ``backward``).
    """
    import os
    import traceback

    from amp_docs_lib.core import dispatch
    from amp_docs_lib.core.dispatch import trace_ops

    dispatch_file = dispatch.__file__
    check_input(x, "x")
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    if not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be a positive int, got {limit!r}")
    torch_dir = os.path.dirname(torch.__file__)
    rows: list[dict[str, Any]] = []
    phase = {"pass": "forward"}

    def floating(values) -> list[torch.Tensor]:
        flat = []
        for v in values:
            if isinstance(v, torch.Tensor) and v.is_floating_point():
                flat.append(v)
            elif isinstance(v, (list, tuple)):
                flat += floating(v)
        return flat

    def check(func, args, kwargs, out) -> None:
        if len(rows) >= limit:
            return
        outs = floating(out if isinstance(out, (list, tuple)) else [out])
        bad = [t for t in outs if t.numel() and not bool(torch.isfinite(t).all())]
        if bad and all(bool(torch.isfinite(t).all()) for t in floating(list(args) + list(kwargs.values()))
                       if t.numel()):
            frame = next((fr for fr in reversed(traceback.extract_stack()[:-1])
                          if not fr.filename.startswith(torch_dir) and fr.filename not in (__file__, dispatch_file)),
                         None)
            rows.append({"pass": phase["pass"], "op": str(func), "dtype": short_dtype(bad[0].dtype),
                         "infs": int(sum(int(torch.isinf(t).sum()) for t in bad)),
                         "nans": int(sum(int(torch.isnan(t).sum()) for t in bad)),
                         "file": None if frame is None else frame.filename,
                         "line": None if frame is None else frame.lineno,
                         "code": None if frame is None else frame.line})

    device_type = (x[0] if isinstance(x, tuple) else x).device.type
    model.zero_grad(set_to_none=True)

    def run() -> None:
        with torch.autocast(device_type, dtype=autocast_dtype or torch.float32, enabled=autocast_dtype is not None):
            out = model_output(call_model(model, x))
        loss = loss_fn(out.float(), y) if y is not None else out.float().sum()
        if backward and loss.requires_grad:
            phase["pass"] = "backward"
            loss.backward()

    trace_ops(run, on_op=check)
    model.zero_grad(set_to_none=True)
    return pd.DataFrame(rows, columns=["pass", "op", "dtype", "infs", "nans", "file", "line", "code"])
