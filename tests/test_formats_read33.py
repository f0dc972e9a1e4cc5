"""Formats chapter: fixes of the independent read of issue 33 (/work/reads/formats.md)."""

import math

import numpy as np
import pytest
import torch

from amp_docs_lib.numbers import formats as F
from amp_docs_lib.numbers import numerics as N


# ---- finding 3: reading the FP32 precision switches changes none of them ----------------------
def test_fp32_precision_settings_leave_every_attribute_as_found():
    m = torch.backends.cuda.matmul
    with N.fp32_precision_restored():
        m.fp32_precision = "none"  # the startup value the old code rewrote as "ieee"
        before = N.fp32_precision_state()
        N.fp32_precision_settings()
        N.fp32_precision_values()
        assert N.fp32_precision_state() == before
        assert m.fp32_precision == "none"


def test_fp32_precision_restored_undoes_an_old_api_write():
    with N.fp32_precision_restored():
        torch.backends.cuda.matmul.fp32_precision = "none"
        before = N.fp32_precision_state()
        with N.fp32_precision_restored():
            torch.set_float32_matmul_precision("highest")
            assert torch.backends.cuda.matmul.fp32_precision == "ieee"
        assert N.fp32_precision_state() == before


# ---- finding 2: the "beyond the largest finite value" probe is a finite FP32 value -----------
@pytest.mark.parametrize("name", [n for n in F.float_format_names() if n != "FP32"])
def test_overflow_probe_is_finite_in_fp32_and_rounds_beyond_the_range(name):
    f = F.get_format(name)
    probe = F.overflow_probe(f)
    assert math.isfinite(float(np.float32(probe)))
    # nearest value with an unbounded exponent: the probe's binade step is above the largest value
    m = f.mantissa_bits
    step = 2.0 ** (math.floor(math.log2(probe)) - m)
    assert round(probe / step) * step > f.max_finite_from_definition()


def test_e8m0_finite_overflow_is_nan_while_values_nearer_2_127_round_to_it():
    rules = F.cast_rules(["E8M0"])["E8M0"]
    assert rules["overflow"] == "nan"  # FP32's largest value rounds to 2^128: NaN (0xFF)
    assert F.encode(1.2 * 2.0**127, "E8M0") == 0xFE  # nearer 2^127: ordinary rounding
    assert F.encode(float(np.finfo(np.float32).max), "E8M0") == 0xFF


# ---- finding 8: decimal digits are measured from the cast, not read from the definition -------
def test_measured_decimal_digits_approach_the_definition_from_the_cast():
    d = N.measured_decimal_digits().set_index("dtype")["decimal digits (measured)"]
    for name in ("FP32", "FP16", "BF16"):
        assert d[name] == pytest.approx(F.get_format(name).decimal_digits(), rel=0.01)
    assert round(d["BF16"]) == 2 and round(d["FP16"]) == 3
    # false variants the page's checks reject: "BF16 has ~3 digits", "FP16 has ~3.6 digits"
    assert round(d["BF16"]) != 3
    assert abs(d["FP16"] - 3.6) > 0.01 * d["FP16"]


# ---- finding 1/10: the TF32 model against the three readings of the dropped bits --------------
def test_tf32_model_is_ties_to_even_and_differs_from_truncation_and_ties_away():
    model = tuple(F.decode(v, "TF32").stored for v in N.TF32_PROBES.values())
    assert model == N.TF32_MODES["round to nearest, ties to even"]
    assert model[1] == N.TF32_MODES["truncation"][1] != N.TF32_MODES["round to nearest, ties away from zero"][1]
    assert model[2] == N.TF32_MODES["round to nearest, ties away from zero"][2] != N.TF32_MODES["truncation"][2]


# ---- finding 15: the row sum's overflow scale is predicted separately -------------------------
def test_fp16_row_sum_overflows_before_exp_and_gives_zero_rows_not_nan():
    scales = (3.5, 3.55, 3.6)  # the naive softmax's inputs: seed 0, 32 x 64 normal logits
    assert N.predicted_row_sum_overflow_scale(("FP16",), scales=scales)["FP16"] == 3.55
    assert N.predicted_exp_overflow_scale(("FP16",), scales=scales)["FP16"] == 3.6
    naive = N.softmax_errors(("FP16",), scales=scales).query("method == 'naive'").set_index("logit scale")
    assert naive.loc[3.55, "rows with inf/NaN"].startswith("0 ")  # row sum inf: zeros, not NaN
    assert naive.loc[3.55, "max abs error (finite rows)"] > 0.5
    assert N.first_failing_scale(N.softmax_errors(("FP16",), scales=scales))["FP16"] == 3.6


def test_row_sum_overflow_threshold_is_half_a_step_above_the_largest_value():
    # FP16: 65504 + 16 = 65520 rounds to inf; just below it does not
    assert float(torch.tensor(65519.99, dtype=torch.float64).to(torch.float16)) == 65504
    big = N.predicted_row_sum_overflow_scale(("FP16",), scales=(1.0,), rows=1, width=1)
    assert big == {"FP16": None}


@pytest.mark.skipif(not torch.cuda.is_available(), reason="TF32 probes need a CUDA GPU")
def test_tf32_probes_restore_every_fp32_precision_attribute():
    with N.fp32_precision_restored():
        torch.backends.cuda.matmul.fp32_precision = "none"
        before = N.fp32_precision_state()
        N.tf32_input_rounding(n=16)
        N.tf32_matmul_error(n=64)
        assert N.fp32_precision_state() == before
