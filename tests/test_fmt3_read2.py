"""Formats chapter, second independent read (issue 33): the path-dependent double rounding, torchao's
MX FLOOR scale overshooting the element maximum, figures judged at their stated precision,
stochastic rounding keeping a lost update, and the direction of the relative-spacing sawtooth."""

import math

import pytest

from amp_docs_lib.numbers import formats as F
from amp_docs_lib.numbers import numerics as N
from amp_docs_lib.page.claims import ClaimContradicted, claim


def test_scalar_constructor_is_a_different_path_from_the_librarys_cast():
    t = F.double_rounding().set_index("format")
    assert t["rounded twice"].all()  # tensor .to / array .astype: through FP32
    # the scalar constructors round once (ml_dtypes 0.6, numpy float16) except ml_dtypes.bfloat16
    once = t.index[~t["scalar rounded twice"]].tolist()
    assert "FP8 E4M3FN" in once and "FP4 E2M1" in once and "FP16" in once
    assert (t.loc[once, "scalar constructor"] == t.loc[once, "nearest value (one rounding)"]).all()
    assert t.loc["BF16", "scalar rounded twice"]
    # the old sentence "both torch and ml_dtypes cast a float64 through FP32" is false on this path
    assert not t["scalar rounded twice"].all()


def test_mx_floor_scale_puts_the_block_maximum_above_the_element_maximum_and_torchao_clamps():
    mx = N.mx_floor_scale_overshoot(block_max=1.9)
    assert mx["scale"] == 2.0**-8
    assert mx["largest / scale"] == pytest.approx(486.4) and mx["largest / scale"] > mx["format max"]
    assert mx["stored"] == mx["format max"] == 448.0
    assert mx["default mode"] == "FLOOR"  # the chapter calls it torchao's default
    # false variant: a block whose maximum lands inside the range (1.5 / 2^-8 = 384) is not clamped
    inside = N.mx_floor_scale_overshoot(block_max=1.5)
    assert inside["largest / scale"] < inside["format max"] and inside["stored"] == 384.0


@pytest.mark.parametrize(
    ("stated", "measured", "holds"),
    [
        ("65504", 65504.0, True),
        ("65,504", 65504.0, True),
        ("65535", 65504.0, False),
        ("3.4e38", 3.3895313892515355e38, True),
        ("3.40e38", 3.3895313892515355e38, False),
        ("2", 2.408, True),
        ("3", 2.408, False),
        ("2.5", 2.408, False),
        ("2.4", 2.408, True),
        ("6e-5", 6.103515625e-05, True),
        ("6.0e-5", 6.103515625e-05, False),
        ("7.2", 7.224, True),
    ],
)
def test_a_figure_is_judged_at_the_precision_it_is_written_with(stated, measured, holds):
    assert N.agrees_at_stated_precision(stated, measured) is holds


def test_stated_precision_needs_the_figure_as_text():
    with pytest.raises(TypeError):
        N.agrees_at_stated_precision(3.4e38, 3.4e38)


def test_bf16_digits_statement_uses_the_same_rule_as_fp16_and_fp32():
    digits = N.measured_decimal_digits().set_index("dtype")["decimal digits (measured)"]
    assert N.agrees_at_stated_precision("2", digits["BF16"])
    assert N.agrees_at_stated_precision("3.3", digits["FP16"]) and N.agrees_at_stated_precision("7.2", digits["FP32"])
    # plausible false variants
    assert not N.agrees_at_stated_precision("3", digits["BF16"])
    assert not N.agrees_at_stated_precision("3.5", digits["FP16"])


def test_stochastic_rounding_keeps_a_lost_update_on_average():
    sr = N.stochastic_rounding_update(weight=1.0, update=2.0**-10)
    assert sr["round to nearest"] == 1.0
    assert sr["expected fraction"] == 0.25 / 2  # 2^-10 over BF16's spacing 2^-7
    assert abs(sr["fraction rounded up"] - sr["expected fraction"]) <= 4 * sr["binomial std"]
    assert sr["stochastic mean"] == pytest.approx(1 + 2.0**-10, abs=4 * sr["binomial std"] * 2.0**-7)
    # the chapter's check fails on round-to-nearest (never up) or truncation (never up)
    with pytest.raises(ClaimContradicted):
        claim("up {measured}", 0.0, holds=abs(0.0 - sr["expected fraction"]) <= 4 * sr["binomial std"])


def test_relative_gap_jumps_up_at_a_power_of_two():
    for name in ("FP32", "FP16", "BF16", "FP8 E4M3FN", "FP8 E5M2"):
        below = F.bits_to_value(F.encode(2.0, name) - 1, name)
        rel_below = (F.next_up(below, name) - below) / below
        rel_at = (F.next_up(2.0, name) - 2.0) / 2.0
        assert 1.5 < rel_at / rel_below <= 2  # the old prose said it halves there
        assert math.isclose(rel_at, F.next_up(1.0, name) - 1.0)  # back up to eps at the power of two
