"""Third independent read of the FP8 chapter (issue 33): double quantization's mechanism, the GEMM error
ratio per format, the number of FP8 GEMMs per torchao recipe, the GEMM notation of the recipe table."""

import math

import pytest
import torch

from amp_docs_lib.fp8 import gemm, scaling

SHARES = (
    "changed: subnormal in the row pass",
    "changed: subnormal in the column pass",
    "changed: normal in both passes",
)


def _tensor(seed: int = 0) -> torch.Tensor:
    # rows and columns spread over several binades, so both passes put some elements into the subnormals
    g = torch.Generator().manual_seed(seed)
    rows = torch.exp2(torch.randn(256, 1, generator=g) * 3)
    cols = torch.exp2(torch.randn(1, 128, generator=g) * 3)
    return torch.randn(256, 128, generator=g) * rows * cols


def test_power_of_two_requantization_changes_only_elements_subnormal_in_a_pass():
    dq = scaling.double_quantization_table({"gradient:x": _tensor()}, fmts=("FP8 E4M3FN",)).set_index("scales")
    p2, exact = dq.loc["power of two"], dq.loc["amax"]
    assert p2["elements changed"] > 0
    assert p2["changed: normal in both passes"] == 0.0
    assert p2["changed: subnormal in the row pass"] > 0
    # the false variant: with exact scales the second rounding changes elements that are normal in both passes
    assert exact["changed: normal in both passes"] > 0.5


def test_element_subnormal_only_in_the_row_pass_is_attributed_to_the_row_pass():
    # Row 0: amax 448 (scale 1), holds a tiny value 2^-8.3 that E4M3 rounds on its subnormal grid (spacing 2^-9).
    # Column 1: amax is that tiny value itself, so the column scale puts it at the top of the range (normal).
    x = torch.zeros(32, 16)
    x[0, 0] = 448.0
    x[0, 1] = 2.0**-8.3
    x[1:, 0] = 1.0
    dq = scaling.double_quantization_table({"gradient:x": x}, fmts=("FP8 E4M3FN",)).set_index("scales")
    p2 = dq.loc["power of two"]
    assert p2["elements changed"] > 0
    assert p2["changed: subnormal in the row pass"] == 1.0
    assert p2["changed: subnormal in the column pass"] == 0.0


def test_shares_are_nan_where_nothing_changes():
    x = torch.full((16, 16), 3.0)
    dq = scaling.double_quantization_table({"weight:x": x}, fmts=("FP8 E4M3FN",), scales=("power of two",))
    assert dq["elements changed"].iloc[0] == 0.0
    assert all(math.isnan(dq[c].iloc[0]) for c in SHARES)


def test_gemm_error_ratio_tells_e4m3_from_e5m2():
    e4 = gemm.operand_rounding_error_ratio(256, "FP8 E4M3FN")
    e5 = gemm.operand_rounding_error_ratio(256, "FP8 E5M2")
    # E4M3 within 10% of 2^4 (3 mantissa bits against BF16's 7); E5M2 is not: one bit fewer doubles the error
    assert 16 * 0.9 <= e4 <= 16 * 1.1
    assert not 16 * 0.9 <= e5 <= 16 * 1.1
    assert 2 * 0.9 <= e5 / e4 <= 2 * 1.1


def test_the_bf16_baseline_rounds_its_operands_only():
    """Read of 2026-11-25: a BF16 baseline that also rounds its output to BF16 gives about 13, not 16."""
    a, b = gemm.operands(256, 256, 256)
    ref = a.double() @ b.double().t()
    a8, da, _ = gemm.quantize_operand(a)
    b8, db, _ = gemm.quantize_operand(b)
    fp8 = gemm.rel_error((a8.double() * da.double()) @ (b8.double() * db.double()).t(), ref)
    output_rounded = fp8 / gemm.rel_error((a.bfloat16() @ b.bfloat16().t()).float(), ref)
    assert not 16 * 0.9 <= output_rounded <= 16 * 1.1  # the old baseline fails the page's check
    assert gemm.operand_rounding_error_ratio(256) == pytest.approx(16, rel=0.1)


def test_operand_rounding_error_ratio_matches_the_cpu_scaled_mm():
    # the float64 product of read-back operands measures what _scaled_mm's FP32 accumulation does, to a few %
    a, b = gemm.operands(256, 256, 256)
    ref = a.double() @ b.double().t()
    bf16 = gemm.rel_error((a.bfloat16() @ b.bfloat16().t()).float(), ref)
    a8, da, _ = gemm.quantize_operand(a)
    b8, db, _ = gemm.quantize_operand(b)
    via_kernel = gemm.rel_error(gemm.scaled_mm(a8, b8, da, db).float(), ref) / bf16
    bf16_operands = gemm.rel_error(a.bfloat16().double() @ b.bfloat16().double().t(), ref)
    via_kernel *= bf16 / bf16_operands  # the ratio's denominator: BF16-rounded operands, product in float64
    assert gemm.operand_rounding_error_ratio(256) == pytest.approx(via_kernel, rel=0.05)


def test_fp8_gemms_per_layer_follows_the_recipe_config():
    from amp_docs_lib.fp8 import float8_training as T

    assert T.fp8_gemms_per_layer("tensorwise") == 3
    assert T.fp8_gemms_per_layer("rowwise") == 3
    assert T.fp8_gemms_per_layer("rowwise_with_gw_hp") == 2  # the weight gradient's GEMM stays in high precision


def test_recipe_table_writes_each_gemm_with_its_transposes():
    from amp_docs_lib.fp8 import float8_training as T

    cols = set(T.recipe_config_table().columns)
    assert {
        "output = input @ weight^T",
        "grad_input = grad_output @ weight",
        "grad_weight = grad_output^T @ input",
    } <= cols
