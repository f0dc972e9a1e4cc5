"""Issue 34 finding 12: on CUDA the quantization sweep and compile comparison use BF16 as the baseline, and the
compile comparison covers the packed INT4, INT8 weight-only and FP8 variants, saying where a config needs a newer
GPU. GPU-only paths, run on the CPU as far as they go (``-m gpu_readiness``)."""

from functools import partial

import pytest
import torch

from amp_docs_lib.core.profiles import PROFILES
from amp_docs_lib.core.timing import interleaved
from amp_docs_lib.quantization import ptq, speed

pytestmark = pytest.mark.gpu_readiness

TIMER = partial(interleaved, rounds=5, min_block_s=0.001, warmup=1)


def test_the_float_baseline_is_bf16_on_cuda_and_fp32_elsewhere():
    assert speed.baseline_for("cuda") == (torch.bfloat16, "BF16")
    assert speed.baseline_for(torch.device("cuda", 0)) == (torch.bfloat16, "BF16")
    assert speed.baseline_for("cpu") == (torch.float32, "FP32")


@pytest.mark.parametrize(
    ("name", "capability", "needs"),
    [
        ("int4_wo_tile", (7, 5), "sm80+"),
        ("int4_wo_tile", (8, 0), None),
        ("fp8_dyn", (8, 0), "sm89+"),
        ("fp8_dyn", (8, 9), None),
        ("int4_wo_packed", (8, 9), "sm90+"),
        ("int4_wo_packed", (9, 0), None),
        ("int8_wo", (7, 0), None),
        ("int8_dyn", (7, 0), None),
    ],
)
def test_the_planner_says_which_gpu_a_config_needs(name, capability, needs):
    why = ptq.unmet_requirement(name, capability)
    assert (
        (why is None)
        if needs is None
        else (f"needs CUDA {needs}" in why and f"sm{capability[0]}{capability[1]}" in why)
    )


def test_a_gpu_only_config_on_the_cpu_is_refused_by_name():
    assert ptq.unmet_requirement("fp8_dyn", "cpu").startswith("needs CUDA sm89+")
    assert ptq.unmet_requirement("int8_wo", "cpu") is None


def test_gpu_full_compiles_packed_int4_int8_weight_only_and_fp8():
    names = PROFILES["gpu-full"]["quant_compile_variants"]
    assert {"fp32", "int4_wo_tile", "int8_wo", "fp8_dyn"} <= set(names)
    assert "int4_wo" not in names  # the unpacked Intx variant re-materialises the weight every call
    assert all(n == "fp32" or ptq.check_variant(n) for n in names)


def test_compiled_comparison_keeps_a_row_for_what_this_device_cannot_run(monkeypatch):
    monkeypatch.setattr(torch, "compile", lambda m: m)  # the structure, not Inductor's build time
    cc = speed.compiled_comparison(64, 4, ("fp32", "int8_wo", "int4_wo_tile", "fp8_dyn"), TIMER)
    rows = cc.set_index("model")
    assert list(rows.index[:4]) == [
        "FP32 (eager)",
        "FP32 (compiled)",
        f"{ptq.VARIANTS['int8_wo'].label} (eager)",
        f"{ptq.VARIANTS['int8_wo'].label} (compiled)",
    ]
    assert "speedup vs eager FP32 (x)" in cc.columns
    assert rows.loc[f"{ptq.VARIANTS['fp8_dyn'].label} (compiled)", "error"].startswith("not run: needs CUDA sm89+")
    assert rows.loc[f"{ptq.VARIANTS['int4_wo_tile'].label} (compiled)", "error"].startswith("not run: needs CUDA sm80+")
    assert rows.loc["FP32 (compiled)", "verdict"] is not None


def test_the_sweep_names_its_bf16_baseline(monkeypatch):
    # what a CUDA device gets, on the CPU: every column, crossover and plot reads the baseline from the frame
    monkeypatch.setattr(speed, "baseline_for", lambda device: (torch.bfloat16, "BF16"))
    bs = speed.batch_sweep(32, 32, [1, 2], TIMER, names=("int8_wo",), reference=False)
    assert set(bs["variant"]) == {"BF16", "BF16 again (A/A control)", ptq.VARIANTS["int8_wo"].label}
    assert {"speedup vs BF16 (x)", "FLOP/byte (BF16 layer)"} <= set(bs.columns)
    assert bs.loc[bs["variant"] == "BF16", "speedup vs BF16 (x)"].isna().all()
    xo = speed.crossovers(bs)
    assert list(xo["variant"]) == [ptq.VARIANTS["int8_wo"].label] and "faster than BF16 at batch" in xo.columns
    fig = speed.plot_batch_sweep(bs)
    assert fig.axes[1].get_ylabel() == "speedup over BF16 (x), interval"
