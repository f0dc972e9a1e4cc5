"""FP8 training of the library's GPT with torchao, against BF16 and FP32, same seeds and batches.

``torchao.float8.convert_to_float8_training`` swaps each ``nn.Linear`` for a ``Float8Linear``
that quantizes its input, weight and output gradient to FP8 for the three GEMMs of a linear
layer (E4M3 forward; the recipe decides the backward format). The recipe comes from
``Float8LinearConfig.from_recipe_name("tensorwise" | "rowwise")``. On a CPU or a GPU without FP8
tensor cores the GEMMs run through ``torch._scaled_mm``'s reference kernels, so the numbers are
the same as natively up to accumulation order; only speed differs.

Every run uses BF16 autocast around the forward pass (the FP8 runs add FP8 linears on top of
it), FP32 master weights and AdamW; the ``fp32`` run has no autocast. The language-model head is
left in high precision (as torchao's and torchtitan's examples do for the output layer).
"""

from __future__ import annotations

import time

import pandas as pd
import torch

from amp_docs_lib.core.devices import check_device
from amp_docs_lib.fp8.gemm import fp8_device
from amp_docs_lib.gpt import GPT, GPTConfig
from amp_docs_lib.core.profiles import active_profile

RECIPES = ("fp32", "bf16", "float8 tensorwise", "float8 rowwise")


def pattern_batches(cfg: GPTConfig, batch: int, steps: int, *, seed: int = 0, noise: float = 0.1,
                    device: str | torch.device = "cpu") -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Seeded batches of a learnable token language: ``x[t+1] = (5 * x[t] + 3) mod vocab``,
    with a fraction ``noise`` of tokens replaced at random (so the loss has a floor above zero)."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(steps):
        start = torch.randint(0, cfg.vocab_size, (batch, 1), generator=g)
        seq = [start]
        for _ in range(cfg.block_size):
            seq.append((5 * seq[-1] + 3) % cfg.vocab_size)
        data = torch.cat(seq, dim=1)
        flip = torch.rand(data.shape, generator=g) < noise
        data = torch.where(flip, torch.randint(0, cfg.vocab_size, data.shape, generator=g), data)
        out.append((data[:, :-1].to(device), data[:, 1:].to(device)))
    return out


def float8_config(recipe: str):
    """torchao's ``Float8LinearConfig`` for "tensorwise" or "rowwise" (``from_recipe_name``)."""
    from torchao.float8 import Float8LinearConfig

    valid = ("tensorwise", "rowwise")
    if recipe not in valid:
        raise ValueError(f"unknown float8 recipe {recipe!r}; valid: {list(valid)}")
    return Float8LinearConfig.from_recipe_name(recipe)


def build_model(recipe: str, cfg: GPTConfig, *, seed: int = 0, device: str | torch.device = "cpu") -> torch.nn.Module:
    """The GPT with a seeded initialisation; FP8 recipes convert its linears (not ``lm_head``)."""
    if recipe not in RECIPES:
        raise ValueError(f"unknown training recipe {recipe!r}; valid: {list(RECIPES)}")
    torch.manual_seed(seed)
    model = GPT(cfg).to(device)
    if recipe.startswith("float8"):
        from torchao.float8 import convert_to_float8_training

        convert_to_float8_training(model, config=float8_config(recipe.split()[1]),
                                   module_filter_fn=lambda mod, fqn: fqn != "lm_head")
    return model


