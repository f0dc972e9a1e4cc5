"""FP8 training of the library's GPT with torchao, against BF16 and FP32, same seeds and batches.

``torchao.float8.convert_to_float8_training`` swaps each ``nn.Linear`` for a ``Float8Linear``
that quantizes its input, weight and output gradient to FP8 for the three GEMMs of a linear
layer (E4M3 forward; the recipe decides the backward format). The recipe comes from
``Float8LinearConfig.from_recipe_name("tensorwise" | "rowwise" | "rowwise_with_gw_hp")``.

Where the FP8 GEMMs run is decided explicitly (:func:`amp_docs_lib.fp8.gemm.fp8_gemm_plan`): on a
GPU with FP8 (sm89, sm90+) natively; on the CPU through torch's CPU ``_scaled_mm``; on a CUDA GPU
without FP8, where ``torch._scaled_mm`` raises, with torchao's ``emulate=True`` (FP8 numerics,
high-precision matmul), said in the result's ``fp8 gemms`` column.

torchao's ``Float8Linear`` casts its input to the autocast dtype only under CUDA autocast
(``float8_linear.py``: "for now, hardcode to GPU's autocast dtype"); on a CPU the library adds the
same cast (:func:`cast_float8_inputs_for_cpu_autocast`), so the runs compare the same recipe on
both (and ``rowwise_with_gw_hp``, whose high-precision weight-gradient GEMM needs operands of one
dtype, runs at all).

Every run uses BF16 autocast around the forward pass (the FP8 runs add FP8 linears on top of
it), FP32 master weights and AdamW; the ``fp32`` run has no autocast. The language-model head is
left in high precision (as torchao's and torchtitan's examples do for the output layer).
"""

from __future__ import annotations

import time

import pandas as pd
import torch

from amp_docs_lib.core.tables import short_dtype
from amp_docs_lib.core.devices import check_device
from amp_docs_lib.fp8.gemm import fp8_gemm_plan, rowwise_scaled_mm_supported
from amp_docs_lib.gpt import GPT, GPTConfig
from amp_docs_lib.core.profiles import active_profile

FLOAT8_RECIPES = ("tensorwise", "rowwise", "rowwise_with_gw_hp")
# torchao 0.18's MXFP8 training (torchao.prototype.moe_training), emulated: RCEIL, its recipes' rule, and
# FLOOR, the OCP specification's, as the contrast the chapter's MX scale-rule section argues about
MX_SCALE_RULES = ("rceil", "floor")
RECIPES = (("fp32", "bf16") + tuple(f"float8 {r}" for r in FLOAT8_RECIPES)
           + tuple(f"mxfp8 {m} (emulated)" for m in MX_SCALE_RULES))


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

    if recipe not in FLOAT8_RECIPES:
        raise ValueError(f"unknown float8 recipe {recipe!r}; valid: {list(FLOAT8_RECIPES)}")
    return Float8LinearConfig.from_recipe_name(recipe)


def this_machine_plan() -> dict:
    """:func:`amp_docs_lib.fp8.gemm.fp8_gemm_plan` for this machine's first GPU (or none)."""
    from amp_docs_lib.fp8.gemm import _this_gpu

    cap, hip = _this_gpu()
    return fp8_gemm_plan(cap, hip_arch=hip)


def _cpu_autocast_cast(module, args):
    x = args[0]
    if isinstance(x, torch.Tensor) and x.device.type == "cpu" and x.is_floating_point() \
            and torch.is_autocast_enabled("cpu"):
        return (x.to(torch.get_autocast_dtype("cpu")),) + tuple(args[1:])
    return None


def cast_float8_inputs_for_cpu_autocast(model: torch.nn.Module) -> int:
    """Give every ``Float8Linear`` of ``model`` the input cast torchao does only for CUDA autocast.

    A forward pre-hook casts a CPU input to the CPU autocast dtype while CPU autocast is on (as
    ``nn.Linear`` under autocast would). Returns how many modules got the hook.
    """
    from torchao.float8.float8_linear import Float8Linear

    n = 0
    for m in model.modules():
        if isinstance(m, Float8Linear):
            m.register_forward_pre_hook(_cpu_autocast_cast)
            n += 1
    return n


