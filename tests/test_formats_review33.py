"""Formats chapter fixes of issue 33: double rounding, marked finfo cells, softmax overflow scales,
FP32-precision values and the reduced-precision-reduction pair."""

import math

import numpy as np
import pandas as pd
import pytest
import torch

from amp_docs_lib.numbers import formats as F
from amp_docs_lib.numbers import numerics as N
from amp_docs_lib.page.claims import ClaimContradicted, claim


def test_casts_from_float64_round_twice_and_numpy_float16_once():
    t = F.double_rounding().set_index("format")
    assert t["rounded twice"].all()
    assert (t["cast from float64"] == 1.0).all()
    assert (t["nearest value (one rounding)"] > 1.0).all()
    # numpy's float16 cast rounds once: the false variant "every float64 cast rounds twice" fails on it
    fp16 = t.loc["FP16"]
    assert float(np.float16(fp16["input (float64)"])) == fp16["nearest value (one rounding)"]
    # the chapter's claim fails on the false variant "the casts round once" (no format rounded twice)
    with pytest.raises(ClaimContradicted):
        claim("{measured} formats round twice", 0, expected=len(t))


def test_double_rounding_input_is_between_fp32_neighbours_of_the_tie():
    for _, row in F.double_rounding().iterrows():
        x = row["input (float64)"]
        tie = (1.0 + row["nearest value (one rounding)"]) / 2
        assert x > tie and float(np.float32(x)) == tie


def test_format_table_marks_cells_that_contradict_the_definition():
    disagree = F.limits_disagreeing_with_definition()
    marked = F.format_table(mark_disagreements=True).set_index("format")
    plain = F.format_table().set_index("format")
    for name, column in disagree:
        cell = marked.loc[name, column]
        assert isinstance(cell, str) and "by definition" in cell and f"{plain.loc[name, column]:g}" in cell
    others = [(n, c) for n in plain.index for c in ("max finite", "machine epsilon") if (n, c) not in disagree]
    assert all(not isinstance(marked.loc[n, c], str) for n, c in others)


def test_e5m2fnuz_gap_above_one_is_the_definition():
    gap = F.next_up(1.0, "FP8 E5M2FNUZ") - 1.0
    assert gap == F.definition_table().set_index("format").loc["FP8 E5M2FNUZ", "machine epsilon"] == 0.25
    with pytest.raises(ClaimContradicted):  # false variant: torch.finfo's 2^-3 is the gap
        claim("gap {measured}", gap, expected=0.125)


def test_torch_header_line_finds_text_and_says_none_otherwise():
    rel, line = F.torch_header_line("torch/headeronly/util/Float8_e5m2fnuz.h", "epsilon()")
    assert rel.endswith("Float8_e5m2fnuz.h")
    assert F.torch_header_line("torch/headeronly/util/Float8_e5m2fnuz.h", "no such text anywhere")[1] is None
    assert F.torch_header_line("torch/no/such/header.h", "x")[1] is None


def test_fnuz_range_claims_fail_on_the_factor_of_two_variant():
    assert torch.finfo(torch.float8_e5m2fnuz).max == torch.finfo(torch.float8_e5m2).max
    with pytest.raises(ClaimContradicted):  # "the range moves down by a factor of two"
        claim("max {measured}", torch.finfo(torch.float8_e5m2fnuz).max, expected=torch.finfo(torch.float8_e5m2).max / 2)


def test_softmax_overflow_scale_predicted_from_exp_threshold():
    df = N.softmax_errors()
    assert N.first_failing_scale(df) == N.predicted_exp_overflow_scale()
    # a false variant: the naive formula failing one scale later in FP16 is told apart
    shifted = df.copy()
    row = (shifted["method"] == "naive") & (shifted["dtype"] == "FP16") & (shifted["logit scale"] == 10.0)
    shifted.loc[row, "rows with inf/NaN"] = "0 of 32"
    assert N.first_failing_scale(shifted)["FP16"] == 100.0 != N.predicted_exp_overflow_scale()["FP16"]


def test_reduction_flags_restored_keeps_the_split_k_half():
    m = torch.backends.cuda.matmul
    if not hasattr(type(m), "_parse_reduction_setting"):
        pytest.skip("this torch has no (reduced precision, split-K) pair")
    before = (m.allow_fp16_reduced_precision_reduction, m.allow_fp16_reduced_precision_reduction_split_k)
    try:
        m.allow_fp16_reduced_precision_reduction = (False, False)
        with N.reduction_flags_restored():
            m.allow_fp16_reduced_precision_reduction = True
        assert (m.allow_fp16_reduced_precision_reduction, m.allow_fp16_reduced_precision_reduction_split_k) == (False, False)
    finally:
        m.allow_fp16_reduced_precision_reduction = before


def test_fp32_precision_values_asks_torch_and_restores():
    m = torch.backends.cuda.matmul
    before = m.fp32_precision
    t = N.fp32_precision_values(("ieee", "tf32", "none", "no-such-precision")).set_index("value")
    assert m.fp32_precision == before
    assert t.loc[["ieee", "tf32", "none"], "accepted"].tolist() == [True, True, True]
    assert t.loc["no-such-precision", "accepted"] is False or t.loc["no-such-precision", "accepted"] == False  # noqa: E712
    assert "no-such-precision" in t.loc["no-such-precision", "error"]


def test_cast_rules_table_writes_nan_as_the_other_tables_do():
    t = F.cast_rules_table()
    cells = set(t["beyond the largest finite value"]) | set(t["infinity"])
    assert "nan" not in cells and cells <= {"inf", "saturate", "NaN"}
    assert math.isnan(F.bits_to_value(0x80, "FP8 E4M3FNUZ"))
    assert isinstance(t, pd.DataFrame)


def test_tf32_probe_modes_follow_their_definitions():
    probes = list(N.TF32_PROBES.values())
    # the library's TF32 model is round to nearest even
    rne = tuple(F.bits_to_value(F.encode(v, "TF32"), "TF32") for v in probes)
    assert rne == N.TF32_MODES["round to nearest, ties to even"]
    # truncation keeps the top 10 mantissa bits
    import struct
    trunc = tuple(struct.unpack("<f", struct.pack("<I", struct.unpack("<I", struct.pack("<f", v))[0] & ~0x1FFF))[0]
                  for v in probes)
    assert trunc == N.TF32_MODES["truncation"]
    assert len(set(N.TF32_MODES.values())) == 3  # the probes tell the three modes apart


def test_tf32_input_rounding_strict_fp32_reads_the_inputs_whole():
    before = torch.get_float32_matmul_precision()
    t = N.tf32_input_rounding("cpu", n=16, precision="highest")  # strict FP32 on any CPU
    assert torch.get_float32_matmul_precision() == before
    assert set(t["mode"]) == {"full FP32"}
    assert t["read by the matmul"].tolist() == t["value"].tolist()
