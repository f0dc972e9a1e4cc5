"""Autocast chapter fixes of issue 33: the installed header's CUDA column, eligibility exceptions,
the cast cache under no_grad / inference_mode, and the SDPA math-backend switch."""

import pytest
import torch

from amp_docs_lib.amp import autocast_policy as ap
from amp_docs_lib.page.claims import ClaimContradicted, claim


def test_matmul_family_has_the_installed_header_column():
    if not ap.installed_header_lists()["ops"]:
        pytest.skip("this torch ships no ATen/autocast_mode.h op lists")
    probe = ap.probe_autocast_policy(devices=["cpu"], dtypes=[torch.bfloat16], ops=list(ap.MATMUL_FAMILY))
    fam = ap.matmul_family_by_device(probe).set_index("op")
    assert ap.HEADER_COLUMN in fam.columns
    # the header's list is what the dispatcher registers: lowered ops have an AutocastCUDA kernel
    assert fam.loc["einsum", ap.HEADER_COLUMN] == "lower" and bool(fam.loc["einsum", "CUDA autocast kernel"])
    assert ap.documented_category("einsum", "cuda") == "unlisted"  # the documentation lags behind


def test_documented_cpu_vs_cuda_shows_where_the_header_is_ahead():
    if not ap.installed_header_lists()["ops"]:
        pytest.skip("this torch ships no ATen/autocast_mode.h op lists")
    d = ap.documented_cpu_vs_cuda(only=list(ap.OPS)).set_index("op")
    for op in ("scaled_dot_product_attention", "linalg_vecdot"):
        assert d.loc[op, "CUDA (documented)"] == "unlisted"
        assert d.loc[op, ap.HEADER_COLUMN] == "lower" and d.loc[op, "CUDA autocast kernel"] is True
    # the chapter's consistency claim fails if a header-listed op had no kernel (a false variant)
    listed = d[d[ap.HEADER_COLUMN] != "unlisted"]
    assert listed["CUDA autocast kernel"].all()
    with pytest.raises(ClaimContradicted):
        claim("kernels {measured}", "x", holds=bool(listed["CUDA autocast kernel"].replace(True, False).all()))


def test_eligibility_exceptions_are_measured():
    st = ap.eligibility_and_state().set_index("observation")["value"]
    assert st["float32 mm with out= (FP32 out)"] == "float32"
    assert st["addmm (FP32 inputs)"] == "bfloat16" and st["in-place addmm_ (FP32 inputs)"] == "float32"
    assert st["prod of a low-precision tensor"] == "float32"
    assert st["prod of a low-precision tensor, dtype= that dtype"] == "bfloat16"


def test_cast_cache_and_grad_modes_reports_both_modes():
    r = ap.cast_cache_and_grad_modes()
    for mode in ("no_grad", "inference_mode"):
        assert isinstance(r[f"{mode}: output has grad_fn"], bool)
        assert isinstance(r[f"{mode}: weight gets a gradient"], bool)
    # a cast cached under no_grad and reused would give an output without grad_fn: tell it apart
    lin, x = torch.nn.Linear(8, 4), torch.randn(2, 8)
    with torch.no_grad():
        y = lin(x)
    assert y.grad_fn is None


def test_sdpa_math_reduction_switch_is_measured_and_restored():
    before = torch.backends.cuda.fp16_bf16_reduction_math_sdp_allowed()
    d = ap.sdpa_math_reduction(seeds=(0,), shape=(1, 2, 32, 16))
    assert torch.backends.cuda.fp16_bf16_reduction_math_sdp_allowed() == before
    assert set(d["16-bit reduction allowed"]) == {False, True} and set(d["dtype"]) == {"float16", "bfloat16"}
    wide = d.pivot_table(index="dtype", columns="16-bit reduction allowed", values="relative error")
    assert (wide[True] > wide[False]).all()  # the upcast (default) is the more accurate one


def test_compiled_backward_effect_tells_the_modes_apart():
    from torch._functorch import config

    if not hasattr(config, "backward_pass_autocast"):
        pytest.skip("this torch has no backward_pass_autocast")
    t = ap.compiled_backward_effect(size=32).set_index("backward")
    eager = t.loc["eager", "relative error of the weight gradient"]
    same = t.loc["compiled, backward_pass_autocast='same_as_forward'", "relative error of the weight gradient"]
    assert same >= 100 * eager  # lowered to bfloat16: error of BF16's order, not FP32's
    assert bool(t.loc["compiled, backward_pass_autocast='off'", "same as eager"])


def test_header_column_finds_an_op_under_any_of_its_aten_names():
    # read finding 1: `cross` is listed in the header (AT_FORALL_PROMOTE) but was shown "unlisted"
    # because only the first ATen name of its registry entry was looked up
    listed = ap.installed_header_lists()["ops"]
    if "cross" not in listed:
        pytest.skip("this torch's header does not list cross")
    d = ap.documented_cpu_vs_cuda(only=["cross"]).set_index("op")
    assert d.loc["cross", ap.HEADER_COLUMN] == listed["cross"][0] == "promote"
    assert bool(d.loc["cross", "CUDA autocast kernel"])
    for op, spec in ap.OPS.items():
        if any(n in listed for n in spec.aten):
            assert ap.header_category(op) != "unlisted", op


def test_eligibility_is_measured_at_the_kernel_not_by_the_output_dtype():
    # read findings 2 and 4: out=, in-place and dtype= fix the output dtype whatever autocast does to
    # the inputs; the dtypes reaching the kernel tell the cases apart
    st = ap.eligibility_and_state().set_index("observation")["value"]
    assert st["mm with out=: inputs reaching aten.mm"] == "float32, float32"
    assert st["addmm_ in place: inputs reaching aten.addmm_"] == "float32, float32, float32"
    assert st["addmm: inputs reaching aten.addmm"] == "bfloat16, bfloat16, bfloat16"
    # CPU casts prod's input to FP32 even with an explicit dtype= (CPU's plain FP32 list)
    assert st["prod, dtype= that dtype: input reaching aten.prod"] == "float32"
    # the false variant, an eligible mm, is seen lowered by the same measurement
    a = torch.randn(4, 8)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert ap._inputs_reaching("mm", lambda: torch.mm(a, a.T)) == "bfloat16, bfloat16"
        low = torch.rand(8).bfloat16()
        assert ap._inputs_reaching("sum", lambda: torch.sum(low, dtype=torch.bfloat16)) == "bfloat16"


def test_cpu_low_precision_kernels_are_compared_with_a_bf16_arithmetic_variant():
    # read finding 10: "left alone" on CPU is about the dtype; the measurement tells FP32-inside kernels
    # (half a ulp of the exact result) from arithmetic in bfloat16 (the false variant)
    t = ap.low_precision_kernels_vs_fp32(shape=(8, 2048)).set_index("op")
    assert set(t["output dtype"]) == {"bfloat16"}
    assert t.loc[ap.COMPOSED_SOFTMAX, "max error (ulps)"] > 1
    assert t.loc["softmax", "max error (ulps)"] <= 0.5 + t.loc["softmax", "FP32 op's max error (ulps)"]