def convert(model: torch.nn.Module, recipe: str, *, emulate: bool = False, module_filter_fn=None) -> torch.nn.Module:
    """``convert_to_float8_training`` with ``recipe`` (``emulate`` for a GPU without FP8) and the CPU
    autocast input cast; returns the model."""
    import dataclasses

    from torchao.float8 import convert_to_float8_training

    config = dataclasses.replace(float8_config(recipe), emulate=emulate)
    convert_to_float8_training(model, config=config, module_filter_fn=module_filter_fn)
    cast_float8_inputs_for_cpu_autocast(model)
    return model


def mx_training_config(rule: str = "rceil"):
    """torchao's ``MXFP8TrainingOpConfig`` with ``KernelPreference.EMULATED`` and the scale ``rule``:
    ``"rceil"`` is its recipe ``MXFP8_EMULATED_RCEIL``; ``"floor"`` the same with FLOOR scales."""
    import dataclasses

    from torchao.prototype.moe_training.config import MXFP8TrainingOpConfig, MXFP8TrainingRecipe
    from torchao.prototype.mx_formats.config import ScaleCalculationMode

    if rule not in MX_SCALE_RULES:
        raise ValueError(f"unknown MX scale rule {rule!r}; valid: {list(MX_SCALE_RULES)}")
    config = MXFP8TrainingOpConfig.from_recipe(MXFP8TrainingRecipe.MXFP8_EMULATED_RCEIL)
    return dataclasses.replace(config, scale_calculation_mode=ScaleCalculationMode[rule.upper()])


def convert_mx(model: torch.nn.Module, rule: str = "rceil", *, skip=("lm_head",)) -> torch.nn.Module:
    """Give every ``nn.Linear`` of ``model`` outside ``skip`` torchao's emulated MXFP8 training (``quantize_``
    with :func:`mx_training_config`); returns the model.

    torchao 0.18's emulated MX GEMM multiplies the dequantized operands with ``aten.mm``, which refuses a
    BF16 input against the FP32 master weight under autocast, so these linears run outside autocast on
    FP32 inputs (both operands are quantized to MXFP8 either way) and hand on their output in the
    autocast dtype, as an autocast linear does.

    The bias stays an ordinary parameter and is added here: ``quantize_`` wraps every parameter of the
    module, bias included, and torchao 0.18's linear override of ``MXFP8TrainingWeightWrapperTensor``
    drops the bias argument (``torchao/prototype/moe_training/tensor.py``, the ``linear`` branch calls
    ``_to_mxfp8_then_scaled_mm(A, B)`` only; :func:`mx_override_drops_bias` measures it). The weight is
    passed alone, so a torchao that adds the bias itself would not add it twice.
    """
    from torchao.quantization import quantize_

    def wanted(m, fqn):
        return isinstance(m, torch.nn.Linear) and fqn not in skip

    biases = {fqn: m.bias for fqn, m in model.named_modules() if wanted(m, fqn) and m.bias is not None}
    quantize_(model, mx_training_config(rule), filter_fn=wanted)
    for name in mx_modules(model):
        mod = model.get_submodule(name)
        if name in biases:
            mod.bias = biases[name]  # the plain parameter quantize_ replaced: not a GEMM operand

        def forward(x, _mod=mod):
            dev = x.device.type
            out_dtype = torch.get_autocast_dtype(dev) if torch.is_autocast_enabled(dev) else None
            with torch.autocast(dev, enabled=False):
                y = torch.nn.functional.linear(x.float(), _mod.weight)
                if _mod.bias is not None:
                    y = y + _mod.bias
            return y if out_dtype is None else y.to(out_dtype)  # what an autocast linear hands on
        mod.forward = forward
    return model


def mx_override_drops_bias(features: int = 64, *, seed: int = 0) -> bool:
    """Whether this torchao's MXFP8 linear override ignores ``F.linear``'s bias: the same wrapped weight
    with a bias of ones and with no bias gives identical outputs."""
    from torchao.prototype.moe_training.tensor import MXFP8TrainingWeightWrapperTensor

    g = torch.Generator().manual_seed(seed)
    x = torch.randn(features, features, generator=g)
    w = MXFP8TrainingWeightWrapperTensor(torch.randn(features, features, generator=g), mx_training_config())
    with torch.no_grad():
        return bool(torch.equal(torch.nn.functional.linear(x, w, torch.ones(features)),
                                torch.nn.functional.linear(x, w)))


