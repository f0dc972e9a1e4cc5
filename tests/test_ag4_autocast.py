"""Autocast chapter, third read: the measurements behind findings 1-4, 6 and 9."""

import torch

from amp_docs_lib.amp import autocast_policy as ap


def test_prod_dtype_on_cpu_is_cast_but_result_unchanged():
    st = ap.eligibility_and_state().set_index("observation")["value"]
    assert st["prod, dtype= that dtype: input reaching aten.prod"] == "float32"
    assert st["prod, dtype=: rows equal to the call without autocast"] == "64/64"
    # the false variant, "computed in FP32 and rounded", gives different rows here
    assert st["prod, dtype=: rows equal to the FP32-computed product, rounded"] != "64/64"


def test_documented_aliases_are_not_undocumented_registrations():
    cuda = ap.undocumented_registrations("cuda")
    for aten in ("grid_sampler", "rnn_relu_cell", "native_layer_norm"):
        assert aten not in cuda
    assert ap.documented_category("grid_sample", "cuda") == "promote"


def test_hand_registered_cuda_kernels_include_banned_bce():
    outside = ap.cuda_kernels_outside_header()
    assert "binary_cross_entropy" in outside
    assert ap.header_category("binary_cross_entropy") == "unlisted"
    listed = ap.installed_header_lists()["ops"]
    assert not set(outside) & set(listed)


def test_matvec_spelled_matmul_is_lowered_on_cpu_but_mv_is_not():
    spell = ap.matvec_spellings("cpu")
    assert spell["torch.matmul(M, v)"] == spell["M @ v"] == "bfloat16"
    assert spell["torch.mv(M, v)"] == spell["torch.addmv(b, M, v)"] == "float32"


def test_custom_op_gets_autocast_only_after_register_autocast():
    first, second = ap.custom_op_autocast("cpu"), ap.custom_op_autocast("cpu")  # callable twice per process
    assert first == second == {"without register_autocast": "float32", "with register_autocast": "bfloat16"}


def test_onednn_kernel_reads_the_verbose_log():
    a = torch.randn(64, 64)
    assert ap.onednn_kernel(lambda: a + 1) == "none"  # elementwise add is not a oneDNN primitive
    kernels = ap.cpu_matmul_kernels(64)
    assert set(kernels) == {"float32", "bfloat16", "float16"}
    if torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported():
        assert "matmul" in kernels["bfloat16"]


def test_cpu_matmul_interleaved_compares_with_fp32():
    r = ap.cpu_matmul_interleaved(size=32, rounds=5, num_threads=1)
    assert r.baseline == "float32" and set(r.timings) == {"float32", "bfloat16", "float16"}
    assert all(t.runs == 5 and t.num_threads == 1 for t in r.timings.values())
