"""Second independent read of the FP8 chapter (issue 33): the accumulator emulation, knobs, E2M1 values."""

import math

import torch

from amp_docs_lib.fp8 import fine_grained as FG
from amp_docs_lib.fp8 import formats as F
from amp_docs_lib.fp8 import gemm


def test_gemm_operands_are_fp8_values_not_dequantized_ones():
    a, b, scale_a, scale_b = FG.gemm_operands(4, 4, 256, seed=0)
    for x in (a, b):
        assert torch.equal(F.cast(x, "FP8 E4M3FN"), x)  # every operand is an E4M3 value
        assert float(x.abs().max()) == 448.0  # scaled per tensor onto E4M3's largest value
    assert float(scale_a) != 2.0 ** round(math.log2(float(scale_a)))  # the scale is not a power of two


def test_accumulator_sums_fp8_products_exactly_when_each_add_starts_a_new_sum():
    # A product of two E4M3 values has at most 8 significant bits: restarting the 14-bit sum after
    # every product leaves only FP32's rounding, so the promoted row equals the FP32 accumulator's.
    # With dequantized operands (1/s not a power of two) every product is rounded to 14 bits: it differs.
    st = FG.accumulation_study(m=2, n=2, k=512, promote_every=1, rounding="toward_zero")
    assert st["relative error"].iloc[1] == st["relative error"].iloc[2]
    a, b, _, _ = FG.gemm_operands(4, 4, 512, seed=0)
    assert FG.accumulator_rounding(a, b, 14, 1, "toward_zero")["adds that round"] == 0.0


def test_truncation_gain_exceeds_k_over_n_c_and_fewer_adds_round_in_short_sums():
    """The chapter's claims: truncation's promotion gain > K/N_C (the dequantized emulation measured about 30)."""
    st = FG.accumulation_study(m=16, n=16, k=4096, rounding="toward_zero")
    assert FG.promotion_gain(st) > 4096 / 128
    r = FG.rounding_study(m=8, n=8, k=4096).set_index(["rounding", "accumulator"])
    near = r.xs("nearest")["adds that round"].tolist()
    assert near[1] < near[0] / 2  # promoted every 128 against the whole K
    trunc = r.xs("toward_zero")
    assert (0.4 < trunc["rounding errors > 0"]).all() and (trunc["rounding errors > 0"] < 0.6).all()
    assert (trunc["rounding errors toward zero"] == 1.0).all()


def test_accumulator_rounding_counts_hand_cases():
    # 1 + 2^-14 needs 15 bits: rounds (to nearest: ties to even, down to 1; truncated: down to 1).
    a = torch.tensor([[1.0, 2.0**-14]], dtype=torch.float64)
    b = torch.tensor([[1.0], [1.0]], dtype=torch.float64)
    for mode in FG.ROUNDINGS:
        got = FG.accumulator_rounding(a, b, 14, None, mode)
        assert got == {"adds that round": 0.5, "rounding errors > 0": 0.0, "rounding errors toward zero": 1.0}


def test_knobs_table_reads_te_split_accumulator_with_opposite_polarity():
    k = gemm.accumulation_knobs().set_index(["stack", "GEMM"])
    te_fprop = k.loc[("Transformer Engine Float8CurrentScaling", "fprop (forward)")]
    assert te_fprop["default"] == "False" and te_fprop["accumulation"] == "limited (fast accumulation)"
    te_wgrad = k.loc[("Transformer Engine Float8CurrentScaling", "wgrad")]
    assert te_wgrad["default"] == "True" and te_wgrad["accumulation"] == "promoted"
    ao_out = k.loc[("torchao Float8LinearConfig", "output (forward)")]
    assert ao_out["accumulation"] == ("limited (fast accumulation)" if ao_out["default"] == "True" else "promoted")


def test_e2m1_positive_values_read_back_match_the_ocp_mx_table():
    # OCP MX v1.0, Table 5 (FP4 E2M1): 0.5 (subnormal), 1, 1.5, 2, 3, 4, 6.
    assert F.positive_values("FP4 E2M1") == [0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]
    assert F.positive_values_from_definition("FP4 E2M1") == [0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]
    for name in ("FP8 E4M3FN", "FP8 E5M2", "FP6 E2M3", "FP6 E3M2"):
        assert F.positive_values(name) == F.positive_values_from_definition(name), name
    assert len(F.positive_values("FP8 E4M3FN")) == 126 and F.positive_values("FP8 E4M3FN")[-1] == 448.0