def mx_linear_bias_errors(features: int = 256, rule: str = "rceil", *, seed: int = 0) -> dict:
    """One linear with a bias of the output's own size, converted with :func:`convert_mx`: the relative
    error (Frobenius norm) of its output against ``x @ W.T + b`` (MXFP8 rounding alone) and against
    ``x @ W.T`` (what a linear that dropped its bias would match), and the gradient the bias received."""
    torch.manual_seed(seed)
    layer = torch.nn.Sequential(torch.nn.Linear(features, features))
    x = torch.randn(2 * features, features)
    with torch.no_grad():
        layer[0].bias.copy_(torch.randn(features) * (x @ layer[0].weight.T).std())
        w, b = layer[0].weight.clone(), layer[0].bias.clone()
    convert_mx(layer, rule, skip=())
    y = layer(x)
    y.sum().backward()

    def rel(ref):
        return float((y.detach() - ref).norm() / ref.norm())
    grad = layer[0].bias.grad
    return {"vs x@W.T + b": rel(x @ w.T + b), "vs x@W.T": rel(x @ w.T),
            "bias gradient": None if grad is None else float(grad.abs().sum())}


def mx_modules(model: torch.nn.Module) -> list[str]:
    """Names of the linears whose weight torchao wrapped for MXFP8 training."""
    from torchao.prototype.moe_training.tensor import MXFP8TrainingWeightWrapperTensor

    return [n for n, m in model.named_modules()
            if isinstance(m, torch.nn.Linear) and isinstance(m.weight, MXFP8TrainingWeightWrapperTensor)]


def converted_linears(model: torch.nn.Module) -> int:
    """How many linears of ``model`` a low-precision recipe converted (``Float8Linear`` or MXFP8 weights)."""
    return len(float8_modules(model)) + len(mx_modules(model))


def linear_layer(recipe: str, features: int = 256, *, seed: int = 0) -> torch.nn.Module:
    """One bias-free ``features x features`` CPU linear layer: ``nn.Linear`` for ``"bf16"``, or converted
    with ``"float8 <recipe>"`` (emulated where this torch's CPU ``_scaled_mm`` refuses rowwise scales;
    what the forward saves for backward is the same either way)."""
    torch.manual_seed(seed)
    layer = torch.nn.Sequential(torch.nn.Linear(features, features, bias=False))
    if recipe == "bf16":
        return layer
    if not recipe.startswith("float8 "):
        raise ValueError(f"unknown recipe {recipe!r}; valid: ['bf16'] + {[f'float8 {r}' for r in FLOAT8_RECIPES]}")
    name = recipe.split(" ", 1)[1]
    return convert(layer, name, emulate=name.startswith("rowwise") and not rowwise_scaled_mm_supported("cpu"))


def build_model(recipe: str, cfg: GPTConfig, *, seed: int = 0, device: str | torch.device = "cpu",
                emulate: bool = False) -> torch.nn.Module:
    """The GPT with a seeded initialisation; FP8 recipes convert its linears (not ``lm_head``)."""
    if recipe not in RECIPES:
        raise ValueError(f"unknown training recipe {recipe!r}; valid: {list(RECIPES)}")
    torch.manual_seed(seed)
    model = GPT(cfg).to(device)
    if recipe.startswith("float8"):
        convert(model, recipe.split()[1], emulate=emulate, module_filter_fn=lambda mod, fqn: fqn != "lm_head")
    elif recipe.startswith("mxfp8"):
        convert_mx(model, recipe.split()[1])
    return model


def mx_training_unsupported() -> str | None:
    """Why torchao's MXFP8 training cannot run on this torch (its own check, the exception it raises), or
    None where it can: torchao 0.18 asserts torch internals that torch 2.11 lacks ("Please install the latest
    torch nightly build to use MXFP8 training", ``moe_training/conversion_utils.py``)."""
    from torchao.prototype.moe_training.conversion_utils import _get_tensor_cls_for_config

    try:
        _get_tensor_cls_for_config(mx_training_config())
    except (AssertionError, ImportError, AttributeError) as e:
        return f"{type(e).__name__}: {e}"
    return None


