"""Autocast chapter, second independent read of issue 33: rounding measured in true ulps, the
autocast dtype a region without dtype= inherits, custom_fwd's required device_type, the cast
cache's conditions."""

import torch

from amp_docs_lib.amp import autocast_policy as ap


def test_ulps_are_the_spacing_of_the_binade_not_eps_times_the_value():
    # read finding 3: eps * |ref| is up to two ulps near the top of a binade; the ulp at 1.99 is 2**-7
    exact = torch.tensor([1.99], dtype=torch.float64)
    one_ulp_off = exact + 2.0**-7
    assert float(ap._ulps(one_ulp_off, exact, torch.bfloat16)) == 1.0
    assert float(ap._ulps(exact + 2.0**-8, exact, torch.bfloat16)) == 0.5
    assert float(ap._ulps(torch.tensor([0.75 + 2.0**-9]), torch.tensor([0.75]), torch.bfloat16)) == 0.5


def test_rounds_once_rejects_a_kernel_that_rounds_intermediate_results():
    t = ap.low_precision_kernels_vs_fp32(shape=(16, 2048)).set_index("op")
    assert set(t["output dtype"]) == {"bfloat16"}
    for op in ("softmax", "exp", "sum"):
        assert bool(t.loc[op, "rounds once"]), op
        assert t.loc[op, "max error (ulps)"] <= 0.5 + t.loc[op, "FP32 op's max error (ulps)"]
    # the false variant: a softmax of bfloat16 ops, which rounds exp and the sum before dividing
    assert not bool(t.loc[ap.COMPOSED_SOFTMAX, "rounds once"])
    # an error of one ulp (the old "within one spacing" threshold) is not rounding once
    assert 1.0 > 0.5 + t["FP32 op's max error (ulps)"].max()


def test_log_softmax_verdict_follows_its_error():
    t = ap.low_precision_kernels_vs_fp32(shape=(16, 2048)).set_index("op")
    row = t.loc["log_softmax"]
    if row["identical to FP32 rounded once"] < 0.99:  # this torch's kernel rounds more than once
        assert not bool(row["rounds once"])


def test_a_region_without_dtype_inherits_the_thread_state():
    # read finding 5: not the device default inside another region; finding 8: DataParallel's entry
    seen = ap.autocast_dtype_without_dtype_arg("cpu", outer=torch.float16)
    assert seen["alone"] == "bfloat16"
    assert seen["nested in a region entered with dtype=float16"] == "float16"
    assert seen["thread entering autocast(enabled=True) inside that region"] == "bfloat16"
    seen = ap.autocast_dtype_without_dtype_arg("cpu", outer=torch.bfloat16)
    assert seen["nested in a region entered with dtype=bfloat16"] == "bfloat16"


def test_custom_fwd_as_the_page_writes_it_runs_and_casts_to_fp32():
    # read finding 1: torch.amp.custom_fwd needs device_type=
    import pytest

    with pytest.raises(TypeError, match="device_type"):
        torch.amp.custom_fwd(cast_inputs=torch.float32)
    assert ap.custom_fwd_input_dtype("cpu", torch.bfloat16) == {
        "input dtype in forward": "float32",
        "output dtype": "float32",
    }


def test_cast_cache_keeps_only_fp32_leaves_that_require_grad():
    t = ap.cast_cache_eligibility().set_index("tensor")["cached"]
    assert t.to_dict() == {
        "parameter (leaf, requires grad)": True,
        "leaf without requires_grad": False,
        "non-leaf that requires grad (w * 1)": False,
        "view of a parameter (w[:])": False,
    }
