"""Post-training quantization with torchao's ``quantize_`` and the configs of the installed torchao.

``VARIANTS`` names each configuration the chapter uses, how to build its
config, and what it needs. ``try_variant`` applies it to a copy of a model and
records whether it ran on this device, and if not, the error torchao raised:
configs that cannot run here are reported with the reason, never dropped.

The configs are those of torchao 0.18 (checked against its source):
``Int8WeightOnlyConfig``, ``Int8DynamicActivationInt8WeightConfig``,
``IntxWeightOnlyConfig(weight_dtype=torch.int4, granularity=PerGroup(32))``
(INT4 on any device, stored unpacked in int8), ``Int4WeightOnlyConfig``
(packed INT4: the default plain packing needs the ``mslk`` kernels on a Hopper GPU (sm 9.0),
``int4_packing_format="tile_packed_to_4d"`` the tinygemm kernel on CUDA sm 8.0+), FP8 configs (weight-only runs anywhere
and is memory-only; dynamic needs CUDA sm 8.9+). Each variant's ``note`` says how it computes
per torchao's source; the chapter checks it against a dispatch trace (``quantization.kernels``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Callable

import pandas as pd
import torch
from torch import nn

from amp_docs_lib.core.tables import short_dtype
from amp_docs_lib.core.dispatch import trace_ops
from amp_docs_lib.quantization.affine import sqnr_db
from amp_docs_lib.quantization.calibration import capture_linears


@dataclass(frozen=True)
class Variant:
    """A torchao PTQ configuration: its label, config factory and what it needs."""

    name: str
    label: str
    weights: str
    activations: str
    make_config: Callable[[], object]
    needs: str  # human description of the hardware/kernels it needs
    note: str | None = None  # how it computes, from torchao 0.18's source (the chapter's dispatch trace checks it)
    min_cuda_capability: tuple[int, int] | None = None  # the CUDA compute capability its kernel needs; None: any device


def unmet_requirement(name: str, device: str | torch.device) -> str | None:
    """Why variant ``name`` cannot run on ``device`` (its :attr:`Variant.min_cuda_capability`), or None if it can.

    ``device`` may be a ``torch.device`` or a ``(major, minor)`` capability to plan for (the tests plan for GPUs
    they do not have). Only the compute capability is read; a missing package still fails when quantizing.
    """
    v = check_variant(name)
    if v.min_cuda_capability is None:
        return None
    need = "sm{}{}+".format(*v.min_cuda_capability)
    if isinstance(device, tuple):
        cap = device
    else:
        dev = torch.device(device)
        if dev.type != "cuda":
            return f"needs CUDA {need} ({v.needs}); this is {dev.type}"
        cap = torch.cuda.get_device_capability(dev)
    if tuple(cap) < v.min_cuda_capability:
        return f"needs CUDA {need} ({v.needs}); this GPU is sm{cap[0]}{cap[1]}"
    return None


def _int8_wo():
    from torchao.quantization import Int8WeightOnlyConfig
    return Int8WeightOnlyConfig()


def _int8_dyn():
    from torchao.quantization import Int8DynamicActivationInt8WeightConfig
    return Int8DynamicActivationInt8WeightConfig()


def _intx_wo(dtype=torch.int4, group_size: int | None = 32):
    from torchao.quantization import IntxWeightOnlyConfig
    from torchao.quantization.granularity import PerAxis, PerGroup
    gran = PerGroup(group_size) if group_size else PerAxis(0)
    return IntxWeightOnlyConfig(weight_dtype=dtype, granularity=gran)


def _int8_dyn_int4():
    from torchao.quantization import Int8DynamicActivationIntxWeightConfig
    from torchao.quantization.granularity import PerGroup
    return Int8DynamicActivationIntxWeightConfig(weight_dtype=torch.int4, weight_granularity=PerGroup(32))


def _int4_wo():
    from torchao.quantization import Int4WeightOnlyConfig
    return Int4WeightOnlyConfig(group_size=32)


def _int4_wo_tile():
    from torchao.quantization import Int4WeightOnlyConfig
    return Int4WeightOnlyConfig(group_size=32, int4_packing_format="tile_packed_to_4d")


def _int4_cpu_packed():
    # torchao's prototype packed INT4 for CPU: an Int4OpaqueTensor whose linear calls
    # aten._weight_int4pack_mm_for_cpu (torchao/prototype/quantization/int4/int4_opaque_tensor.py).
    # set_inductor_config=False: the default changes torch._inductor's global settings.
    from torchao.prototype.quantization.int4 import PrototypeInt4WeightOnlyConfig
    return PrototypeInt4WeightOnlyConfig(group_size=32, set_inductor_config=False)


def _fp8_wo():
    from torchao.quantization import Float8WeightOnlyConfig
    return Float8WeightOnlyConfig()


def _fp8_dyn():
    from torchao.quantization import Float8DynamicActivationFloat8WeightConfig
    return Float8DynamicActivationFloat8WeightConfig()


VARIANTS: dict[str, Variant] = {v.name: v for v in (
    Variant("int8_wo", "torchao INT8 weight-only", "int8 per-row", "fp32",
            _int8_wo, "any device", "casts the int8 codes to the activation dtype, float matmul, row scales "
            "applied to the output"),
    Variant("int8_dyn", "torchao INT8 dynamic act + INT8 weight", "int8 per-row", "int8 per-token (dynamic)",
            _int8_dyn, "any device", "quantizes activations per call, integer matmul (aten._int_mm; on a CPU "
            "with no fallback, on CUDA through safe_int_mm, which falls back where _int_mm cannot run)"),
    Variant("int4_wo", "torchao INT4 weight-only (Intx, group 32)", "int4 group 32 (stored in int8)", "fp32",
            _intx_wo, "any device", "dequantizes the weight, float matmul"),
    Variant("int8_dyn_int4", "torchao INT8 dynamic act + INT4 weight (Intx)", "int4 group 32 (stored in int8)",
            "int8 per-token (dynamic), dequantized again", _int8_dyn_int4, "any device",
            "quantizes and dequantizes activations, dequantizes the weight, float matmul"),
    Variant("int4_wo_packed", "torchao Int4WeightOnlyConfig (packed INT4, plain)", "int4 group 32 (packed)", "bf16",
            _int4_wo, "CUDA sm90 (Hopper) and the mslk kernels", "mslk kernel: dequantizes in-kernel, BF16 compute",
            (9, 0)),
    Variant("int4_wo_tile", "torchao Int4WeightOnlyConfig (tile_packed_to_4d, tinygemm)", "int4 group 32 (packed)",
            "bf16", _int4_wo_tile, "CUDA sm80+ (tinygemm, aten._weight_int4pack_mm)",
            "tinygemm: dequantizes in-kernel, BF16 compute", (8, 0)),
    Variant("int4_cpu_packed", "torchao packed INT4 for CPU (prototype, Int4OpaqueTensor)", "int4 group 32 (packed)",
            "fp32", _int4_cpu_packed, "CPU; output features a multiple of 16 (aten._convert_weight_to_int4pack_for_cpu)",
            "reads the packed 4-bit codes in its kernel (aten._weight_int4pack_mm_for_cpu)"),
    Variant("fp8_wo", "torchao FP8 weight-only", "float8 e4m3 per-row", "fp32", _fp8_wo,
            "any device", "memory-only: dequantizes the weight, matmul in the activations' dtype"),
    Variant("fp8_dyn", "torchao FP8 dynamic act + FP8 weight", "float8 e4m3", "float8 e4m3 (dynamic)",
            _fp8_dyn, "CUDA compute capability 8.9+", "FP8 matmul (torch._scaled_mm)", (8, 9)),
)}


def check_variant(name: str) -> Variant:
    """Look up a PTQ variant by name; raise ``ValueError`` naming the valid ones."""
    try:
        return VARIANTS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown PTQ variant {name!r}; valid variants: {sorted(VARIANTS)}") from None


def quantize_copy(model: nn.Module, config: object, filter_fn: Callable[[nn.Module, str], bool] | None = None
                  ) -> nn.Module:
    """A deep copy of ``model`` quantized in place by ``torchao.quantization.quantize_(copy, config)``.

    ``filter_fn(module, fqn)`` selects which ``nn.Linear`` layers to quantize (all by default).
    """
    from torchao.quantization import quantize_

    q = copy.deepcopy(model).eval()
    if filter_fn is None:
        quantize_(q, config)
    else:
        quantize_(q, config, filter_fn=lambda m, fqn: isinstance(m, nn.Linear) and filter_fn(m, fqn))
    return q


def quantize_variant(model: nn.Module, name: str) -> nn.Module:
    """``quantize_copy`` with the config of the named variant."""
    return quantize_copy(model, check_variant(name).make_config())


def try_variant(model: nn.Module, name: str, x: torch.Tensor) -> tuple[nn.Module | None, str | None]:
    """Quantize a copy and run it on ``x``; ``(model, None)`` if it ran here, else ``(None, error)``."""
    v = check_variant(name)
    try:
        q = quantize_copy(model, v.make_config())
        with torch.inference_mode():
            q(x)
        return q, None
    except Exception as e:  # torchao raises ImportError/AssertionError/NotImplementedError by device
        return None, f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"


def model_and_input_for(name: str, model: nn.Module, x: torch.Tensor) -> tuple[nn.Module, torch.Tensor]:
    """The model and input variant ``name`` is made for: a BF16 copy and BF16 input for a config whose
    activations are BF16 (so an error it raises is the device's, not the dtype's), else ``model`` and ``x``."""
    if check_variant(name).activations == "bf16":
        return copy.deepcopy(model).to(torch.bfloat16), x.to(torch.bfloat16)
    return model, x


def variant_status(model: nn.Module, x: torch.Tensor) -> pd.DataFrame:
    """Every variant: its config class, what it needs, and whether it ran on this device (with the error)."""
    rows = []
    for name, v in VARIANTS.items():
        m, xi = model_and_input_for(name, model, x)
        _, err = try_variant(m, name, xi)
        rows.append({"variant": v.label, "config": type(v.make_config()).__name__, "weights": v.weights,
                     "activations": v.activations, "needs": v.needs, "computes (torchao 0.18 source)": v.note,
                     "ran here": err is None,
                     "error here": err})
    return pd.DataFrame(rows)


def intx_opaque_status(model: nn.Module, x: torch.Tensor) -> pd.DataFrame:
    """Each opaque ``IntxPackingFormat`` (torchao's own CPU kernels) with both Intx INT4 group-32 configs: ran, or the error.

    The default ``UNPACKED_TO_INT8`` is the ``int4_wo`` and ``int8_dyn_int4`` variants. In torchao 0.18
    ``IntxWeightOnlyConfig`` refuses the ``OPAQUE_*`` formats and ``Int8DynamicActivationIntxWeightConfig``
    accepts them, which then need torchao's kernel library or KleidiAI in the installed build.
    """
    from torchao.quantization import Int8DynamicActivationIntxWeightConfig, IntxWeightOnlyConfig
    from torchao.quantization.granularity import PerGroup
    from torchao.quantization.quantize_.workflows import IntxPackingFormat

    configs = {"IntxWeightOnlyConfig": lambda fmt: IntxWeightOnlyConfig(
                   weight_dtype=torch.int4, granularity=PerGroup(32), intx_packing_format=fmt),
               "Int8DynamicActivationIntxWeightConfig": lambda fmt: Int8DynamicActivationIntxWeightConfig(
                   weight_dtype=torch.int4, weight_granularity=PerGroup(32), intx_packing_format=fmt)}
    rows = []
    for config, make in configs.items():
        for fmt in IntxPackingFormat:
            if not fmt.name.startswith("OPAQUE"):
                continue
            try:
                q = quantize_copy(model, make(fmt))
                with torch.inference_mode():
                    q(x)
                err = None
            except Exception as e:  # torchao asserts on a missing kernel library, raises on a refused format
                err = f"{type(e).__name__}: {str(e).strip().splitlines()[0][:160]}"
            rows.append({"config": config, "intx_packing_format": f"IntxPackingFormat.{fmt.name}",
                         "ran here": err is None, "error here": err})
    return pd.DataFrame(rows)


def weight_storage(q: nn.Module) -> pd.DataFrame:
    """Per Linear layer: the tensor subclass holding the weight, the dtype of its integer data, and how many
    weights each byte of that data holds (1: one code per byte; 2: two 4-bit codes packed in a byte)."""
    rows = []
    for name, m in q.named_modules():
        if isinstance(m, nn.Linear):
            w = m.weight
            data = getattr(w, "qdata", None)
            data = w if data is None else data
            rows.append({"layer": name, "weight class": type(w).__name__, "data dtype": short_dtype(data.dtype),
                         "weights per data byte": w.numel() / (data.numel() * data.element_size())})
    return pd.DataFrame(rows)


def layer_outputs(model: nn.Module, x: torch.Tensor) -> dict[str, torch.Tensor]:
    """The output of every ``nn.Linear`` of ``model`` on ``x``, by name (as FP32)."""
    return capture_linears(model, x, "output")


def _linear_names(model: nn.Module) -> list[str]:
    """Names of the ``nn.Linear`` layers, in order."""
    return [n for n, m in model.named_modules() if isinstance(m, nn.Linear)]


def layer_sqnr_table(model: nn.Module, config_factory: Callable[[], object], x: torch.Tensor,
                     y: torch.Tensor) -> pd.DataFrame:
    """Per layer: SQNR of its output in the fully quantized model, and when only that layer is quantized.

    The first column is the error each layer's output carries from every quantized layer up to it (it need
    not fall down the network: the page measures which way it goes); the second (each layer quantized
    alone, the rest FP32) shows which layer is sensitive.
    """
    from amp_docs_lib.quantization.task import accuracy

    ref = layer_outputs(model, x)
    full = layer_outputs(quantize_copy(model, config_factory()), x)
    names = _linear_names(model)
    rows = []
    for n in names:
        alone = quantize_copy(model, config_factory(), filter_fn=lambda m, fqn, n=n: fqn == n)
        rows.append({"layer": n, "shape": "x".join(map(str, model.get_submodule(n).weight.shape)),
                     "output SQNR, all layers quantized (dB)": sqnr_db(ref[n], full[n]),
                     "logits SQNR, only this layer quantized (dB)": sqnr_db(ref[names[-1]],
                                                                           layer_outputs(alone, x)[names[-1]]),
                     "accuracy, only this layer quantized": accuracy(alone, x, y)})
    return pd.DataFrame(rows)


def keep_fp32_table(model: nn.Module, configs: dict[str, Callable[[], object]], x: torch.Tensor,
                    y: torch.Tensor) -> pd.DataFrame:
    """Accuracy and logits SQNR when the first and/or last Linear layers stay in FP32."""
    from amp_docs_lib.quantization.task import accuracy, state_dict_bytes

    names = _linear_names(model)
    first, last = names[0], names[-1]
    ref = layer_outputs(model, x)[last]
    plans = {"all layers quantized": lambda m, f: True,
             "first layer in FP32": lambda m, f: f != first,
             "last layer in FP32": lambda m, f: f != last,
             "first and last in FP32": lambda m, f: f not in (first, last)}
    rows = []
    for cname, make in configs.items():
        for plan, fn in plans.items():
            q = quantize_copy(model, make(), filter_fn=fn)
            rows.append({"config": cname, "plan": plan, "accuracy": accuracy(q, x, y),
                         "logits SQNR (dB)": sqnr_db(ref, layer_outputs(q, x)[last]),
                         "size (KiB)": state_dict_bytes(q) / 1024})
    return pd.DataFrame(rows)


def metadata_bits_per_weight(q: nn.Module) -> pd.DataFrame:
    """Per quantized Linear: bytes of its weight tensor's parts and the scale + zero-point bits per weight.

    Read from the tensor subclass itself (``__tensor_flatten__``), not from a formula.
    """
    rows = []
    for name, m in q.named_modules():
        if not isinstance(m, nn.Linear) or not hasattr(m.weight, "__tensor_flatten__"):
            continue
        w = m.weight
        parts = {n: getattr(w, n) for n in w.__tensor_flatten__()[0] if getattr(w, n) is not None}
        nbytes = {n: t.numel() * t.element_size() for n, t in parts.items()}
        meta = sum(b for n, b in nbytes.items() if n != "qdata")
        rows.append({"layer": name, "weights": w.numel(),
                     **{f"{n} ({short_dtype(t.dtype)}) bytes": nbytes[n] for n, t in parts.items()},
                     "scale + zero-point bits per weight": 8 * meta / w.numel()})
    return pd.DataFrame(rows)


def gpu_table(task, names, timer, *, features: int, batches: tuple[int, ...],
              device: str | torch.device = "cuda") -> pd.DataFrame:
    """On CUDA: per variant, digits accuracy (BF16 model) and a large BF16 layer's speedup over BF16 per batch,
    with the matmul each call ran (from a dispatch trace of its first call).

    Variants that cannot run on this GPU keep their row with the error. ``timer(fns, baseline=name,
    device="cuda")`` is the site's harness (``core.timing.interleaved``; CUDA events): one interleaved
    run per batch size, BF16 as the baseline. ``device`` is a CUDA device on the page; the tests run the
    same code on the CPU.
    """
    from amp_docs_lib.core.devices import check_device
    from amp_docs_lib.quantization.task import accuracy

    dev = check_device(device)
    d = task.data
    bf_model = copy.deepcopy(task.model).to(torch.bfloat16).to(dev)
    xt, yt = d.x_test.to(dev).to(torch.bfloat16), d.y_test.to(dev)
    torch.manual_seed(0)
    layer = nn.Sequential(nn.Linear(features, features)).to(torch.bfloat16).to(dev).eval()
    rows = {"BF16": {"variant": "BF16", "digits accuracy": accuracy(bf_model, xt, yt), "error": None}}
    layers = {"BF16": layer}
    for n in names:
        v = check_variant(n)
        try:
            qd = quantize_copy(bf_model, v.make_config())
            acc = accuracy(qd, xt, yt)
            layers[v.label] = quantize_copy(layer, v.make_config())
            rows[v.label] = {"variant": v.label, "digits accuracy": acc, "error": None}
        except Exception as e:  # a config this GPU or installation cannot run keeps its row
            rows[v.label] = {"variant": v.label, "digits accuracy": None,
                             "error": f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"}
    for b in batches:
        x = torch.randn(b, features, device=dev, dtype=torch.bfloat16)

        def runner(m):
            def run():
                with torch.inference_mode():
                    return m(x)
            return run
        fns = {}
        for k, m in layers.items():
            try:  # the first call, traced: which matmul really ran (a refused aten._int_mm falls back)
                rows[k][f"batch {b}: matmul that ran"] = trace_ops(runner(m)).matmul_summary()
                fns[k] = runner(m)
            except Exception as e:
                rows[k]["error"] = rows[k]["error"] or f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"
        res = timer(fns, baseline="BF16", device=dev)
        for k in rows:
            t = res.timings.get(k)
            rows[k][f"batch {b}: median (us)"] = None if t is None else t.median_s * 1e6
            rows[k][f"batch {b}: IQR (us)"] = None if t is None else t.iqr_s * 1e6
            c = None if t is None or k == "BF16" else res.compare(k)
            rows[k][f"batch {b}: speedup vs BF16"] = None if c is None else c.interval_text()
    df = pd.DataFrame(list(rows.values())).astype(object)
    return df.where(df.notna(), None)