def available_recipes() -> tuple[str, ...]:
    """:data:`RECIPES` that run with this torch and torchao (the MXFP8 ones only where
    :func:`mx_training_unsupported` is None)."""
    mx_ok = mx_training_unsupported() is None
    return tuple(r for r in RECIPES if mx_ok or not r.startswith("mxfp8"))


def train_curves(recipes=None, steps: int | None = None, *, seed: int = 0, lr: float = 3e-3,
                 device: str | torch.device | None = None, cfg: GPTConfig | None = None,
                 cpu_threads: int | None = 1) -> pd.DataFrame:
    """Train one GPT per recipe on the same batches from the same initialisation.

    ``recipes`` defaults to :func:`available_recipes`. Sizes from the profile (``fp8_train_steps``,
    ``fp8_train_width``, ``fp8_train_seq``, ``fp8_train_batch``). Returns one row per recipe and step: loss and seconds for the step.
    On a CPU the runs use ``cpu_threads`` intra-op threads (restored afterwards; ``None`` leaves
    torch's setting): the GEMMs are tiny, and several threads on a busy 2-core machine spend
    their time waiting for each other (measured: a float8 step 10x slower with 2 threads than 1).
    """
    plan = this_machine_plan()
    dev = check_device(device or plan["device"])
    emulate = plan["emulate"] and dev.type == "cuda"
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
    for recipe in available_recipes() if recipes is None else recipes:
        # An older torch's CPU _scaled_mm (2.11) refuses rowwise scales: such recipes run emulated, and say so.
        refused = recipe.startswith("float8 rowwise") and not emulate and not rowwise_scaled_mm_supported(str(dev))
        model = build_model(recipe, cfg, seed=seed, device=dev, emulate=emulate or refused)
        opt = torch.optim.AdamW(model.parameters(), lr=lr)
        use_ac = recipe != "fp32"
        low = recipe.startswith(("float8", "mxfp8"))
        n_converted = converted_linears(model) if low else None
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
            rows.append({"recipe": recipe, "step": step, "loss": loss.item(), "seconds": time.perf_counter() - t0,
                         "fp8 gemms": None if not low else
                         "emulated MXFP8 (KernelPreference.EMULATED: dequantized operands, aten.mm)"
                         if recipe.startswith("mxfp8") else
                         ("emulated (emulate=True)" if emulate else
                          f"emulated (emulate=True): torch {torch.__version__}'s {dev.type} _scaled_mm takes "
                          "per-tensor scales only" if refused else f"torch._scaled_mm on {dev.type}"),
                         "converted linears": n_converted})
        n_scaled = scaled_mm_calls(model, *batches[-1], autocast=use_ac)
        for r in rows[-len(batches):]:
            r["_scaled_mm calls per step"] = n_scaled
    return pd.DataFrame(rows)


def scaled_mm_calls(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, *, autocast: bool = True) -> int:
    """How many ``aten::_scaled_mm`` calls one forward and backward pass of ``model`` makes (untimed, no
    optimizer step; gradients cleared afterwards), counted by torch's profiler: a dispatch mode does not see
    them, since torchao calls ``_scaled_mm`` inside its tensor subclass's own dispatch."""
    from torch.profiler import ProfilerActivity, profile

    from amp_docs_lib.core.profiling import quiet_stderr

    with quiet_stderr(), profile(activities=[ProfilerActivity.CPU]) as prof:
        with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=autocast):
            _, loss = model(x, y)
        loss.backward()
    model.zero_grad(set_to_none=True)
    return int(sum(e.count for e in prof.key_averages() if e.key == "aten::_scaled_mm"))


