"""Checks for the quantization chapter's second expert read (issue 34): each fails on the code before the fix."""

import pandas as pd
import pytest
import torch
from torch import nn

from amp_docs_lib.core.timing import Comparison, Timing
from amp_docs_lib.quantization import affine, apis, ptq, results, serialization

COLS = [
    "variant",
    "runtime",
    "accuracy",
    "weight payload (KiB)",
    "weight codes (KiB)",
    "latency median (us)",
    "speedup vs same runtime's FP32 (x)",
    "interval vs same runtime's FP32",
    "verdict vs same runtime's FP32",
]


def _cmp(ratio, lo, hi):
    t = Timing("x", 1e-3, 1e-4, 9, 1, 1, "cpu", "interleaved blocks")
    return Comparison(t, t, ratio, lo, hi, 9, 0.9)


class _Rounds:
    def __init__(self, comps):
        self.comps = comps

    def compare(self, a, b):
        return self.comps[(a, b)]


def _frame(rows, comps):
    df = pd.DataFrame(rows, columns=COLS)
    df.attrs["timing"] = _Rounds(comps)
    return df


SEEDS = pd.DataFrame({"variant": ["torchao A"], "verdict": ["no difference resolved"]})


def test_decision_table_names_the_lowest_latency_not_the_largest_relative_gain():
    # the built page: BF16 1.89x its runtime's FP32 at 273 us, ORT static 1.5x its own at 126 us
    df = _frame(
        [
            ("FP32", "PyTorch eager", 0.97, 100.0, 100.0, 500.0, None, None, None),
            ("BF16", "PyTorch eager", 0.97, 50.0, 50.0, 273.0, 1.89, "[1.79, 2.05]", "faster"),
            ("ORT static", "ONNX Runtime (CPU)", 0.97, 30.0, 25.0, 126.0, 1.5, "[1.4, 1.6]", "faster"),
        ],
        {("ORT static", "BF16"): _cmp(2.2, 2.0, 2.5), ("BF16", "ORT static"): _cmp(0.46, 0.39, 0.48)},
    )
    latency = results.decision_table(df, SEEDS).iloc[0]["latency"]
    assert latency.startswith("ORT static (1.50x")
    assert "resolved faster than BF16 (2.20x [2.00, 2.50])" in latency
    assert "one test split" in latency  # ORT static is not in the seed study


def test_decision_table_says_resolved_slower_is_not_unresolved():
    # medians put A first but the per-round ratios resolve A slower than B: B is named, resolved faster
    df = _frame(
        [
            ("FP32", "PyTorch eager", 0.97, 100.0, 100.0, 500.0, None, None, None),
            ("torchao A", "torchao", 0.97, 30.0, 25.0, 100.0, 2.0, "[1.8, 2.2]", "faster"),
            ("torchao B", "torchao", 0.97, 30.0, 25.0, 101.0, 1.9, "[1.7, 2.1]", "faster"),
        ],
        {("torchao A", "torchao B"): _cmp(0.9, 0.85, 0.95), ("torchao B", "torchao A"): _cmp(1.1, 1.05, 1.2)},
    )
    latency = results.decision_table(df, SEEDS).iloc[0]["latency"]
    assert latency.startswith("torchao B") and "resolved faster than torchao A" in latency
    assert "not resolved" not in latency


def test_decision_table_decides_no_latency_when_the_machine_was_busy():
    df = _frame(
        [
            ("FP32", "PyTorch eager", 0.97, 100.0, 100.0, 500.0, None, None, None),
            ("torchao A", "torchao", 0.97, 30.0, 25.0, 100.0, 2.0, "[1.8, 2.2]", "faster"),
        ],
        {},
    )
    assert results.decision_table(df, SEEDS, timing_quiet=False).iloc[0]["latency"].startswith("not decided")
    assert results.decision_table(df, SEEDS).iloc[0]["latency"].startswith("torchao A")


def _mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 16)).eval()


@pytest.mark.parametrize("name", ["int8_wo", "int4_wo"])
def test_load_without_assign_raises_for_torchao_weights(name):
    m = _mlp()
    assert serialization.load_without_assign(ptq.quantize_variant(m, name), m).startswith("RuntimeError")
    assert serialization.load_without_assign(m, m) == "loaded"  # a float state_dict copies in


def test_opaque_intx_formats_are_tried_with_both_configs():
    t = ptq.intx_opaque_status(_mlp(), torch.randn(4, 64))
    assert set(t["config"]) == {"IntxWeightOnlyConfig", "Int8DynamicActivationIntxWeightConfig"}
    assert t["intx_packing_format"].str.startswith("IntxPackingFormat.OPAQUE_").all()
    wo = t[t["config"] == "IntxWeightOnlyConfig"]
    assert wo["error here"].str.contains("Unsupported packing format").all()  # quant_api.py:1502 in 0.18


def test_tile_packed_int4_is_tried_with_bf16_activations():
    s = ptq.variant_status(_mlp(), torch.randn(4, 64)).set_index("variant")
    err = s.loc[ptq.VARIANTS["int4_wo_tile"].label, "error here"]
    assert err is None or "bfloat16" not in err  # the device's error, not the dtype's


def test_api_table_no_warning_is_falsy_and_names_the_replacement():
    a = apis.torchao_api_table().set_index("name")
    col = "deprecation warning when constructed"
    assert not a.loc["torchao.quantization.Int8WeightOnlyConfig", col]  # was the truthy string "no"
    for n in ("IntXQuantizationAwareTrainingConfig", "FromIntXQuantizationAwareTrainingConfig"):
        assert a.loc[f"torchao.quantization.qat.{n}", "replacement the warning recommends"] == "QATConfig"


def test_sqnr_per_bit_separates_the_uniform_noise_model_from_halving_the_step():
    torch.manual_seed(0)
    w = torch.rand(256, 256) * 2 - 1  # uniform weights: the rounding error is uniform over one step
    r = affine.sqnr_per_bit(w, (8, 4))
    model, tol = r["uniform-noise model (dB per bit)"], r["tolerance (dB per bit)"]
    assert abs(r["measured (dB per bit)"] - model) <= tol
    assert abs(r["measured (dB per bit)"] - r["halving the step per bit (dB per bit)"]) > tol  # the false variant
    assert model == pytest.approx(20 * torch.log10(torch.tensor(127.5 / 7.5)).item() / 4)


def test_sqnr_per_bit_fails_where_values_do_not_spread_over_steps():
    torch.manual_seed(0)
    w = torch.randn(256, 256)  # at INT2 most Gaussian weights round to zero
    r = affine.sqnr_per_bit(w, (4, 2))
    assert abs(r["measured (dB per bit)"] - r["uniform-noise model (dB per bit)"]) > r["tolerance (dB per bit)"]


def test_asymmetric_zero_point_costs_the_int8_torchao_stores():
    w = torch.randn(8, 64)
    qp = affine.choose_qparams(w, 8, scheme="asymmetric", granularity="per_group", group_size=32)
    assert affine.scale_overhead_bits(tuple(w.shape), qp) == (32 + 8) / 32