def train_curves(recipes=RECIPES, steps: int | None = None, *, seed: int = 0, lr: float = 3e-3,
                 device: str | torch.device | None = None, cfg: GPTConfig | None = None,
                 cpu_threads: int | None = 1) -> pd.DataFrame:
    """Train one GPT per recipe on the same batches from the same initialisation.

    Sizes from the profile (``fp8_train_steps``, ``fp8_train_width``, ``fp8_train_seq``,
    ``fp8_train_batch``). Returns one row per recipe and step: loss and seconds for the step.
    On a CPU the runs use ``cpu_threads`` intra-op threads (restored afterwards; ``None`` leaves
    torch's setting): the GEMMs are tiny, and several threads on a busy 2-core machine spend
    their time waiting for each other (measured: a float8 step 10x slower with 2 threads than 1).
    """
    dev = check_device(device or fp8_device())
    if dev.type == "cpu" and cpu_threads is not None:
        if not isinstance(cpu_threads, int) or cpu_threads < 1:
            raise ValueError(f"cpu_threads must be a positive int or None, got {cpu_threads!r}")
        saved = torch.get_num_threads()
        torch.set_num_threads(cpu_threads)
        try:
            return train_curves(recipes, steps, seed=seed, lr=lr, device=dev, cfg=cfg, cpu_threads=None)
        finally:
            torch.set_num_threads(saved)
    p = active_profile()
    steps = p["fp8_train_steps"] if steps is None else steps
    if not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps must be a positive int, got {steps!r}")
    cfg = cfg or GPTConfig.from_profile(n_embd=p["fp8_train_width"], block_size=p["fp8_train_seq"])
    batches = pattern_batches(cfg, p["fp8_train_batch"], steps, seed=seed, device=dev)
    rows = []
    for recipe in recipes:
        model = build_model(recipe, cfg, seed=seed, device=dev)
        opt = torch.optim.AdamW(model.parameters(), lr=lr)
        use_ac = recipe != "fp32"
        for step, (x, y) in enumerate(batches):
            t0 = time.perf_counter()
            with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=use_ac):
                _, loss = model(x, y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            loss = loss.detach()
            if dev.type == "cuda":
                torch.cuda.synchronize()
            rows.append({"recipe": recipe, "step": step, "loss": loss.item(), "seconds": time.perf_counter() - t0})
    return pd.DataFrame(rows)


def curve_summary(curves: pd.DataFrame, last: int = 10, baseline: str = "bf16") -> pd.DataFrame:
    """Per recipe: first loss, mean loss of the ``last`` steps, its gap to ``baseline``, median step time."""
    rows = []
    base = curves[curves["recipe"] == baseline].tail(last)["loss"].mean()
    for recipe, g in curves.groupby("recipe", sort=False):
        tail = g.tail(last)["loss"].mean()
        rows.append({"recipe": recipe, "first loss": float(g["loss"].iloc[0]),
                     f"mean loss, last {last} steps": float(tail),
                     f"gap to {baseline}": float(tail - base),
                     "median step (ms)": float(g["seconds"].median() * 1e3)})
    return pd.DataFrame(rows)


def plot_curves(curves: pd.DataFrame, baseline: str = "bf16"):
    """Two panels: loss against step per recipe, and each recipe's loss minus ``baseline``'s."""
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(2, 1, figsize=(8, 5.5), sharex=True, height_ratios=(2, 1))
    base = curves[curves["recipe"] == baseline].set_index("step")["loss"]
    for recipe, g in curves.groupby("recipe", sort=False):
        a1.plot(g["step"], g["loss"], label=recipe, lw=1.2)
        a2.plot(g["step"], g.set_index("step")["loss"] - base, label=recipe, lw=1.0)
    a1.set_ylabel("training loss")
    a2.set_ylabel(f"loss - {baseline} loss")
    a2.set_xlabel("step")
    a1.set_title("GPT training loss: FP8 (torchao) against BF16 and FP32, same seeds and batches")
    a1.legend(fontsize=8)
    fig.tight_layout()
    return fig


def float8_modules(model: torch.nn.Module) -> list[str]:
    """Names of the modules that torchao converted to ``Float8Linear``."""
    from torchao.float8.float8_linear import Float8Linear

    return [n for n, m in model.named_modules() if isinstance(m, Float8Linear)]


def recipe_config_table(recipes=("tensorwise", "rowwise")) -> pd.DataFrame:
    """What each torchao recipe does, read from the installed ``Float8LinearConfig``: scaling
    granularity and FP8 dtype for input, weight and output gradient; power-of-two scales."""
    rows = []
    for r in recipes:
        c = float8_config(r)
        row = {"recipe": r}
        for label, cc in (("input", c.cast_config_input), ("weight", c.cast_config_weight),
                          ("grad_output", c.cast_config_grad_output)):
            row[label] = f"{cc.scaling_granularity.value}, {str(cc.target_dtype).replace('torch.', '')}"
        row["power-of-two scales"] = bool(c.round_scales_to_power_of_2)
        rows.append(row)
    return pd.DataFrame(rows)