def linear_layers(cfg: GPTConfig, *, skip=("lm_head",)) -> int:
    """How many ``nn.Linear`` modules the (unconverted) GPT has outside ``skip``: what a recipe should convert."""
    model = GPT(cfg)
    return sum(isinstance(m, torch.nn.Linear) for n, m in model.named_modules() if n not in skip)


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

    from amp_docs_lib.core.palette import color_or_default

    fig, (a1, a2) = plt.subplots(2, 1, figsize=(8, 6), sharex=True, height_ratios=(2, 1), layout="constrained")
    base = curves[curves["recipe"] == baseline].set_index("step")["loss"]
    styles = ("-", "--", "-.", ":")
    for i, (recipe, g) in enumerate(curves.groupby("recipe", sort=False)):
        style = dict(color=color_or_default(recipe, f"C{i}"), ls=styles[i % len(styles)])
        a1.plot(g["step"], g["loss"], label=recipe, lw=1.4, **style)
        a2.plot(g["step"], g.set_index("step")["loss"] - base, label=recipe, lw=1.2, **style)
    a1.set_ylabel("training loss")
    a2.set_ylabel(f"loss - {baseline} loss")
    a2.set_xlabel("step")
    a1.set_title("GPT training loss: FP8 (torchao) against BF16 and FP32")
    fig.legend(*a1.get_legend_handles_labels(), loc="outside lower center", ncol=3, frameon=False)
    return fig


def float8_modules(model: torch.nn.Module) -> list[str]:
    """Names of the modules that torchao converted to ``Float8Linear``."""
    from torchao.float8.float8_linear import Float8Linear

    return [n for n, m in model.named_modules() if isinstance(m, Float8Linear)]


def fp8_gemms_per_layer(recipe: str) -> int:
    """How many of a ``Float8Linear``'s three GEMMs (output, grad_input, grad_weight) the installed torchao
    recipe runs in FP8: those whose operands its ``Float8LinearConfig`` casts (neither left in high precision)."""
    from torchao.float8.config import ScalingType

    c = float8_config(recipe)
    pairs = ((c.cast_config_input, c.cast_config_weight),
             (c.cast_config_grad_output, c.cast_config_weight_for_grad_input),
             (c.cast_config_grad_output_for_grad_weight, c.cast_config_input_for_grad_weight))
    return sum(all(cc.scaling_type is not ScalingType.DISABLED for cc in pair) for pair in pairs)


def recipe_config_table(recipes=FLOAT8_RECIPES) -> pd.DataFrame:
    """What each torchao recipe does, read from the installed ``Float8LinearConfig``: for each operand of
    each of the three GEMMs (output, grad_input, grad_weight), its scaling (type, granularity, dtype,
    or "high precision" where torchao leaves it unscaled), power-of-two scales, fast accumulation."""
    from torchao.float8.config import ScalingType

    def cast(cc):
        if cc.scaling_type is ScalingType.DISABLED:
            return "high precision"
        return f"{cc.scaling_type.value} {cc.scaling_granularity.value}, {short_dtype(cc.target_dtype)}"

    rows = []
    for r in recipes:
        c = float8_config(r)
        rows.append({"recipe": r,
                     "output = input @ weight^T": f"{cast(c.cast_config_input)} | {cast(c.cast_config_weight)}",
                     "grad_input = grad_output @ weight": f"{cast(c.cast_config_grad_output)} | "
                                                          f"{cast(c.cast_config_weight_for_grad_input)}",
                     "grad_weight = grad_output^T @ input": f"{cast(c.cast_config_grad_output_for_grad_weight)} | "
                                                            f"{cast(c.cast_config_input_for_grad_weight)}",
                     "power-of-two scales": bool(c.round_scales_to_power_of_2),
                     "fast accumulation (output GEMM)": bool(c.gemm_config_output.use_fast_accum)})
    return pd.DataFrame(rows)


def fsdp_float8_all_gather_support(recipes=FLOAT8_RECIPES) -> pd.DataFrame:
    """Which recipes accept ``enable_fsdp_float8_all_gather=True`` (FSDP2 all-gathers the weights in FP8),
    asked of the installed torchao: the config is rebuilt with the flag and its validation runs."""
    import dataclasses

    rows = []
    for r in recipes:
        try:
            dataclasses.replace(float8_config(r), enable_fsdp_float8_all_gather=True)
            ok, why = True, None
        except (AssertionError, ValueError) as e:
            ok, why = False, str(e).splitlines()[0][:120]
        rows.append({"recipe": r, "FP8 all-gather accepted": ok, "torchao says": why})
    return pd.DataFrame(rows, dtype=object)
